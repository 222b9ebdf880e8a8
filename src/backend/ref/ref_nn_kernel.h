// Private to the reference kernels of the oneDNN family's ops (ref_nn_*.cpp): a kernel
// made from a closure, the scalar activation formulas, and each file's factories, which
// the op table (src/graph/ops.yaml) registers. These kernels are the test oracle: plain loops,
// single-threaded, double accumulators; they may allocate in run().
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "backend/common/nn_op_geometry.h"
#include "nnfit/backend/kernel.h"

namespace nnfit {

// Owns its closure; run() from one thread at a time, like every Kernel.
class RefKernel final : public Kernel {
 public:
  using Fn = std::function<void(const KernelArgs&)>;
  explicit RefKernel(Fn fn) : fn_(std::move(fn)) {}
  void run(const KernelArgs& args) override { fn_(args); }

 private:
  Fn fn_;
};

// y = act(x). gelu is the exact erf form.
double ref_activation(const ActivationArgs& a, double x);
inline double ref_activation(ActivationKind kind, double x) { return ref_activation(default_activation_args(kind), x); }
// dx for dy, where t is the forward output y (relu, sigmoid, tanh) or input x (every other
// kind: activation_grad_reads_output).
double ref_activation_grad(const ActivationArgs& a, double t, double dy);

std::unique_ptr<Kernel> make_ref_matmul(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv2d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv2d_backprop_input(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv2d_backprop_filter(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_max_pool2d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_max_pool2d_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_max_pool2d_argmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_max_pool2d_argmax_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv2d_max_pool_argmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv2d_max_pool_argmax_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_avg_pool2d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_avg_pool2d_grad(const KernelDesc& desc, std::string* why_not);
// The 3-D forms (ref_nn_conv3d.cpp, ref_nn_pool3d.cpp).
std::unique_ptr<Kernel> make_ref_conv3d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv3d_backprop_input(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_conv3d_backprop_filter(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_max_pool3d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_max_pool3d_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_avg_pool3d(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_avg_pool3d_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_activation(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_activation_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_softmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_softmax_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_log_softmax(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_log_softmax_grad(const KernelDesc& desc, std::string* why_not);
// rnn, rnn_grad (ref_rnn.cpp).
std::unique_ptr<Kernel> make_ref_rnn(const KernelDesc& desc, std::string* why_not);

}  // namespace nnfit
