// SimpleRNN, LSTM and GRU (nnfit/nn/recurrent_layers.h): the input projection x·kernel +
// bias as one matmul over all steps, then the rnn op's scan with the recurrent kernel.
#include "nn/composed_activations.h"
#include "nn/layers/layer_seed.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

// Row `row` of a [2, G] variable as a [G] value (GRU's input and recurrent biases).
int bias_row(Graph& g, int bias, std::int64_t row, std::int64_t width, const std::string& name) {
  Attrs a;
  a.set("begin", std::vector<std::int64_t>{row, 0});
  a.set("shape", std::vector<std::int64_t>{1, width});
  return emit_reshape(g, g.add("crop", {bias}, a, name), {width}, name + "/reshape");
}

const char* cell_op_name(RecurrentCell c) {
  return c == RecurrentCell::lstm ? "lstm" : c == RecurrentCell::gru ? "gru" : "simple_rnn";
}

}  // namespace

Recurrent::Recurrent(std::string name, RecurrentCell cell, RecurrentOptions options)
    : Layer(std::move(name)), cell_(cell), options_(std::move(options)) {
  NNFIT_CHECK(options_.units > 0, InvalidArgument, this->name(), ": units must be positive, got ", options_.units);
  NNFIT_CHECK(options_.dropout >= 0.0 && options_.dropout < 1.0, InvalidArgument, this->name(),
              ": dropout must be in [0, 1), got ", options_.dropout);
  NNFIT_CHECK(options_.recurrent_dropout >= 0.0 && options_.recurrent_dropout < 1.0, InvalidArgument, this->name(),
              ": recurrent_dropout must be in [0, 1), got ", options_.recurrent_dropout);
  for (const std::string* act : {&options_.activation, &options_.recurrent_activation}) {
    check_activation(*act, this->name());
    NNFIT_CHECK(*act != "softmax" && *act != "log_softmax", Unsupported, this->name(), ": activation '", *act,
                "' is not supported in a recurrent cell (it normalizes over the units)");
    NNFIT_CHECK(!is_composed_activation(*act), Unsupported, this->name(), ": activation '", *act,
                "' is not supported in a recurrent cell yet (the rnn op's kernels take the activation kinds of "
                "docs/design/ops.md); use it on the layer's output");
  }
}

std::string Recurrent::class_name() const {
  return cell_ == RecurrentCell::lstm ? "LSTM" : cell_ == RecurrentCell::gru ? "GRU" : "SimpleRNN";
}

std::int64_t Recurrent::gates() const {
  return cell_ == RecurrentCell::lstm ? 4 : cell_ == RecurrentCell::gru ? 3 : 1;
}

int Recurrent::num_outputs() const {
  return 1 + (options_.return_state ? (cell_ == RecurrentCell::lstm ? 2 : 1) : 0);
}

CallArguments Recurrent::call_arguments() const {
  CallArguments a;
  if (state_names_.empty()) return a;  // the sequence alone, as every call without states
  a.positional = 1;
  a.keyword_inputs = state_names_;
  a.build_names = {"sequences"};
  for (const std::string& n : state_names_) a.build_names.push_back(n);
  return a;
}

void Recurrent::set_call_arguments(const CallArguments& args) {
  NNFIT_CHECK(!built_, InvalidArgument, name(), ": call arguments are set before the layer is built");
  // Keras writes one state as a tensor (initial_state=h) or a list; LSTM's two as a list.
  const std::size_t states = cell_ == RecurrentCell::lstm ? 2 : 1;
  std::vector<std::string> listed;
  for (std::size_t i = 0; i < states; ++i) listed.push_back("initial_state/" + std::to_string(i));
  const bool ok = args.keyword_inputs.empty() || args.keyword_inputs == listed ||
                  (states == 1 && args.keyword_inputs == std::vector<std::string>{"initial_state"});
  NNFIT_CHECK(ok && args.flags.empty() && args.constants.empty(), Unsupported, name(), " (", class_name(),
              "): call arguments other than initial_state=", states == 2 ? "[h, c]" : "h", " are not supported");
  state_names_ = args.keyword_inputs;
  initial_state_ = !state_names_.empty();
}

std::size_t Recurrent::state_count() const { return initial_state_ ? (cell_ == RecurrentCell::lstm ? 2 : 1) : 0; }

std::vector<Shape> Recurrent::compute_output_shapes(const std::vector<Shape>& inputs) const {
  const std::size_t states = state_count();
  NNFIT_CHECK(inputs.size() == 1 + states, InvalidArgument, name(), ": takes the sequence",
              states ? " and its initial states" : "", " (", 1 + states, " inputs), got ", inputs.size());
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    NNFIT_CHECK(inputs[i] == Shape{options_.units}, InvalidArgument, name(), ": initial state ", i - 1, " is ",
                inputs[i].to_string(), "; it must be (", options_.units, ",), the layer's units");
  }
  const Shape& s = inputs[0];
  NNFIT_CHECK(s.rank() == 2, InvalidArgument, name(), ": ", class_name(), " expects (steps, features), got ",
              s.to_string());
  const std::int64_t h = options_.units;
  std::vector<Shape> out{options_.return_sequences ? Shape{s[0], h} : Shape{h}};
  for (int i = 1; i < num_outputs(); ++i) out.push_back(Shape{h});
  return out;
}

Shape Recurrent::output_shape(const Shape& input_shape) const { return compute_output_shapes({input_shape})[0]; }

void Recurrent::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  compute_output_shapes(inputs);
  const std::int64_t f = inputs[0][1], h = options_.units, g = gates() * h;
  // tf.keras's variable names ("lstm/lstm_cell/kernel"), so legacy .h5 files read as theirs.
  const std::string cell = weight_scope_.empty() ? name() + "/" + keras_cell_name() + "/" : weight_scope_;
  weights_.push_back({cell + "kernel", weights.make(cell + "kernel", Shape{f, g}, options_.kernel_initializer, f, g)});
  weights_.push_back(
      {cell + "recurrent_kernel", weights.make(cell + "recurrent_kernel", Shape{h, g}, options_.recurrent_initializer, h, g)});
  if (options_.use_bias) {
    const Shape bias = cell_ == RecurrentCell::gru && options_.reset_after ? Shape{2, g} : Shape{g};
    Tensor b = weights.make(cell + "bias", bias, options_.bias_initializer, g, g);
    if (cell_ == RecurrentCell::lstm && options_.unit_forget_bias) {
      // Keras: bias_initializer for i, ones for f, bias_initializer for c and o.
      for (std::int64_t j = h; j < 2 * h; ++j) b.data<float>()[j] = 1.0f;
    }
    weights_.push_back({cell + "bias", b});
  }
  built_ = true;
}

std::string Recurrent::keras_cell_name() const {
  return cell_ == RecurrentCell::lstm ? "lstm_cell" : cell_ == RecurrentCell::gru ? "gru_cell" : "simple_rnn_cell";
}

std::vector<int> Recurrent::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  std::vector<int> masks;
  return call_masked(b, inputs, std::vector<int>(inputs.size(), -1), masks);
}

std::vector<int> Recurrent::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>& masks,
                                        std::vector<int>& output_masks) {
  Graph& g = b.graph();
  const int mask = masks.empty() ? -1 : masks[0];
  const int x = inputs.at(0);
  const Shape& s = g.desc(x).shape;  // [N, T, F]
  const std::int64_t n = s[0], t = s[1], f = s[2], h = options_.units, width = gates() * h;
  int x_in = x;
  if (b.training() && options_.dropout > 0.0) {
    x_in = emit_dropout(g, x, options_.dropout, options_.seed, {n, 1, f}, name() + "/input");
  }
  const bool split_bias = cell_ == RecurrentCell::gru && options_.reset_after && options_.use_bias;

  int xw = g.add("matmul", {emit_reshape(g, x_in, {n * t, f}, name() + "/flatten_steps"), b.variable(weights_[0])}, {},
                 name() + "/input_projection");
  int rb = -1;
  if (options_.use_bias) {
    const int bias = b.variable(weights_[2]);
    const int input_bias = split_bias ? bias_row(g, bias, 0, width, name() + "/input_bias") : bias;
    xw = g.add("bias_add", {xw, input_bias}, {}, name() + "/input_bias_add");
    if (split_bias) rb = bias_row(g, bias, 1, width, name() + "/recurrent_bias");
  }
  xw = emit_reshape(g, xw, {n, t, width}, name() + "/steps");

  const bool reset_after = cell_ == RecurrentCell::gru && options_.reset_after;
  if (reset_after && rb < 0) {
    // Without use_bias the scan still takes GRU's recurrent bias: a zero constant.
    Tensor zeros = Tensor::zeros(Shape{width});
    rb = g.add_variable(name() + "/no_recurrent_bias", zeros);
  }
  Attrs a;
  a.set("cell", std::string(cell_op_name(cell_)));
  a.set("activation", options_.activation);
  a.set("recurrent_activation", options_.recurrent_activation);
  a.set("reset_after", std::int64_t{reset_after});
  a.set("go_backwards", std::int64_t{options_.go_backwards});
  a.set("zero_output_for_mask", std::int64_t{options_.zero_output_for_mask});
  a.set("time_order_output", std::int64_t{time_order_output_});
  a.set("mask", std::int64_t{mask >= 0});
  a.set("initial_state", std::int64_t{initial_state_});
  if (b.training() && options_.recurrent_dropout > 0.0) {
    a.set("recurrent_dropout", options_.recurrent_dropout);
    a.set("recurrent_seed", layer_op_seed(name() + "/recurrent", options_.seed));
  }
  std::vector<int> ins{xw, b.variable(weights_[1])};
  if (reset_after) ins.push_back(rb);
  if (mask >= 0) ins.push_back(mask);
  if (initial_state_) ins.insert(ins.end(), inputs.begin() + 1, inputs.end());  // h0 (, c0)
  const std::vector<int> out = g.add_node("rnn", ins, a, name() + "/" + cell_op_name(cell_));
  // The last output is the final state h, unless masked steps output zeros.
  int last = out[1];
  if (!options_.return_sequences && mask >= 0 && options_.zero_output_for_mask) {
    Attrs c;
    c.set("begin", std::vector<std::int64_t>{0, out_step_of_last(t), 0});
    c.set("shape", std::vector<std::int64_t>{n, 1, h});
    last = emit_reshape(g, g.add("crop", {out[0]}, c, name() + "/last_output"), {n, h}, name() + "/last");
  }
  std::vector<int> result{options_.return_sequences ? out[0] : last};
  if (options_.return_state) {
    result.push_back(out[1]);
    if (cell_ == RecurrentCell::lstm) result.push_back(out[2]);
  }
  // Keras's RNN.compute_mask: the sequence keeps the mask; the last output and states do not.
  output_masks.assign(result.size(), -1);
  if (options_.return_sequences) output_masks[0] = mask;
  return result;
}

std::int64_t Recurrent::out_step_of_last(std::int64_t steps) const {
  // The last step's output: at step T - 1, which with time_order_output is time 0 for a
  // backwards layer.
  return time_order_output_ && options_.go_backwards ? 0 : steps - 1;
}

std::vector<WeightGroup> Recurrent::saved_weight_groups() { return {{"", {}}, {"cell", saved_weights()}}; }

SimpleRNN::SimpleRNN(std::string name, RecurrentOptions options)
    : Recurrent(std::move(name), RecurrentCell::simple_rnn, std::move(options)) {}
LSTM::LSTM(std::string name, RecurrentOptions options)
    : Recurrent(std::move(name), RecurrentCell::lstm, std::move(options)) {}
GRU::GRU(std::string name, RecurrentOptions options)
    : Recurrent(std::move(name), RecurrentCell::gru, std::move(options)) {}

}  // namespace nnfit
