// The recurrent layers SimpleRNN, LSTM and GRU, and the Bidirectional wrapper, with Keras 3's names, arguments, defaults
// and weight layout: kernel (features, G), recurrent_kernel (units, G) and bias, G being
// units times the cell's gate count (1; 4 in the order i, f, c, o; 3 in the order z, r, h),
// GRU's bias (2, 3 units) with reset_after (input and recurrent biases), (3 units) without.
// Inputs are (steps, features). The input projection runs as one matmul over the whole
// sequence, the recurrence as the rnn op (docs/design/ops.md, "Recurrent"). Included by
// nnfit/nn/layers.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

enum class RecurrentCell { simple_rnn, lstm, gru };

struct RecurrentOptions {
  std::int64_t units = 0;
  std::string activation = "tanh";
  std::string recurrent_activation = "sigmoid";  // LSTM and GRU
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string recurrent_initializer = "orthogonal";
  std::string bias_initializer = "zeros";
  bool unit_forget_bias = true;  // LSTM: the forget gate's bias starts at 1
  bool reset_after = true;       // GRU: the reset gate applies after the recurrent matmul
  bool return_sequences = false;
  bool return_state = false;
  bool go_backwards = false;
  // With a mask, whether a masked step outputs zeros (true) or the previous output.
  bool zero_output_for_mask = false;
  // Keras's dropout on the inputs in training: one decision per (sample, feature), the
  // same at every step; recurrent_dropout likewise on h_prev, one decision per (sample,
  // unit) for every step.
  double dropout = 0.0;
  double recurrent_dropout = 0.0;
  std::int64_t seed = 0;
};

// One class for the three cells; SimpleRNN, LSTM and GRU name them. Outputs: the sequence
// (steps, units) with return_sequences, else the last output (units); with return_state
// also the final states (h; LSTM: h and c).
class Recurrent : public Layer {
 public:
  Recurrent(std::string name, RecurrentCell cell, RecurrentOptions options);
  const RecurrentOptions& options() const { return options_; }
  RecurrentCell cell() const { return cell_; }
  std::string class_name() const override;
  bool supports_unknown_dims() const override { return true; }
  int num_outputs() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  Shape output_shape(const Shape& input_shape) const override;  // the first output's
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  // A masked step keeps the states (the rnn op's mask); the sequence output keeps the mask.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  // Keras 3 files keep the variables under the layer's "cell".
  std::vector<WeightGroup> saved_weight_groups() override;
  // A go_backwards layer's sequence in time order instead of step order (Bidirectional's
  // backward layer; Keras flips it).
  void set_time_order_output(bool on) { time_order_output_ = on; }
  // Keras's initial_state=h0 (LSTM: [h0, c0]) call argument: the states as inputs after
  // the sequence, named "initial_state" or "initial_state/0", "initial_state/1" (a list).
  CallArguments call_arguments() const override;
  void set_call_arguments(const CallArguments& args) override;
  // The prefix of the weights' names: by default "<name>/lstm_cell/", tf.keras's; a cell
  // inside keras.layers.RNN is named by its RNN ("rnn/my_cell/", "rnn/stacked_rnn_cells/lstm_cell/").
  void set_weight_scope(std::string scope) { weight_scope_ = std::move(scope); }
  // The initial states a call takes after the sequence: 0 without initial_state, else 1 (LSTM: 2).
  std::size_t state_count() const;
  std::string keras_cell_name() const;  // "lstm_cell"

 private:
  std::int64_t gates() const;
  std::int64_t out_step_of_last(std::int64_t steps) const;
  RecurrentCell cell_;
  RecurrentOptions options_;
  bool time_order_output_ = false;
  bool initial_state_ = false;  // inputs 1.. are the initial states
  std::vector<std::string> state_names_;  // their keyword names as the config gave them
  std::string weight_scope_;
};

class SimpleRNN final : public Recurrent {
 public:
  SimpleRNN(std::string name, RecurrentOptions options);
};

class LSTM final : public Recurrent {
 public:
  LSTM(std::string name, RecurrentOptions options);
};

class GRU final : public Recurrent {
 public:
  GRU(std::string name, RecurrentOptions options);
};

// Bidirectional: a recurrent layer and its backwards twin (go_backwards flipped; Keras
// names them forward_<name> and backward_<name>) on the same input, their outputs merged
// by merge_mode: "concat" (last axis), "sum", "mul", "ave", or "" (Keras's None: both
// outputs, forward first). With return_sequences the backward sequence is put back in time
// order first. With return_state the outputs are followed by the forward layer's states,
// then the backward layer's.
class Bidirectional final : public Layer {
 public:
  // throws InvalidArgument unless the two layers are of one cell and agree on
  // return_sequences and return_state, the forward one not going backwards and the
  // backward one going backwards.
  Bidirectional(std::string name, std::unique_ptr<Recurrent> forward, std::unique_ptr<Recurrent> backward,
                std::string merge_mode);
  std::string class_name() const override { return "Bidirectional"; }
  bool supports_unknown_dims() const override { return true; }
  const Recurrent& forward_layer() const { return *forward_; }
  const Recurrent& backward_layer() const { return *backward_; }
  const std::string& merge_mode() const { return merge_mode_; }
  int num_outputs() const override;
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  Shape output_shape(const Shape& input_shape) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  std::vector<Weight*> all_weights() override;
  std::vector<Weight*> saved_weights() override;
  void set_trainable(bool trainable) override;
  void attach_weight_options() override;  // each direction's, from its own config
  // forward_layer/cell and backward_layer/cell, as Keras 3 files keep them.
  std::vector<WeightGroup> saved_weight_groups() override;

 private:
  std::unique_ptr<Recurrent> forward_, backward_;
  std::string merge_mode_;
};

// keras.layers.RNN around Keras's built-in cells: RNN(LSTMCell(n)) is the LSTM layer
// under the class name RNN, RNN(StackedRNNCells([c1, c2, ...])) (or RNN([c1, c2, ...]))
// runs the cells one after the other at each step, which is each cell's layer over the
// whole sequence in turn: the first reads the input, each passes its sequence to the next
// (in time order, so that with go_backwards the next one reads it backwards, in step with
// the mask), the last gives the RNN's outputs (return_sequences, return_state; a mask goes
// to every cell, which keeps its state on a masked step, as Keras's step function skips
// the whole stacked step). Keras 3 files keep one cell's
// variables under "cell", a stack's under "cell/cells/<cell class>" (numbered). A cell of the user's
// own (a Layer with state_size and call(inputs, states)) is refused by the readers.
class RNN final : public Layer {
 public:
  // `cells`: one Recurrent per cell in step order, each built with the RNN's flags as the
  // layer it stands for (the readers do this); `cell_names`: Keras's names of the cells;
  // `stack_name`: the StackedRNNCells' name, empty for one cell.
  // throws InvalidArgument when the cells do not chain (every cell but the last must
  // return sequences), Unsupported for return_state or initial_state on a stack.
  RNN(std::string name, std::vector<std::unique_ptr<Recurrent>> cells, std::vector<std::string> cell_names,
      std::string stack_name);
  std::string class_name() const override { return "RNN"; }
  bool supports_unknown_dims() const override { return true; }
  bool stacked() const { return !stack_name_.empty(); }
  const std::string& stack_name() const { return stack_name_; }
  std::size_t cell_count() const { return cells_.size(); }
  const Recurrent& cell(std::size_t i) const { return *cells_.at(i); }
  const std::string& cell_name(std::size_t i) const { return cell_names_.at(i); }
  // The RNN's own flags: return_sequences and return_state of the last cell, go_backwards
  // of every cell.
  const RecurrentOptions& outer_options() const { return cells_.back()->options(); }
  bool go_backwards() const { return cells_.front()->options().go_backwards; }
  int num_outputs() const override { return cells_.back()->num_outputs(); }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  Shape output_shape(const Shape& input_shape) const override { return compute_output_shapes({input_shape})[0]; }
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  CallArguments call_arguments() const override { return cells_.front()->call_arguments(); }
  void set_call_arguments(const CallArguments& args) override;
  std::vector<Weight*> all_weights() override;
  std::vector<Weight*> saved_weights() override;
  void set_trainable(bool trainable) override;
  void attach_weight_options() override;
  std::vector<WeightGroup> saved_weight_groups() override;

 private:
  std::vector<std::unique_ptr<Recurrent>> cells_;
  std::vector<std::string> cell_names_;
  std::string stack_name_;
};

// TimeDistributed: `layer` (one input, one output) applied to every step of an input
// (batch, steps, ...): the steps are folded into the batch ((batch·steps, ...)), the layer
// runs once, and its output is unfolded to (batch, steps, ...). Keras's weights are the
// inner layer's (group "layer" in a .keras file); a mask passes through unchanged.
class TimeDistributed final : public Layer {
 public:
  TimeDistributed(std::string name, std::unique_ptr<Layer> layer);
  std::string class_name() const override { return "TimeDistributed"; }
  const Layer& layer() const { return *layer_; }
  // Steps known per batch always; a step's other axes as far as the inner layer takes them.
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  Shape output_shape(const Shape& input_shape) const override { return compute_output_shapes({input_shape})[0]; }
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  void attach_weight_options() override;
  void set_trainable(bool trainable) override;
  std::vector<Weight*> all_weights() override;
  std::vector<Weight*> saved_weights() override;
  std::vector<WeightGroup> saved_weight_groups() override;

 private:
  std::unique_ptr<Layer> layer_;
};

}  // namespace nnfit
