// Desc validation shared by the reference (ref_train_*) and OpenMP (omp_*) kernels of the
// training ops, so both families accept exactly the same descs and throw the same messages.
// Each check_* throws InvalidArgument naming desc.node_name for a malformed desc (wrong
// arity, shapes or attributes), returns false with *why_not for a valid desc these kernels
// do not support (today: any dtype but f32, i32 labels and u8 masks), else fills its params.
#pragma once
#include <cstdint>
#include <vector>
#include <string>

#include "backend/common/random.h"
#include "nnfit/backend/kernel.h"

namespace nnfit {

// Keras's backend.epsilon(), the clip bound of the probability losses.
inline constexpr float kLossEpsilon = 1e-7f;

// clip(p, ε, 1 − ε) in f32, and whether the clip is active (where the gradient is zero).
// Both kernel families use these so they agree on every boundary case.
inline float clip_probability(float p) {
  return p < kLossEpsilon ? kLossEpsilon : (p > 1.0f - kLossEpsilon ? 1.0f - kLossEpsilon : p);
}
inline bool probability_clipped(float p) { return p < kLossEpsilon || p > 1.0f - kLossEpsilon; }

// A channels-last tensor [..., C] seen as [rows, channels].
struct ChannelGeometry {
  std::int64_t rows = 0;
  std::int64_t channels = 0;
};

// The first four are fused kinds with OpenMP kernels; the rest are Keras's row losses
// (a value per row of the last axis, averaged over rows), computed by the reference
// kernel (ref_train_loss_rows.cpp).
enum class LossKind {
  sparse_categorical_crossentropy,
  categorical_crossentropy,
  binary_crossentropy,
  mean_squared_error,
  mean_absolute_error,
  mean_absolute_percentage_error,
  mean_squared_logarithmic_error,
  huber,
  log_cosh,
  poisson,
  kl_divergence,
  hinge,
  squared_hinge,
  categorical_hinge,
  cosine_similarity,
  binary_focal_crossentropy,
  categorical_focal_crossentropy,
};

struct LossParams {
  LossKind kind = LossKind::mean_squared_error;
  bool from_logits = false;
  std::int64_t batch = 0;
  // Classes for the two categorical kinds, elements per sample for the other two.
  std::int64_t per_sample = 0;
  // Row losses: rows of the last axis and its length.
  std::int64_t rows = 0, cols = 0;
  double label_smoothing = 0.0;  // categorical, binary and focal crossentropies
  double delta = 1.0;            // huber
  double alpha = 0.25, gamma = 2.0;  // focal
  bool class_balancing = false;      // binary focal's apply_class_balancing
  bool weighted = false;             // a sample_weight input [N] follows (Keras's sample_weight)
};

// Whether `kind` is one of the row losses beyond the four fused kinds.
inline bool is_row_loss(LossKind kind) { return kind > LossKind::mean_squared_error; }

struct BatchNormParams {
  ChannelGeometry geometry;
  double epsilon = 0.0;
};

struct DropoutParams {
  std::int64_t numel = 0;
  float rate = 0.0f;
  std::uint64_t seed = 0;  // the node's seed attr (dropout only)
  // With a noise_shape (Keras's: 1 on the axes one decision covers), element i's decision
  // is that of its position in the noise shape; empty: every element decides alone.
  std::vector<std::int64_t> dims, noise;
  // The index of this run's element 0 in the global batch's noise positions (Note [Random
  // draws by global row]): without a noise shape the elements', with one the batch axis's
  // share of it. Every layer's noise shape draws per row on the batch axis (noise[0] ==
  // dims[0]: Dropout::noise_for); a raw op's noise of 1 there on several rows shares its
  // draws across them, and so across ranks.
  std::uint64_t index_offset(std::int64_t row_offset, std::int64_t rows) const {
    if (noise.empty()) return random_index_offset(row_offset, rows, numel);
    if (dims.empty() || dims[0] != rows || noise[0] != dims[0]) return 0;
    std::int64_t per_row = 1;
    for (std::size_t d = 1; d < noise.size(); ++d) per_row *= noise[d];
    return random_index_offset(row_offset, rows, rows * per_row);
  }
  std::uint64_t noise_index(std::int64_t i) const {
    if (noise.empty()) return static_cast<std::uint64_t>(i);
    std::int64_t at = 0, stride = 1;
    for (std::size_t d = dims.size(); d-- > 0;) {
      const std::int64_t c = i % dims[d];
      i /= dims[d];
      if (noise[d] != 1) at += c * stride;
      stride *= noise[d];
    }
    return static_cast<std::uint64_t>(at);
  }
};

// Every optimizer's attrs; each op reads the ones its formula uses (docs/design/ops.md).
struct OptimizerParams {
  std::int64_t numel = 0;
  double momentum = 0.0;
  bool nesterov = false;
  double beta_1 = 0.0, beta_2 = 0.0, epsilon = 0.0, weight_decay = 0.0;
  double rho = 0.0;
  bool has_momentum_slot = false;  // rmsprop_update with its 4th input
  bool centered = false;           // rmsprop_update: the average gradient is the last input
  bool amsgrad = false;            // adam_update: v_hat, the largest v so far, is the 5th input
  std::int64_t overwrite_frequency = 0;  // ema_update
  // ftrl_update
  double learning_rate_power = -0.5, l1 = 0.0, l2 = 0.0, l2_shrinkage = 0.0, beta = 0.0;
  // adafactor_update (its r and c are the variable's shape without its last axis, and
  // without the one before it; scalars for a variable of rank < 2)
  double beta_2_decay = -0.8, epsilon_1 = 1e-30, epsilon_2 = 1e-3, clip_threshold = 1.0;
  std::int64_t warmup_steps = 0;  // schedule_free_update
};

bool check_bias_add(const KernelDesc& desc, ChannelGeometry* out, std::string* why_not);
// `data`: the type dy must have (f32; bf16 for kernels that read it natively); db has it
// or is f32.
bool check_bias_add_grad(const KernelDesc& desc, ChannelGeometry* out, std::string* why_not,
                         DType data = DType::f32);
bool check_add_n(const KernelDesc& desc, std::int64_t* numel, std::string* why_not);
bool check_reshape(const KernelDesc& desc, std::size_t* bytes, std::string* why_not);
// loss and loss_grad.
bool check_loss(const KernelDesc& desc, LossParams* out, std::string* why_not);
// batch_norm_train, batch_norm_grad and batch_norm_infer.
bool check_batch_norm(const KernelDesc& desc, BatchNormParams* out, std::string* why_not);
bool check_moving_average_update(const KernelDesc& desc, std::int64_t* channels, double* momentum,
                                 std::string* why_not);
// dropout and dropout_grad; `data`: the type x, y, dy and dx must have (the mask is u8).
bool check_dropout(const KernelDesc& desc, DropoutParams* out, std::string* why_not, DType data = DType::f32);
// unscale_gradient: g and the scalar scale in, u like g and the scalar flag out, all float32.
bool check_unscale_gradient(const KernelDesc& desc, std::int64_t* numel, std::string* why_not);
// accumulate_gradient: g, the scalar divisor and the sum (like g, mutated) in, the scalar
// flag out, all float32; `weight` the attribute (positive).
bool check_accumulate_gradient(const KernelDesc& desc, std::int64_t* numel, float* weight, std::string* why_not);
// sgd_update, sgd_momentum_update, adam_update and rmsprop_update.
bool check_optimizer(const KernelDesc& desc, OptimizerParams* out, std::string* why_not);
// An update kernel's float32 input `index`, written in place (the op contract allows it for
// the inputs an op mutates), and a read-only one.
inline float* mutable_input(const KernelArgs& args, int index) {
  return static_cast<float*>(const_cast<void*>(args.inputs[index]));
}
inline const float* input(const KernelArgs& args, int index) { return static_cast<const float*>(args.inputs[index]); }

// Throws InvalidArgument naming the node, the row and the value of the first label outside
// [0, classes). Serial: kernels call it before their parallel loops, since an exception
// must not leave an OpenMP region.
void check_sparse_labels(const KernelDesc& desc, const std::int32_t* labels, std::int64_t batch,
                         std::int64_t classes);

}  // namespace nnfit
