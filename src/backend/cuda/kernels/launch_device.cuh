// Private to the CUDA backend, nvcc only: the device side of Note [Kernel/launcher split]
// (launch.h). The __global__ wrapper does nothing but walk the grid and call the functor.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/kernels/launch.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

template <class F>
__global__ void grid_kernel(F f, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

inline void check_launch(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw BackendError(std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}

struct DeviceLaunch {
  static constexpr bool kDevice = true;
  template <class F>
  static void run(const F& f, std::int64_t n, const StepContext* ctx) {
    if (n <= 0) return;
    const Grid g = grid_for(n);
    grid_kernel<<<static_cast<unsigned>(g.blocks), g.threads, 0, stream_of(ctx)>>>(f, n);
    check_launch(cudaGetLastError(), "kernel launch");
  }
  static void copy(void* dst, const void* src, std::size_t bytes, const StepContext* ctx) {
    if (dst == src || bytes == 0) return;
    check_launch(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_of(ctx)), "cudaMemcpyAsync");
  }
  // Only step_scalars' values where no device copy exists (outside a model's queues): from
  // pageable memory, which cudaMemcpyAsync stages before returning, so the source may be a
  // local. A captured CUDA graph cannot hold a pageable copy (docs/design/cuda.md, "CUDA
  // graphs"): no capturable kernel uploads on a model's queues.
  static void upload(void* dst, const void* src, std::size_t bytes, const StepContext* ctx) {
    if (bytes == 0) return;
    check_launch(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_of(ctx)), "cudaMemcpyAsync");
  }
  static cudaStream_t stream_of(const StepContext* ctx) {
    return ctx ? static_cast<cudaStream_t>(ctx->stream) : nullptr;
  }
};

}  // namespace nnfit::cuda
