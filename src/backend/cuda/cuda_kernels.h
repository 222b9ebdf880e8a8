// Private: the CUDA kernel families (in the CUDA plugin, libnnfit_cuda.so). register_cuda_kernels
// registers every CUDA kernel under DeviceType::cuda: the vendor kernels first (cuBLASLt's
// matmuls), then nnfit's own kernels (kernels/*_kernels.h launched by DeviceLaunch; the same
// code runs on the host in `ctest -L cuda-host`).
#pragma once
#include "backend/cuda/dnn_plan.h"
#include "nnfit/backend/kernel_registry.h"

namespace nnfit {

void register_cuda_kernels(KernelRegistry& registry);
// cublaslt_matmul.cpp: matmul, fused_matmul, batch_matmul.
void register_cublaslt_kernels(KernelRegistry& registry);
// cudnn_conv.cpp (or cudnn_absent.cpp where CMake found no cuDNN): the convolutions.
void register_cudnn_kernels(KernelRegistry& registry);
// The filter reorder of kernels/reorder_kernels.h on the device (own_kernels.cu), on `ctx`'s stream.
void reorder_filter_on_device(const cuda::FilterReorder& r, std::int64_t elements, std::size_t element_bytes, const void* src,
                              void* dst, bool to_krsc, const StepContext* ctx);

}  // namespace nnfit
