// The second nvcc translation unit of nnfit's own CUDA kernels (own_kernels.cu has the
// first): the families of more_kernels.h instantiated with DeviceLaunch.
#include "backend/cuda/kernels/launch_device.cuh"
#include "backend/cuda/kernels/more_kernels.h"

namespace nnfit {

void register_cuda_more_kernels(KernelRegistry& registry) { cuda::register_more_kernels<cuda::DeviceLaunch>(registry); }

}  // namespace nnfit
