// The operand structs of backend/common/norm_operands.h: one place that knows which input
// and output of each normalization op is which.
#include "backend/common/norm_operands.h"

namespace nnfit {

namespace {

const float* in(const KernelArgs& a, std::size_t i) { return static_cast<const float*>(a.inputs[i]); }
float* out(const KernelArgs& a, std::size_t i) { return static_cast<float*>(a.outputs[i]); }

}  // namespace

NormForwardOperands::NormForwardOperands(const KernelArgs& a)
    : x(in(a, 0)), gamma(in(a, 1)), beta(in(a, 2)), y(out(a, 0)), stat0(out(a, 1)), stat1(out(a, 2)) {}

NormBackwardOperands::NormBackwardOperands(const KernelArgs& a)
    : x(in(a, 0)), dy(in(a, 1)), gamma(in(a, 2)), stat0(in(a, 3)), stat1(in(a, 4)), dx(out(a, 0)), dgamma(out(a, 1)),
      dbeta(out(a, 2)) {}

BatchNormInferOperands::BatchNormInferOperands(const KernelArgs& a)
    : x(in(a, 0)), gamma(in(a, 1)), beta(in(a, 2)), moving_mean(in(a, 3)), moving_var(in(a, 4)), y(out(a, 0)) {}

StandardizeOperands::StandardizeOperands(const KernelArgs& a, bool grad)
    : x(in(a, 0)), mean(grad ? nullptr : in(a, 1)), var(in(a, grad ? 1 : 2)), y(out(a, 0)) {}

}  // namespace nnfit
