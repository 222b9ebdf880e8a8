// The one nvcc translation unit of nnfit's own CUDA kernels: every family's registration
// instantiated with DeviceLaunch, so each functor gets its __global__ wrapper here. One
// TU on purpose: nvcc's fixed cost per TU (host pass, device pass per architecture, fatbin)
// dominates small kernels (docs/design/cuda.md, "Build").
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/kernels/all_kernels.h"
#include "backend/cuda/kernels/launch_device.cuh"

namespace nnfit {

void register_cuda_kernels(KernelRegistry& registry) {
  register_cublaslt_kernels(registry);
  cuda::register_own_kernels<cuda::DeviceLaunch>(registry);
}

}  // namespace nnfit
