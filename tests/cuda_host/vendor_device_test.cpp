// The vendor kernels (cuBLASLt's matmuls) against the reference on cuda:0, at each dtype,
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

TEST_F(CudaDeviceVendor, CublasLtFusedMatmulEpilogues) {
  const Tensor a = random_tensor(Shape{128, 1600}, 5), b = random_tensor(Shape{1600, 10}, 6), bias = random_tensor(Shape{10}, 7);
  for (const char* act : {"linear", "relu", "sigmoid", "tanh"}) {
    const KernelDesc d = f32_desc("fused_matmul", {{"activation", std::string(act)}}, {Shape{128, 1600}, Shape{1600, 10}, Shape{10}},
                                  {Shape{128, 10}});
    for (DType dt : float_dtypes()) expect_device_kernel_matches_reference("cublaslt:fused_matmul", d, {a, b, bias}, dt, 1e-4f, 1e-4f);
  }
}

}  // namespace
}  // namespace nnfit::testing
