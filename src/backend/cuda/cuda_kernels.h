// Private: the CUDA kernel families (compiled only when NNFIT_WITH_CUDA). register_cuda_kernels
// registers every CUDA kernel under DeviceType::cuda: the vendor kernels first (cuBLASLt's
// matmuls), then nnfit's own kernels (kernels/*_kernels.h launched by DeviceLaunch; the same
// code runs on the host in `ctest -L cuda-host`).
#pragma once
#include "nnfit/backend/kernel_registry.h"

namespace nnfit {

void register_cuda_kernels(KernelRegistry& registry);
// cublaslt_matmul.cpp: matmul, fused_matmul, batch_matmul.
void register_cublaslt_kernels(KernelRegistry& registry);

}  // namespace nnfit
