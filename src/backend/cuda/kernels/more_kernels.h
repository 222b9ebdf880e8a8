// Private to the CUDA backend: the second half of the own-kernel families (group norm and
// standardize, prelu, regularizers and constraints, attention, noise and gather_grad, the
// augmentation layers, resize, the recurrent scan, the tensor-algebra ops), registered with one launch policy;
// compiled for the device by own_kernels_more.cu (core_kernels.h has the first half).
#pragma once
#include "backend/cuda/kernels/attention_kernels.h"
#include "backend/cuda/kernels/augment_kernels.h"
#include "backend/cuda/kernels/group_norm_kernels.h"
#include "backend/cuda/kernels/math_kernels.h"
#include "backend/cuda/kernels/prelu_kernels.h"
#include "backend/cuda/kernels/regularizer_kernels.h"
#include "backend/cuda/kernels/resize_kernels.h"
#include "backend/cuda/kernels/rnn_kernels.h"
#include "backend/cuda/kernels/scatter_noise_kernels.h"

namespace nnfit::cuda {

template <class Launch>
void register_more_kernels(KernelRegistry& r) {
  register_group_norm_kernels<Launch>(r);
  register_prelu_kernels<Launch>(r);
  register_regularizer_kernels<Launch>(r);
  register_attention_kernels<Launch>(r);
  register_scatter_noise_kernels<Launch>(r);
  register_augment_kernels<Launch>(r);
  register_resize_kernels<Launch>(r);
  register_rnn_kernels<Launch>(r);
  register_math_kernels<Launch>(r);
}

}  // namespace nnfit::cuda
