// LogicalOp: Keras's not_equal, logical_or, logical_and and convert_to_tensor operations,
// which Keras 3 records in a Functional graph where masks travel explicitly. Each input of
// a comparison becomes 0/1 by sequence_mask (x != value, or != 0 for the logical ones); or
// and and are then the maximum and minimum of the two; convert_to_tensor is the identity.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

LogicalOp::LogicalOp(std::string name, LogicalOpKind kind, double value)
    : Layer(std::move(name)), kind_(kind), value_(value) {}

std::string LogicalOp::class_name() const {
  switch (kind_) {
    case LogicalOpKind::not_equal: return "NotEqual";
    case LogicalOpKind::logical_or: return "LogicalOr";
    case LogicalOpKind::logical_and: return "LogicalAnd";
    case LogicalOpKind::convert_to_tensor: return "ConvertToTensor";
  }
  return "NotEqual";
}

std::vector<Shape> LogicalOp::compute_output_shapes(const std::vector<Shape>& in) const {
  const std::size_t want = unary() ? 1 : 2;
  NNFIT_CHECK(in.size() == want, InvalidArgument, name(), ": ", class_name(), " takes ", want, " tensor(s), got ",
              in.size());
  NNFIT_CHECK(want == 1 || in[0] == in[1], Unsupported, name(), ": ", class_name(), " of shapes ", in[0].to_string(),
              " and ", in[1].to_string(), " (broadcasting is not supported)");
  return {in[0]};
}

void LogicalOp::build_for(const std::vector<Shape>& inputs, WeightFactory&) {
  compute_output_shapes(inputs);
  built_ = true;
}

std::vector<int> LogicalOp::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  Graph& g = b.graph();
  const auto truth = [&](int x, double value, const std::string& what) {
    Attrs a;
    a.set("value", value);
    return g.add("sequence_mask", {x}, a, name() + what);
  };
  if (kind_ == LogicalOpKind::convert_to_tensor) return {inputs[0]};
  if (kind_ == LogicalOpKind::not_equal) return {truth(inputs[0], value_, "")};
  const int l = truth(inputs[0], 0.0, "/lhs"), r = truth(inputs[1], 0.0, "/rhs");
  return {g.add(kind_ == LogicalOpKind::logical_or ? "maximum" : "minimum", {l, r}, {}, name())};
}

CallArguments LogicalOp::call_arguments() const {
  CallArguments a;
  a.positional = unary() ? 1 : 2;
  if (kind_ == LogicalOpKind::not_equal) a.constants = {value_};
  return a;
}

void LogicalOp::set_call_arguments(const CallArguments& args) {
  const bool compare = kind_ == LogicalOpKind::not_equal;
  NNFIT_CHECK(args.keyword_inputs.empty() && args.flags.empty() && args.constants.size() == (compare ? 1u : 0u),
              Unsupported, name(),
              compare ? ": not_equal is supported as not_equal(tensor, number)"
                      : unary() ? ": convert_to_tensor is supported on one tensor"
                                : ": logical operations are supported on two tensors");
  if (compare) value_ = args.constants[0];
}

}  // namespace nnfit
