// The one nvcc translation unit of nnfit's own CUDA kernels: every family's registration
// instantiated with DeviceLaunch, so each functor gets its __global__ wrapper here. One
// TU on purpose: nvcc's fixed cost per TU (host pass, device pass per architecture, fatbin)
// dominates small kernels (docs/design/cuda.md, "Build").
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/kernels/all_kernels.h"
#include "backend/cuda/kernels/launch_device.cuh"
#include "backend/cuda/kernels/reorder_kernels.h"

namespace nnfit {

void register_cuda_kernels(KernelRegistry& registry) {
  register_cublaslt_kernels(registry);
  register_cudnn_kernels(registry);
  cuda::register_own_kernels<cuda::DeviceLaunch>(registry);
}

void reorder_filter_on_device(const cuda::FilterReorder& r, std::int64_t elements, std::size_t element_bytes, const void* src,
                              void* dst, bool to_krsc, const StepContext* ctx) {
  cuda::reorder_filter<cuda::DeviceLaunch>(r, elements, element_bytes, src, dst, to_krsc, ctx);
}

}  // namespace nnfit
