// Built instead of cudnn_conv.cpp when CMake finds no cuDNN next to the CUDA toolkit
// (cuDNN is a separate install): the convolutions then have no CUDA kernel, which
// `nnfit ops` shows and the configure summary says.
#include "backend/cuda/cuda_kernels.h"

namespace nnfit {

void register_cudnn_kernels(KernelRegistry& /*registry*/) {}

}  // namespace nnfit
