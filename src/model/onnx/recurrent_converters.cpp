// ONNX forms of Keras's recurrent layers: SimpleRNN, LSTM and GRU as ONNX's RNN, LSTM and
// GRU ops, and Bidirectional as their "bidirectional" direction. The weights are reordered
// on the host (Note [Recurrent gate order]); the time axis moves first because ONNX's
// recurrent ops read [steps, batch, features].
#include <algorithm>

#include "model/onnx/layer_converters.h"
#include "nnfit/nn/recurrent_layers.h"

namespace nnfit::onnx_export {
namespace recurrent_family {
namespace {

using V = std::vector<Value>;

// Note [Recurrent gate order]
// Keras stacks a cell's gates along the kernel's columns: LSTM (i, f, c, o), GRU (z, r, h),
// each `units` wide; ONNX stacks them along W's rows: LSTM (i, o, f, c), GRU (z, r, h). So
// ONNX's W is Keras's kernel transposed with the LSTM's blocks reordered, R likewise from
// the recurrent kernel, and B = (input bias, recurrent bias): Keras's bias and zeros, or
// for GRU with reset_after (ONNX's linear_before_reset=1) its two bias rows.
struct CellWeights {
  Tensor w, r, b;  // [gates*H, F], [gates*H, H], [2*gates*H]
};

Tensor weight_of(const LayerCall& c, const Layer& l, const std::string& what) {
  for (const Weight* w : const_cast<Layer&>(l).all_weights()) {
    const std::size_t slash = w->name.rfind('/');
    if ((slash == std::string::npos ? w->name : w->name.substr(slash + 1)) == what) return c.host(w->value);
  }
  c.refuse("its weight '" + what + "' is missing (is it built?)");
}

// kernel (in, gates*H) -> [gates*H, in], blocks taken in `order` (Keras block indices).
Tensor gate_rows(const Tensor& k, std::int64_t h, const std::vector<int>& order) {
  const std::int64_t in = k.shape()[0], cols = k.shape()[1];
  Tensor out = Tensor::uninitialized(Shape{cols, in}, DType::f32);
  const float* src = k.data<float>();
  float* dst = out.data<float>();
  for (std::size_t g = 0; g < order.size(); ++g) {
    for (std::int64_t u = 0; u < h; ++u) {
      const std::int64_t row = static_cast<std::int64_t>(g) * h + u, col = order[g] * h + u;
      for (std::int64_t i = 0; i < in; ++i) dst[row * in + i] = src[i * cols + col];
    }
  }
  return out;
}

std::vector<float> gate_vector(const float* v, std::int64_t h, const std::vector<int>& order) {
  std::vector<float> out;
  for (int g : order) out.insert(out.end(), v + g * h, v + (g + 1) * h);
  return out;
}

CellWeights cell_weights(const LayerCall& c, const Recurrent& l) {
  const std::int64_t h = l.options().units;
  std::vector<int> order;
  if (l.cell() == RecurrentCell::lstm) order = {0, 3, 1, 2};  // ONNX i, o, f, c from Keras i, f, c, o
  else if (l.cell() == RecurrentCell::gru) order = {0, 1, 2};
  else order = {0};
  const std::int64_t n = static_cast<std::int64_t>(order.size()) * h;
  CellWeights out{gate_rows(weight_of(c, l, "kernel"), h, order), gate_rows(weight_of(c, l, "recurrent_kernel"), h, order),
                  Tensor::zeros(Shape{2 * n}, DType::f32)};
  if (l.options().use_bias) {
    const Tensor bias = weight_of(c, l, "bias");
    float* b = out.b.data<float>();
    if (l.cell() == RecurrentCell::gru && l.options().reset_after) {  // (2, 3H): input row, recurrent row
      std::copy(bias.data<float>(), bias.data<float>() + 2 * n, b);
    } else {
      const std::vector<float> wb = gate_vector(bias.data<float>(), h, order);
      std::copy(wb.begin(), wb.end(), b);
    }
  }
  return out;
}

std::string onnx_activation(const LayerCall& c, const std::string& keras) {
  if (keras == "sigmoid") return "Sigmoid";
  if (keras == "tanh") return "Tanh";
  if (keras == "relu") return "Relu";
  c.refuse("its activation '" + keras + "' has no form among ONNX's recurrent activations here");
}

std::vector<std::string> activations(const LayerCall& c, const Recurrent& l) {
  const RecurrentOptions& o = l.options();
  if (l.cell() == RecurrentCell::lstm) {
    return {onnx_activation(c, o.recurrent_activation), onnx_activation(c, o.activation), onnx_activation(c, o.activation)};
  }
  if (l.cell() == RecurrentCell::gru) return {onnx_activation(c, o.recurrent_activation), onnx_activation(c, o.activation)};
  return {onnx_activation(c, o.activation)};
}

const char* op_of(RecurrentCell cell) {
  return cell == RecurrentCell::lstm ? "LSTM" : cell == RecurrentCell::gru ? "GRU" : "RNN";
}

// Stacks per-direction tensors [a; b] along a new first axis.
Tensor stack(const std::vector<Tensor>& ts) {
  std::vector<std::int64_t> dims{static_cast<std::int64_t>(ts.size())};
  for (std::int64_t d : ts[0].shape().dims()) dims.push_back(d);
  Tensor out = Tensor::uninitialized(Shape(dims), DType::f32);
  float* dst = out.data<float>();
  for (const Tensor& t : ts) dst = std::copy(t.data<float>(), t.data<float>() + t.numel(), dst);
  return out;
}

// The ONNX op for `dirs` (forward, then the backward layer), on the layer's input. Returns
// Y [T, D, B, H], Y_h [D, B, H] (and Y_c for LSTM).
std::vector<std::string> recurrent_op(LayerCall& c, const std::vector<const Recurrent*>& dirs, const char* direction) {
  const Recurrent& first = *dirs[0];
  const Value x = c.emit.as_float(c.emit.to_keras(c.in()));
  const std::string steps_first = c.emit.node("Transpose", {x.name}, {Attribute::of("perm", std::vector<std::int64_t>{1, 0, 2})},
                                              c.hint("time_major"));
  std::vector<Tensor> w, r, b;
  std::vector<std::string> acts;
  for (const Recurrent* d : dirs) {
    CellWeights cw = cell_weights(c, *d);
    w.push_back(cw.w);
    r.push_back(cw.r);
    b.push_back(cw.b);
    for (const std::string& a : activations(c, *d)) acts.push_back(a);
  }
  std::vector<std::string> ins{steps_first, c.emit.constant(c.hint("W"), stack(w)), c.emit.constant(c.hint("R"), stack(r)),
                               c.emit.constant(c.hint("B"), stack(b)), ""};
  // Keras's initial_state (inputs after the sequence: h, and c for LSTM), [B, H] -> [1, B, H].
  if (c.inputs.size() > 1) {
    if (dirs.size() > 1) c.refuse("initial states of a Bidirectional layer are not exported");
    const std::string axis = c.emit.constant_i64(c.hint("state_axis"), {1}, {0});
    for (std::size_t i = 1; i < c.inputs.size(); ++i) {
      const Value s = c.emit.as_float(c.emit.to_keras(c.inputs[i]));
      ins.push_back(c.emit.node("Unsqueeze", {s.name, axis}, {}, c.hint("initial_state")));
    }
  }
  while (!ins.empty() && ins.back().empty()) ins.pop_back();
  std::vector<Attribute> attrs{Attribute::of("hidden_size", first.options().units), Attribute::of("direction", std::string(direction)),
                               Attribute::of("activations", acts)};
  if (first.cell() == RecurrentCell::gru) attrs.push_back(Attribute::of("linear_before_reset", std::int64_t{first.options().reset_after ? 1 : 0}));
  return c.emit.nodes(op_of(first.cell()), ins, attrs, c.hint(), first.cell() == RecurrentCell::lstm ? 3 : 2);
}

std::string squeeze(LayerCall& c, const std::string& x, std::int64_t axis, const std::string& what) {
  return c.emit.node("Squeeze", {x, c.emit.constant_i64(c.hint(what + "_axis"), {1}, {axis})}, {}, c.hint(what));
}

// Direction `d` of a [D, B, H] state as [B, H].
std::string state(LayerCall& c, const std::string& s, std::int64_t d, const std::string& what) {
  const std::string index = c.emit.constant_i64(c.hint(what + "_index"), {}, {d});
  return c.emit.node("Gather", {s, index}, {Attribute::of("axis", std::int64_t{0})}, c.hint(what));
}

V recurrent(LayerCall& c) {
  const auto& l = dynamic_cast<const Recurrent&>(c.layer);
  const RecurrentOptions& o = l.options();
  if (o.go_backwards && o.return_sequences) {
    c.refuse("go_backwards with return_sequences (the steps in reverse order) is not exported");
  }
  const std::vector<std::string> y = recurrent_op(c, {&l}, o.go_backwards ? "reverse" : "forward");
  V out;
  if (o.return_sequences) {  // [T, 1, B, H] -> [B, T, H]
    const std::string t = squeeze(c, y[0], 1, "sequence");
    out.push_back(LayerCall::out(c.emit.node("Transpose", {t}, {Attribute::of("perm", std::vector<std::int64_t>{1, 0, 2})},
                                             c.hint("batch_major")),
                                 3));
  } else {
    out.push_back(LayerCall::out(squeeze(c, y[1], 0, "last"), 2));
  }
  if (o.return_state) {
    out.push_back(LayerCall::out(squeeze(c, y[1], 0, "state_h"), 2));
    if (l.cell() == RecurrentCell::lstm) out.push_back(LayerCall::out(squeeze(c, y[2], 0, "state_c"), 2));
  }
  return out;
}

V bidirectional(LayerCall& c) {
  const auto& l = dynamic_cast<const Bidirectional&>(c.layer);
  const Recurrent& f = l.forward_layer();
  const Recurrent& b = l.backward_layer();
  const RecurrentOptions& o = f.options();
  if (f.options().units != b.options().units) c.refuse("its two directions have different units");
  const std::vector<std::string> y = recurrent_op(c, {&f, &b}, "bidirectional");
  const std::int64_t h = o.units;
  const std::string mode = l.merge_mode();
  V out;
  // The merged output: from Y [T, 2, B, H] as [B, T, 2, H], or Y_h [2, B, H] as [B, 2, H].
  const std::string both = o.return_sequences
                               ? c.emit.node("Transpose", {y[0]}, {Attribute::of("perm", std::vector<std::int64_t>{2, 0, 1, 3})}, c.hint("batch_major"))
                               : c.emit.node("Transpose", {y[1]}, {Attribute::of("perm", std::vector<std::int64_t>{1, 0, 2})}, c.hint("batch_major"));
  const int rank = o.return_sequences ? 3 : 2;
  const std::int64_t dir_axis = rank - 1;
  if (mode == "concat") {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(rank - 1), 0);
    shape.push_back(2 * h);
    const std::string s = c.emit.constant_i64(c.hint("shape"), {rank}, shape);
    out.push_back(LayerCall::out(c.emit.node("Reshape", {both, s}, {}, c.hint()), rank));
  } else if (mode == "sum" || mode == "ave" || mode == "mul") {
    const char* op = mode == "sum" ? "ReduceSum" : mode == "ave" ? "ReduceMean" : "ReduceProd";
    out.push_back(LayerCall::out(c.emit.reduce(op, both, {dir_axis}, false, c.hint()), rank));
  } else if (mode.empty()) {  // Keras's merge_mode=None: forward's output, then backward's
    for (std::int64_t d = 0; d < 2; ++d) {
      const std::string index = c.emit.constant_i64(c.hint("direction"), {}, {d});
      out.push_back(LayerCall::out(c.emit.node("Gather", {both, index}, {Attribute::of("axis", dir_axis)}, c.hint("output")), rank));
    }
  } else {
    c.refuse("merge_mode '" + mode + "' is not exported");
  }
  if (o.return_state) {  // the forward layer's states, then the backward layer's
    for (std::int64_t d = 0; d < 2; ++d) {
      out.push_back(LayerCall::out(state(c, y[1], d, "state_h"), 2));
      if (f.cell() == RecurrentCell::lstm) out.push_back(LayerCall::out(state(c, y[2], d, "state_c"), 2));
    }
  }
  return out;
}

}  // namespace

std::vector<ConverterEntry> entries() {
  return {
      {"SimpleRNN", recurrent, /*reads_mask=*/true},
      {"LSTM", recurrent, true},
      {"GRU", recurrent, true},
      {"Bidirectional", bidirectional, true},
  };
}

}  // namespace recurrent_family

std::vector<ConverterEntry> recurrent_converters() { return recurrent_family::entries(); }

}  // namespace nnfit::onnx_export
