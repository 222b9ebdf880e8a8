// Registers this kernel family (see src/backend/kernel_families.h): the OpenMP kernels
// omp:<op> of the training ops. The reference kernels ref:<op> follow them in each list
// (register_ref_train_kernels runs after every CPU family).
#include "backend/cpu/omp_kernels.h"
#include "backend/kernel_families.h"

namespace nnfit {

void register_omp_kernels(KernelRegistry& registry) {
  const struct {
    const char* op;
    KernelFactory factory;
  } kKernels[] = {
      {"bias_add", make_omp_bias_add},
      {"bias_add_grad", make_omp_bias_add_grad},
      {"add_n", make_omp_add_n},
      {"reshape", make_omp_reshape},
      {"loss", make_omp_loss},
      {"loss_grad", make_omp_loss_grad},
      {"batch_norm_train", make_omp_batch_norm_train},
      {"batch_norm_grad", make_omp_batch_norm_grad},
      {"batch_norm_infer", make_omp_batch_norm_infer},
      {"moving_average_update", make_omp_moving_average_update},
      {"dropout", make_omp_dropout},
      {"dropout_grad", make_omp_dropout_grad},
      {"sgd_update", make_omp_sgd_update},
      {"sgd_momentum_update", make_omp_sgd_momentum_update},
      {"adam_update", make_omp_adam_update},
      {"rmsprop_update", make_omp_rmsprop_update},
      {"reduce_mean", make_omp_reduce},
      {"reduce_max", make_omp_reduce},
      {"reduce_mean_grad", make_omp_reduce},
      {"reduce_max_grad", make_omp_reduce},
      {"masked_softmax", make_omp_masked_softmax},
      {"masked_softmax_grad", make_omp_masked_softmax},
      {"layer_norm", make_omp_layer_norm},
      {"layer_norm_grad", make_omp_layer_norm},
      {"resize", make_omp_resize},
      {"resize_grad", make_omp_resize},
      {"adagrad_update", make_omp_slot_update},
      {"adamax_update", make_omp_slot_update},
      {"lion_update", make_omp_slot_update},
      {"adadelta_update", make_omp_slot_update},
      {"nadam_update", make_omp_slot_update},
      {"ftrl_update", make_omp_slot_update},
      {"decay_weights", make_omp_slot_update},
      {"ema_update", make_omp_slot_update},
      {"clip_by_value", make_omp_clip},
      {"clip_by_norm", make_omp_clip},
      {"global_norm_scale", make_omp_clip},
      {"unscale_gradient", make_omp_unscale_gradient},
      {"random_flip", make_omp_augment},
      {"random_flip_grad", make_omp_augment},
      {"random_affine", make_omp_augment},
      {"affine_transform", make_omp_augment},
      {"affine_transform_grad", make_omp_augment},
      {"random_contrast", make_omp_augment},
      {"random_contrast_grad", make_omp_augment},
      {"sequence_mask", make_omp_mask},
      {"apply_mask", make_omp_mask},
      {"masked_mean", make_omp_mask},
      {"masked_mean_grad", make_omp_mask},
      {"standardize", make_omp_standardize},
      {"standardize_grad", make_omp_standardize},
      {"weight_penalty", make_omp_regularizer},
      {"weight_penalty_grad", make_omp_regularizer},
      {"apply_constraint", make_omp_regularizer},
      {"gather", make_omp_gather},
      {"gather_grad", make_omp_gather},
      {"pad", make_omp_shape},
      {"crop", make_omp_shape},
      {"transpose", make_omp_shape},
      {"repeat", make_omp_shape},
      {"repeat_grad", make_omp_shape},
      {"concat", make_omp_shape},
      {"slice", make_omp_shape},
      {"unary", make_omp_math},
      {"unary_grad", make_omp_math},
      {"binary", make_omp_math},
      {"where", make_omp_math},
      {"broadcast_to", make_omp_math},
  };
  for (const auto& k : kKernels) {
    registry.add(k.op, DeviceType::cpu, DType::f32, {std::string("omp:") + k.op, k.factory});
  }
  // gather_grad and sequence_mask are keyed by their first input: ids, or int values.
  for (DType dtype : {DType::i32, DType::i64}) {
    registry.add("gather_grad", DeviceType::cpu, dtype, {"omp:gather_grad", make_omp_gather});
    registry.add("sequence_mask", DeviceType::cpu, dtype, {"omp:sequence_mask", make_omp_mask});
  }
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    registry.add("cast", DeviceType::cpu, dtype, {"omp:cast", make_omp_cast});
  }
  // Read and written natively in bfloat16 (float16 runs the float32 kernels widened).
  const std::pair<const char*, KernelFactory> kNativeBf16[] = {
      {"bias_add_grad", make_omp_bias_add_grad}, {"dropout", make_omp_dropout}, {"dropout_grad", make_omp_dropout_grad}};
  for (const auto& [op, factory] : kNativeBf16) {
    registry.add(op, DeviceType::cpu, DType::bf16, {std::string("omp:") + op, factory});
  }
  // reshape only moves bytes, so it serves every dtype (i32 labels, u8 masks, f16 storage).
  for (DType dtype : {DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    registry.add("reshape", DeviceType::cpu, dtype, {"omp:reshape", make_omp_reshape});
  }
}

}  // namespace nnfit
