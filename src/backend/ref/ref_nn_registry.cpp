// Registers this kernel family (see src/backend/kernel_families.h): the reference kernels
// of the oneDNN family's ops, all f32 on the CPU, registered after every fast kernel.
#include "backend/kernel_families.h"
#include "backend/ref/ref_nn_kernel.h"

namespace nnfit {

void register_ref_nn_kernels(KernelRegistry& registry) {
  const std::pair<const char*, KernelFactory> kernels[] = {
      {"matmul", make_ref_matmul},
      {"fused_matmul", make_ref_matmul},
      {"conv2d", make_ref_conv2d},
      {"fused_conv2d", make_ref_conv2d},
      {"conv2d_backprop_input", make_ref_conv2d_backprop_input},
      {"conv2d_backprop_filter", make_ref_conv2d_backprop_filter},
      {"max_pool2d", make_ref_max_pool2d},
      {"max_pool2d_grad", make_ref_max_pool2d_grad},
      {"avg_pool2d", make_ref_avg_pool2d},
      {"avg_pool2d_grad", make_ref_avg_pool2d_grad},
      {"conv3d", make_ref_conv3d},
      {"fused_conv3d", make_ref_conv3d},
      {"conv3d_backprop_input", make_ref_conv3d_backprop_input},
      {"conv3d_backprop_filter", make_ref_conv3d_backprop_filter},
      {"max_pool3d", make_ref_max_pool3d},
      {"max_pool3d_grad", make_ref_max_pool3d_grad},
      {"avg_pool3d", make_ref_avg_pool3d},
      {"avg_pool3d_grad", make_ref_avg_pool3d_grad},
      {"activation", make_ref_activation},
      {"activation_grad", make_ref_activation_grad},
      {"softmax", make_ref_softmax},
      {"softmax_grad", make_ref_softmax_grad},
      {"log_softmax", make_ref_log_softmax},
      {"log_softmax_grad", make_ref_log_softmax_grad},
      {"rnn", make_ref_rnn},
      {"rnn_grad", make_ref_rnn},
  };
  for (const auto& [op, factory] : kernels) {
    registry.add(op, DeviceType::cpu, DType::f32, {std::string("ref:") + op, factory});
  }
}

}  // namespace nnfit
