// The cuBLASLt and cuDNN descriptors nnfit computes (gemm_plan.h, dnn_plan.h), checked on
// the host by emulating the vendor call's documented semantics from the plan alone
// (column-major GEMM with ld and op; a convolution / pooling that reads every tensor
// through its dims, strides and pre/post paddings) and comparing with the reference
// kernels. A wrong m/n/k, leading dimension, transpose, stride, padding or filter reorder
// changes the emulated result, so the test fails where the GPU would compute garbage.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cuda/dnn_plan.h"
#include "backend/cuda/gemm_plan.h"
#include "backend/cuda/kernels/launch.h"
#include "backend/cuda/kernels/reorder_kernels.h"
#include "backend/ref/ref_nn_kernel.h"
#include "nnfit/core/error.h"
#include "conformance/harness.h"

namespace nnfit::testing {
namespace {

using cuda::GemmOperand;
using cuda::GemmPlan;

// cublasLtMatmul's D = op(A)·op(B) (+ bias over rows, relu), column-major, batched.
std::vector<float> emulate_gemm(const GemmPlan& p, const float* a, const float* b, const float* bias) {
  std::vector<float> d(static_cast<std::size_t>(p.batch * p.d.batch_stride), std::nanf(""));
  const auto at = [](const GemmOperand& o, const float* base, std::int64_t i, std::int64_t j) {
    return o.transpose ? base[j + i * o.ld] : base[i + j * o.ld];  // element (i, j) of op(X)
  };
  for (std::int64_t q = 0; q < p.batch; ++q) {
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j) {
        double s = 0;
        for (std::int64_t k = 0; k < p.k; ++k) {
          s += static_cast<double>(at(p.a, a + q * p.a.batch_stride, i, k)) * at(p.b, b + q * p.b.batch_stride, k, j);
        }
        if (p.epilogue != cuda::GemmEpilogue::none) s += bias[i];
        if (p.epilogue == cuda::GemmEpilogue::relu_bias) s = std::max(s, 0.0);
        d[static_cast<std::size_t>(q * p.d.batch_stride + i + j * p.d.ld)] = static_cast<float>(s);
      }
    }
  }
  return d;
}

void expect_gemm_plan_matches(const KernelDesc& d, const std::vector<Tensor>& in) {
  SCOPED_TRACE(d.op + " " + d.attrs.to_string() + " " + in[0].shape().to_string() + " x " + in[1].shape().to_string());
  const GemmPlan p = cuda::plan_gemm(d);
  // The operands are nnfit's tensors as they are: A is b, B is a.
  std::vector<float> got = emulate_gemm(p, in[1].data<float>(), in[0].data<float>(), in.size() > 2 ? in[2].data<float>() : nullptr);
  Tensor want = run_reference(d, in);
  ASSERT_EQ(static_cast<std::int64_t>(got.size()), want.numel());
  std::vector<float> after = got;
  if (p.after != ActivationKind::linear) {  // the separate activation the plan asks for
    ActivationArgs act = default_activation_args(p.after);
    for (float& v : after) v = static_cast<float>(ref_activation(act, v));
  }
  expect_close(want, tensor_of(want.shape(), after), 1e-5f, 1e-5f, "emulated cuBLASLt call");
}

}  // namespace

TEST(CudaDescriptors, GemmPlanIsTheRowMajorProductForEveryTranspose) {
  for (std::int64_t ta : {0, 1}) {
    for (std::int64_t tb : {0, 1}) {
      const std::int64_t m = 5, k = 7, n = 3;
      const Tensor a = random_tensor(ta ? Shape{k, m} : Shape{m, k}, 1 + ta), b = random_tensor(tb ? Shape{n, k} : Shape{k, n}, 3 + tb);
      const Attrs attrs{{"transpose_a", ta}, {"transpose_b", tb}};
      expect_gemm_plan_matches(f32_desc("matmul", attrs, {a.shape(), b.shape()}, {Shape{m, n}}), {a, b});
      const GemmPlan p = cuda::plan_gemm(f32_desc("matmul", attrs, {a.shape(), b.shape()}, {Shape{m, n}}));
      EXPECT_EQ(p.m, n);  // D is cᵀ: its rows are c's columns
      EXPECT_EQ(p.n, m);
      EXPECT_EQ(p.d.ld, n);
      EXPECT_EQ(p.a.transpose, tb != 0);
      EXPECT_EQ(p.b.transpose, ta != 0);
      const Tensor ab = random_tensor(ta ? Shape{4, k, m} : Shape{4, m, k}, 5), bb = random_tensor(tb ? Shape{4, n, k} : Shape{4, k, n}, 6);
      expect_gemm_plan_matches(f32_desc("batch_matmul", attrs, {ab.shape(), bb.shape()}, {Shape{4, m, n}}), {ab, bb});
    }
  }
}

TEST(CudaDescriptors, GemmEpiloguesFoldBiasAndRelu) {
  const Tensor a = random_tensor(Shape{6, 9}, 10), b = random_tensor(Shape{9, 4}, 11), bias = random_tensor(Shape{4}, 12);
  for (const char* act : {"linear", "relu", "sigmoid", "tanh"}) {
    const KernelDesc d = f32_desc("fused_matmul", {{"activation", std::string(act)}}, {Shape{6, 9}, Shape{9, 4}, Shape{4}}, {Shape{6, 4}});
    expect_gemm_plan_matches(d, {a, b, bias});
    const GemmPlan p = cuda::plan_gemm(d);
    EXPECT_EQ(p.epilogue, std::string(act) == "relu" ? cuda::GemmEpilogue::relu_bias : cuda::GemmEpilogue::bias) << act;
    EXPECT_EQ(p.after == ActivationKind::linear, std::string(act) == "linear" || std::string(act) == "relu") << act;
  }
  KernelDesc bf = f32_desc("matmul", {}, {Shape{6, 9}, Shape{9, 4}}, {Shape{6, 4}});
  for (TensorDesc& t : bf.inputs) t.dtype = DType::bf16;
  bf.outputs[0].dtype = DType::bf16;
  EXPECT_EQ(cuda::plan_gemm(bf).dtype, DType::bf16);
  EXPECT_THROW(cuda::plan_gemm(f32_desc("matmul", {}, {Shape{6, 9}, Shape{8, 4}}, {Shape{6, 4}})), InvalidArgument);
}

namespace {

// Offset of logical element idx (N, C, spatial...) in a tensor described by `t`.
std::int64_t offset(const cuda::TensorLayout& t, const std::vector<std::int64_t>& idx) {
  std::int64_t o = 0;
  for (std::size_t d = 0; d < idx.size(); ++d) o += idx[d] * t.strides[d];
  return o;
}

// Calls f(position) for every position of the box `dims`.
template <class F>
void for_each_index(const std::vector<std::int64_t>& dims, F f) {
  std::int64_t total = 1;
  for (std::int64_t d : dims) total *= d;
  std::vector<std::int64_t> idx(dims.size());
  for (std::int64_t e = 0; e < total; ++e) {
    std::int64_t r = e;
    for (std::size_t d = dims.size(); d-- > 0;) {
      idx[d] = r % dims[d];
      r /= dims[d];
    }
    f(idx);
  }
}

// The cuDNN convolution's semantics from the plan: cross-correlation with pre-paddings,
// strides, dilations and groups, every tensor read through its layout. Accumulates
// x·w products into whichever of (x, w, y) `direction` computes.
void emulate_conv(const cuda::ConvPlan& p, std::vector<float>& x, std::vector<float>& w, std::vector<float>& y) {
  const std::size_t spatial = p.x.dims.size() - 2;
  const std::int64_t o = p.y.dims[1], cg = p.w.dims[1], og = o / p.groups;
  std::vector<std::int64_t> box{p.y.dims[0], o};
  for (std::size_t s = 0; s < spatial; ++s) box.push_back(p.y.dims[2 + s]);
  for (std::size_t s = 0; s < spatial; ++s) box.push_back(p.w.dims[2 + s]);
  box.push_back(cg);
  for_each_index(box, [&](const std::vector<std::int64_t>& i) {
    const std::int64_t n = i[0], k = i[1], c = i.back();
    std::vector<std::int64_t> xi{n, (k / og) * cg + c}, wi{k, c}, yi{n, k};
    for (std::size_t s = 0; s < spatial; ++s) {
      const std::int64_t out = i[2 + s], tap = i[2 + spatial + s];
      const std::int64_t pos = out * p.stride[s] - p.pre_padding[s] + tap * p.dilation[s];
      if (pos < 0 || pos >= p.x.dims[2 + s]) return;
      xi.push_back(pos);
      wi.push_back(tap);
      yi.push_back(out);
    }
    float& xv = x[static_cast<std::size_t>(offset(p.x, xi))];
    float& wv = w[static_cast<std::size_t>(offset(p.w, wi))];
    float& yv = y[static_cast<std::size_t>(offset(p.y, yi))];
    if (p.direction == cuda::ConvDirection::forward) yv += xv * wv;
    else if (p.direction == cuda::ConvDirection::backward_data) xv += yv * wv;
    else wv += xv * yv;
  });
}

std::vector<float> to_krsc(const cuda::ConvPlan& p, const Tensor& hwio) {
  const cuda::FilterReorder r = cuda::filter_reorder(p);
  std::vector<float> krsc(static_cast<std::size_t>(p.filter_elements));
  for (std::int64_t j = 0; j < p.filter_elements; ++j) krsc[static_cast<std::size_t>(j)] = hwio.data<float>()[r.hwio_index(j)];
  return krsc;
}

std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

struct ConvCase {
  Shape x, w;
  std::vector<std::int64_t> strides, dilations;
  std::string padding;
  std::int64_t groups;
};

}  // namespace

// TensorFlow's output size of one spatial axis.
std::int64_t tf_out(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dilation, const std::string& padding) {
  return padding == "same" ? (in + stride - 1) / stride : (in - ((k - 1) * dilation + 1)) / stride + 1;
}

TEST(CudaDescriptors, ConvPlanComputesTheReferenceConvolutionInEveryDirection) {
  // Asymmetric "same" padding (stride 2, even kernels), dilation, groups, 2-D and 3-D.
  const ConvCase kCases[] = {
      {Shape{2, 7, 8, 3}, Shape{3, 3, 3, 4}, {1, 1}, {1, 1}, "same", 1},
      {Shape{1, 9, 10, 4}, Shape{4, 2, 2, 6}, {2, 2}, {1, 1}, "same", 2},
      {Shape{2, 8, 8, 2}, Shape{3, 3, 2, 5}, {2, 1}, {2, 1}, "valid", 1},
      {Shape{1, 5, 6, 7, 2}, Shape{2, 3, 2, 2, 3}, {2, 1, 2}, {1, 1, 1}, "same", 1},
  };
  std::uint64_t seed = 30;
  bool saw_asymmetric = false;
  for (const ConvCase& c : kCases) {
    const int spatial = c.x.rank() - 2;
    const std::string suffix = spatial == 3 ? "3d" : "2d";
    SCOPED_TRACE(c.x.to_string() + " " + c.w.to_string() + " " + c.padding);
    std::vector<std::int64_t> ydims{c.x[0]};
    for (int s = 0; s < spatial; ++s) ydims.push_back(tf_out(c.x[1 + s], c.w[s], c.strides[s], c.dilations[s], c.padding));
    ydims.push_back(c.w[spatial + 1]);
    const Shape ys(ydims);
    Attrs attrs{{"strides", c.strides}, {"padding", c.padding}, {"dilations", c.dilations}, {"groups", c.groups}};
    const Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++), dy = random_tensor(ys, seed++);

    const KernelDesc fwd = f32_desc("conv" + suffix, attrs, {c.x, c.w}, {ys});
    const cuda::ConvPlan pf = cuda::plan_conv(fwd);
    for (int s = 0; s < spatial; ++s) saw_asymmetric |= pf.pre_padding[s] != pf.post_padding[s];
    std::vector<float> xv = values(x), wk = to_krsc(pf, w), yv(static_cast<std::size_t>(ys.numel()), 0.0f);
    emulate_conv(pf, xv, wk, yv);
    expect_close(run_reference(fwd, {x, w}), tensor_of(ys, yv), 1e-5f, 1e-5f, "forward");

    Attrs bd = attrs;
    bd.set("input_shape", c.x.dims());
    const KernelDesc bwd_data = f32_desc("conv" + suffix + "_backprop_input", bd, {ys, c.w}, {c.x});
    const cuda::ConvPlan pd = cuda::plan_conv(bwd_data);
    EXPECT_EQ(pd.direction, cuda::ConvDirection::backward_data);
    std::vector<float> dx(static_cast<std::size_t>(c.x.numel()), 0.0f), dyv = values(dy);
    wk = to_krsc(pd, w);
    emulate_conv(pd, dx, wk, dyv);
    expect_close(run_reference(bwd_data, {dy, w}), tensor_of(c.x, dx), 1e-5f, 1e-5f, "backward data");

    Attrs bf = attrs;
    bf.set("filter_shape", c.w.dims());
    const KernelDesc bwd_filter = f32_desc("conv" + suffix + "_backprop_filter", bf, {c.x, ys}, {c.w});
    const cuda::ConvPlan pw = cuda::plan_conv(bwd_filter);
    EXPECT_EQ(pw.direction, cuda::ConvDirection::backward_filter);
    std::vector<float> dw_krsc(static_cast<std::size_t>(pw.filter_elements), 0.0f);
    xv = values(x);
    emulate_conv(pw, xv, dw_krsc, dyv);
    // Reordered back to HWIO, as the kernel does after cuDNN's wgrad.
    std::vector<float> dw(dw_krsc.size());
    const cuda::FilterReorder r = cuda::filter_reorder(pw);
    for (std::int64_t j = 0; j < pw.filter_elements; ++j) dw[static_cast<std::size_t>(r.hwio_index(j))] = dw_krsc[static_cast<std::size_t>(j)];
    expect_close(run_reference(bwd_filter, {x, dy}), tensor_of(c.w, dw), 1e-4f, 1e-5f, "backward filter");
    EXPECT_EQ(pf.workspace_bytes(), static_cast<std::size_t>(c.w.numel()) * 4);
  }
  EXPECT_TRUE(saw_asymmetric) << "no case had TF's asymmetric same padding";
}

// The reorder kernel itself (HostLaunch over the functor the device runs): HWIO -> KRSC
// gives the layout the plan describes, and the way back is the identity, at 4 and 2 bytes.
TEST(CudaDescriptors, FilterReorderKernelRoundTrips) {
  const Attrs attrs{{"strides", std::vector<std::int64_t>{1, 1}}, {"padding", std::string("valid")},
                    {"groups", std::int64_t{2}}};
  const Shape ws{3, 2, 4, 6};  // HWIO with C/G = 4, O = 6
  const cuda::ConvPlan p = cuda::plan_conv(f32_desc("conv2d", attrs, {Shape{1, 5, 5, 8}, ws}, {Shape{1, 3, 4, 6}}));
  const Tensor w = random_tensor(ws, 77);
  const cuda::FilterReorder r = cuda::filter_reorder(p);
  std::vector<float> krsc(static_cast<std::size_t>(p.filter_elements)), back(krsc.size());
  cuda::reorder_filter<cuda::HostLaunch>(r, p.filter_elements, 4, w.raw(), krsc.data(), true, nullptr);
  for_each_index(p.w.dims, [&](const std::vector<std::int64_t>& i) {  // (O, C/G, KH, KW) through the plan's strides
    EXPECT_EQ(krsc[static_cast<std::size_t>(offset(p.w, i))], w.data<float>()[((i[2] * 2 + i[3]) * 4 + i[1]) * 6 + i[0]]);
  });
  cuda::reorder_filter<cuda::HostLaunch>(r, p.filter_elements, 4, krsc.data(), back.data(), false, nullptr);
  EXPECT_EQ(0, std::memcmp(back.data(), w.raw(), w.nbytes()));
  std::vector<std::uint16_t> h(krsc.size()), k16(krsc.size()), b16(krsc.size());
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::uint16_t>(i * 7919);
  cuda::reorder_filter<cuda::HostLaunch>(r, p.filter_elements, 2, h.data(), k16.data(), true, nullptr);
  cuda::reorder_filter<cuda::HostLaunch>(r, p.filter_elements, 2, k16.data(), b16.data(), false, nullptr);
  EXPECT_EQ(h, b16);
  EXPECT_NE(h, k16);
}

// A cast to float32 folded into the op (fuse_output_casts): the plans keep the inputs'
// type for A/B (x/w) and give the output float32; a filter gradient's reorder buffer then
// holds float32.
TEST(CudaDescriptors, FoldedCastsGiveFloat32Outputs) {
  KernelDesc mm = f32_desc("fused_matmul", {{"activation", std::string("relu")}}, {Shape{6, 9}, Shape{9, 4}, Shape{4}}, {Shape{6, 4}});
  mm.inputs[0].dtype = mm.inputs[1].dtype = mm.inputs[2].dtype = DType::bf16;
  const GemmPlan g = cuda::plan_gemm(mm);
  EXPECT_EQ(g.dtype, DType::bf16);
  EXPECT_EQ(g.out_dtype, DType::f32);
  EXPECT_EQ(g.bias_dtype, DType::bf16);
  const Attrs attrs{{"strides", std::vector<std::int64_t>{1, 1}}, {"padding", std::string("valid")},
                    {"filter_shape", std::vector<std::int64_t>{3, 3, 2, 4}}};
  KernelDesc wgrad = f32_desc("conv2d_backprop_filter", attrs, {Shape{1, 5, 5, 2}, Shape{1, 3, 3, 4}}, {Shape{3, 3, 2, 4}});
  wgrad.inputs[0].dtype = wgrad.inputs[1].dtype = DType::f16;
  const cuda::ConvPlan c = cuda::plan_conv(wgrad);
  EXPECT_EQ(c.dtype, DType::f16);
  EXPECT_EQ(c.filter_dtype(), DType::f32);
  EXPECT_EQ(c.workspace_bytes(), 3u * 3 * 2 * 4 * 4);
  KernelDesc uniform = wgrad;
  uniform.outputs[0].dtype = DType::f16;
  EXPECT_EQ(cuda::plan_conv(uniform).workspace_bytes(), 3u * 3 * 2 * 4 * 2);
}

TEST(CudaDescriptors, FusedConvPlansCarryBiasAndActivation) {
  const Attrs attrs{{"strides", std::vector<std::int64_t>{1, 1}}, {"padding", std::string("valid")}, {"activation", std::string("relu")}};
  const cuda::ConvPlan p = cuda::plan_conv(f32_desc("fused_conv2d", attrs, {Shape{1, 5, 5, 2}, Shape{3, 3, 2, 4}, Shape{4}}, {Shape{1, 3, 3, 4}}));
  EXPECT_TRUE(p.bias);
  EXPECT_EQ(p.activation, ActivationKind::relu);
  EXPECT_EQ(p.y.dims, (std::vector<std::int64_t>{1, 4, 3, 3}));
  EXPECT_EQ(p.y.strides, (std::vector<std::int64_t>{36, 1, 12, 4}));  // NHWC
  EXPECT_EQ(p.w.dims, (std::vector<std::int64_t>{4, 2, 3, 3}));
  EXPECT_EQ(p.w.strides, (std::vector<std::int64_t>{18, 1, 6, 2}));  // KRSC
}

TEST(CudaDescriptors, PoolPlanComputesTheReferencePooling) {
  std::uint64_t seed = 60;
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    for (const std::string padding : {"valid", "same"}) {
      const Shape xs{2, 7, 6, 3};
      const std::int64_t oh = padding == "same" ? 4 : 3, ow = 3;
      const Shape ys{2, oh, ow, 3};
      const Attrs attrs{{"pool_size", std::vector<std::int64_t>{3, 2}}, {"strides", std::vector<std::int64_t>{2, 2}}, {"padding", padding}};
      const KernelDesc d = f32_desc(op, attrs, {xs}, {ys});
      const cuda::PoolPlan p = cuda::plan_pool(d);
      SCOPED_TRACE(std::string(op) + " " + padding);
      const Tensor x = random_tensor(xs, seed++);
      std::vector<float> y(static_cast<std::size_t>(ys.numel()));
      // cuDNN's resample: each output's window, padded positions excluded.
      for_each_index(p.y.dims, [&](const std::vector<std::int64_t>& i) {
        float best = -INFINITY;
        double sum = 0;
        int count = 0;
        for (std::int64_t a = 0; a < p.window[0]; ++a) {
          for (std::int64_t b = 0; b < p.window[1]; ++b) {
            const std::int64_t h = i[2] * p.stride[0] - p.pre_padding[0] + a, w = i[3] * p.stride[1] - p.pre_padding[1] + b;
            if (h < 0 || w < 0 || h >= p.x.dims[2] || w >= p.x.dims[3]) continue;
            const float v = x.data<float>()[offset(p.x, {i[0], i[1], h, w})];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        }
        y[static_cast<std::size_t>(offset(p.y, i))] = p.mode == cuda::PoolMode::max ? best : static_cast<float>(sum / count);
      });
      expect_close(run_reference(d, {x}), tensor_of(ys, y), 1e-6f, 1e-6f, "pooling");
    }
  }
}

TEST(CudaDescriptors, BatchNormAndSoftmaxLayouts) {
  const Attrs eps{{"epsilon", 1e-3}};
  const cuda::BatchNormPlan conv = cuda::plan_batch_norm(
      f32_desc("batch_norm_train", eps, {Shape{8, 5, 6, 3}, Shape{3}, Shape{3}}, {Shape{8, 5, 6, 3}, Shape{3}, Shape{3}}));
  EXPECT_EQ(conv.x.dims, (std::vector<std::int64_t>{8, 3, 5, 6}));
  EXPECT_EQ(conv.x.strides, (std::vector<std::int64_t>{90, 1, 18, 3}));
  EXPECT_EQ(conv.param.dims, (std::vector<std::int64_t>{1, 3, 1, 1}));
  EXPECT_DOUBLE_EQ(conv.epsilon, 1e-3);
  const cuda::BatchNormPlan dense = cuda::plan_batch_norm(
      f32_desc("batch_norm_train", eps, {Shape{32, 10}, Shape{10}, Shape{10}}, {Shape{32, 10}, Shape{10}, Shape{10}}));
  EXPECT_EQ(dense.x.dims, (std::vector<std::int64_t>{32, 10, 1, 1}));
  EXPECT_EQ(dense.x.strides, (std::vector<std::int64_t>{10, 1, 10, 10}));
  const cuda::SoftmaxPlan sm = cuda::plan_softmax(f32_desc("log_softmax", {}, {Shape{4, 3, 10}}, {Shape{4, 3, 10}}));
  EXPECT_EQ(sm.rows, 12);
  EXPECT_EQ(sm.cols, 10);
  EXPECT_TRUE(sm.log);
  EXPECT_EQ(sm.tensor.dims, (std::vector<std::int64_t>{12, 10, 1, 1}));
  EXPECT_EQ(cuda::channels_last_strides({2, 3, 4, 5, 6}), (std::vector<std::int64_t>{360, 1, 90, 18, 3}));
}

}  // namespace nnfit::testing
