// Private to the CUDA backend: the first half of the own-kernel families (the element-wise
// ops, training ops, optimizers, layout, pooling, batch and layer norm, gather and masks),
// registered with one launch policy. own_kernels.cu compiles this half for the device and
// own_kernels_more.cu the other (more_kernels.h), so a -j2 build runs the two nvcc passes
// at once; all_kernels.h registers both for the host-run check.
#pragma once
#include "backend/cuda/kernels/batch_norm_kernels.h"
#include "backend/cuda/kernels/elementwise_kernels.h"
#include "backend/cuda/kernels/layer_norm_kernels.h"
#include "backend/cuda/kernels/layout_kernels.h"
#include "backend/cuda/kernels/mask_kernels.h"
#include "backend/cuda/kernels/misc_kernels.h"
#include "backend/cuda/kernels/optimizer_kernels.h"
#include "backend/cuda/kernels/pool_kernels.h"
#include "backend/cuda/kernels/training_kernels.h"

namespace nnfit::cuda {

template <class Launch>
void register_core_kernels(KernelRegistry& r) {
  register_elementwise_kernels<Launch>(r);
  register_training_kernels<Launch>(r);
  register_optimizer_kernels<Launch>(r);
  register_layout_kernels<Launch>(r);
  register_pool_kernels<Launch>(r);
  register_batch_norm_kernels<Launch>(r);
  register_layer_norm_kernels<Launch>(r);
  register_misc_kernels<Launch>(r);
  register_mask_kernels<Launch>(r);
}

}  // namespace nnfit::cuda
