// Shape inference and gradient of `cast` (docs/design/ops.md, "Mixed precision"): a
// floating value converted to another floating type (round to nearest even). The dtype
// policies insert it where a layer's compute dtype differs from what it receives, and
// around each variable a layer reads (Keras's autocast: variables stay float32).

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::cast {

using Descs = std::vector<TensorDesc>;

Descs infer_cast(const Descs& in, const Attrs& a) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, "cast expects 1 input, got ", in.size());
  const DType to = dtype_from_name(a.s("dtype"));
  const bool integer_in = in[0].dtype == DType::i32 || in[0].dtype == DType::i64;
  NNFIT_CHECK((is_floating(in[0].dtype) && (is_floating(to) || to == DType::i32)) || (integer_in && is_floating(to)),
              InvalidArgument, "cast converts between float32, float16 and bfloat16, from int32 or int64 to those and ",
              "from those to int32, not ", dtype_name(in[0].dtype), " to ", dtype_name(to));
  return {{in[0].shape, to}};
}

// The gradient is the output gradient cast back to the input's type; none flows to or
// through integers (indices, as TensorFlow's casts of integer tensors).
std::vector<int> grad_cast(GradContext& c) {
  const Node n = c.graph.node(c.node);
  if (c.output_grads[0] < 0 || !c.needs[0]) return {-1};
  if (!is_floating(c.graph.desc(n.inputs[0]).dtype) || !is_floating(c.graph.desc(n.outputs[0]).dtype)) return {-1};
  Attrs a;
  a.set("dtype", std::string(dtype_name(c.graph.desc(n.inputs[0]).dtype)));
  return {c.graph.add("cast", {c.output_grads[0]}, a, n.name + "/grad")};
}

}  // namespace op_rules::cast

}  // namespace nnfit
