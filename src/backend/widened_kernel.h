// Private to src/backend: the widening adapter behind Note [Compute dtype]. An op on
// float16 / bfloat16 tensors that no kernel takes natively runs as its float32 kernel:
// the low-precision inputs are converted to float32 in the workspace, the float32 kernel
// runs, and its outputs are rounded to their storage type. So every op of the catalogue
// computes at any floating dtype (in float32, as the reference does at low precision),
// and native kernels (oneDNN's bf16) replace it op by op.
#pragma once
#include <memory>

#include "nnfit/backend/kernel.h"

namespace nnfit {

// Whether `desc` holds a float16 or bfloat16 tensor and may be widened: not an in-place
// update (their variables and slots stay float32 under every policy).
bool widenable(const KernelDesc& desc);
// `desc` with every float16 / bfloat16 tensor as float32.
KernelDesc widened(const KernelDesc& desc);
// Runs `inner` (a kernel of widened(desc)) on desc's tensors.
std::unique_ptr<Kernel> make_widened_kernel(const KernelDesc& desc, std::unique_ptr<Kernel> inner);

}  // namespace nnfit
