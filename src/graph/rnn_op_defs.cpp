// Shape inference and gradient rule of the recurrent scan (docs/design/ops.md, "Recurrent"):
// `rnn` runs Keras's SimpleRNN, LSTM or GRU cell over the time axis of an input already
// projected by the layer's kernel (xw = x·W + b, one matmul for the whole sequence), and
// saves what `rnn_grad` (backpropagation through time) reads back.

#include "backend/common/rnn_layout.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::rnn {

using Descs = std::vector<TensorDesc>;

void expect(const Descs& in, std::size_t i, const Shape& want, const char* op, const char* what) {
  NNFIT_CHECK(in[i].shape == want, InvalidArgument, op, ": ", what, " is ", in[i].shape.to_string(), ", expected ",
              want.to_string());
  NNFIT_CHECK(is_floating(in[i].dtype), InvalidArgument, op, ": ", what, " must be floating");
}

// xw [N,T,G], U [H,G], (rb [G]), (mask [N,T]), (h0 [N,H], (c0 [N,H])) ->
// y [N,T,H], h [N,H], (c [N,H]), saved [N,T,S].
Descs infer_rnn(const Descs& in, const Attrs& a) {
  const RnnLayout l = rnn_layout(a);
  NNFIT_CHECK(in.size() == l.num_forward_inputs(), InvalidArgument, "rnn (", l.cell_name(), ") expects ",
              l.num_forward_inputs(), " inputs, got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() == 3, InvalidArgument, "rnn: xw must be [batch, time, gates], got ",
              in[0].shape.to_string());
  NNFIT_CHECK(in[1].shape.rank() == 2, InvalidArgument, "rnn: the recurrent kernel must be [units, gates], got ",
              in[1].shape.to_string());
  const std::int64_t n = in[0].shape.dim(0), t = in[0].shape.dim(1), h = in[1].shape.dim(0);
  const std::int64_t g = l.gates * h;
  expect(in, 0, Shape{n, t, g}, "rnn", "xw");
  expect(in, 1, Shape{h, g}, "rnn", "the recurrent kernel");
  if (l.recurrent_bias) expect(in, l.rb_input(), Shape{g}, "rnn", "the recurrent bias");
  if (l.mask) expect(in, l.mask_input(), Shape{n, t}, "rnn", "the mask");
  for (int s = 0; s < l.num_states(); ++s) {
    if (l.initial_state) expect(in, l.initial_state_input() + static_cast<std::size_t>(s), Shape{n, h}, "rnn", "an initial state");
  }
  Descs out{{Shape{n, t, h}, DType::f32}, {Shape{n, h}, DType::f32}};
  if (l.cell == RnnCell::lstm) out.push_back({Shape{n, h}, DType::f32});
  out.push_back({Shape{n, t, l.saved_per_step(h)}, DType::f32});
  return out;
}

// U, (mask), (h0, (c0)), saved, (dy), (dh), (dc) -> dxw, dU, (drb), (dh0, (dc0)).
Descs infer_rnn_grad(const Descs& in, const Attrs& a) {
  const RnnLayout l = rnn_layout(a);
  NNFIT_CHECK(in.size() == l.num_grad_inputs(), InvalidArgument, "rnn_grad (", l.cell_name(), ") expects ",
              l.num_grad_inputs(), " inputs, got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() == 2, InvalidArgument, "rnn_grad: the recurrent kernel must be [units, gates]");
  const std::size_t saved = l.grad_saved_input();
  NNFIT_CHECK(in[saved].shape.rank() == 3, InvalidArgument, "rnn_grad: saved must be [batch, time, S]");
  const std::int64_t h = in[0].shape.dim(0), g = l.gates * h;
  const std::int64_t n = in[saved].shape.dim(0), t = in[saved].shape.dim(1);
  expect(in, 0, Shape{h, g}, "rnn_grad", "the recurrent kernel");
  expect(in, saved, Shape{n, t, l.saved_per_step(h)}, "rnn_grad", "saved");
  if (l.mask) expect(in, l.grad_mask_input(), Shape{n, t}, "rnn_grad", "the mask");
  for (int s = 0; s < l.num_states(); ++s) {
    if (l.initial_state) expect(in, l.grad_initial_state_input() + static_cast<std::size_t>(s), Shape{n, h}, "rnn_grad", "an initial state");
  }
  std::size_t i = saved + 1;
  if (l.has_dy) expect(in, i++, Shape{n, t, h}, "rnn_grad", "dy");
  if (l.has_dh) expect(in, i++, Shape{n, h}, "rnn_grad", "dh");
  if (l.has_dc) expect(in, i++, Shape{n, h}, "rnn_grad", "dc");
  Descs out{{Shape{n, t, g}, DType::f32}, {Shape{h, g}, DType::f32}};
  if (l.recurrent_bias) out.push_back({Shape{g}, DType::f32});
  for (int s = 0; s < l.num_states(); ++s) {
    if (l.initial_state) out.push_back({Shape{n, h}, DType::f32});
  }
  return out;
}

std::vector<int> grad_rnn(GradContext& c) {
  const Node n = c.graph.node(c.node);
  RnnLayout l = rnn_layout(n.attrs);
  std::vector<int> out(n.inputs.size(), -1);
  const int dy = c.output_grads[0], dh = c.output_grads[1];
  const int dc = l.cell == RnnCell::lstm ? c.output_grads[2] : -1;
  if (dy < 0 && dh < 0 && dc < 0) return out;
  Attrs a = n.attrs;
  a.set("has_dy", std::int64_t{dy >= 0});
  a.set("has_dh", std::int64_t{dh >= 0});
  a.set("has_dc", std::int64_t{dc >= 0});
  std::vector<int> ins{n.inputs[1]};
  if (l.mask) ins.push_back(n.inputs[l.mask_input()]);
  for (int s = 0; s < l.num_states(); ++s) {
    if (l.initial_state) ins.push_back(n.inputs[l.initial_state_input() + static_cast<std::size_t>(s)]);
  }
  ins.push_back(n.outputs.back());  // saved
  for (int g : {dy, dh, dc}) {
    if (g >= 0) ins.push_back(g);
  }
  const std::vector<int> g = c.graph.add_node("rnn_grad", ins, a, n.name + "/grad");
  out[0] = g[0];
  out[1] = g[1];
  std::size_t next = 2;
  if (l.recurrent_bias) out[l.rb_input()] = g[next++];
  for (int s = 0; s < l.num_states(); ++s) {
    if (l.initial_state) out[l.initial_state_input() + static_cast<std::size_t>(s)] = g[next++];
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!c.needs[i]) out[i] = -1;
  }
  return out;
}

}  // namespace op_rules::rnn

}  // namespace nnfit
