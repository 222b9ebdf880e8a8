// Private: factories of the OpenMP kernels (omp:<op>) of the training ops: losses, batch
// norm, dropout, optimizer updates, bias and misc. They accept the same descs as the
// reference kernels (backend/common/train_op_checks.h); the op table
// (src/graph/ops.yaml) registers them ahead of ref:<op>.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "nnfit/backend/kernel.h"

namespace nnfit {

// Below this many elements a loop runs on the calling thread: waking the team costs more
// than the work.
inline constexpr std::int64_t kOmpMinParallelElements = 1 << 14;

// Rows [*begin, *end) of `rows` that thread `tid` of `threads` reduces; the split is
// static so per-thread partial sums land in fixed workspace slots.
inline void omp_row_range(int tid, int threads, std::int64_t rows, std::int64_t* begin,
                          std::int64_t* end) {
  *begin = rows * tid / threads;
  *end = rows * (tid + 1) / threads;
}

// omp_math.cpp: unary, unary_grad, binary, where, broadcast_to.
std::unique_ptr<Kernel> make_omp_math(const KernelDesc& desc, std::string* why_not);
// omp_elementwise.cpp
std::unique_ptr<Kernel> make_omp_bias_add(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_bias_add_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_add_n(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_reshape(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_cast(const KernelDesc& desc, std::string* why_not);  // omp_cast.cpp
// omp_loss.cpp
std::unique_ptr<Kernel> make_omp_loss(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_loss_grad(const KernelDesc& desc, std::string* why_not);
// omp_batch_norm.cpp
std::unique_ptr<Kernel> make_omp_batch_norm_train(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_batch_norm_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_batch_norm_infer(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_moving_average_update(const KernelDesc& desc, std::string* why_not);
// omp_attention.cpp: masked_softmax and masked_softmax_grad.
std::unique_ptr<Kernel> make_omp_masked_softmax(const KernelDesc& desc, std::string* why_not);
// omp_layer_norm.cpp: layer_norm and layer_norm_grad.
std::unique_ptr<Kernel> make_omp_layer_norm(const KernelDesc& desc, std::string* why_not);
// omp_reduce.cpp: reduce_mean, reduce_max and their gradients.
std::unique_ptr<Kernel> make_omp_reduce(const KernelDesc& desc, std::string* why_not);
// omp_resize.cpp: resize and resize_grad.
std::unique_ptr<Kernel> make_omp_resize(const KernelDesc& desc, std::string* why_not);
// omp_dropout.cpp
std::unique_ptr<Kernel> make_omp_dropout(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_dropout_grad(const KernelDesc& desc, std::string* why_not);
// omp_optimizers.cpp
std::unique_ptr<Kernel> make_omp_sgd_update(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_sgd_momentum_update(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_adam_update(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_rmsprop_update(const KernelDesc& desc, std::string* why_not);
// omp_slot_updates.cpp: adagrad, adamax, lion, adadelta, nadam, ftrl and lamb updates,
// decay_weights, ema_update; clip_by_value, clip_by_norm, global_norm_scale.
std::unique_ptr<Kernel> make_omp_slot_update(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_clip(const KernelDesc& desc, std::string* why_not);
// omp_slot_updates.cpp: unscale_gradient (loss scaling on a device's model; the CPU's own
// runs unscale on the host, but every op has its CPU kernels).
std::unique_ptr<Kernel> make_omp_unscale_gradient(const KernelDesc& desc, std::string* why_not);
// omp_gather.cpp: gather and gather_grad.
std::unique_ptr<Kernel> make_omp_gather(const KernelDesc& desc, std::string* why_not);
// omp_augment.cpp: random_flip, random_affine, affine_transform, random_contrast and
// their gradients.
std::unique_ptr<Kernel> make_omp_augment(const KernelDesc& desc, std::string* why_not);
// omp_masks.cpp: sequence_mask, apply_mask, masked_mean(+grad); standardize(+grad).
std::unique_ptr<Kernel> make_omp_mask(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_omp_standardize(const KernelDesc& desc, std::string* why_not);
// omp_regularizers.cpp: weight_penalty(+grad) of kind l1l2, apply_constraint.
std::unique_ptr<Kernel> make_omp_regularizer(const KernelDesc& desc, std::string* why_not);
// omp_shape.cpp: pad, crop, transpose, repeat, repeat_grad, concat, slice.
std::unique_ptr<Kernel> make_omp_shape(const KernelDesc& desc, std::string* why_not);

}  // namespace nnfit
