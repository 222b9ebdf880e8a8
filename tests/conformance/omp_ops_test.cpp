// Conformance of the OpenMP family (omp:<op>) against the reference kernels (ref:<op>) for
// the training ops: bias, add_n, reshape, losses, batch norm, dropout and optimizer
// updates. Sizes include odd ones and ones past kOmpMinParallelElements, so both the
// serial and the threaded paths of every fast kernel are compared.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "conformance/harness.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

using testing::expect_matches_reference;
using testing::random_labels;
using testing::random_tensor;

std::vector<TensorDesc> descs_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorDesc> out;
  for (const Tensor& t : tensors) out.push_back(t.desc());
  return out;
}

KernelDesc make_desc(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs,
                     std::vector<TensorDesc> outputs) {
  return KernelDesc{op, std::move(attrs), descs_of(inputs), std::move(outputs), "test/" + op};
}

Tensor scalar(float value) {
  Tensor t = Tensor::zeros(Shape{}, DType::f32);
  *t.data<float>() = value;
  return t;
}

// Probabilities in (0.01, 1); rows summing to 1 when `normalize`.
Tensor random_probs(const Shape& shape, std::uint64_t seed, bool normalize) {
  Tensor t = random_tensor(shape, seed, 0.01f, 1.0f);
  if (normalize) {
    const std::int64_t c = shape.dim(-1);
    float* p = t.data<float>();
    for (std::int64_t r = 0; r < t.numel() / c; ++r) {
      float s = 0.0f;
      for (std::int64_t j = 0; j < c; ++j) s += p[r * c + j];
      for (std::int64_t j = 0; j < c; ++j) p[r * c + j] /= s;
    }
  }
  return t;
}

const std::vector<Shape> kChannelShapes = {Shape{1, 1}, Shape{5, 3}, Shape{37, 129},
                                           Shape{2, 3, 5, 7}, Shape{16, 9, 9, 33}, Shape{32, 26, 26, 32}};
const std::vector<Shape> kFlatShapes = {Shape{1}, Shape{7}, Shape{3, 5, 11}, Shape{20011}};

TEST(OmpOps, BiasAddAndGrad) {
  std::uint64_t seed = 1;
  for (const Shape& s : kChannelShapes) {
    Tensor x = random_tensor(s, seed++);
    Tensor b = random_tensor(Shape{s.dim(-1)}, seed++);
    expect_matches_reference(make_desc("bias_add", {}, {x, b}, {x.desc()}), {x, b});
    expect_matches_reference(make_desc("bias_add_grad", {}, {x}, {b.desc()}), {x});
  }
}

TEST(OmpOps, AddN) {
  std::uint64_t seed = 10;
  for (const Shape& s : kFlatShapes) {
    for (int k : {1, 2, 5}) {
      std::vector<Tensor> xs;
      for (int i = 0; i < k; ++i) xs.push_back(random_tensor(s, seed++));
      expect_matches_reference(make_desc("add_n", {}, xs, {xs[0].desc()}), xs);
    }
  }
}

TEST(OmpOps, ReshapeCopiesWhenNotAliased) {
  Tensor x = random_tensor(Shape{300, 700}, 20);
  KernelDesc d = make_desc("reshape", {{"shape", std::vector<std::int64_t>{-1, 7, 100}}}, {x},
                           {TensorDesc{Shape{300, 7, 100}, DType::f32}});
  expect_matches_reference(d, {x});
  Tensor labels = random_labels(9, 4, 21);
  expect_matches_reference(make_desc("reshape", {}, {labels}, {TensorDesc{Shape{3, 3}, DType::i32}}),
                           {labels});
}

TEST(OmpOps, ReshapeAliasedIsANoOp) {
  Tensor x = random_tensor(Shape{4, 6}, 22);
  Tensor before = x.clone();
  KernelDesc d = make_desc("reshape", {}, {x}, {TensorDesc{Shape{24}, DType::f32}});
  std::string why;
  auto k = kernel_registry().create("omp:reshape", d, DeviceType::cpu, &why);
  ASSERT_NE(k, nullptr) << why;
  const void* in[] = {x.raw()};
  void* out[] = {x.raw()};
  StepContext ctx;
  k->run(KernelArgs{in, out, nullptr, &ctx});
  testing::expect_close(before, x, 0.0f, 0.0f, "aliased reshape");
  KernelDesc bad = make_desc("reshape", {}, {x}, {TensorDesc{Shape{25}, DType::f32}});
  EXPECT_THROW(kernel_registry().create("omp:reshape", bad, DeviceType::cpu, &why), InvalidArgument);
}

struct LossCase {
  std::string kind;
  Shape shape;
};

TEST(OmpOps, LossAndGradEveryKind) {
  const std::vector<LossCase> cases = {
      {"sparse_categorical_crossentropy", Shape{1, 2}},
      {"sparse_categorical_crossentropy", Shape{7, 10}},
      {"sparse_categorical_crossentropy", Shape{2003, 13}},
      {"categorical_crossentropy", Shape{3, 5}},
      {"categorical_crossentropy", Shape{1501, 17}},
      {"binary_crossentropy", Shape{9}},
      {"binary_crossentropy", Shape{5, 3, 7}},
      {"binary_crossentropy", Shape{129, 257}},
      {"mean_squared_error", Shape{4}},
      {"mean_squared_error", Shape{6, 11}},
      {"mean_squared_error", Shape{64, 5, 5, 17}},
  };
  std::uint64_t seed = 100;
  for (const LossCase& c : cases) {
    for (int from_logits : {0, 1}) {
      SCOPED_TRACE(c.kind + " " + c.shape.to_string() + " from_logits=" + std::to_string(from_logits));
      const bool categorical = c.kind.find("categorical") != std::string::npos;
      Tensor pred = from_logits || c.kind == "mean_squared_error"
                        ? random_tensor(c.shape, seed++, -3.0f, 3.0f)
                        : random_probs(c.shape, seed++, categorical);
      Tensor target;
      if (c.kind == "sparse_categorical_crossentropy") target = random_labels(c.shape[0], c.shape[1], seed++);
      else if (c.kind == "categorical_crossentropy") target = random_probs(c.shape, seed++, true);
      else target = random_tensor(c.shape, seed++, 0.0f, 1.0f);
      Attrs attrs{{"kind", c.kind}, {"from_logits", std::int64_t{from_logits}}};
      expect_matches_reference(make_desc("loss", attrs, {pred, target}, {TensorDesc{Shape{}, DType::f32}}),
                               {pred, target}, 1e-5f, 1e-4f);
      Tensor dloss = scalar(0.7f);
      expect_matches_reference(make_desc("loss_grad", attrs, {pred, target, dloss}, {pred.desc()}),
                               {pred, target, dloss}, 1e-6f, 1e-4f);
    }
  }
}

TEST(OmpOps, LossRejectsBadLabelsAndShapes) {
  Tensor pred = random_tensor(Shape{4, 3}, 200);
  Tensor labels = random_labels(4, 3, 201);
  labels.data<std::int32_t>()[2] = 3;
  Attrs attrs{{"kind", std::string("sparse_categorical_crossentropy")}, {"from_logits", std::int64_t{1}}};
  KernelDesc d = make_desc("loss", attrs, {pred, labels}, {TensorDesc{Shape{}, DType::f32}});
  std::string why;
  auto k = kernel_registry().create("omp:loss", d, DeviceType::cpu, &why);
  ASSERT_NE(k, nullptr) << why;
  try {
    testing::run_kernel(*k, d, {pred, labels}, StepContext{});
    ADD_FAILURE() << "bad label accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("label 3 in row 2"), std::string::npos) << e.what();
  }
  Tensor wrong = random_labels(5, 3, 202);
  EXPECT_THROW(kernel_registry().create("omp:loss", make_desc("loss", attrs, {pred, wrong},
                                                              {TensorDesc{Shape{}, DType::f32}}),
                                        DeviceType::cpu, &why),
               InvalidArgument);
}

TEST(OmpOps, BatchNorm) {
  std::uint64_t seed = 300;
  for (const Shape& s : kChannelShapes) {
    if (s.numel() / s.dim(-1) < 2) continue;  // batch statistics need a spread
    SCOPED_TRACE(s.to_string());
    Shape c{s.dim(-1)};
    // An offset mean checks that neither kernel cancels catastrophically.
    Tensor x = random_tensor(s, seed++, 2.0f, 5.0f);
    Tensor gamma = random_tensor(c, seed++, 0.5f, 1.5f);
    Tensor beta = random_tensor(c, seed++);
    Attrs eps{{"epsilon", 1e-3}};
    expect_matches_reference(make_desc("batch_norm_train", eps, {x, gamma, beta},
                                       {x.desc(), gamma.desc(), gamma.desc()}),
                             {x, gamma, beta}, 1e-4f, 1e-4f);
    Tensor dy = random_tensor(s, seed++);
    Tensor mean = random_tensor(c, seed++, 3.0f, 4.0f);
    Tensor var = random_tensor(c, seed++, 0.5f, 1.0f);
    expect_matches_reference(make_desc("batch_norm_grad", eps, {x, dy, gamma, mean, var},
                                       {x.desc(), gamma.desc(), gamma.desc()}),
                             {x, dy, gamma, mean, var}, 1e-3f, 1e-4f);
    expect_matches_reference(make_desc("batch_norm_infer", eps, {x, gamma, beta, mean, var}, {x.desc()}),
                             {x, gamma, beta, mean, var}, 1e-4f, 1e-4f);
  }
  for (std::int64_t channels : {1, 7, 20001}) {
    Tensor moving = random_tensor(Shape{channels}, seed++);
    Tensor value = random_tensor(Shape{channels}, seed++);
    expect_matches_reference(make_desc("moving_average_update", {{"momentum", 0.99}}, {moving, value}, {}),
                             {moving, value});
  }
}

TEST(OmpOps, DropoutMasksAreBitIdentical) {
  std::uint64_t seed = 400;
  for (const Shape& s : kFlatShapes) {
    for (double rate : {0.0, 0.25, 0.5, 0.9}) {
      Tensor x = random_tensor(s, seed++);
      StepContext ctx;
      ctx.seed = 1234;
      ctx.step = static_cast<std::int64_t>(seed % 7);
      Attrs attrs{{"rate", rate}, {"seed", std::int64_t{42}}};
      expect_matches_reference(make_desc("dropout", attrs, {x}, {x.desc(), TensorDesc{s, DType::u8}}), {x},
                               1e-6f, 1e-6f, true, ctx);
      Tensor mask = Tensor::zeros(s, DType::u8);
      for (std::int64_t i = 0; i < mask.numel(); ++i) mask.data<std::uint8_t>()[i] = (i * 7 + 3) % 5 != 0;
      expect_matches_reference(make_desc("dropout_grad", {{"rate", rate}}, {x, mask}, {x.desc()}), {x, mask},
                               1e-6f, 1e-6f, true, ctx);
    }
  }
}

// A noise shape shares one decision along its axes of size 1 (Keras's noise_shape,
// SpatialDropout, a recurrent layer's input dropout): the same in both kernels, and the
// mask really is constant along those axes.
TEST(OmpOps, DropoutWithANoiseShape) {
  const Shape s{6, 50, 8};
  Tensor x = random_tensor(s, 450);
  StepContext ctx;
  ctx.seed = 99;
  ctx.step = 3;
  for (const std::vector<std::int64_t>& noise : {std::vector<std::int64_t>{6, 1, 8}, std::vector<std::int64_t>{6, 50, 1},
                                                 std::vector<std::int64_t>{1, 1, 8}}) {
    Attrs attrs{{"rate", 0.5}, {"seed", std::int64_t{7}}, {"noise_shape", noise}};
    const KernelDesc d = make_desc("dropout", attrs, {x}, {x.desc(), TensorDesc{s, DType::u8}});
    expect_matches_reference(d, {x}, 1e-6f, 1e-6f, true, ctx);
    std::string why;
    auto k = kernel_registry().create("omp:dropout", d, DeviceType::cpu, &why);
    ASSERT_NE(k, nullptr) << why;
    const Tensor mask = testing::run_kernel(*k, d, {x}, ctx)[1];
    const std::uint8_t* m = mask.data<std::uint8_t>();
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < 6; ++i) {
      for (std::int64_t t = 0; t < 50; ++t) {
        for (std::int64_t f = 0; f < 8; ++f) {
          const std::int64_t at = (i * 50 + t) * 8 + f;
          // The element the decision belongs to: index 0 on the noise's size-1 axes.
          const std::int64_t owner = ((noise[0] == 1 ? 0 : i) * 50 + (noise[1] == 1 ? 0 : t)) * 8 + (noise[2] == 1 ? 0 : f);
          EXPECT_EQ(m[at], m[owner]) << "element " << at;
          kept += m[at];
        }
      }
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, s.numel());
  }
}

// Data-parallel slices (Note [Random draws by global row]): rows [lo, hi) of a batch run
// with StepContext::row_offset = lo draw the mask the whole batch draws for them, in both
// kernels, for offsets that do not fall on a group of four, with and without a noise shape
// (the layers' kind: per row on the batch axis), serial and threaded.
TEST(OmpOps, DropoutSlicesDrawTheWholeBatchsMask) {
  struct Case {
    Shape shape;
    std::vector<std::int64_t> noise;
  };
  const std::vector<Case> cases = {{Shape{12, 5}, {}},
                                   {Shape{9, 7, 3}, {}},
                                   {Shape{6, 4001}, {}},
                                   {Shape{6, 10, 3}, {6, 1, 3}},
                                   {Shape{6, 10, 3}, {6, 10, 1}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.shape.to_string());
    const std::int64_t rows = c.shape[0], per_row = c.shape.numel() / rows;
    Attrs attrs{{"rate", 0.5}, {"seed", std::int64_t{11}}};
    if (!c.noise.empty()) attrs.set("noise_shape", c.noise);
    StepContext ctx;
    ctx.seed = 77;
    ctx.step = 5;
    const Tensor x = random_tensor(c.shape, 900);
    for (const char* kernel : {"omp:dropout", "ref:dropout"}) {
      SCOPED_TRACE(kernel);
      std::string why;
      const KernelDesc whole_desc = make_desc("dropout", attrs, {x}, {x.desc(), TensorDesc{c.shape, DType::u8}});
      auto whole_kernel = kernel_registry().create(kernel, whole_desc, DeviceType::cpu, &why);
      ASSERT_NE(whole_kernel, nullptr) << why;
      const Tensor whole = testing::run_kernel(*whole_kernel, whole_desc, {x}, ctx)[1];
      for (std::int64_t ranks : {2, 3, 4}) {
        for (std::int64_t r = 0; r < ranks; ++r) {
          const std::int64_t lo = rows * r / ranks, hi = rows * (r + 1) / ranks;
          if (hi == lo) continue;
          Shape slice_shape = c.shape;
          slice_shape[0] = hi - lo;
          const Tensor xs = x.slice_rows(lo, hi).clone();
          Attrs slice_attrs = attrs;
          if (!c.noise.empty()) {
            std::vector<std::int64_t> noise = c.noise;
            noise[0] = hi - lo;
            slice_attrs.set("noise_shape", noise);
          }
          const KernelDesc d = make_desc("dropout", slice_attrs, {xs}, {xs.desc(), TensorDesc{slice_shape, DType::u8}});
          auto k = kernel_registry().create(kernel, d, DeviceType::cpu, &why);
          ASSERT_NE(k, nullptr) << why;
          StepContext slice_ctx = ctx;
          slice_ctx.row_offset = lo;
          slice_ctx.rows = hi - lo;
          const Tensor mask = testing::run_kernel(*k, d, {xs}, slice_ctx)[1];
          EXPECT_EQ(std::memcmp(mask.raw(), whole.data<std::uint8_t>() + lo * per_row,
                                static_cast<std::size_t>((hi - lo) * per_row)),
                    0)
              << "rows " << lo << ".." << hi << " of " << rows;
        }
      }
    }
  }
}

TEST(OmpOps, OptimizerUpdates) {
  std::uint64_t seed = 500;
  for (const Shape& s : kFlatShapes) {
    SCOPED_TRACE(s.to_string());
    StepContext ctx;
    ctx.learning_rate = 0.01f;
    ctx.step = 4;
    Tensor p = random_tensor(s, seed++);
    Tensor g = random_tensor(s, seed++);
    Tensor slot = random_tensor(s, seed++);
    Tensor sq = random_tensor(s, seed++, 0.0f, 1.0f);  // second moments are >= 0
    expect_matches_reference(make_desc("sgd_update", {}, {p, g}, {}), {p, g}, 1e-6f, 1e-5f, true, ctx);
    for (std::int64_t nesterov : {0, 1}) {
      Attrs a{{"momentum", 0.9}, {"nesterov", nesterov}};
      expect_matches_reference(make_desc("sgd_momentum_update", a, {p, g, slot}, {}), {p, g, slot}, 1e-6f,
                               1e-5f, true, ctx);
    }
    for (double wd : {0.0, 0.004}) {
      Attrs a{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", wd}};
      expect_matches_reference(make_desc("adam_update", a, {p, g, slot, sq}, {}), {p, g, slot, sq}, 1e-6f,
                               1e-5f, true, ctx);
    }
    Attrs plain{{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}};
    expect_matches_reference(make_desc("rmsprop_update", plain, {p, g, sq}, {}), {p, g, sq}, 1e-6f, 1e-5f,
                             true, ctx);
    Attrs with_momentum{{"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-7}};
    expect_matches_reference(make_desc("rmsprop_update", with_momentum, {p, g, sq, slot}, {}),
                             {p, g, sq, slot}, 1e-6f, 1e-5f, true, ctx);
    // AMSGrad's v_hat; centered RMSprop's average gradient (small, so v − a² stays positive).
    Tensor v_hat = random_tensor(s, seed++, 0.0f, 1.0f);
    Tensor big = random_tensor(s, seed++, 0.1f, 1.0f);
    Tensor average = random_tensor(s, seed++, -0.1f, 0.1f);
    Attrs ams{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", 0.004}, {"amsgrad", std::int64_t{1}}};
    expect_matches_reference(make_desc("adam_update", ams, {p, g, slot, sq, v_hat}, {}), {p, g, slot, sq, v_hat}, 1e-6f,
                             1e-5f, true, ctx);
    for (double momentum : {0.0, 0.5}) {
      Attrs c{{"rho", 0.9}, {"momentum", momentum}, {"epsilon", 1e-7}, {"centered", std::int64_t{1}}};
      std::vector<Tensor> in{p, g, big};
      if (momentum > 0) in.push_back(slot);
      in.push_back(average);
      expect_matches_reference(make_desc("rmsprop_update", c, in, {}), in, 1e-6f, 1e-5f, true, ctx);
    }
  }
}

TEST(OmpOps, RmspropChecksSlotCountAgainstMomentum) {
  Tensor p = random_tensor(Shape{8}, 600);
  std::string why;
  Attrs with_momentum{{"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-7}};
  EXPECT_THROW(kernel_registry().create("omp:rmsprop_update",
                                        make_desc("rmsprop_update", with_momentum, {p, p, p}, {}),
                                        DeviceType::cpu, &why),
               InvalidArgument);
  Attrs plain{{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}};
  EXPECT_THROW(kernel_registry().create("ref:rmsprop_update",
                                        make_desc("rmsprop_update", plain, {p, p, p, p}, {}),
                                        DeviceType::cpu, &why),
               InvalidArgument);
}

TEST(OmpOps, NonF32IsDeclinedWithAReason) {
  // The registry key is input 0's dtype, so a mixed desc reaches the f32 kernels.
  KernelDesc d{"bias_add", {}, {TensorDesc{Shape{2, 3}, DType::f32}, TensorDesc{Shape{3}, DType::f16}},
               {TensorDesc{Shape{2, 3}, DType::f32}}, "test/bias_add"};
  std::string why;
  EXPECT_EQ(kernel_registry().create("omp:bias_add", d, DeviceType::cpu, &why), nullptr);
  EXPECT_NE(why.find("input 1 is float16"), std::string::npos) << why;
  EXPECT_EQ(kernel_registry().create("ref:bias_add", d, DeviceType::cpu, &why), nullptr);
}

TEST(OmpOps, Reductions) {
  // Global pooling shapes: spatial axes reduced, channels last or first; big enough for
  // the threaded path, and with ties for reduce_max's gradient (values rounded to 0.5).
  std::uint64_t seed = 90;
  const struct {
    Shape x;
    std::vector<std::int64_t> axes;
  } kCases[] = {{Shape{2, 7, 3}, {1}}, {Shape{3, 5, 4, 6}, {1, 2}}, {Shape{3, 6, 5, 4}, {2, 3}},
                {Shape{64, 7, 7, 64}, {1, 2}}, {Shape{2, 3, 4, 2, 5}, {1, 2, 3}}};
  for (const auto& c : kCases) {
    for (std::int64_t keepdims : {0, 1}) {
      Attrs a;
      a.set("axes", c.axes);
      a.set("keepdims", keepdims);
      Tensor x = random_tensor(c.x, seed++);
      for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 2) / 2;
      std::vector<std::int64_t> ydims;
      for (std::int64_t d = 0; d < c.x.rank(); ++d) {
        const bool reduced = d >= c.axes.front() && d <= c.axes.back();
        if (!reduced || keepdims) ydims.push_back(reduced ? 1 : c.x[d]);
      }
      const TensorDesc y{Shape(ydims), DType::f32};
      expect_matches_reference(make_desc("reduce_mean", a, {x}, {y}), {x});
      expect_matches_reference(make_desc("reduce_max", a, {x}, {y}), {x});
      Tensor dy = random_tensor(y.shape, seed++);
      Attrs g = a;
      g.set("input_shape", c.x.dims());
      expect_matches_reference(make_desc("reduce_mean_grad", g, {dy}, {x.desc()}), {dy});
      // reduce_max_grad takes the forward output, as the reference computes it.
      const KernelDesc fwd = make_desc("reduce_max", a, {x}, {y});
      auto ref = kernel_registry().create("ref:reduce_max", fwd, DeviceType::cpu, nullptr);
      ASSERT_NE(ref, nullptr);
      const Tensor ymax = testing::run_kernel(*ref, fwd, {x}, StepContext{})[0];
      expect_matches_reference(make_desc("reduce_max_grad", a, {x, ymax, dy}, {x.desc()}), {x, ymax, dy});
    }
  }
}


// masked_softmax and its gradient at attention's sizes (threaded) and small ones, with
// heads sharing a sample's mask and a row with no key left (uniform or zeroed).
TEST(OmpOps, MaskedSoftmax) {
  const struct {
    std::int64_t batch, heads, t, s;
  } kCases[] = {{1, 1, 3, 5}, {2, 3, 4, 7}, {16, 4, 64, 64}};
  std::uint64_t seed = 120;
  for (const auto& c : kCases) {
    Tensor mask = random_tensor(Shape{c.batch, c.t, c.s}, seed++, 0.0f, 1.0f);
    float* m = mask.data<float>();
    for (std::int64_t i = 0; i < mask.numel(); ++i) m[i] = m[i] < 0.3f ? 0.0f : 1.0f;
    for (std::int64_t j = 0; j < c.s; ++j) m[j] = 0.0f;  // sample 0, query 0: no key left
    const Shape scores{c.batch * c.heads, c.t, c.s};
    for (std::int64_t zero_rows : {0, 1}) {
      Attrs a;
      a.set("zero_masked_rows", zero_rows);
      Tensor x = random_tensor(scores, seed++, -4.0f, 4.0f);
      expect_matches_reference(make_desc("masked_softmax", a, {x, mask}, {TensorDesc{scores}}), {x, mask});
    }
    Tensor y = random_probs(scores, seed++, true);
    Tensor dy = random_tensor(scores, seed++);
    expect_matches_reference(make_desc("masked_softmax_grad", {}, {y, dy, mask}, {TensorDesc{scores}}), {y, dy, mask});
  }
}

// layer_norm and layer_norm_grad: rows of a Transformer's width (threaded) and odd ones;
// dgamma and dbeta are sums over every row; in each mode.
TEST(OmpOps, LayerNorm) {
  std::uint64_t seed = 140;
  for (const Shape& x : {Shape{3, 5}, Shape{7, 2, 33}, Shape{64, 64, 64}})
  for (const char* mode : {"layer", "rms_scaling", "rms"}) {
    SCOPED_TRACE(x.to_string() + " " + mode);
    const Shape c{x.dim(-1)};
    const Shape rows(std::vector<std::int64_t>(x.dims().begin(), x.dims().end() - 1));
    Attrs a;
    a.set("epsilon", 1e-6);
    a.set("mode", std::string(mode));
    const bool zero_mean = mode == std::string("rms");
    Tensor in = random_tensor(x, seed++, -3.0f, 5.0f), gamma = random_tensor(c, seed++), beta = random_tensor(c, seed++);
    expect_matches_reference(make_desc("layer_norm", a, {in, gamma, beta}, {TensorDesc{x}, TensorDesc{rows}, TensorDesc{rows}}),
                             {in, gamma, beta}, 2e-5f);
    Tensor mean = Tensor::zeros(rows), rstd = Tensor::zeros(rows);
    for (std::int64_t r = 0; r < rows.numel(); ++r) {
      double s = 0.0, v = 0.0;
      for (std::int64_t j = 0; j < c[0]; ++j) s += in.data<float>()[r * c[0] + j];
      s = zero_mean ? 0.0 : s / static_cast<double>(c[0]);
      for (std::int64_t j = 0; j < c[0]; ++j) v += std::pow(in.data<float>()[r * c[0] + j] - s, 2);
      mean.data<float>()[r] = static_cast<float>(s);
      rstd.data<float>()[r] = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(c[0]) + 1e-6));
    }
    Tensor dy = random_tensor(x, seed++);
    expect_matches_reference(
        make_desc("layer_norm_grad", a, {in, dy, gamma, mean, rstd}, {TensorDesc{x}, TensorDesc{c}, TensorDesc{c}}),
        {in, dy, gamma, mean, rstd}, 2e-4f);
  }
}

// resize and resize_grad: every method, antialias on and off, up and down with odd sizes,
// and one big enough for the threaded path; a desc naming no known method is refused.
TEST(OmpOps, Resize) {
  std::uint64_t seed = 160;
  const struct {
    Shape x;
    std::int64_t oh, ow;
  } kCases[] = {{Shape{1, 1, 1, 1}, 3, 2}, {Shape{2, 5, 7, 3}, 9, 4}, {Shape{3, 8, 6, 2}, 3, 11},
                {Shape{4, 32, 24, 16}, 45, 17}};
  for (const auto& c : kCases)
  for (const char* method : {"nearest", "bilinear", "bicubic", "area", "lanczos3", "lanczos5"})
  for (std::int64_t antialias : {0, 1}) {
    SCOPED_TRACE(c.x.to_string() + " -> " + std::to_string(c.oh) + "x" + std::to_string(c.ow) + " " + method +
                 (antialias ? " antialias" : ""));
    Attrs a;
    a.set("size", std::vector<std::int64_t>{c.oh, c.ow});
    a.set("method", std::string(method));
    a.set("antialias", antialias);
    const TensorDesc y{Shape{c.x[0], c.oh, c.ow, c.x[3]}};
    Tensor x = random_tensor(c.x, seed++);
    expect_matches_reference(make_desc("resize", a, {x}, {y}), {x}, 1e-5f, 1e-5f);
    Attrs g;
    g.set("method", std::string(method));
    g.set("antialias", antialias);
    g.set("input_shape", c.x.dims());
    Tensor dy = random_tensor(y.shape, seed++);
    expect_matches_reference(make_desc("resize_grad", g, {dy}, {x.desc()}), {dy}, 1e-5f, 1e-5f);
  }
  Attrs bad;
  bad.set("size", std::vector<std::int64_t>{2, 2});
  bad.set("method", std::string("cubic"));
  Tensor x = random_tensor(Shape{1, 3, 3, 1}, seed);
  const KernelDesc d = make_desc("resize", bad, {x}, {TensorDesc{Shape{1, 2, 2, 1}}});
  EXPECT_THROW(kernel_registry().create("omp:resize", d, DeviceType::cpu, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
