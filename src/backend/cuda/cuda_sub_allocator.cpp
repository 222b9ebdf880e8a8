// CUDA SubAllocators (cuda_sub_allocator.h): device memory and pinned host memory as
// region sources for BfcAllocator. Each call makes its device current for its length and
// restores the caller's, so an allocator works from any thread. Running out of memory is
// a nullptr (the BFC allocator then releases free regions, retries, and throws its
// OutOfMemory with the figures); any other CUDA error is a BackendError.
#include "backend/cuda/cuda_sub_allocator.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "nnfit/core/error.h"

namespace nnfit {
namespace {

std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

// Makes cuda:`device` current for a scope and restores the previous device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ == device) return;
    const cudaError_t st = cudaSetDevice(device);
    if (st != cudaSuccess) {
      cudaGetLastError();
      throw BackendError("cuda:" + std::to_string(device) + ": cudaSetDevice: " + cuda_error_text(st));
    }
    restore_ = previous_ >= 0;
  }
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool restore_ = false;
};

// Thread safety: none of its own; BfcAllocator serializes its calls (sub_allocator.h).
class CudaSubAllocator final : public SubAllocator {
 public:
  CudaSubAllocator(int device, bool pinned) : device_(device), pinned_(pinned) {
    if (pinned_) {
      total_ = make_host_sub_allocator()->total_bytes();  // page-locked memory is host RAM
      return;
    }
    DeviceGuard guard(device_);
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      total_ = static_cast<std::int64_t>(total_bytes);
    } else {
      cudaGetLastError();
    }
  }
  void* alloc(std::size_t bytes) override {
    DeviceGuard guard(device_);
    void* p = raw_alloc(bytes);
    if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % kRegionAlignment == 0) return p;
    // cudaMalloc promises 256-byte alignment (large regions are 2 MiB-aligned in practice);
    // BfcAllocator counts on kRegionAlignment, so take a page more and align inside it.
    raw_free(p);
    void* base = raw_alloc(bytes + kRegionAlignment);
    if (base == nullptr) return nullptr;
    const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(base);
    void* aligned = reinterpret_cast<void*>((b + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment);
    bases_[aligned] = base;
    return aligned;
  }

  void free(void* ptr, std::size_t) override {
    DeviceGuard guard(device_);
    void* base = ptr;
    if (auto it = bases_.find(ptr); it != bases_.end()) {
      base = it->second;
      bases_.erase(it);
    }
    raw_free(base);
  }

  Device device() const override { return pinned_ ? Device{} : Device{DeviceType::cuda, device_}; }
  std::int64_t total_bytes() const override { return total_; }

 private:
  // nullptr when the device (or the host, for pinned memory) has no more.
  void* raw_alloc(std::size_t bytes) {
    void* p = nullptr;
    const cudaError_t st = pinned_ ? cudaHostAlloc(&p, bytes, cudaHostAllocDefault) : cudaMalloc(&p, bytes);
    if (st == cudaSuccess) return p;
    cudaGetLastError();  // clear it: a failed allocation is not the next call's error
    if (st == cudaErrorMemoryAllocation) return nullptr;
    throw BackendError("cuda:" + std::to_string(device_) + ": " + (pinned_ ? "cudaHostAlloc" : "cudaMalloc") +
                       " of " + std::to_string(bytes) + " bytes: " + cuda_error_text(st));
  }
  void raw_free(void* p) {
    // A failure here (the context already torn down at exit) leaves nothing to do.
    if ((pinned_ ? cudaFreeHost(p) : cudaFree(p)) != cudaSuccess) cudaGetLastError();
  }

  int device_;
  bool pinned_;
  std::int64_t total_ = 0;
  std::unordered_map<void*, void*> bases_;  // aligned region -> what CUDA returned, when they differ
};

}  // namespace

void require_cuda_device(int device_index) {
  int count = 0;
  const cudaError_t st = cudaGetDeviceCount(&count);
  if (st != cudaSuccess) cudaGetLastError();
  if (st != cudaSuccess || device_index < 0 || device_index >= count) {
    throw Unsupported("cuda:" + std::to_string(device_index) + " is not available: " +
                          (st != cudaSuccess ? cudaGetErrorString(st)
                                             : "this machine has " + std::to_string(count) + " CUDA device(s)"),
                      "run `nnfit doctor` to check the driver and toolkit, or use the cpu device");
  }
}

std::unique_ptr<SubAllocator> make_cuda_device_sub_allocator(int device_index) {
  require_cuda_device(device_index);
  return std::make_unique<CudaSubAllocator>(device_index, /*pinned=*/false);
}

std::unique_ptr<SubAllocator> make_cuda_pinned_sub_allocator(int device_index) {
  require_cuda_device(device_index);
  return std::make_unique<CudaSubAllocator>(device_index, /*pinned=*/true);
}

}  // namespace nnfit
