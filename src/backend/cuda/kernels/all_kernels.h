// Private to the CUDA backend: every family of own kernels, registered with one launch
// policy (own_kernels.cu: DeviceLaunch; tests/cuda_host: HostLaunch), so the device and
// the host-run check cannot register different lists.
#pragma once
#include "backend/cuda/kernels/attention_kernels.h"
#include "backend/cuda/kernels/augment_kernels.h"
#include "backend/cuda/kernels/batch_norm_kernels.h"
#include "backend/cuda/kernels/elementwise_kernels.h"
#include "backend/cuda/kernels/group_norm_kernels.h"
#include "backend/cuda/kernels/layer_norm_kernels.h"
#include "backend/cuda/kernels/layout_kernels.h"
#include "backend/cuda/kernels/mask_kernels.h"
#include "backend/cuda/kernels/misc_kernels.h"
#include "backend/cuda/kernels/optimizer_kernels.h"
#include "backend/cuda/kernels/pool_kernels.h"
#include "backend/cuda/kernels/prelu_kernels.h"
#include "backend/cuda/kernels/regularizer_kernels.h"
#include "backend/cuda/kernels/resize_kernels.h"
#include "backend/cuda/kernels/rnn_kernels.h"
#include "backend/cuda/kernels/scatter_noise_kernels.h"
#include "backend/cuda/kernels/training_kernels.h"

namespace nnfit::cuda {

template <class Launch>
void register_own_kernels(KernelRegistry& r) {
  register_elementwise_kernels<Launch>(r);
  register_training_kernels<Launch>(r);
  register_optimizer_kernels<Launch>(r);
  register_layout_kernels<Launch>(r);
  register_pool_kernels<Launch>(r);
  register_batch_norm_kernels<Launch>(r);
  register_layer_norm_kernels<Launch>(r);
  register_misc_kernels<Launch>(r);
  register_mask_kernels<Launch>(r);
  register_group_norm_kernels<Launch>(r);
  register_prelu_kernels<Launch>(r);
  register_regularizer_kernels<Launch>(r);
  register_attention_kernels<Launch>(r);
  register_scatter_noise_kernels<Launch>(r);
  register_augment_kernels<Launch>(r);
  register_resize_kernels<Launch>(r);
  register_rnn_kernels<Launch>(r);
}

}  // namespace nnfit::cuda
