// Conformance of the OpenMP kernels added for issue 15 against the reference kernels: the
// slot-update optimizers, weight decay, EMA and gradient clipping; gather and
// gather_grad; the data-movement ops; the augmentation ops. Element-wise and per-sample
// kernels are held to the reference bit for bit (atol = rtol = 0); the norms, whose double
// sums the threads split, to rtol 1e-6. Sizes include 1, odd ones and ones past
// kOmpMinParallelElements (16384), so both the serial and the threaded paths are compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "conformance/harness.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

using testing::expect_matches_reference;
using testing::random_tensor;

constexpr float kBitwise = 0.0f;

std::vector<TensorDesc> descs_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorDesc> out;
  for (const Tensor& t : tensors) out.push_back(t.desc());
  return out;
}

KernelDesc make_desc(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs,
                     std::vector<TensorDesc> outputs) {
  return KernelDesc{op, std::move(attrs), descs_of(inputs), std::move(outputs), "test/" + op};
}

void expect_bitwise(const KernelDesc& d, const std::vector<Tensor>& inputs, const StepContext& ctx = {}) {
  expect_matches_reference(d, inputs, kBitwise, kBitwise, true, ctx);
}

const std::vector<Shape> kFlatShapes = {Shape{1}, Shape{7}, Shape{3, 5, 11}, Shape{20011}};

TEST(OmpMoreOps, SlotUpdatesAreBitIdentical) {
  const Attrs adam_like{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}};
  const struct {
    const char* op;
    Attrs attrs;
    int slots;
  } kCases[] = {
      {"adagrad_update", {{"epsilon", 1e-7}}, 1},
      {"adamax_update", adam_like, 2},
      {"lion_update", {{"beta_1", 0.9}, {"beta_2", 0.99}}, 1},
      {"adadelta_update", {{"rho", 0.95}, {"epsilon", 1e-7}}, 2},
      {"nadam_update", adam_like, 2},
      {"ftrl_update",
       {{"learning_rate_power", -0.5}, {"l1", 0.01}, {"l2", 0.02}, {"l2_shrinkage", 0.03}, {"beta", 0.1}},
       2},      {"lamb_update", adam_like, 2},  // Shape{20011}: five chunks of the trust ratio's norms
      // Steps 0 and 4 inside a warm-up of 3 and after it.
      {"schedule_free_update",
       {{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-8}, {"warmup_steps", std::int64_t{3}}},
       2},
  };
  std::uint64_t seed = 100;
  for (const auto& c : kCases) {
    for (const Shape& s : kFlatShapes) {
      for (std::int64_t step : {0, 4}) {
        StepContext ctx;
        ctx.learning_rate = 0.01f;
        ctx.step = step;
        std::vector<Tensor> in = {random_tensor(s, seed++), random_tensor(s, seed++)};
        // Accumulators are positive (Adagrad's, Adadelta's and Ftrl's are sums of squares).
        for (int k = 0; k < c.slots; ++k) in.push_back(random_tensor(s, seed++, 0.05f, 1.0f));
        SCOPED_TRACE(std::string(c.op) + " " + s.to_string() + " step " + std::to_string(step));
        expect_bitwise(make_desc(c.op, c.attrs, in, {}), in, ctx);
      }
    }
  }
}

// Adafactor's r and c are shaped apart from the variable (scalars below rank 2): factored
// matrices (one spanning two chunks of the RMS sums, a batch of three), unfactored vectors.
TEST(OmpMoreOps, AdafactorIsBitIdentical) {
  const Attrs attrs{{"beta_2_decay", -0.8}, {"epsilon_1", 1e-30}, {"epsilon_2", 1e-3}, {"clip_threshold", 1.0}};
  std::uint64_t seed = 150;
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{20011}, Shape{70, 90}, Shape{3, 5, 11}}) {
    std::vector<std::int64_t> r(s.dims().begin(), s.dims().end() - (s.rank() >= 2 ? 1 : s.rank()));
    std::vector<std::int64_t> c;
    if (s.rank() >= 2) {
      c.assign(s.dims().begin(), s.dims().end() - 2);
      c.push_back(s.dims().back());
    }
    for (std::int64_t step : {0, 4}) {
      StepContext ctx;
      ctx.learning_rate = 0.01f;
      ctx.step = step;
      std::vector<Tensor> in = {random_tensor(s, seed++), random_tensor(s, seed++),
                                random_tensor(Shape(r), seed++, 0.05f, 1.0f), random_tensor(Shape(c), seed++, 0.05f, 1.0f),
                                random_tensor(s, seed++, 0.05f, 1.0f)};
      SCOPED_TRACE(s.to_string() + " step " + std::to_string(step));
      expect_bitwise(make_desc("adafactor_update", attrs, in, {}), in, ctx);
    }
  }
}

TEST(OmpMoreOps, DecayAndEmaAreBitIdentical) {
  std::uint64_t seed = 200;
  for (const Shape& s : kFlatShapes) {
    // Step 4 with overwrite_frequency 5 overwrites the parameter; step 0 uses momentum 0.
    for (std::int64_t step : {0, 3, 4}) {
      StepContext ctx;
      ctx.learning_rate = 0.05f;
      ctx.step = step;
      Tensor p = random_tensor(s, seed++), avg = random_tensor(s, seed++);
      expect_bitwise(make_desc("decay_weights", {{"weight_decay", 0.004}}, {p}, {}), {p}, ctx);
      const Attrs ema{{"momentum", 0.99}, {"overwrite_frequency", std::int64_t{5}}};
      expect_bitwise(make_desc("ema_update", ema, {p, avg}, {}), {p, avg}, ctx);
    }
  }
}

TEST(OmpMoreOps, Clipping) {
  std::uint64_t seed = 300;
  for (const Shape& s : kFlatShapes) {
    Tensor g = random_tensor(s, seed++, -3.0f, 3.0f);
    expect_bitwise(make_desc("clip_by_value", {{"clipvalue", 0.5}}, {g}, {g.desc()}), {g});
    // A limit above and below the norm: the scaled and the unchanged branch.
    for (double clipnorm : {0.1, 1e6}) {
      expect_matches_reference(make_desc("clip_by_norm", {{"clipnorm", clipnorm}}, {g}, {g.desc()}), {g}, 0.0f,
                               1e-6f);
    }
    std::vector<Tensor> gs = {g, random_tensor(Shape{3}, seed++), random_tensor(Shape{40000}, seed++)};
    for (double clipnorm : {0.5, 1e6}) {
      expect_matches_reference(
          make_desc("global_norm_scale", {{"clipnorm", clipnorm}}, gs, {TensorDesc{Shape{}, DType::f32}}), gs, 0.0f,
          1e-6f);
    }
  }
}

// Loss scaling's unscale, bit for bit: clean gradients, and a NaN or an overflow to
// infinity (a large element over a scale below 1) at the first, a middle and the last
// element, so each thread's share of the OR is exercised.
TEST(OmpMoreOps, UnscaleGradient) {
  std::uint64_t seed = 600;
  for (const Shape& s : kFlatShapes) {
    for (float scale : {32768.0f, 3.0f, 1e-30f}) {
      Tensor sc = Tensor::zeros(Shape{}, DType::f32);
      *sc.data<float>() = scale;
      const Tensor g = random_tensor(s, seed++, -2.0f, 2.0f);
      for (std::int64_t at : {std::int64_t{-1}, std::int64_t{0}, s.numel() / 2, s.numel() - 1}) {
        Tensor gi = g.clone();
        if (at >= 0) gi.data<float>()[at] = scale < 1.0f ? 3e38f : std::nanf("");
        std::string why;
        const KernelDesc d = make_desc("unscale_gradient", {}, {gi, sc}, {gi.desc(), TensorDesc{Shape{}, DType::f32}});
        auto ref = kernel_registry().create("ref:unscale_gradient", d, DeviceType::cpu, &why);
        auto omp = kernel_registry().create("omp:unscale_gradient", d, DeviceType::cpu, &why);
        ASSERT_TRUE(ref && omp) << why;
        const std::vector<Tensor> want = testing::run_kernel(*ref, d, {gi, sc}, StepContext{});
        const std::vector<Tensor> got = testing::run_kernel(*omp, d, {gi, sc}, StepContext{});
        EXPECT_EQ(0, std::memcmp(want[0].raw(), got[0].raw(), want[0].nbytes())) << s.to_string() << " at " << at;
        EXPECT_EQ(*got[1].data<float>(), at >= 0 ? 1.0f : 0.0f) << s.to_string() << " at " << at;
        EXPECT_EQ(*want[1].data<float>(), *got[1].data<float>());
      }
    }
  }
}

Tensor random_ids(const Shape& shape, std::int64_t rows, DType dtype, std::uint64_t seed) {
  Tensor t = Tensor::zeros(shape, dtype);
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    // Half the ids from a few rows, so repeated ids (colliding adds) are common.
    const auto id = static_cast<std::int64_t>(rng() % 2 ? rng() % 3 : rng() % static_cast<std::uint64_t>(rows));
    if (dtype == DType::i32) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(id);
    if (dtype == DType::i64) t.data<std::int64_t>()[i] = id;
    if (dtype == DType::f32) t.data<float>()[i] = static_cast<float>(id) + 0.25f;  // truncated
  }
  return t;
}

TEST(OmpMoreOps, GatherAndScatterAddAreBitIdentical) {
  std::uint64_t seed = 400;
  const struct {
    std::int64_t rows, width;
    Shape ids;
  } kCases[] = {{1, 1, Shape{1}}, {5, 3, Shape{7}}, {40, 17, Shape{6, 5}}, {3001, 64, Shape{64, 100}},
                {257, 40, Shape{1000}}};
  for (const auto& c : kCases) {
    for (DType dtype : {DType::i32, DType::i64, DType::f32}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " ids " + c.ids.to_string() + " width " + std::to_string(c.width));
      Tensor table = random_tensor(Shape{c.rows, c.width}, seed++);
      Tensor ids = random_ids(c.ids, c.rows, dtype, seed++);
      std::vector<std::int64_t> ydims = c.ids.dims();
      ydims.push_back(c.width);
      Tensor dy = random_tensor(Shape(ydims), seed++);
      expect_bitwise(make_desc("gather", {}, {table, ids}, {dy.desc()}), {table, ids});
      expect_bitwise(make_desc("gather_grad", {{"rows", c.rows}}, {ids, dy}, {table.desc()}), {ids, dy});
    }
  }
}

TEST(OmpMoreOps, GatherRejectsAnIdOutsideTheTable) {
  Tensor table = random_tensor(Shape{4, 2}, 1);
  Tensor ids = Tensor::zeros(Shape{20000}, DType::i32);
  ids.data<std::int32_t>()[12345] = 4;
  const KernelDesc d = make_desc("gather", {}, {table, ids}, {TensorDesc{Shape{20000, 2}}});
  std::string why;
  auto k = kernel_registry().create("omp:gather", d, DeviceType::cpu, &why);
  ASSERT_NE(k, nullptr) << why;
  try {
    testing::run_kernel(*k, d, {table, ids}, StepContext{});
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("id 4 at position 12345"), std::string::npos) << e.what();
  }
}

TEST(OmpMoreOps, PadCropTransposeRepeatAreBitIdentical) {
  std::uint64_t seed = 500;
  const std::vector<Shape> shapes = {Shape{1}, Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{2, 9, 11, 3}, Shape{8, 33, 35, 16}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.to_string());
    Tensor x = random_tensor(s, seed++);
    const std::int64_t r = s.rank();
    std::vector<std::int64_t> before(static_cast<std::size_t>(r)), after(before), begin(before), small(before), padded(before);
    for (std::int64_t d = 0; d < r; ++d) {
      const auto u = static_cast<std::size_t>(d);
      before[u] = d % 2;
      after[u] = (d + 1) % 3;
      padded[u] = s[d] + before[u] + after[u];
      begin[u] = s[d] > 2 ? 1 : 0;
      small[u] = s[d] - begin[u] - (s[d] > 2 ? 1 : 0);
    }
    expect_bitwise(make_desc("pad", {{"before", before}, {"after", after}, {"value", 0.5}}, {x},
                             {TensorDesc{Shape(padded)}}),
                   {x});
    expect_bitwise(make_desc("crop", {{"begin", begin}, {"shape", small}}, {x}, {TensorDesc{Shape(small)}}), {x});
    // Reverse the axes, and rotate them by one.
    std::vector<std::int64_t> reversed, rotated, ydims, zdims;
    for (std::int64_t d = r - 1; d >= 0; --d) reversed.push_back(d);
    for (std::int64_t d = 0; d < r; ++d) rotated.push_back((d + 1) % r);
    for (std::int64_t p : reversed) ydims.push_back(s[p]);
    for (std::int64_t p : rotated) zdims.push_back(s[p]);
    expect_bitwise(make_desc("transpose", {{"perm", reversed}}, {x}, {TensorDesc{Shape(ydims)}}), {x});
    expect_bitwise(make_desc("transpose", {{"perm", rotated}}, {x}, {TensorDesc{Shape(zdims)}}), {x});
    for (std::int64_t axis = 0; axis < r; ++axis) {
      std::vector<std::int64_t> big = s.dims();
      big[static_cast<std::size_t>(axis)] *= 3;
      const Attrs a{{"axis", axis}, {"repeats", std::int64_t{3}}};
      expect_bitwise(make_desc("repeat", a, {x}, {TensorDesc{Shape(big)}}), {x});
      Tensor dy = random_tensor(Shape(big), seed++);
      expect_bitwise(make_desc("repeat_grad", a, {dy}, {x.desc()}), {dy});
    }
  }
}

TEST(OmpMoreOps, ConcatAndSliceAreBitIdentical) {
  std::uint64_t seed = 600;
  const std::vector<Shape> shapes = {Shape{1}, Shape{5, 3}, Shape{4, 7, 9}, Shape{64, 20, 30}, Shape{30000}};
  for (const Shape& s : shapes) {
    for (std::int64_t axis = 0; axis < s.rank(); ++axis) {
      SCOPED_TRACE(s.to_string() + " axis " + std::to_string(axis));
      std::vector<Tensor> xs;
      std::vector<std::int64_t> out = s.dims();
      out[static_cast<std::size_t>(axis)] = 0;
      for (std::int64_t extra : {0, 2, 1}) {  // inputs of different lengths along the axis
        std::vector<std::int64_t> dims = s.dims();
        dims[static_cast<std::size_t>(axis)] += extra;
        xs.push_back(random_tensor(Shape(dims), seed++));
        out[static_cast<std::size_t>(axis)] += dims[static_cast<std::size_t>(axis)];
      }
      expect_bitwise(make_desc("concat", {{"axis", axis}}, xs, {TensorDesc{Shape(out)}}), xs);
      const std::int64_t len = s[axis], begin = len / 3, size = len - begin - len / 4;
      std::vector<std::int64_t> sliced = s.dims();
      sliced[static_cast<std::size_t>(axis)] = size;
      const Attrs a{{"axis", axis}, {"begin", begin}, {"size", size}};
      expect_bitwise(make_desc("slice", a, {xs[0]}, {TensorDesc{Shape(sliced)}}), {xs[0]});
    }
  }
}

// Every kind, fill mode and interpolation of the affine ops; flips in every mode; the
// contrast op and its gradient, on a batch past the threading threshold and on small and
// size-1 images. The random ops' draws (their second outputs) must match too.
const std::vector<Shape> kImages = {Shape{1, 1, 1, 1}, Shape{3, 5, 7, 2}, Shape{128, 28, 28, 1}, Shape{9, 16, 12, 3}};

StepContext augment_ctx() {
  StepContext ctx;
  ctx.seed = 4321;
  ctx.step = 7;
  return ctx;
}

TEST(OmpMoreOps, RandomFlipIsBitIdentical) {
  std::uint64_t seed = 700;
  for (const Shape& s : kImages) {
    for (const char* mode : {"horizontal", "vertical", "horizontal_and_vertical"}) {
      SCOPED_TRACE(s.to_string() + " " + mode);
      Tensor x = random_tensor(s, seed++);
      const Attrs a{{"mode", std::string(mode)}, {"seed", std::int64_t{11}}};
      expect_bitwise(make_desc("random_flip", a, {x}, {x.desc(), TensorDesc{Shape{s[0]}, DType::u8}}), {x},
                     augment_ctx());
      Tensor flips = Tensor::zeros(Shape{s[0]}, DType::u8);
      for (std::int64_t n = 0; n < s[0]; ++n) flips.data<std::uint8_t>()[n] = static_cast<std::uint8_t>(n % 3 == 0);
      KernelDesc g = make_desc("random_flip_grad", {{"mode", std::string(mode)}}, {x, flips}, {x.desc()});
      expect_bitwise(g, {x, flips});
    }
  }
}

TEST(OmpMoreOps, AffineOpsAreBitIdentical) {
  std::uint64_t seed = 800;
  const struct {
    const char* kind;
    double lo, hi;
  } kKinds[] = {{"translation", -0.2, 0.3}, {"rotation", -0.1, 0.1}, {"zoom", -0.3, 0.2}, {"shear", -0.2, 0.3}};
  for (const Shape& s : kImages) {
    for (const char* fill : {"reflect", "wrap", "constant", "nearest"}) {
      for (const char* interpolation : {"bilinear", "nearest"}) {
        SCOPED_TRACE(s.to_string() + " " + fill + " " + interpolation);
        const Attrs common{{"fill_mode", std::string(fill)}, {"interpolation", std::string(interpolation)},
                           {"fill_value", 0.25}};
        Tensor x = random_tensor(s, seed++);
        const TensorDesc t_desc{Shape{s[0], 8}, DType::f32};
        for (const auto& k : kKinds) {
          Attrs a = common;
          a.set("kind", std::string(k.kind));
          a.set("height_lower", k.lo);
          a.set("height_upper", k.hi);
          a.set("width_lower", k.lo / 2);
          a.set("width_upper", k.hi);
          a.set("seed", std::int64_t{5});
          expect_bitwise(make_desc("random_affine", a, {x}, {x.desc(), t_desc}), {x}, augment_ctx());
        }
        // A transform with a projective part (k = 0 on some pixels) as well.
        Tensor t = random_tensor(Shape{s[0], 8}, seed++, -0.5f, 0.5f);
        for (std::int64_t n = 0; n < s[0]; ++n) {
          float* row = t.data<float>() + 8 * n;
          row[0] += 1.0f;
          row[4] += 1.0f;
          row[6] = n % 2 ? -0.25f : 0.0f;
          row[7] = n % 2 ? 0.0f : 0.05f;
        }
        expect_bitwise(make_desc("affine_transform", common, {x, t}, {x.desc()}), {x, t});
        expect_bitwise(make_desc("affine_transform_grad", common, {x, t}, {x.desc()}), {x, t});
      }
    }
  }
}

TEST(OmpMoreOps, RandomContrastIsBitIdentical) {
  std::uint64_t seed = 900;
  for (const Shape& s : kImages) {
    SCOPED_TRACE(s.to_string());
    Tensor x = random_tensor(s, seed++);
    const Attrs a{{"factor_lower", 0.4}, {"factor_upper", 1.6}, {"value_lower", -0.8}, {"value_upper", 0.9},
                  {"seed", std::int64_t{3}}};
    expect_bitwise(make_desc("random_contrast", a, {x}, {x.desc(), TensorDesc{Shape{s[0]}, DType::f32}}), {x},
                   augment_ctx());
    Tensor dy = random_tensor(s, seed++);
    Tensor factor = random_tensor(Shape{s[0]}, seed++, 0.4f, 1.6f);
    const Attrs g{{"value_lower", -0.8}, {"value_upper", 0.9}};
    expect_bitwise(make_desc("random_contrast_grad", g, {dy, x, factor}, {x.desc()}), {dy, x, factor});
  }
}

// 0/1 values, a quarter of them 0. Every sample keeps a step (the harness compares no
// NaN, and an all-masked sample's mean is 0/0).
Tensor random_mask(const Shape& shape, std::uint64_t seed) {
  Tensor m = Tensor::zeros(shape, DType::f32);
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < m.numel(); ++i) m.data<float>()[i] = rng() % 4 || i % shape.dim(-1) == 0 ? 1.0f : 0.0f;
  return m;
}

TEST(OmpMoreOps, MasksAreBitIdentical) {
  std::uint64_t seed = 1000;
  const std::vector<Shape> shapes = {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{64, 100, 32}, Shape{2, 3000, 9}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.to_string());
    Tensor x = random_tensor(s, seed++);
    Tensor m = random_mask(Shape{s[0], s[1]}, seed++);
    Tensor dy = random_tensor(Shape{s[0], s[2]}, seed++);
    expect_bitwise(make_desc("masked_mean", {}, {x, m}, {dy.desc()}), {x, m});
    expect_bitwise(make_desc("masked_mean_grad", {}, {m, dy}, {x.desc()}), {m, dy});
    expect_bitwise(make_desc("apply_mask", {}, {x, m}, {x.desc()}), {x, m});
    // x's zeros: the padding sequence_mask finds (per element, and per row of the last axis).
    Tensor ids = random_mask(s, seed++);
    expect_bitwise(make_desc("sequence_mask", {{"value", 0.0}, {"reduce_last", std::int64_t{0}}}, {ids}, {ids.desc()}),
                   {ids});
    expect_bitwise(
        make_desc("sequence_mask", {{"value", 0.0}, {"reduce_last", std::int64_t{1}}}, {ids}, {m.desc()}), {ids});
  }
}

TEST(OmpMoreOps, StandardizeIsBitIdentical) {
  std::uint64_t seed = 1100;
  for (const Shape& s : {Shape{1}, Shape{5, 3}, Shape{300, 77}, Shape{16, 9, 9, 33}}) {
    for (std::int64_t invert : {0, 1}) {
      Tensor x = random_tensor(s, seed++);
      Tensor mean = random_tensor(Shape{s.dim(-1)}, seed++);
      Tensor var = random_tensor(Shape{s.dim(-1)}, seed++, 0.0f, 2.0f);
      var.data<float>()[0] = 0.0f;  // the 1e-7 floor
      expect_bitwise(make_desc("standardize", {{"invert", invert}}, {x, mean, var}, {x.desc()}), {x, mean, var});
      expect_bitwise(make_desc("standardize_grad", {{"invert", invert}}, {x, var}, {x.desc()}), {x, var});
    }
  }
}

TEST(OmpMoreOps, RegularizersAndConstraints) {
  std::uint64_t seed = 1200;
  const Attrs l1l2{{"kind", std::string("l1l2")}, {"l1", 0.01}, {"l2", 0.02}};
  for (const Shape& s : {Shape{1}, Shape{7, 3}, Shape{784, 128}, Shape{3, 3, 16, 32}}) {
    SCOPED_TRACE(s.to_string());
    Tensor x = random_tensor(s, seed++);
    const TensorDesc scalar{Shape{}, DType::f32};
    expect_matches_reference(make_desc("weight_penalty", l1l2, {x}, {scalar}), {x}, 0.0f, 1e-6f);
    Tensor dp = random_tensor(Shape{}, seed++);
    expect_bitwise(make_desc("weight_penalty_grad", l1l2, {x, dp}, {x.desc()}), {x, dp});
    // Keras's default axis 0, the last axis, and all of the leading ones (a conv kernel's).
    std::vector<std::vector<std::int64_t>> axes_cases = {{0}, {-1}};
    if (s.rank() == 4) axes_cases.push_back({0, 1, 2});
    for (const char* kind : {"MaxNorm", "MinMaxNorm", "UnitNorm", "NonNeg"}) {
      for (const auto& axes : axes_cases) {
        const Attrs a{{"kind", std::string(kind)}, {"max_value", 0.5}, {"min_value", 0.2}, {"rate", 0.7}, {"axes", axes}};
        expect_matches_reference(make_desc("apply_constraint", a, {x}, {}), {x}, 0.0f, 1e-6f);
      }
    }
  }
  // The orthogonal penalty is the reference kernel's alone.
  Tensor w = random_tensor(Shape{4, 5}, 1);
  const Attrs ortho{{"kind", std::string("orthogonal")}, {"factor", 0.01}, {"mode", std::string("rows")}};
  std::string why;
  EXPECT_EQ(kernel_registry().create("omp:weight_penalty", make_desc("weight_penalty", ortho, {w}, {TensorDesc{Shape{}}}),
                                     DeviceType::cpu, &why),
            nullptr);
  EXPECT_NE(why.find("orthogonal"), std::string::npos) << why;
}

}  // namespace
}  // namespace nnfit
