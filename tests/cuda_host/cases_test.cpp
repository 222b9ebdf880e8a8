// One ctest case per op with an own CUDA kernel (`ctest -L cuda-host`), from the families'
// case lists; a check that every op the CUDA registration holds has its case; and the
// launch-shape independence of the split itself: a kernel walked over a different grid
// gives the same bytes.
#include <gtest/gtest.h>

#include <set>

#include "backend/cuda/kernels/training_kernels.h"
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

std::vector<OpCase> all_cases() {
  std::vector<OpCase> all;
  for (auto* family : {elementwise_cases, training_cases, optimizer_cases, layout_cases, pool_cases, misc_cases, norm_regularizer_cases,
                        attention_cases, scatter_noise_cases, augment_cases,
                        resize_cases, rnn_cases, math_cases}) {
    for (OpCase& c : family()) all.push_back(std::move(c));
  }
  return all;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const OpCase& c : all_cases()) names.push_back(c.op);
  return names;
}

void run_case(const std::string& op) {
  for (const OpCase& c : all_cases()) {
    if (c.op == op) return c.check();
  }
  FAIL() << "no case for " << op;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

class CudaHost : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { set_cuda_mode(CudaMode::host); }
};

TEST_P(CudaHost, MatchesTheReferenceKernel) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Op, CudaHost, ::testing::ValuesIn(case_names()), param_name);

// The same cases on cuda:0 with the kernels the real registry holds: what a first GPU run
// executes (docs/design/cuda.md). Without a device each case skips, saying why.
class CudaDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string why = cuda_device_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
    set_cuda_mode(CudaMode::device);
  }
  void TearDown() override { set_cuda_mode(CudaMode::host); }
};

TEST_P(CudaDevice, MatchesTheReferenceKernel) { run_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Op, CudaDevice, ::testing::ValuesIn(case_names()), param_name);

// Every own kernel the host runs is registered for the device too, under the same name.
TEST(CudaHostCoverage, TheDeviceRegistryHasEveryHostRunKernel) {
  if (cuda_device_unavailable_reason().rfind("this nnfit was built without CUDA", 0) == 0) {
    GTEST_SKIP() << cuda_device_unavailable_reason();
  }
  for (const RegisteredKernel& k : cuda_host_registry().entries()) {
    EXPECT_EQ(kernel_registry().implementations(k.op, DeviceType::cuda, k.dtype),
              cuda_host_registry().implementations(k.op, DeviceType::cuda, k.dtype))
        << k.op << " " << dtype_name(k.dtype);
  }
}

TEST(CudaHostCoverage, EveryOwnCudaKernelHasACaseAndNoCaseIsStale) {
  const std::vector<std::string> names = case_names();
  const std::set<std::string> cases(names.begin(), names.end());
  EXPECT_EQ(cases.size(), names.size()) << "an op has two cases";
  const std::vector<std::string> ops = cuda_host_registry().ops(DeviceType::cuda);
  for (const std::string& op : ops) EXPECT_TRUE(cases.count(op)) << "cuda:" << op << " has no cuda-host case";
  for (const std::string& op : cases) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op << " has a case but no cuda kernel";
  }
  EXPECT_GE(ops.size(), 30u);
}

// The same functor over the grid HostLaunch picks and over a one-block grid (each thread
// taking many indices): identical outputs, so no kernel depends on how it is launched.
TEST(CudaHostSplit, ResultsDoNotDependOnTheLaunchShape) {
  const std::int64_t n = 100003;
  const Tensor x = random_tensor(Shape{n}, 5);
  Tensor y1 = Tensor::zeros(Shape{n}), y2 = Tensor::zeros(Shape{n});
  Tensor m1 = Tensor::zeros(Shape{n}, DType::u8), m2 = Tensor::zeros(Shape{n}, DType::u8);
  const std::uint64_t draw[2] = {dropout_key(77, 3, 9), 0};  // the key, no row offset
  cuda::HostLaunch::run(cuda::DropoutFn<float>{x.raw(), y1.raw(), m1.data<std::uint8_t>(), draw, 0.3f, {}}, n, nullptr);
  const cuda::DropoutFn<float> f{x.raw(), y2.raw(), m2.data<std::uint8_t>(), draw, 0.3f, {}};
  for (int thread = 31; thread >= 0; --thread) {  // one block of 32 threads, walked backwards
    for (std::int64_t i = thread; i < n; i += 32) f(i);
  }
  EXPECT_EQ(0, std::memcmp(y1.raw(), y2.raw(), y1.nbytes()));
  EXPECT_EQ(0, std::memcmp(m1.raw(), m2.raw(), m1.nbytes()));
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < n; ++i) kept += m1.data<std::uint8_t>()[i];
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.01);
}

TEST(CudaHostSplit, HostLaunchVisitsEveryIndexOnce) {
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{255}, std::int64_t{257},
                         cuda::kMaxBlocks * cuda::kThreadsPerBlock + 3}) {
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(n), 0);
    std::uint8_t* p = seen.data();
    cuda::HostLaunch::run([p](std::int64_t i) { ++p[i]; }, n, nullptr);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n) << n;
  }
}

}  // namespace
}  // namespace nnfit::testing
