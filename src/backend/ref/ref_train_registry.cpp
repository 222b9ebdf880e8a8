// Registers this kernel family (see src/backend/kernel_families.h): the reference kernels
// ref:<op> of the OpenMP family's ops, appended after the fast kernels of each op.
#include "backend/kernel_families.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

void register_ref_train_kernels(KernelRegistry& registry) {
  const struct {
    const char* op;
    KernelFactory factory;
  } kKernels[] = {
      {"bias_add", make_ref_bias_add},
      {"bias_add_grad", make_ref_bias_add_grad},
      {"add_n", make_ref_add_n},
      {"reshape", make_ref_reshape},
      {"loss", make_ref_loss},
      {"loss_grad", make_ref_loss_grad},
      {"batch_norm_train", make_ref_batch_norm_train},
      {"batch_norm_grad", make_ref_batch_norm_grad},
      {"batch_norm_infer", make_ref_batch_norm_infer},
      {"batch_norm_infer_grad", make_ref_batch_norm_infer_grad},
      {"moving_average_update", make_ref_moving_average_update},
      {"dropout", make_ref_dropout},
      {"dropout_grad", make_ref_dropout_grad},
      {"sgd_update", make_ref_sgd_update},
      {"sgd_momentum_update", make_ref_sgd_momentum_update},
      {"adam_update", make_ref_adam_update},
      {"rmsprop_update", make_ref_rmsprop_update},
      {"adagrad_update", make_ref_slot_update},
      {"adamax_update", make_ref_slot_update},
      {"lion_update", make_ref_slot_update},
      {"adadelta_update", make_ref_slot_update},
      {"nadam_update", make_ref_slot_update},
      {"ftrl_update", make_ref_slot_update},
      {"decay_weights", make_ref_slot_update},
      {"ema_update", make_ref_slot_update},
      {"clip_by_value", make_ref_clip},
      {"noise", make_ref_noise},
      {"clip_by_norm", make_ref_clip},
      {"global_norm_scale", make_ref_clip},
      {"unscale_gradient", make_ref_unscale_gradient},
      {"accumulate_gradient", make_ref_unscale_gradient},
      {"sub", make_ref_merge},
      {"mul", make_ref_merge},
      {"maximum", make_ref_merge},
      {"minimum", make_ref_merge},
      {"minmax_grad", make_ref_merge},
      {"scale", make_ref_merge},
      {"concat", make_ref_merge},
      {"slice", make_ref_merge},
      {"batch_matmul", make_ref_merge},
      {"l2_normalize", make_ref_merge},
      {"l2_normalize_grad", make_ref_merge},
      {"pad", make_ref_shape},
      {"crop", make_ref_shape},
      {"transpose", make_ref_shape},
      {"repeat", make_ref_shape},
      {"repeat_grad", make_ref_shape},
      {"resize", make_ref_resize},
      {"resize_grad", make_ref_resize},
      {"random_flip", make_ref_augment},
      {"random_flip_grad", make_ref_augment},
      {"random_affine", make_ref_augment},
      {"affine_transform", make_ref_augment},
      {"affine_transform_grad", make_ref_augment},
      {"random_contrast", make_ref_augment},
      {"random_contrast_grad", make_ref_augment},
      {"reduce_mean", make_ref_reduce},
      {"reduce_max", make_ref_reduce},
      {"reduce_mean_grad", make_ref_reduce},
      {"reduce_max_grad", make_ref_reduce},
      {"prelu", make_ref_prelu},
      {"prelu_grad", make_ref_prelu},
      {"layer_norm", make_ref_layer_norm},
      {"layer_norm_grad", make_ref_layer_norm},
      {"group_norm", make_ref_group_norm},
      {"group_norm_grad", make_ref_group_norm},
      {"standardize", make_ref_standardize},
      {"standardize_grad", make_ref_standardize},
      {"gather", make_ref_gather},
      {"gather_grad", make_ref_gather},
      {"sequence_mask", make_ref_mask},
      {"apply_mask", make_ref_mask},
      {"masked_mean", make_ref_mask},
      {"masked_mean_grad", make_ref_mask},
      {"attention_mask", make_ref_attention},
      {"masked_softmax", make_ref_attention},
      {"masked_softmax_grad", make_ref_attention},
      {"scale_by", make_ref_attention},
      {"scale_by_grad", make_ref_attention},
      {"additive_scores", make_ref_attention},
      {"additive_scores_grad", make_ref_attention},
      {"weight_penalty", make_ref_regularizer},
      {"weight_penalty_grad", make_ref_regularizer},
      {"apply_constraint", make_ref_regularizer},
      {"unary", make_ref_math},
      {"unary_grad", make_ref_math},
      {"binary", make_ref_math},
      {"binary_grad", make_ref_math},
      {"reduce", make_ref_math},
      {"reduce_grad", make_ref_math},
      {"where", make_ref_math},
      {"where_grad", make_ref_math},
      {"arg_reduce", make_ref_math},
      {"cumulative", make_ref_math},
      {"cumulative_grad", make_ref_math},
      {"broadcast_to", make_ref_math},
  };
  for (const auto& k : kKernels) {
    registry.add(k.op, DeviceType::cpu, DType::f32, {std::string("ref:") + k.op, k.factory});
  }
  // gather_grad is keyed by its first input, the ids.
  for (DType dtype : {DType::i32, DType::i64}) {
    registry.add("gather_grad", DeviceType::cpu, dtype, {"ref:gather_grad", make_ref_gather});
    registry.add("sequence_mask", DeviceType::cpu, dtype, {"ref:sequence_mask", make_ref_mask});
  }
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64}) {
    registry.add("cast", DeviceType::cpu, dtype, {"ref:cast", make_ref_cast});
  }
  // reshape only moves bytes, so it serves every dtype (i32 labels, u8 masks, f16 storage).
  for (DType dtype : {DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    registry.add("reshape", DeviceType::cpu, dtype, {"ref:reshape", make_ref_reshape});
  }
}

}  // namespace nnfit
