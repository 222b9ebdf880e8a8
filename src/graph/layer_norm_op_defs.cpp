// Shape inference and gradient rules of layer normalization over the last axis and of
// group normalization (docs/design/ops.md): layer_norm gives y and each row's mean and
// reciprocal standard deviation, group_norm each (sample, group)'s, which their _grad ops
// read back.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::layer_norm {

using Descs = std::vector<TensorDesc>;

// The rows of x [..., C]: every axis but the last.
Shape rows_of(const Shape& x) { return Shape(std::vector<std::int64_t>(x.dims().begin(), x.dims().end() - 1)); }

// Input i must be [C], x's last axis (gamma, beta).
void check_channel(const Descs& in, std::size_t i, const char* op) {
  const Shape c{in[0].shape.dim(-1)};
  NNFIT_CHECK(in[i].shape == c, InvalidArgument, op, ": input ", i, " is ", in[i].shape.to_string(), ", expected ",
              c.to_string(), " (x's last axis)");
}

// x [..., C], gamma [C], beta [C] -> y like x, mean and rstd of x's rows.
Descs infer_layer_norm(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 3, InvalidArgument, "layer_norm expects 3 inputs (x, gamma, beta), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() >= 1, InvalidArgument, "layer_norm needs at least one axis");
  NNFIT_CHECK(a.f("epsilon") > 0.0, InvalidArgument, "layer_norm: epsilon must be positive");
  const std::string mode = a.s_or("mode", "layer");
  NNFIT_CHECK(mode == "layer" || mode == "rms_scaling" || mode == "rms", InvalidArgument, "layer_norm: mode \"", mode,
              "\" is not one of layer, rms_scaling, rms");
  check_channel(in, 1, "layer_norm");
  check_channel(in, 2, "layer_norm");
  const Shape rows = rows_of(in[0].shape);
  return {{in[0].shape, DType::f32}, {rows, DType::f32}, {rows, DType::f32}};
}

// x, dy, gamma, mean, rstd -> dx, dgamma, dbeta.
Descs infer_layer_norm_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 5, InvalidArgument, "layer_norm_grad expects 5 inputs (x, dy, gamma, mean, rstd), got ",
              in.size());
  NNFIT_CHECK(in[1].shape == in[0].shape, InvalidArgument, "layer_norm_grad: dy ", in[1].shape.to_string(),
              " is not x's shape ", in[0].shape.to_string());
  check_channel(in, 2, "layer_norm_grad");
  const Shape rows = rows_of(in[0].shape);
  NNFIT_CHECK(in[3].shape == rows && in[4].shape == rows, InvalidArgument,
              "layer_norm_grad: mean and rstd must be x's rows ", rows.to_string());
  const Shape c{in[0].shape.dim(-1)};
  return {{in[0].shape, DType::f32}, {c, DType::f32}, {c, DType::f32}};
}

// group_norm: x [N, ..., C], gamma [C], beta [C] (groups dividing C) -> y like x, and each
// (sample, group)'s mean and rstd [N, groups].
Descs infer_group_norm(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 3, InvalidArgument, "group_norm expects 3 inputs (x, gamma, beta), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() >= 2, InvalidArgument, "group_norm needs a batch and a channel axis");
  NNFIT_CHECK(a.f("epsilon") > 0.0, InvalidArgument, "group_norm: epsilon must be positive");
  const std::int64_t groups = a.i("groups"), c = in[0].shape.dim(-1);
  NNFIT_CHECK(groups > 0 && c % groups == 0, InvalidArgument, "group_norm: groups ", groups, " must divide the ", c,
              " channels");
  check_channel(in, 1, "group_norm");
  check_channel(in, 2, "group_norm");
  const Shape stats{in[0].shape[0], groups};
  return {{in[0].shape, DType::f32}, {stats, DType::f32}, {stats, DType::f32}};
}

// x, dy, gamma, mean, rstd -> dx, dgamma, dbeta.
Descs infer_group_norm_grad(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 5, InvalidArgument, "group_norm_grad expects 5 inputs (x, dy, gamma, mean, rstd)");
  NNFIT_CHECK(in[1].shape == in[0].shape, InvalidArgument, "group_norm_grad: dy is not x's shape");
  check_channel(in, 2, "group_norm_grad");
  const Shape stats{in[0].shape[0], a.i("groups")};
  NNFIT_CHECK(in[3].shape == stats && in[4].shape == stats, InvalidArgument, "group_norm_grad: mean and rstd must be ",
              stats.to_string());
  const Shape c{in[0].shape.dim(-1)};
  return {{in[0].shape, DType::f32}, {c, DType::f32}, {c, DType::f32}};
}

// standardize: x [..., K], mean [K], var [K] -> y like x (Keras's Normalization layer);
// standardize_grad: dy, var -> dx. mean and var are constants (adapted statistics).
Descs infer_standardize(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 3, InvalidArgument, "standardize expects 3 inputs (x, mean, var), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() >= 1, InvalidArgument, "standardize needs at least one axis");
  check_channel(in, 1, "standardize");
  check_channel(in, 2, "standardize");
  return {in[0]};
}

Descs infer_standardize_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "standardize_grad expects 2 inputs (dy, var), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() >= 1, InvalidArgument, "standardize_grad needs at least one axis");
  check_channel(in, 1, "standardize_grad");
  return {in[0]};
}

std::vector<int> grad_standardize(GradContext& c) {
  const Node n = c.graph.node(c.node);
  if (c.output_grads[0] < 0 || !c.needs[0]) return {-1, -1, -1};
  return {c.graph.add("standardize_grad", {c.output_grads[0], n.inputs[2]}, n.attrs, n.name + "/grad"), -1, -1};
}

// Both normalizations: mean and rstd are statistics for the gradient only; nothing
// differentiates through them. The _grad op takes the forward's attrs.
std::vector<int> grad_normalization(GradContext& c, const char* grad_op) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  std::vector<int> out{-1, -1, -1};
  if (dy < 0) return out;
  const std::vector<int> g =
      c.graph.add_node(grad_op, {n.inputs[0], dy, n.inputs[1], n.outputs[1], n.outputs[2]}, n.attrs, n.name + "/grad");
  for (std::size_t i = 0; i < 3; ++i) {
    if (c.needs[i]) out[i] = g[i];
  }
  return out;
}

std::vector<int> grad_layer_norm(GradContext& c) { return grad_normalization(c, "layer_norm_grad"); }
std::vector<int> grad_group_norm(GradContext& c) { return grad_normalization(c, "group_norm_grad"); }

}  // namespace op_rules::layer_norm

}  // namespace nnfit
