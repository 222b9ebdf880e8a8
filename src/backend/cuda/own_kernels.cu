// The first of the two nvcc translation units of nnfit's own CUDA kernels: the first half
// of the families (core_kernels.h) instantiated with DeviceLaunch, so each functor gets its
// __global__ wrapper here; own_kernels_more.cu has the other half. Two TUs, not one per
// family: nvcc's fixed cost per TU (host pass, device pass per architecture, fatbin)
// dominates small kernels, and two let a -j2 build compile both at once
// (docs/design/cuda.md, "Build").
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/kernels/core_kernels.h"
#include "backend/cuda/kernels/launch_device.cuh"
#include "backend/cuda/kernels/reorder_kernels.h"

namespace nnfit {

void register_cuda_more_kernels(KernelRegistry& registry);  // own_kernels_more.cu

void register_cuda_kernels(KernelRegistry& registry) {
  register_cublaslt_kernels(registry);
  register_cudnn_kernels(registry);
  cuda::register_core_kernels<cuda::DeviceLaunch>(registry);
  register_cuda_more_kernels(registry);
}

void reorder_filter_on_device(const cuda::FilterReorder& r, std::int64_t elements, std::size_t element_bytes, const void* src,
                              void* dst, bool to_krsc, const StepContext* ctx) {
  cuda::reorder_filter<cuda::DeviceLaunch>(r, elements, element_bytes, src, dst, to_krsc, ctx);
}

}  // namespace nnfit
