// Registers this kernel family (see src/backend/kernel_families.h): the oneDNN kernels of
// dense, convolution, pooling and activation ops (2-D and 3-D), plus the OpenMP max-pool
// gradients. f32, and bf16 / f16 where oneDNN runs them on this CPU; each op's reference
// kernel is registered after these (ref_nn_registry.cpp).
#include "backend/cpu/onednn_kernels.h"
#include "backend/kernel_families.h"

namespace nnfit {

void register_onednn_kernels(KernelRegistry& registry) {
  const std::pair<const char*, KernelFactory> onednn[] = {
      {"matmul", make_onednn_matmul},
      {"fused_matmul", make_onednn_matmul},
      {"batch_matmul", make_onednn_batch_matmul},
      {"conv2d", make_onednn_conv2d},
      {"fused_conv2d", make_onednn_conv2d},
      {"conv2d_backprop_input", make_onednn_conv2d_backprop_input},
      {"conv2d_backprop_filter", make_onednn_conv2d_backprop_filter},
      {"max_pool2d", make_onednn_pool2d},
      {"avg_pool2d", make_onednn_pool2d},
      {"avg_pool2d_grad", make_onednn_avg_pool2d_grad},
      {"conv3d", make_onednn_conv3d},
      {"fused_conv3d", make_onednn_conv3d},
      {"conv3d_backprop_input", make_onednn_conv3d_backprop_input},
      {"conv3d_backprop_filter", make_onednn_conv3d_backprop_filter},
      {"max_pool3d", make_onednn_pool3d},
      {"avg_pool3d", make_onednn_pool3d},
      {"avg_pool3d_grad", make_onednn_avg_pool3d_grad},
      {"activation", make_onednn_activation},
      {"activation_grad", make_onednn_activation_grad},
      {"softmax", make_onednn_softmax},
      {"softmax_grad", make_onednn_softmax_grad},
      {"masked_softmax", make_onednn_masked_softmax},
      {"rnn", make_onednn_rnn},
      {"rnn_grad", make_onednn_rnn},
  };
  for (const auto& [op, factory] : onednn) {
    registry.add(op, DeviceType::cpu, DType::f32, {std::string("onednn:") + op, factory});
  }
  // The same kernels at bfloat16 and float16, where oneDNN has an implementation for this
  // CPU (AVX-512 BF16, AMX; f16 only with AVX-512 FP16): they decline otherwise, and the
  // float32 kernel runs widened (Note [Compute dtype]). The recurrent kernels' own loops are
  // float32.
  for (const auto& [op, factory] : onednn) {
    if (std::string(op) == "rnn" || std::string(op) == "rnn_grad" || std::string(op) == "masked_softmax") continue;
    for (DType dtype : {DType::bf16, DType::f16}) {
      registry.add(op, DeviceType::cpu, dtype, {std::string("onednn:") + op, factory});
    }
  }
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    registry.add("max_pool2d_grad", DeviceType::cpu, dtype, {"omp:max_pool2d_grad", make_omp_max_pool2d_grad});
  }
  registry.add("max_pool3d_grad", DeviceType::cpu, DType::f32,
               {"omp:max_pool3d_grad", make_omp_max_pool3d_grad});
}

}  // namespace nnfit
