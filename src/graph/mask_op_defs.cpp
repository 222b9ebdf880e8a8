// Shape inference and gradient rules of the mask ops (docs/design/ops.md, "Masks"):
// sequence_mask makes Keras's mask (1 where a step is present) from ids or features,
// apply_mask multiplies features by a mask (Masking's output) and masked_mean averages the
// present steps (GlobalAveragePooling1D with a mask). Masks are float32 0/1.

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::mask {

using Descs = std::vector<TensorDesc>;

Shape without_last(const Shape& s) { return Shape(std::vector<std::int64_t>(s.dims().begin(), s.dims().end() - 1)); }

// x [...] -> m [...] (x != value), or with reduce_last m [... without the last axis]
// (any of the last axis != value).
Descs infer_sequence_mask(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, "sequence_mask expects 1 input, got ", in.size());
  NNFIT_CHECK(is_floating(in[0].dtype) || in[0].dtype == DType::i32 || in[0].dtype == DType::i64, InvalidArgument,
              "sequence_mask: x must be floating, int32 or int64, got ", dtype_name(in[0].dtype));
  a.f("value");
  if (a.i_or("reduce_last", 0) != 0) {
    NNFIT_CHECK(in[0].shape.rank() >= 2, InvalidArgument, "sequence_mask: reduce_last needs a batch and a feature axis");
    return {{without_last(in[0].shape), DType::f32}};
  }
  return {{in[0].shape, DType::f32}};
}

// x [..., F], m [...] -> x * m broadcast over the last axis.
Descs infer_apply_mask(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "apply_mask expects 2 inputs (x, mask), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() >= 2 && without_last(in[0].shape) == in[1].shape, InvalidArgument, "apply_mask: mask ",
              in[1].shape.to_string(), " must be x's shape ", in[0].shape.to_string(), " without its last axis");
  return {{in[0].shape, DType::f32}};
}

std::vector<int> grad_apply_mask(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1, -1};
  return {c.graph.add("apply_mask", {dy, n.inputs[1]}, {}, n.name + "/grad"), -1};
}

// x [N, T, F], m [N, T] -> y [N, F] = sum_t x m / sum_t m.
Descs infer_masked_mean(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2, InvalidArgument, "masked_mean expects 2 inputs (x, mask), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() == 3 && in[1].shape == without_last(in[0].shape), InvalidArgument,
              "masked_mean: x must be [batch, steps, features] and the mask [batch, steps], got ",
              in[0].shape.to_string(), " and ", in[1].shape.to_string());
  return {{Shape{in[0].shape[0], in[0].shape[2]}, DType::f32}};
}

// m [N, T], dy [N, F] -> dx [N, T, F] = dy m / sum_t m.
Descs infer_masked_mean_grad(const Descs& in, const Attrs&) {
  NNFIT_CHECK(in.size() == 2 && in[0].shape.rank() == 2 && in[1].shape.rank() == 2 && in[0].shape[0] == in[1].shape[0],
              InvalidArgument, "masked_mean_grad expects the mask [batch, steps] and dy [batch, features]");
  return {{Shape{in[0].shape[0], in[0].shape[1], in[1].shape[1]}, DType::f32}};
}

std::vector<int> grad_masked_mean(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1, -1};
  return {c.graph.add("masked_mean_grad", {n.inputs[1], dy}, {}, n.name + "/grad"), -1};
}

}  // namespace op_rules::mask

}  // namespace nnfit
