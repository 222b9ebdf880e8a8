// Shape inference and gradient rules of the attention ops (docs/design/ops.md,
// "Attention"): attention_mask combines Keras's masks of an attention layer (the query's
// and value's sequence masks, an explicit attention_mask, the causal and sliding-window
// bands) into one [B, T, S] float mask; masked_softmax is Keras's Softmax with a mask, the
// scores' leading axis being the mask's batch times the heads. Masks are float32 0/1.
// scale_by (a tensor times a trainable scalar) and additive_scores (Bahdanau's
// sum_d w_d tanh(q_d + k_d)) are the Attention and AdditiveAttention layers' scores.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::attention {

using Descs = std::vector<TensorDesc>;

// Inputs, as present by the has_* attrs, in this order: query_mask [B, T], value_mask
// [B, S], key_mask [B, S], attention_mask [B, T, S]. Output [B, T, S], or [1, T, S]
// when only the causal or window band applies.
Descs infer_attention_mask(const Descs& in, const Attrs& a) {
  const std::int64_t t = a.i("query_len"), s = a.i("key_len");
  NNFIT_CHECK(t > 0 && s > 0, InvalidArgument, "attention_mask: query_len and key_len must be positive");
  std::size_t k = 0;
  std::int64_t batch = -1;
  const auto take = [&](const char* what, const Shape& want_tail) {
    NNFIT_CHECK(k < in.size(), InvalidArgument, "attention_mask: missing input ", what);
    const Shape& sh = in[k++].shape;
    NNFIT_CHECK(sh.rank() == want_tail.rank() + 1, InvalidArgument, "attention_mask: ", what, " must be [batch, ",
                want_tail.to_string(), "], got ", sh.to_string());
    for (int i = 0; i < want_tail.rank(); ++i) {
      NNFIT_CHECK(sh[i + 1] == want_tail[i], InvalidArgument, "attention_mask: ", what, " ", sh.to_string(),
                  " does not fit query length ", t, " and key length ", s);
    }
    NNFIT_CHECK(batch < 0 || sh[0] == batch, InvalidArgument, "attention_mask: ", what, "'s batch ", sh[0],
                " differs from ", batch);
    batch = sh[0];
  };
  if (a.i_or("has_query_mask", 0)) take("query_mask", Shape{t});
  if (a.i_or("has_value_mask", 0)) take("value_mask", Shape{s});
  if (a.i_or("has_key_mask", 0)) take("key_mask", Shape{s});
  if (a.i_or("has_attention_mask", 0)) take("attention_mask", Shape{t, s});
  NNFIT_CHECK(k == in.size(), InvalidArgument, "attention_mask: ", in.size(), " inputs where the has_* attrs name ", k);
  NNFIT_CHECK(a.i_or("window", 0) >= 0, InvalidArgument, "attention_mask: window must be >= 0");
  return {{Shape{batch < 0 ? 1 : batch, t, s}, DType::f32}};
}

// x [G, T, S], m [B, T, S] with G a multiple of B: entry g reads mask g / (G / B).
void check_scores_and_mask(const char* op, const Shape& x, const Shape& m) {
  NNFIT_CHECK(x.rank() == 3 && m.rank() == 3 && x[1] == m[1] && x[2] == m[2] && m[0] > 0 && x[0] % m[0] == 0,
              InvalidArgument, op, ": scores must be [batch·heads, T, S] and the mask [batch, T, S], got ",
              x.to_string(), " and ", m.to_string());
}

Descs infer_masked_softmax(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "masked_softmax expects 2 inputs (x, mask), got ", in.size());
  check_scores_and_mask("masked_softmax", in[0].shape, in[1].shape);
  return {{in[0].shape, DType::f32}};
}

// y, dy, m -> dx = m·y·(dy − Σ dy·y).
Descs infer_masked_softmax_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 3 && in[0].shape == in[1].shape, InvalidArgument,
              "masked_softmax_grad expects y, dy (same shape) and the mask");
  check_scores_and_mask("masked_softmax_grad", in[0].shape, in[2].shape);
  return {{in[0].shape, DType::f32}};
}

std::vector<int> grad_masked_softmax(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1, -1};
  return {c.graph.add("masked_softmax_grad", {n.outputs[0], dy, n.inputs[1]}, {}, n.name + "/grad"), -1};
}

// x, s [] -> x·s; its gradients are scale_by(dy, s) and scale_by_grad(x, dy) = Σ x·dy.
Descs infer_scale_by(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2 && in[1].shape.rank() == 0, InvalidArgument,
              "scale_by expects x and a scalar s, got ", in.size(), " inputs");
  return {{in[0].shape, DType::f32}};
}

Descs infer_scale_by_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2 && in[0].shape == in[1].shape, InvalidArgument, "scale_by_grad expects x and dy of one shape");
  return {{Shape{}, DType::f32}};
}

std::vector<int> grad_scale_by(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0) return {-1, -1};
  const int dx = c.needs[0] ? c.graph.add("scale_by", {dy, n.inputs[1]}, {}, n.name + "/grad_x") : -1;
  const int ds = c.needs[1] ? c.graph.add("scale_by_grad", {n.inputs[0], dy}, {}, n.name + "/grad_s") : -1;
  return {dx, ds};
}

// q [B, Tq, D], k [B, Tv, D] (, w [D]) -> s [B, Tq, Tv] = Σ_d w_d tanh(q[b,i,d] + k[b,j,d]).
Descs infer_additive_scores(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2 || in.size() == 3, InvalidArgument, "additive_scores expects q, k and optionally w");
  const Shape& q = in[0].shape;
  const Shape& k = in[1].shape;
  NNFIT_CHECK(q.rank() == 3 && k.rank() == 3 && q[0] == k[0] && q[2] == k[2], InvalidArgument,
              "additive_scores: q must be [B, Tq, D] and k [B, Tv, D], got ", q.to_string(), " and ", k.to_string());
  NNFIT_CHECK(in.size() == 2 || in[2].shape == Shape{q[2]}, InvalidArgument, "additive_scores: w must be [", q[2], "]");
  return {{Shape{q[0], q[1], k[1]}, DType::f32}};
}

// q, k, (w,) ds -> dq, dk (, dw).
Descs infer_additive_scores_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 3 || in.size() == 4, InvalidArgument, "additive_scores_grad expects q, k, (w,) ds");
  Descs out{{in[0].shape, DType::f32}, {in[1].shape, DType::f32}};
  if (in.size() == 4) out.push_back({in[2].shape, DType::f32});
  return out;
}

std::vector<int> grad_additive_scores(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int ds = c.output_grads[0];
  std::vector<int> none(n.inputs.size(), -1);
  if (ds < 0) return none;
  std::vector<int> in = n.inputs;
  in.push_back(ds);
  const std::vector<int> g = c.graph.add_node("additive_scores_grad", in, {}, n.name + "/grad");
  for (std::size_t i = 0; i < none.size(); ++i) none[i] = c.needs[i] ? g[i] : -1;
  return none;
}

}  // namespace op_rules::attention

}  // namespace nnfit
