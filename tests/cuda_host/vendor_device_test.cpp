// The vendor kernels (cuBLASLt's matmuls, cuDNN's convolutions) against the reference on cuda:0, at each dtype,
// every transpose, the bias and activation epilogues and a batch. They have no host-run
// form (their layouts are checked on the host by descriptor_plans_test.cpp); without a
// device every case skips, naming the reason.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

class CudaDeviceVendor : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = cuda_device_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(CudaDeviceVendor, CublasLtMatmulEveryTransposeAndDtype) {
  for (std::int64_t ta : {0, 1}) {
    for (std::int64_t tb : {0, 1}) {
      const std::int64_t m = 37, k = 65, n = 19;
      const Shape as = ta ? Shape{k, m} : Shape{m, k}, bs = tb ? Shape{n, k} : Shape{k, n};
      const Tensor a = random_tensor(as, 1), b = random_tensor(bs, 2);
      const KernelDesc d = f32_desc("matmul", {{"transpose_a", ta}, {"transpose_b", tb}}, {as, bs}, {Shape{m, n}});
      for (DType dt : float_dtypes()) expect_device_kernel_matches_reference("cublaslt:matmul", d, {a, b}, dt, 1e-4f, 1e-4f);
      const Tensor ab = random_tensor(Shape{3, as[0], as[1]}, 3), bb = random_tensor(Shape{3, bs[0], bs[1]}, 4);
      const KernelDesc bd = f32_desc("batch_matmul", {{"transpose_a", ta}, {"transpose_b", tb}},
                                     {ab.shape(), bb.shape()}, {Shape{3, m, n}});
      for (DType dt : float_dtypes()) expect_device_kernel_matches_reference("cublaslt:batch_matmul", bd, {ab, bb}, dt, 1e-4f, 1e-4f);
    }
  }
}

// The mixed policies' folded casts: bfloat16/float16 operands, a float32 result.
TEST_F(CudaDeviceVendor, FoldedCastsWriteFloat32) {
  const Tensor a = random_tensor(Shape{13, 24}, 1), b = random_tensor(Shape{24, 7}, 2), bias = random_tensor(Shape{7}, 3);
  const Shape x{2, 9, 8, 3}, w{3, 3, 3, 5}, y{2, 7, 6, 5};
  const Attrs conv{{"strides", std::vector<std::int64_t>{1, 1}}, {"padding", std::string("valid")}};
  Attrs back_w = conv;
  back_w.set("filter_shape", w.dims());
  for (DType dt : {DType::bf16, DType::f16}) {
    expect_device_kernel_matches_reference("cublaslt:matmul", f32_desc("matmul", {}, {{13, 24}, {24, 7}}, {{13, 7}}), {a, b}, dt, 0, 0, true);
    expect_device_kernel_matches_reference("cublaslt:fused_matmul",
                                           f32_desc("fused_matmul", {{"activation", std::string("relu")}}, {{13, 24}, {24, 7}, {7}}, {{13, 7}}),
                                           {a, b, bias}, dt, 0, 0, true);
    expect_device_kernel_matches_reference("cudnn:conv2d", f32_desc("conv2d", conv, {x, w}, {y}), {random_tensor(x, 4), random_tensor(w, 5)},
                                           dt, 0, 0, true);
    expect_device_kernel_matches_reference("cudnn:conv2d_backprop_filter", f32_desc("conv2d_backprop_filter", back_w, {x, y}, {w}),
                                           {random_tensor(x, 6), random_tensor(y, 7)}, dt, 0, 0, true);
  }
}

TEST_F(CudaDeviceVendor, CublasLtFusedMatmulEpilogues) {
  const Tensor a = random_tensor(Shape{128, 1600}, 5), b = random_tensor(Shape{1600, 10}, 6), bias = random_tensor(Shape{10}, 7);
  for (const char* act : {"linear", "relu", "sigmoid", "tanh"}) {
    const KernelDesc d = f32_desc("fused_matmul", {{"activation", std::string(act)}}, {Shape{128, 1600}, Shape{1600, 10}, Shape{10}},
                                  {Shape{128, 10}});
    for (DType dt : float_dtypes()) expect_device_kernel_matches_reference("cublaslt:fused_matmul", d, {a, b, bias}, dt, 1e-4f, 1e-4f);
  }
}

// cuDNN's graph-API convolutions: asymmetric same padding, stride 2, dilation, groups,
// the fused bias + activation, both backprops, 2-D and 3-D, every dtype.
TEST_F(CudaDeviceVendor, CudnnConvolutionsEveryDirection) {
  using Ints = std::vector<std::int64_t>;
  struct Case {
    Shape x, w, y;
    Ints strides, dilations;
    std::string padding;
    std::int64_t groups;
  };
  const Case kCases[] = {
      {Shape{2, 28, 28, 1}, Shape{3, 3, 1, 32}, Shape{2, 26, 26, 32}, {1, 1}, {1, 1}, "valid", 1},
      {Shape{2, 9, 10, 4}, Shape{4, 2, 2, 6}, Shape{2, 5, 5, 6}, {2, 2}, {1, 1}, "same", 2},
      {Shape{2, 8, 8, 2}, Shape{3, 3, 2, 5}, Shape{2, 2, 6, 5}, {2, 1}, {2, 1}, "valid", 1},
      {Shape{1, 5, 6, 7, 2}, Shape{2, 3, 2, 2, 3}, Shape{1, 3, 6, 4, 3}, {2, 1, 2}, {1, 1, 1}, "same", 1},
  };
  std::uint64_t seed = 40;
  for (const Case& c : kCases) {
    const std::string sfx = c.x.rank() == 5 ? "3d" : "2d";
    const Attrs attrs{{"strides", c.strides}, {"padding", c.padding}, {"dilations", c.dilations}, {"groups", c.groups}};
    const Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++), dy = random_tensor(c.y, seed++);
    const Tensor bias = random_tensor(Shape{c.w.dim(-1)}, seed++);
    for (DType dt : float_dtypes()) {
      expect_device_kernel_matches_reference("cudnn:conv" + sfx, f32_desc("conv" + sfx, attrs, {c.x, c.w}, {c.y}), {x, w}, dt,
                                             1e-4f, 1e-4f);
      for (const char* act : {"linear", "relu", "sigmoid", "tanh"}) {
        Attrs fused = attrs;
        fused.set("activation", std::string(act));
        expect_device_kernel_matches_reference("cudnn:fused_conv" + sfx,
                                               f32_desc("fused_conv" + sfx, fused, {c.x, c.w, Shape{c.w.dim(-1)}}, {c.y}),
                                               {x, w, bias}, dt, 1e-4f, 1e-4f);
      }
      Attrs bd = attrs;
      bd.set("input_shape", c.x.dims());
      expect_device_kernel_matches_reference("cudnn:conv" + sfx + "_backprop_input",
                                             f32_desc("conv" + sfx + "_backprop_input", bd, {c.y, c.w}, {c.x}), {dy, w}, dt, 1e-4f,
                                             1e-4f);
      Attrs bf = attrs;
      bf.set("filter_shape", c.w.dims());
      expect_device_kernel_matches_reference("cudnn:conv" + sfx + "_backprop_filter",
                                             f32_desc("conv" + sfx + "_backprop_filter", bf, {c.x, c.y}, {c.w}), {x, dy}, dt, 1e-4f,
                                             1e-4f);
    }
  }
}

}  // namespace
}  // namespace nnfit::testing
