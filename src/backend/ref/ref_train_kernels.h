// Private: factories of the reference kernels of the OpenMP family's ops (ref:<op>), the
// naive single-threaded oracles that conformance tests hold the fast kernels to.
// Registered last for each op, from the op table (src/graph/ops.yaml).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nnfit/backend/kernel.h"

namespace nnfit {

// ref_train_elementwise.cpp
std::unique_ptr<Kernel> make_ref_bias_add(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_bias_add_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_add_n(const KernelDesc& desc, std::string* why_not);
// sub, mul, maximum, minimum, minmax_grad, scale, concat, slice, batch_matmul,
// l2_normalize, l2_normalize_grad (ref_merge.cpp).
std::unique_ptr<Kernel> make_ref_merge(const KernelDesc& desc, std::string* why_not);
// unary, binary, reduce, where, cumulative (+ their gradients), arg_reduce, broadcast_to
// (ref_math.cpp).
std::unique_ptr<Kernel> make_ref_math(const KernelDesc& desc, std::string* why_not);
// ref_shape.cpp: pad, crop, transpose, repeat, repeat_grad.
std::unique_ptr<Kernel> make_ref_shape(const KernelDesc& desc, std::string* why_not);
// ref_reduce.cpp: reduce_mean, reduce_max and their gradients.
std::unique_ptr<Kernel> make_ref_reduce(const KernelDesc& desc, std::string* why_not);
// ref_prelu.cpp: prelu and prelu_grad.
std::unique_ptr<Kernel> make_ref_prelu(const KernelDesc& desc, std::string* why_not);
// ref_layer_norm.cpp: layer_norm and layer_norm_grad.
std::unique_ptr<Kernel> make_ref_layer_norm(const KernelDesc& desc, std::string* why_not);
// standardize and standardize_grad (ref_layer_norm.cpp).
std::unique_ptr<Kernel> make_ref_standardize(const KernelDesc& desc, std::string* why_not);
// group_norm and group_norm_grad (ref_layer_norm.cpp).
std::unique_ptr<Kernel> make_ref_group_norm(const KernelDesc& desc, std::string* why_not);
// gather, gather_grad (ref_gather.cpp): ids of int32, int64 or float32.
// sequence_mask, apply_mask, masked_mean, masked_mean_grad (ref_mask.cpp).
std::unique_ptr<Kernel> make_ref_mask(const KernelDesc& desc, std::string* why_not);
// attention_mask, masked_softmax (+grad), scale_by (+grad), additive_scores (+grad)
// (ref_attention.cpp).
std::unique_ptr<Kernel> make_ref_attention(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_gather(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_reshape(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_cast(const KernelDesc& desc, std::string* why_not);  // ref_cast.cpp
// random_flip, random_affine, affine_transform, random_contrast and their gradients
// (ref_augment.cpp).
std::unique_ptr<Kernel> make_ref_augment(const KernelDesc& desc, std::string* why_not);
// resize and resize_grad (ref_resize.cpp).
std::unique_ptr<Kernel> make_ref_resize(const KernelDesc& desc, std::string* why_not);
// weight_penalty, weight_penalty_grad, apply_constraint (ref_regularizers.cpp).
std::unique_ptr<Kernel> make_ref_regularizer(const KernelDesc& desc, std::string* why_not);
// ref_train_loss.cpp
std::unique_ptr<Kernel> make_ref_loss(const KernelDesc& desc, std::string* why_not);
// ref_train_loss_rows.cpp: Keras's row losses (is_row_loss), their mean over rows and its
// gradient times dloss, each row's times its sample's weight (`weights` [batch], or null);
// `scratch` is the calling kernel's, sized on first use.
struct LossParams;
double ref_row_loss(const LossParams& p, const float* pred, const float* target, const float* weights,
                    std::vector<double>& scratch);
void ref_row_loss_grad(const LossParams& p, const float* pred, const float* target, const float* weights, double dloss,
                       float* dpred, std::vector<double>& scratch);
std::unique_ptr<Kernel> make_ref_loss_grad(const KernelDesc& desc, std::string* why_not);
// ref_train_batch_norm.cpp
std::unique_ptr<Kernel> make_ref_batch_norm_train(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_batch_norm_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_batch_norm_infer(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_batch_norm_infer_grad(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_moving_average_update(const KernelDesc& desc, std::string* why_not);
// ref_train_dropout.cpp
// noise: GaussianNoise, GaussianDropout, AlphaDropout (ref_train_dropout.cpp).
std::unique_ptr<Kernel> make_ref_noise(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_dropout(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_dropout_grad(const KernelDesc& desc, std::string* why_not);
// ref_train_optimizers.cpp
std::unique_ptr<Kernel> make_ref_sgd_update(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_sgd_momentum_update(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_adam_update(const KernelDesc& desc, std::string* why_not);
// adagrad_update, adamax_update, lion_update, adadelta_update, nadam_update, ftrl_update,
// lamb_update (ref_train_optimizers.cpp).
std::unique_ptr<Kernel> make_ref_slot_update(const KernelDesc& desc, std::string* why_not);
// clip_by_value, clip_by_norm, global_norm_scale (ref_train_optimizers.cpp).
std::unique_ptr<Kernel> make_ref_clip(const KernelDesc& desc, std::string* why_not);
// unscale_gradient and accumulate_gradient (ref_train_optimizers.cpp).
std::unique_ptr<Kernel> make_ref_unscale_gradient(const KernelDesc& desc, std::string* why_not);
std::unique_ptr<Kernel> make_ref_rmsprop_update(const KernelDesc& desc, std::string* why_not);

}  // namespace nnfit
