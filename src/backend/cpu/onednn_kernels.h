// Private: the factories of the oneDNN family's fast CPU kernels, one group per
// onednn_*.cpp file (plus the OpenMP max-pool gradients), registered from the op table (src/graph/ops.yaml).
#pragma once
#include <memory>
#include <string>

#include "nnfit/backend/kernel.h"

namespace nnfit {

std::unique_ptr<Kernel> make_onednn_matmul(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_batch_matmul(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_masked_softmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_conv2d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_conv2d_backprop_input(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_conv2d_backprop_filter(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_pool2d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_avg_pool2d_grad(const KernelDesc& desc, std::string* why_not);
// The 3-D forms (NDHWC activations, DHWIO filters), in the same files.
std::unique_ptr<Kernel> make_onednn_conv3d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_conv3d_backprop_input(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_conv3d_backprop_filter(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_pool3d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_avg_pool3d_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_activation(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_activation_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_softmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_onednn_softmax_grad(const KernelDesc& desc, std::string* why_not);
// rnn, rnn_grad (onednn_rnn.cpp): the shared scan over dnnl_sgemm.
std::unique_ptr<Kernel> make_onednn_rnn(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_max_pool2d_grad(const KernelDesc& desc, std::string* why_not);
// max_pool2d_argmax, max_pool2d_argmax_grad(_bias) (cpu_max_pool2d_argmax.cpp).
std::unique_ptr<Kernel> make_omp_max_pool2d_argmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_max_pool2d_argmax_grad(const KernelDesc& desc, std::string* why_not);
// conv2d_backprop_filter at bfloat16 over one input channel (omp_conv_filter_grad_bf16.cpp);
// listed before oneDNN's and declining every other desc.
std::unique_ptr<Kernel> make_omp_conv2d_backprop_filter_bf16(const KernelDesc& desc, std::string* why_not);
// fused_conv2d_max_pool_argmax (cpu_conv_max_pool_argmax.cpp).
std::unique_ptr<Kernel> make_omp_conv2d_max_pool_argmax(const KernelDesc& desc, std::string* why_not);
// fused_conv2d_max_pool_argmax_grad (cpu_conv_max_pool_argmax_grad.cpp).
std::unique_ptr<Kernel> make_omp_conv2d_max_pool_argmax_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_max_pool3d_grad(const KernelDesc& desc, std::string* why_not);

}  // namespace nnfit
