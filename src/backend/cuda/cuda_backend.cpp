// The CUDA backend seam: device memory through a BfcAllocator over cudaMalloc'd regions
// (cuda_sub_allocator.h), copies and synchronization on the runtime API. Kernels register
// against DeviceType::cuda in the registry (cuda_kernels.h), not here; this file makes the
// seam compile, link and report honestly where no GPU exists.
#include "backend/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include "backend/cuda/cuda_queues.h"
#include "backend/cuda/cuda_sub_allocator.h"
#include "nnfit/core/error.h"
#include "nnfit/memory/bfc_allocator.h"

namespace nnfit {

namespace {

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw BackendError(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                       cudaGetErrorString(status));
  }
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, const MemoryPolicy& policy)
      : device_(device), allocator_(make_cuda_device_sub_allocator(device), policy) {
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    queues_ = make_cuda_queues_impl(device, kQueueEvents);
  }
  ~CudaBackend() override { queues_.reset(); }  // its streams finish before the memory goes
  std::string name() const override { return "cuda:" + std::to_string(device_); }
  Device device() const override { return Device{DeviceType::cuda, device_}; }
  Allocator& allocator() override { return allocator_; }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
    cudaMemcpyKind k = kind == CopyKind::host_to_device   ? cudaMemcpyHostToDevice
                       : kind == CopyKind::device_to_host ? cudaMemcpyDeviceToHost
                                                          : cudaMemcpyDeviceToDevice;
    // Note [Synchronous copies]: cudaMemcpy from pageable host memory may return once the
    // bytes are staged for DMA, before they reach the device, and the model's queues are
    // non-blocking streams, which the legacy stream does not order: a kernel enqueued after
    // could read the old bytes. Waiting for the legacy stream makes the copy complete when
    // copy() returns, as Backend promises.
    cuda_check(cudaMemcpyAsync(dst, src, bytes, k, cudaStreamLegacy), "cudaMemcpyAsync");
    cuda_check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
  }
  void synchronize() override { cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  DeviceQueues* queues() override { return queues_.get(); }
  // Page-locked host memory, made on first use (a CPU-side BFC under the default policy:
  // staging is a few batches, not the device's budget).
  Allocator* pinned_allocator() override {
    if (!pinned_) pinned_ = std::make_unique<BfcAllocator>(make_cuda_pinned_sub_allocator(device_), MemoryPolicy{});
    return pinned_.get();
  }

 private:
  int device_;
  BfcAllocator allocator_;  // over device memory (cuda_sub_allocator.h), as the host's over RAM
  std::unique_ptr<DeviceQueues> queues_;  // two non-blocking streams (cuda_queues.cpp)
  std::unique_ptr<BfcAllocator> pinned_;  // page-locked staging, made on first use
};

}  // namespace

BackendInfo cuda_backend_info() {
  int count = 0;
  cudaError_t st = cudaGetDeviceCount(&count);
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  std::string rt = "CUDA runtime " + std::to_string(runtime / 1000) + "." +
                   std::to_string((runtime % 1000) / 10);
  if (st != cudaSuccess) {
    return {"cuda", true, false, rt + "; no usable device: " + cudaGetErrorString(st)};
  }
  return {"cuda", true, count > 0, rt + "; " + std::to_string(count) + " device(s)"};
}

int cuda_runtime_device_count(std::string* why_not) {
  int count = 0;
  const cudaError_t st = cudaGetDeviceCount(&count);
  if (st != cudaSuccess) {
    cudaGetLastError();  // clear it: the process goes on without CUDA
    if (why_not) *why_not = std::string(cudaGetErrorName(st)) + ": " + cudaGetErrorString(st);
    return 0;
  }
  if (count == 0 && why_not) *why_not = "the CUDA runtime finds no device";
  return count;
}

std::unique_ptr<Backend> make_cuda_backend(int device_index, const MemoryPolicy& policy) {
  require_cuda_device(device_index);
  return std::make_unique<CudaBackend>(device_index, policy);
}

}  // namespace nnfit
