// fused_conv2d_max_pool_argmax_grad (cpu_conv_max_pool_argmax_grad.cpp): the first layer's
// filter and bias gradients from x, the pool's dy and its argmax bytes, against the
// reference (the reference pool gradient, then the reference filter gradient) at every
// kind of window, with and without the relu gradient folded in, at float32 and bfloat16
// (dw and db float32 as mixed precision plans them, or bfloat16); the same bits on one
// thread and on two; and against the two ops it joins, as the registry picks them.
#include <omp.h>

#include <cstring>

#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/onednn_kernels.h"
#include "low_precision.h"

namespace nnfit::testing {
namespace {

using Ints = std::vector<std::int64_t>;

struct GradCase {
  std::int64_t n, h, w, c, k, o, s, d;
  const char* padding;
  std::int64_t pool, pool_stride;
  const char* pool_padding;
  bool relu;
};

std::string trace(const GradCase& c) {
  return std::to_string(c.n) + "x" + std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) +
         " k" + std::to_string(c.k) + " o" + std::to_string(c.o) + " s" + std::to_string(c.s) + " d" +
         std::to_string(c.d) + " " + c.padding + ", pool " + std::to_string(c.pool) + "/" +
         std::to_string(c.pool_stride) + " " + c.pool_padding + (c.relu ? ", relu" : "");
}

std::int64_t out_size(std::int64_t in, std::int64_t span, std::int64_t s, const std::string& p) {
  return p == "same" ? (in + s - 1) / s : (in - span) / s + 1;
}

// The forward op's float32 desc (to make real argmax bytes) and the joined gradient's.
struct Descs {
  KernelDesc forward, grad;
};

Descs descs(const GradCase& c) {
  const std::int64_t span = (c.k - 1) * c.d + 1;
  const std::int64_t oh = out_size(c.h, span, c.s, c.padding), ow = out_size(c.w, span, c.s, c.padding);
  const std::int64_t ph = out_size(oh, c.pool, c.pool_stride, c.pool_padding),
                     pw = out_size(ow, c.pool, c.pool_stride, c.pool_padding);
  Attrs conv{{"strides", Ints{c.s, c.s}}, {"padding", std::string(c.padding)}, {"dilations", Ints{c.d, c.d}}};
  Attrs f = conv;
  f.set("activation", std::string(c.relu ? "relu" : "linear"));
  Attrs g = conv;
  g.set("filter_shape", Ints{c.k, c.k, c.c, c.o});
  g.set("relu", std::int64_t{c.relu ? 1 : 0});
  g.set("input_shape", Ints{c.n, oh, ow, c.o});
  for (Attrs* a : {&f, &g}) {
    a->set("pool_size", Ints{c.pool, c.pool});
    a->set("pool_strides", Ints{c.pool_stride, c.pool_stride});
    a->set("pool_padding", std::string(c.pool_padding));
  }
  Descs d;
  d.forward = f32_desc("fused_conv2d_max_pool_argmax", f, {{c.n, c.h, c.w, c.c}, {c.k, c.k, c.c, c.o}, {c.o}},
                       {{c.n, ph, pw, c.o}, {c.n, ph, pw, c.o}});
  d.forward.outputs[1].dtype = DType::u8;
  d.grad = f32_desc("fused_conv2d_max_pool_argmax_grad", g, {{c.n, c.h, c.w, c.c}, {c.n, ph, pw, c.o}, {c.n, ph, pw, c.o}},
                    {{c.k, c.k, c.c, c.o}, {c.o}});
  d.grad.inputs[2].dtype = DType::u8;
  return d;
}

const GradCase kCases[] = {
    {3, 28, 28, 1, 3, 32, 1, 1, "valid", 2, 2, "valid", true},   // the Fashion-MNIST convnet's first layer
    {2, 13, 12, 1, 3, 48, 1, 1, "valid", 2, 2, "valid", false},  // the 3x3 path: odd rows, a pair of vectors and one
    {2, 9, 8, 1, 3, 20, 1, 1, "same", 2, 2, "same", true},       // padding, a channel tail: the two ops
    {2, 10, 10, 1, 3, 16, 2, 1, "same", 3, 2, "valid", true},    // overlapping windows, stride 2
    {2, 12, 12, 1, 3, 32, 1, 2, "valid", 2, 2, "valid", true},   // dilation 2
};

// x, dy and the argmax bytes the forward op makes from x (so bit 7 and the positions are
// real), for the float32 desc.
std::vector<Tensor> inputs_of(const Descs& d, std::uint64_t seed) {
  const Tensor x = random_tensor(d.grad.inputs[0].shape, seed);
  const Tensor w = random_tensor(d.forward.inputs[1].shape, seed + 1), b = random_tensor(d.forward.inputs[2].shape, seed + 2);
  std::string why;
  auto forward = kernel_registry().create("ref:" + d.forward.op, d.forward, DeviceType::cpu, &why);
  EXPECT_NE(forward, nullptr) << why;
  const Tensor argmax = run_kernel(*forward, d.forward, {x, w, b}, StepContext{})[1];
  return {x, random_tensor(d.grad.inputs[1].shape, seed + 3), argmax};
}

TEST(OmpConvMaxPoolArgmaxGrad, MatchesTheReferenceAtFloat32) {
  for (const GradCase& c : kCases) {
    SCOPED_TRACE(trace(c));
    const Descs d = descs(c);
    expect_matches_reference(d.grad, inputs_of(d, 61), 1e-4f, 1e-4f);
  }
}

TEST(OmpConvMaxPoolArgmaxGrad, MatchesTheReferenceOnRoundedInputsAtBfloat16) {
  for (const GradCase& c : kCases) {
    SCOPED_TRACE(trace(c));
    const Descs d = descs(c);
    const std::vector<Tensor> inputs = inputs_of(d, 71);
    for (bool f32_outputs : {true, false}) {
      SCOPED_TRACE(f32_outputs ? "dw and db float32" : "dw and db bfloat16");
      EXPECT_GT(expect_low_precision_matches_reference(d.grad, inputs, DType::bf16, {}, f32_outputs), 0);
    }
  }
}

// Against what it replaces: the registry's max_pool2d_argmax_grad_bias, then its
// conv2d_backprop_filter over that dy1, at the convnet's shapes and both types.
TEST(OmpConvMaxPoolArgmaxGrad, MatchesTheTwoOpsItJoins) {
  const GradCase c{16, 28, 28, 1, 3, 32, 1, 1, "valid", 2, 2, "valid", true};
  for (DType dt : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Descs d = descs(c);
    const KernelDesc low = at_dtype(d.grad, dt, true);  // dw and db float32
    std::vector<Tensor> in;
    for (const Tensor& t : inputs_of(d, 81)) in.push_back(to_dtype(t, dt));
    const ConvPoolGradDescs parts = split_conv_pool_grad(low);
    const SelectedKernel pool = kernel_registry().select(parts.pool, DeviceType::cpu);
    const std::vector<Tensor> dy1_db = run_kernel(*pool.kernel, parts.pool, {in[1], in[2]}, StepContext{});
    const SelectedKernel filter = kernel_registry().select(parts.filter, DeviceType::cpu);
    const Tensor dw = run_kernel(*filter.kernel, parts.filter, {in[0], dy1_db[0]}, StepContext{})[0];
    std::string why;
    auto joined = kernel_registry().create("omp:" + low.op, low, DeviceType::cpu, &why);
    ASSERT_NE(joined, nullptr) << why;
    const std::vector<Tensor> got = run_kernel(*joined, low, in, StepContext{});
    float scale = 0.0f;
    for (std::int64_t i = 0; i < dw.numel(); ++i) scale = std::max(scale, std::fabs(dw.data<float>()[i]));
    expect_close(dw, got[0], 1e-5f * scale, 0.0f, "dw against " + pool.impl_name + ", " + filter.impl_name);
    expect_close(dy1_db[1], got[1], 1e-4f, 1e-5f, "db against " + pool.impl_name);
  }
}

TEST(OmpConvMaxPoolArgmaxGrad, SameBitsOnOneThreadAndOnTwo) {
  const GradCase c{37, 28, 28, 1, 3, 32, 1, 1, "valid", 2, 2, "valid", true};
  const Descs d = descs(c);
  for (DType dt : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(dt));
    const KernelDesc low = at_dtype(d.grad, dt, true);
    std::vector<Tensor> in;
    for (const Tensor& t : inputs_of(d, 91)) in.push_back(to_dtype(t, dt));
    const int was = omp_get_max_threads();
    std::vector<std::vector<Tensor>> out;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      std::string why;
      auto k = kernel_registry().create("omp:" + low.op, low, DeviceType::cpu, &why);
      ASSERT_NE(k, nullptr) << why;
      out.push_back(run_kernel(*k, low, in, StepContext{}));
    }
    omp_set_num_threads(was);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(0, std::memcmp(out[0][i].raw(), out[1][i].raw(), out[0][i].nbytes())) << "output " << i;
    }
  }
}

}  // namespace
}  // namespace nnfit::testing
