// cuda-sim (sim_device.h): its memory faults on host access with a message naming it,
// copies round-trip and check their kind, its allocator keeps BFC statistics and limits,
// and its registry serves every op the real CUDA registry does (sim_step_test.cpp runs a
// training step on it).
#include "cuda_host/sim_device.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "cuda_host/cuda_host_harness.h"
#include "nnfit/core/error.h"
#include "nnfit/memory/bfc_allocator.h"

namespace nnfit::testing {
namespace {

TEST(CudaSim, BackendIsCudaZeroWithItsOwnKernels) {
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend();
  EXPECT_EQ(sim->device(), (Device{DeviceType::cuda, 0}));
  EXPECT_EQ(sim->allocator().device(), (Device{DeviceType::cuda, 0}));
  EXPECT_FALSE(sim->host_addressable());
  EXPECT_EQ(sim->kernels(), &cuda_sim_registry());
  EXPECT_EQ(sim->name().rfind("cuda-sim:0", 0), 0u) << sim->name();
}

TEST(CudaSimDeathTest, HostWriteToDeviceMemoryAbortsNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend();
  auto* p = static_cast<float*>(sim->allocator().allocate(256));
  EXPECT_TRUE(in_cuda_sim_memory(p, 256));
  EXPECT_DEATH(p[3] = 1.0f,
               "nnfit cuda-sim: host access to simulated device memory at 0x[0-9a-f]+, region \\[0x[0-9a-f]+, "
               "0x[0-9a-f]+\\): the model touched device memory without Backend::copy");
  EXPECT_DEATH({ volatile float r = p[0]; (void)r; }, "host access to simulated device memory");
  sim->allocator().deallocate(p);
}

TEST(CudaSimDeathTest, OtherFaultsKeepTheirDefaultAction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend();
  // A PROT_NONE page that is not the sim's: the handler passes it on, and the default
  // action (death by SIGSEGV, no message of ours) follows.
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  EXPECT_EXIT(*static_cast<volatile int*>(page) = 1, ::testing::KilledBySignal(SIGSEGV), "^$");
  munmap(page, 4096);
}

TEST(CudaSim, CopiesRoundTripAndCheckTheirKind) {
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend();
  std::vector<std::uint8_t> src(1000), back(1000, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  void* a = sim->allocator().allocate(src.size());
  void* b = sim->allocator().allocate(src.size());
  sim->copy(a, src.data(), src.size(), CopyKind::host_to_device);
  sim->copy(b, a, src.size(), CopyKind::device_to_device);
  sim->copy(back.data(), b, back.size(), CopyKind::device_to_host);
  EXPECT_EQ(back, src);
  // The wrong kind is a BackendError naming the sides, as cudaMemcpy's invalid argument.
  EXPECT_THROW(sim->copy(back.data(), src.data(), 8, CopyKind::host_to_device), BackendError);
  EXPECT_THROW(sim->copy(a, b, 8, CopyKind::device_to_host), BackendError);
  EXPECT_THROW(sim->copy(a, src.data(), 8, CopyKind::device_to_device), BackendError);
  sim->allocator().deallocate(a);
  sim->allocator().deallocate(b);
}

TEST(CudaSim, AllocatorKeepsBfcStatistics) {
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend();
  Allocator& alloc = sim->allocator();
  void* a = alloc.allocate(1000);
  void* b = alloc.allocate(3 << 20);  // past the first 2 MiB region: a second one
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.in_use_bytes, 1024 + (3 << 20));
  EXPECT_EQ(s.allocations, 2);
  EXPECT_GE(s.reserved_bytes, (2 << 20) + (3 << 20));
  alloc.deallocate(b);
  s = alloc.stats();
  EXPECT_EQ(s.in_use_bytes, 1024);
  EXPECT_EQ(s.peak_bytes, 1024 + (3 << 20));
  EXPECT_EQ(s.frees, 1);
  alloc.deallocate(a);
  // Released regions are unmapped and no longer simulated memory.
  EXPECT_GT(dynamic_cast<BfcAllocator&>(alloc).release_unused(), 0);
  EXPECT_FALSE(in_cuda_sim_memory(a, 64));
  EXPECT_EQ(alloc.stats().reserved_bytes, 0);
}

TEST(CudaSim, LimitIsEnforcedAsOnADevice) {
  MemoryPolicy policy;
  policy.limit_bytes = 4 << 20;
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend(policy);
  void* a = sim->allocator().allocate(3 << 20);
  EXPECT_THROW(sim->allocator().allocate(2 << 20), OutOfMemory);
  EXPECT_EQ(sim->allocator().stats().ooms, 1);
  sim->allocator().deallocate(a);
}

TEST(CudaSim, RegistryServesOwnKernelsAndVendorStandIns) {
  const KernelRegistry& sim = cuda_sim_registry();
  const std::vector<std::string> own = cuda_host_registry().ops(DeviceType::cuda);
  std::set<std::string> sim_ops;
  for (const std::string& op : sim.ops(DeviceType::cuda)) sim_ops.insert(op);
  for (const std::string& op : own) EXPECT_TRUE(sim_ops.count(op)) << op;
  for (const std::string& op : cuda_sim_vendor_ops()) {
    EXPECT_FALSE(std::count(own.begin(), own.end(), op)) << op << " has an own kernel and a vendor one";
    EXPECT_EQ(sim.implementations(op, DeviceType::cuda, DType::f32), std::vector<std::string>{"cuda-sim:ref:" + op});
    EXPECT_EQ(sim.implementations(op, DeviceType::cuda, DType::bf16),
              std::vector<std::string>{"cuda-sim:widen:ref:" + op});
  }
  EXPECT_EQ(sim_ops.size(), own.size() + cuda_sim_vendor_ops().size());
  EXPECT_TRUE(sim.ops(DeviceType::cpu).empty());
}

// `desc` as the sim's registry selects it, run on the sim: inputs copied in, output 0
// copied out; *impl names the kernel.
Tensor run_on_sim(Backend& sim, const KernelDesc& desc, const std::vector<Tensor>& inputs, std::string* impl) {
  SelectedKernel k = sim.kernels()->select(desc, DeviceType::cuda);
  *impl = k.impl_name;
  Allocator& alloc = sim.allocator();
  std::vector<const void*> ins;
  for (const Tensor& t : inputs) {
    void* p = alloc.allocate(t.nbytes());
    sim.copy(p, t.raw(), t.nbytes(), CopyKind::host_to_device);
    ins.push_back(p);
  }
  void* out = alloc.allocate(desc.outputs[0].bytes());
  void* ws = k.kernel->workspace_bytes() ? alloc.allocate(k.kernel->workspace_bytes()) : nullptr;
  const StepContext ctx;
  k.kernel->run(KernelArgs{ins.data(), &out, ws, &ctx});
  Tensor got = Tensor::zeros(desc.outputs[0].shape, desc.outputs[0].dtype);
  sim.copy(got.raw(), out, got.nbytes(), CopyKind::device_to_host);
  for (const void* p : ins) alloc.deallocate(const_cast<void*>(p));
  alloc.deallocate(out);
  if (ws) alloc.deallocate(ws);
  return got;
}

TEST(CudaSim, VendorStandInsRunAtEveryDtype) {
  const std::unique_ptr<Backend> sim = make_cuda_sim_backend();
  Attrs conv;
  conv.set("strides", std::vector<std::int64_t>{1, 1});
  conv.set("padding", std::string("same"));
  const std::vector<KernelDesc> descs = {
      f32_desc("matmul", {}, {Shape{5, 7}, Shape{7, 3}}, {Shape{5, 3}}),
      f32_desc("conv2d", conv, {Shape{2, 5, 5, 3}, Shape{3, 3, 3, 4}}, {Shape{2, 5, 5, 4}})};
  for (const KernelDesc& base : descs) {
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < base.inputs.size(); ++i) inputs.push_back(random_tensor(base.inputs[i].shape, 11 + i));
    for (DType dtype : float_dtypes()) {
      const std::string what = base.op + " at " + std::string(dtype_name(dtype));
      std::vector<Tensor> low, rounded;
      for (const Tensor& t : inputs) {
        low.push_back(to_dtype(t, dtype));
        rounded.push_back(to_f32(low.back()));
      }
      std::string impl;
      const Tensor got = to_f32(run_on_sim(*sim, at_dtype(base, dtype), low, &impl));
      EXPECT_EQ(impl, (dtype == DType::f32 ? "cuda-sim:ref:" : "cuda-sim:widen:ref:") + base.op) << what;
      const Tensor want = run_reference(base, rounded);
      float most = 0;
      for (std::int64_t i = 0; i < want.numel(); ++i) most = std::max(most, std::fabs(want.data<float>()[i]));
      const float tol = dtype == DType::f32 ? 1e-5f : low_precision_tolerance(dtype) * most;
      expect_close(want, got, tol, dtype == DType::f32 ? 1e-5f : 0.0f, what);
    }
  }
}

TEST(CudaSim, VendorOpsAreTheRealRegistrys) {
  // Where the CUDA plugin loads (a toolkit's runtime; no GPU needed), its registry is the
  // truth the sim mirrors: the same ops, and at every (op, dtype) it serves the sim does.
  const std::vector<std::string> real = kernel_registry().ops(DeviceType::cuda);
  if (real.empty()) GTEST_SKIP() << "the CUDA plugin does not load here: " << cuda_device_unavailable_reason();
  const std::vector<std::string> own = cuda_host_registry().ops(DeviceType::cuda);
  std::vector<std::string> vendor;
  for (const std::string& op : real) {
    if (!std::count(own.begin(), own.end(), op)) vendor.push_back(op);
  }
  std::vector<std::string> want = cuda_sim_vendor_ops();
  std::sort(want.begin(), want.end());
  std::sort(vendor.begin(), vendor.end());
  EXPECT_EQ(vendor, want);
  for (const RegisteredKernel& e : kernel_registry().entries()) {
    if (e.device != DeviceType::cuda) continue;
    EXPECT_FALSE(cuda_sim_registry().implementations(e.op, DeviceType::cuda, e.dtype).empty())
        << e.op << " at " << dtype_name(e.dtype) << " (" << e.impl << ")";
  }
}

}  // namespace
}  // namespace nnfit::testing
