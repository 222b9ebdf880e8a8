// CUDA memory sources under the unchanged BfcAllocator: device memory and pinned host
// memory allocate, respect a limit and give everything back. Without a device (or
// without CUDA in the build) those tests skip saying why, and asking for the memory or
// the backend is a clear Unsupported, never a crash.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"
#include "nnfit/memory/bfc_allocator.h"

namespace nnfit {
namespace {

BackendInfo cuda_info() {
  for (const BackendInfo& b : backend_infos()) {
    if (b.name == "cuda") return b;
  }
  return {"cuda", false, false, "no cuda entry in backend_infos()"};
}

// Skips the calling test unless cuda:0 can be used.
#define REQUIRE_CUDA_DEVICE()                                                               \
  do {                                                                                      \
    const BackendInfo info = cuda_info();                                                   \
    if (!info.compiled) GTEST_SKIP() << "this nnfit was built without CUDA: " << info.detail; \
    if (!info.available) GTEST_SKIP() << "no usable CUDA device: " << info.detail;          \
  } while (0)

std::string unsupported_message(CudaMemory kind, int device) {
  try {
    make_cuda_sub_allocator(device, kind);
  } catch (const Unsupported& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "";
}

TEST(CudaSubAllocator, WithoutADeviceAskingIsAClearError) {
  const BackendInfo info = cuda_info();
  if (info.available) GTEST_SKIP() << "a CUDA device is present (" << info.detail << ")";
  for (CudaMemory kind : {CudaMemory::device, CudaMemory::pinned_host}) {
    const std::string err = unsupported_message(kind, 0);
    EXPECT_NE(err.find("cuda:0"), std::string::npos) << err;
    EXPECT_NE(err.find(info.compiled ? "is not available" : "built without CUDA"), std::string::npos) << err;
    EXPECT_NE(err.find(info.compiled ? "nnfit doctor" : "rebuild"), std::string::npos) << err;
  }
  EXPECT_THROW(make_backend(Device{DeviceType::cuda, 0}), Unsupported);
}

// The CUDA backend is a plugin (libnnfit_cuda.so): where it cannot be loaded, asking for a
// CUDA device is a clear error naming the file, where it was looked for and the variable.
TEST(CudaPlugin, WhereItIsMissingAskingForCudaIsAClearError) {
  const std::string maps = [] {
    std::ifstream in("/proc/self/maps");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  if (maps.find("libnnfit_cuda.so") != std::string::npos) GTEST_SKIP() << "an earlier test of this process loaded it";
  char empty[] = "/tmp/nnfit_no_plugins_XXXXXX";
  ASSERT_NE(mkdtemp(empty), nullptr);
  const char* saved = std::getenv("NNFIT_PLUGIN_DIR");
  const std::string saved_value = saved ? saved : "";
  setenv("NNFIT_PLUGIN_DIR", empty, 1);
  std::string err;
  try {
    make_backend(Device{DeviceType::cuda, 0});
  } catch (const Unsupported& e) {
    err = std::string(e.what()) + " | " + e.hint();
  }
  if (saved) setenv("NNFIT_PLUGIN_DIR", saved_value.c_str(), 1);
  else unsetenv("NNFIT_PLUGIN_DIR");
  rmdir(empty);
  if (cuda_build_architectures().empty()) {  // a build without CUDA
    EXPECT_NE(err.find("device cuda:0 requested but this nnfit was built without CUDA"), std::string::npos) << err;
    return;
  }
  EXPECT_NE(err.find(std::string("device cuda:0 requested, but cannot load the CUDA backend: its plugin "
                                 "libnnfit_cuda.so is in none of ") + empty + " (NNFIT_PLUGIN_DIR)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("set NNFIT_PLUGIN_DIR to the directory that holds libnnfit_cuda.so"), std::string::npos) << err;
}

TEST(CudaSubAllocator, AMissingDeviceIndexIsAClearError) {
  const BackendInfo info = cuda_info();
  if (!info.compiled) GTEST_SKIP() << "this nnfit was built without CUDA: " << info.detail;
  const std::string err = unsupported_message(CudaMemory::device, 4096);
  EXPECT_NE(err.find("cuda:4096 is not available"), std::string::npos) << err;
  EXPECT_THROW(make_backend(Device{DeviceType::cuda, 4096}), Unsupported);
}

TEST(CudaSubAllocator, DeviceMemoryUnderBfcRespectsALimitAndGivesBack) {
  REQUIRE_CUDA_DEVICE();
  auto source = make_cuda_sub_allocator(0, CudaMemory::device);
  EXPECT_EQ(source->device(), (Device{DeviceType::cuda, 0}));
  EXPECT_GT(source->total_bytes(), 0);
  MemoryPolicy policy;
  policy.limit_bytes = 8 << 20;
  BfcAllocator a(std::move(source), policy);
  void* p = a.allocate(3 << 20);
  void* q = a.allocate(1000, 4096);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 4096, 0u);
  EXPECT_EQ(a.stats().in_use_bytes, (3 << 20) + 1024);
  try {
    a.allocate(6 << 20);
    ADD_FAILURE() << "expected OutOfMemory past the 8 MiB limit";
  } catch (const OutOfMemory& e) {
    ASSERT_NE(e.details(), nullptr);
    EXPECT_EQ(e.details()->device, (Device{DeviceType::cuda, 0}));
    EXPECT_EQ(e.details()->limit_bytes, policy.limit_bytes);
  }
  a.deallocate(p);
  a.deallocate(q);
  EXPECT_EQ(a.stats().in_use_bytes, 0);
  EXPECT_GT(a.release_unused(), 0);
  EXPECT_EQ(a.stats().reserved_bytes, 0);
}

TEST(CudaSubAllocator, PinnedHostMemoryIsHostAccessible) {
  REQUIRE_CUDA_DEVICE();
  BfcAllocator a(make_cuda_sub_allocator(0, CudaMemory::pinned_host));
  EXPECT_EQ(a.device(), Device{});
  auto* p = static_cast<unsigned char*>(a.allocate(1 << 20));
  std::memset(p, 0xab, 1 << 20);
  EXPECT_EQ(p[0], 0xab);
  EXPECT_EQ(p[(1 << 20) - 1], 0xab);
  a.deallocate(p);
  EXPECT_EQ(a.stats().in_use_bytes, 0);
}

TEST(CudaBackend, ItsAllocatorIsBfcUnderThePolicy) {
  REQUIRE_CUDA_DEVICE();
  MemoryPolicy policy;
  policy.limit_bytes = 4 << 20;
  auto backend = make_backend(Device{DeviceType::cuda, 0}, policy);
  EXPECT_THROW(backend->allocator().allocate(5 << 20), OutOfMemory);
  void* p = backend->allocator().allocate(1 << 20);
  EXPECT_EQ(backend->allocator().stats().in_use_bytes, 1 << 20);
  backend->allocator().deallocate(p);
}

}  // namespace
}  // namespace nnfit
