// Conformance of the pooling ops: oneDNN's max and average pooling and average-pool
// gradient, the OpenMP max-pool gradients (from x, and from the argmax bytes the forward
// keeps, Note [Pool argmax]), against ref:<op> on random inputs with ties; and hand-computed
// cases that check the reference kernels themselves.
#include <cmath>
#include <cstring>

#include "conformance/harness.h"
#include "nnfit/core/pool_argmax.h"

namespace nnfit {
namespace {

using testing::expect_matches_reference;
using testing::out_size;
using testing::random_tensor;
using Ints = std::vector<std::int64_t>;

// The harness's (harness.h), under this file's names.
using testing::expect_values;
constexpr auto make_desc = testing::f32_desc;
constexpr auto run_ref = testing::run_reference;
constexpr auto from_values = testing::tensor_of;

struct PoolCase {
  std::int64_t n, h, w, c, k, s;
  std::string padding;
};

std::vector<PoolCase> pool_cases() {
  return {{2, 8, 8, 3, 2, 2, "valid"},   {2, 7, 9, 1, 2, 2, "valid"},  {3, 9, 7, 5, 3, 2, "same"},
          {2, 8, 8, 16, 3, 2, "same"},   {1, 6, 5, 2, 3, 1, "same"},   {2, 7, 7, 4, 3, 2, "valid"},
          {2, 28, 28, 32, 2, 2, "valid"},
          // Disjoint windows with 16-channel blocks: a remainder row/column, clipped
          // same-padding windows, and stride > pool (uncovered gaps).
          {2, 11, 11, 16, 2, 2, "valid"}, {2, 7, 9, 32, 2, 2, "same"},  {1, 9, 9, 16, 2, 3, "valid"}};
}

Attrs pool_attrs(const PoolCase& p) {
  return Attrs{{"pool_size", Ints{p.k, p.k}}, {"strides", Ints{p.s, p.s}}, {"padding", p.padding}};
}

Shape pool_out(const PoolCase& p) {
  return Shape{p.n, out_size(p.h, p.k, p.s, p.padding), out_size(p.w, p.k, p.s, p.padding), p.c};
}

std::string trace(const PoolCase& p) {
  return "x=[" + std::to_string(p.n) + "," + std::to_string(p.h) + "," + std::to_string(p.w) + "," +
         std::to_string(p.c) + "] k=" + std::to_string(p.k) + " s=" + std::to_string(p.s) + " " +
         p.padding;
}

TEST(OnednnPool, MaxAndAvgForward) {
  for (const PoolCase& p : pool_cases()) {
    SCOPED_TRACE(trace(p));
    Shape x{p.n, p.h, p.w, p.c};
    for (const char* op : {"max_pool2d", "avg_pool2d"}) {
      expect_matches_reference(make_desc(op, pool_attrs(p), {x}, {pool_out(p)}), {random_tensor(x, 30)});
    }
  }
}

TEST(OnednnPool, AvgGrad) {
  for (const PoolCase& p : pool_cases()) {
    SCOPED_TRACE(trace(p));
    Shape x{p.n, p.h, p.w, p.c};
    Attrs a = pool_attrs(p);
    a.set("input_shape", x.dims());
    expect_matches_reference(make_desc("avg_pool2d_grad", a, {pool_out(p)}, {x}),
                             {random_tensor(pool_out(p), 31)});
  }
}

TEST(OmpMaxPoolGrad, MatchesReferenceIncludingTies) {
  for (const PoolCase& p : pool_cases()) {
    for (bool ties : {false, true}) {
      SCOPED_TRACE(trace(p) + (ties ? " with ties" : ""));
      Shape x{p.n, p.h, p.w, p.c};
      Tensor xt = random_tensor(x, 32, -2.0f, 2.0f);
      if (ties) {
        for (std::int64_t i = 0; i < xt.numel(); ++i) xt.data<float>()[i] = std::round(xt.data<float>()[i]);
      }
      Tensor y = run_ref(make_desc("max_pool2d", pool_attrs(p), {x}, {pool_out(p)}), {xt});
      expect_matches_reference(make_desc("max_pool2d_grad", pool_attrs(p), {x, pool_out(p), pool_out(p)}, {x}),
                               {xt, y, random_tensor(pool_out(p), 33)});
      // With the fused relu gradient (x is a relu output: clamp it at 0 to get zeros and ties at 0).
      Tensor xr = xt.clone();
      for (std::int64_t i = 0; i < xr.numel(); ++i) xr.data<float>()[i] = std::max(0.0f, xr.data<float>()[i]);
      Tensor yr = run_ref(make_desc("max_pool2d", pool_attrs(p), {x}, {pool_out(p)}), {xr});
      Attrs fused = pool_attrs(p);
      fused.set("relu", std::int64_t{1});
      expect_matches_reference(make_desc("max_pool2d_grad", fused, {x, pool_out(p), pool_out(p)}, {x}),
                               {xr, yr, random_tensor(pool_out(p), 34)});
      // With the bias gradient of the layer before (dx summed per channel), both ways.
      const Shape db{p.c};
      expect_matches_reference(make_desc("max_pool2d_grad_bias", pool_attrs(p), {x, pool_out(p), pool_out(p)}, {x, db}),
                               {xt, y, random_tensor(pool_out(p), 35)});
      expect_matches_reference(make_desc("max_pool2d_grad_bias", fused, {x, pool_out(p), pool_out(p)}, {x, db}),
                               {xr, yr, random_tensor(pool_out(p), 36)});
    }
  }
}

// A float32 desc but for the argmax byte: max_pool2d_argmax's output 1, its gradients' input 1.
KernelDesc argmax_desc(const std::string& op, Attrs a, std::vector<Shape> ins, std::vector<Shape> outs) {
  KernelDesc d = make_desc(op, std::move(a), std::move(ins), std::move(outs));
  (op == "max_pool2d_argmax" ? d.outputs[1] : d.inputs[1]).dtype = DType::u8;
  return d;
}

// Every output of the reference kernel of `desc` on `inputs`.
std::vector<Tensor> run_ref_outputs(const KernelDesc& desc, const std::vector<Tensor>& inputs) {
  std::string why;
  auto ref = kernel_registry().create("ref:" + desc.op, desc, DeviceType::cpu, &why);
  EXPECT_NE(ref, nullptr) << why;
  std::vector<Tensor> all = testing::run_kernel(*ref, desc, inputs, StepContext{});
  all.resize(desc.outputs.size());
  return all;
}

// Note [Pool argmax]: the forward's y and argmax bytes, and the gradients from them, by the
// OpenMP kernels against the reference; and the reference's dx and db from the bytes equal
// to max_pool2d_grad(_bias)'s from x, the path the argmax replaces (relu both ways: with
// relu=1 both zero the gradient where the window's max is not > 0).
TEST(OmpMaxPoolArgmax, MatchesReferenceAndTheGradientFromX) {
  for (const PoolCase& p : pool_cases()) {
    for (bool ties : {false, true}) {
      for (bool relu_input : {false, true}) {
        SCOPED_TRACE(trace(p) + (ties ? " with ties" : "") + (relu_input ? ", x a relu output" : ""));
        const Shape x{p.n, p.h, p.w, p.c}, y = pool_out(p), db{p.c};
        Tensor xt = random_tensor(x, 42, -2.0f, 2.0f);
        for (std::int64_t i = 0; i < xt.numel(); ++i) {
          float& v = xt.data<float>()[i];
          if (ties) v = std::round(v);
          if (relu_input) v = std::max(0.0f, v);
        }
        const KernelDesc forward = argmax_desc("max_pool2d_argmax", pool_attrs(p), {x}, {y, y});
        expect_matches_reference(forward, {xt});
        const std::vector<Tensor> yat = run_ref_outputs(forward, {xt});
        const Tensor plain_y = run_ref(make_desc("max_pool2d", pool_attrs(p), {x}, {y}), {xt});
        EXPECT_EQ(0, std::memcmp(yat[0].raw(), plain_y.raw(), plain_y.nbytes())) << "y is max_pool2d's, bit for bit";
        const Tensor dy = random_tensor(y, 43);
        for (std::int64_t relu : {0, 1}) {
          Attrs a = pool_attrs(p);
          a.set("relu", relu);
          Attrs with_shape = a;
          with_shape.set("input_shape", x.dims());
          const KernelDesc grad = argmax_desc("max_pool2d_argmax_grad", with_shape, {y, y}, {x});
          const KernelDesc grad_bias = argmax_desc("max_pool2d_argmax_grad_bias", with_shape, {y, y}, {x, db});
          expect_matches_reference(grad, {dy, yat[1]});
          expect_matches_reference(grad_bias, {dy, yat[1]});
          const std::vector<Tensor> from_argmax = run_ref_outputs(grad_bias, {dy, yat[1]});
          const std::vector<Tensor> from_x =
              run_ref_outputs(make_desc("max_pool2d_grad_bias", a, {x, y, y}, {x, db}), {xt, plain_y, dy});
          testing::expect_close(from_x[0], from_argmax[0], 0.0f, 0.0f, "dx against max_pool2d_grad's");
          testing::expect_close(from_x[1], from_argmax[1], 1e-6f, 1e-6f, "db against max_pool2d_grad_bias's");
        }
      }
    }
  }
}

TEST(RefMaxPool, ArgmaxBytesSayWhereTheFirstMaximumIs) {
  // 3x3 windows at stride 2 with same padding on a 3x4 image: TensorFlow pads one row above
  // and one below, no column before and one after, so window (oh, ow) spans rows
  // 2*oh-1 .. 2*oh+1 and columns 2*ow .. 2*ow+2, and a position counts the padding.
  Attrs a{{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", std::string("same")}};
  const KernelDesc d = argmax_desc("max_pool2d_argmax", a, {{1, 3, 4, 1}}, {{1, 2, 2, 1}, {1, 2, 2, 1}});
  const Tensor x = from_values({1, 3, 4, 1}, {1, 7, 2, 7,  //
                                              0, 7, -1, 4,  //
                                              -5, -2, -3, -4});
  const std::vector<Tensor> out = run_ref_outputs(d, {x});
  expect_values(out[0], {7, 7, 7, 4});
  const auto* at = static_cast<const std::uint8_t*>(out[1].raw());
  // (0,0): the 7s at image (0,1) and (1,1) tie; the first, window row 1 column 1, is 1*3+1 = 4.
  // (0,1): the 7 at image (0,3) is window row 1, column 1: 4.
  // (1,0): the 7 at image (1,1) is window row 0, column 1: 1.
  // (1,1): the 4 at image (1,3) is window row 0, column 1: 1.
  EXPECT_EQ(at[0], 4);
  EXPECT_EQ(at[1], 4);
  EXPECT_EQ(at[2], 1);
  EXPECT_EQ(at[3], 1);
  const Tensor negative = from_values({1, 3, 4, 1}, {-1, -7, -2, -7, -9, -3, -1, -4, -5, -2, -3, -4});
  const std::vector<Tensor> neg = run_ref_outputs(d, {negative});
  const auto* nat = static_cast<const std::uint8_t*>(neg[1].raw());
  for (int i = 0; i < 4; ++i) EXPECT_NE(nat[i] & kArgmaxNotPositive, 0) << "window " << i << ": the max is not > 0";
  EXPECT_EQ(at[0] & kArgmaxNotPositive, 0);
}

TEST(RefMaxPool, TieSendsGradToFirstPosition) {
  // One 2x2 window of equal values; overlapping 2x2 stride 1 windows on a 2x3 input.
  Attrs a{{"pool_size", Ints{2, 2}}, {"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
  auto d = make_desc("max_pool2d_grad", a, {{1, 2, 3, 1}, {1, 1, 2, 1}, {1, 1, 2, 1}}, {{1, 2, 3, 1}});
  Tensor x = from_values({1, 2, 3, 1}, {5, 5, 5, 5, 5, 5});
  Tensor y = from_values({1, 1, 2, 1}, {5, 5});
  Tensor dy = from_values({1, 1, 2, 1}, {1, 10});
  // Window 0 covers columns 0-1 -> position (0,0); window 1 covers 1-2 -> position (0,1).
  expect_values(run_ref(d, {x, y, dy}), {1, 10, 0, 0, 0, 0});
  auto fwd = make_desc("max_pool2d", a, {{1, 2, 3, 1}}, {{1, 1, 2, 1}});
  expect_values(run_ref(fwd, {from_values({1, 2, 3, 1}, {-3, -1, -2, -5, -4, -6})}), {-1, -1});
}

TEST(RefMaxPool, PaddingNeverWins) {
  // All-negative input with same padding: a padded zero must not be the max.
  Attrs a{{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", std::string("same")}};
  auto d = make_desc("max_pool2d", a, {{1, 3, 3, 1}}, {{1, 2, 2, 1}});
  Tensor x = from_values({1, 3, 3, 1}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  // out 2x2, pad_total = (2-1)*2+3-3 = 2 -> 1 before, 1 after.
  expect_values(run_ref(d, {x}), {-1, -2, -4, -5});
}

TEST(RefAvgPool, SamePaddingDividesByValidCount) {
  Attrs a{{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", std::string("same")}};
  auto d = make_desc("avg_pool2d", a, {{1, 3, 3, 1}}, {{1, 2, 2, 1}});
  Tensor x = from_values({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  // Corner windows see 2x2 valid pixels: (1+2+4+5)/4 = 3, (2+3+5+6)/4 = 4, ...
  expect_values(run_ref(d, {x}), {3, 4, 6, 7});
  Attrs g = a;
  g.set("input_shape", Ints{1, 3, 3, 1});
  auto dg = make_desc("avg_pool2d_grad", g, {{1, 2, 2, 1}}, {{1, 3, 3, 1}});
  // Each window spreads 4/4 = 1 over its 2x2 valid pixels; the centre row/column are shared.
  expect_values(run_ref(dg, {from_values({1, 2, 2, 1}, {4, 4, 4, 4})}), {1, 2, 1, 2, 4, 2, 1, 2, 1});
}

}  // namespace
}  // namespace nnfit
