// Private: the CUDA kernel family (compiled only when NNFIT_WITH_CUDA). Registers every
// CUDA kernel under DeviceType::cuda: nnfit's own kernels (kernels/*_kernels.h launched by
// DeviceLaunch; the same code runs on the host in `ctest -L cuda-host`).
#pragma once
#include "nnfit/backend/kernel_registry.h"

namespace nnfit {

void register_cuda_kernels(KernelRegistry& registry);

}  // namespace nnfit
