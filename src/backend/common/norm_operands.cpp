// The operand structs of backend/common/norm_operands.h: one place that knows which input
// and output of each normalization op is which.
#include "backend/common/norm_operands.h"

namespace nnfit {

NormForwardOperands::NormForwardOperands(const KernelArgs& a)
    : x(a.in(0)), gamma(a.in(1)), beta(a.in(2)), y(a.out(0)), stat0(a.out(1)), stat1(a.out(2)) {}

NormBackwardOperands::NormBackwardOperands(const KernelArgs& a)
    : x(a.in(0)), dy(a.in(1)), gamma(a.in(2)), stat0(a.in(3)), stat1(a.in(4)), dx(a.out(0)), dgamma(a.out(1)),
      dbeta(a.out(2)) {}

BatchNormInferOperands::BatchNormInferOperands(const KernelArgs& a)
    : x(a.in(0)), gamma(a.in(1)), beta(a.in(2)), moving_mean(a.in(3)), moving_var(a.in(4)), y(a.out(0)) {}

StandardizeOperands::StandardizeOperands(const KernelArgs& a, bool grad)
    : x(a.in(0)), mean(grad ? nullptr : a.in(1)), var(a.in(grad ? 1 : 2)), y(a.out(0)) {}

}  // namespace nnfit
