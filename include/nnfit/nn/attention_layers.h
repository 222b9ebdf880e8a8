// Keras's attention family: EinsumDense (a dense layer written as an einsum equation),
// MultiHeadAttention and GroupQueryAttention (projections by EinsumDense, scaled dot-product attention with
// Keras's masks, dropout on the attention weights, an output projection) and Attention /
// AdditiveAttention (Luong's dot and Bahdanau's additive scores on unprojected inputs).
// All are written with the graph's matmul, batch_matmul, transpose and (masked_)softmax ops.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

struct EinsumDenseOptions {
  std::string equation;                    // Keras's: "abc,cd->abd", "...b,bc->...c"
  std::vector<std::int64_t> output_shape;  // Keras's partial output shape without the batch axis; -1 for None
  std::string bias_axes;                   // output labels with a bias; "" for none
  std::string activation = "linear";
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

// How one EinsumDense equation runs on an input shape: the kernel and bias shapes Keras
// creates, and the transposes and reshapes around one matmul. Supported: equations whose
// kernel labels are each contracted (in the input, not the output) or free (in the
// output, not the input), whose input labels are each contracted or kept, with "..." on
// the left; a bias on a trailing run of output labels. Anything else is Unsupported,
// naming the layer.
struct EinsumPlan {
  Shape kernel_shape;
  Shape bias_shape;      // Keras's (1 on output axes without a bias are not supported); rank 0 without one
  Shape output_shape;    // without the batch axis
  std::int64_t fan_in = 1, fan_out = 1;  // over the kernel's contracted and free axes (Keras's input/output axes)
  std::vector<std::int64_t> input_perm;   // batched input axes -> [kept..., contracted...]
  std::vector<std::int64_t> kernel_perm;  // kernel axes -> [contracted..., free...]
  std::vector<std::int64_t> mid_dims;     // matmul result as [kept..., free...] without the batch axis
  std::vector<std::int64_t> output_perm;  // [batch, kept..., free...] -> the output's axes
  std::int64_t contracted = 1, free = 1;  // matmul's K and N

  // requires: `input` (without the batch axis) is the shape the plan was made for.
  // Emits y = activation(einsum(x, kernel) + bias) for the values given (bias -1: none).
  int emit(Graph& graph, int x, int kernel, int bias, const std::string& activation, const std::string& name) const;
};
EinsumPlan plan_einsum(const std::string& layer, const EinsumDenseOptions& options, const Shape& input);

class EinsumDense final : public Layer {
 public:
  EinsumDense(std::string name, EinsumDenseOptions options);
  const EinsumDenseOptions& options() const { return options_; }
  std::string class_name() const override { return "EinsumDense"; }
  bool supports_unknown_dims() const override { return true; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  EinsumDenseOptions options_;
};

struct MultiHeadAttentionOptions {
  std::int64_t num_heads = 1;
  std::int64_t key_dim = 1;
  // Keras's GroupQueryAttention (Note [Grouped-query attention]): num_heads query heads,
  // key and value projected to num_key_value_heads heads (0: num_heads), each repeated to
  // the query's; key_dim is its head_dim. `grouped` gives Keras's class, config and file
  // groups of that layer.
  bool grouped = false;
  std::int64_t num_key_value_heads = 0;
  std::int64_t value_dim = 0;                // 0: key_dim (Keras's None)
  double dropout = 0.0;                      // on the attention weights, in training
  bool use_bias = true;
  bool use_gate = false;                     // Keras 3.12's gated attention: sigmoid(query projection) gates each head
  std::vector<std::int64_t> output_shape;    // empty: the query's last axis (Keras's None)
  std::int64_t sliding_window = 0;           // 0: none; else keys within sliding_window - 1 steps of the query
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
  std::int64_t seed = 0;
  // Keras's call arguments, fixed per layer here: key=, attention_mask= (extra inputs, in
  // that order after query and value), use_causal_mask= and return_attention_scores=
  // (a second output: the attention weights [heads, T, S] before dropout).
  bool has_key = false;
  bool has_attention_mask = false;
  bool use_causal_mask = false;
  bool return_attention_scores = false;
};

// Inputs: query [T, E], value [S, Ev], then key [S, Ek] with has_key and the attention
// mask [T, S] (nonzero: attend) with has_attention_mask. Output [T, output_shape...].
// Masks as Keras combines them: the query's and value's (and key's) sequence masks, the
// attention mask, the causal and sliding-window bands; the output carries the query's
// mask. Attention over one axis (Keras's default attention_axes for [batch, T, E]).
class MultiHeadAttention final : public Layer {
 public:
  MultiHeadAttention(std::string name, MultiHeadAttentionOptions options);
  const MultiHeadAttentionOptions& options() const { return options_; }
  std::string class_name() const override { return options_.grouped ? "GroupQueryAttention" : "MultiHeadAttention"; }
  std::string type_name() const override { return options_.grouped ? "GroupedQueryAttention" : "MultiHeadAttention"; }
  bool supports_unknown_dims() const override { return true; }
  int num_outputs() const override { return options_.return_attention_scores ? 2 : 1; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  // Keras 3's groups: query_dense, key_dense, (_gate_dense,) value_dense, output_dense and
  // the weightless _softmax and _dropout_layer.
  std::vector<WeightGroup> saved_weight_groups() override;
  CallArguments call_arguments() const override;
  void set_call_arguments(const CallArguments& args) override;

 private:
  enum Projection { kQuery, kKey, kGate, kValue, kOutput, kProjections };
  std::int64_t value_dim() const { return options_.value_dim > 0 ? options_.value_dim : options_.key_dim; }
  std::int64_t kv_heads() const { return options_.num_key_value_heads > 0 ? options_.num_key_value_heads : options_.num_heads; }
  // The five projections' options for inputs of these shapes.
  EinsumDenseOptions projection(Projection p) const;
  // The shapes checked: query, value, key (value's without one), attention mask.
  void check_inputs(const std::vector<Shape>& inputs) const;

  MultiHeadAttentionOptions options_;
  EinsumPlan plans_[kProjections];
  int first_weight_[kProjections] = {-1, -1, -1, -1, -1};  // index in weights_, -1 when absent
};

struct AttentionOptions {
  bool additive = false;           // AdditiveAttention: scores Σ_d scale_d tanh(q_d + k_d)
  bool use_scale = false;          // Attention's default; AdditiveAttention's is true
  std::string score_mode = "dot";  // Attention's: "dot" or "concat"
  double dropout = 0.0;            // on the attention weights, in training
  std::int64_t seed = 0;
  bool use_causal_mask = false;    // Keras's call argument, fixed per layer here
};

// Inputs [query [Tq, D], value [Tv, Dv]] or [query, value, key [Tv, D]] (Keras's list);
// output [Tq, Dv] = softmax(scores)·value, scores q·kᵀ (times the scalar `scale` with
// use_scale), concat: concat_score_weight · Σ_d tanh(scale·(q_d + k_d)), additive:
// Σ_d scale_d tanh(q_d + k_d). The value's mask and the causal band mask the scores; the
// query's mask zeroes the output's masked steps and is passed on.
class Attention final : public Layer {
 public:
  Attention(std::string name, AttentionOptions options);
  const AttentionOptions& options() const { return options_; }
  std::string class_name() const override { return options_.additive ? "AdditiveAttention" : "Attention"; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  CallArguments call_arguments() const override;
  void set_call_arguments(const CallArguments& args) override;

 private:
  AttentionOptions options_;
};

}  // namespace nnfit
