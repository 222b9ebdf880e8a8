// Pooling1D (MaxPooling1D, AveragePooling1D): the 2-D pooling ops on (1, steps, channels),
// reshapes either side (aliased by the planner, no copy).
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Pooling1D::Pooling1D(std::string name, Pooling1DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  if (options_.strides == 0) options_.strides = options_.pool_size;
  NNFIT_CHECK(options_.pool_size > 0 && options_.strides > 0, InvalidArgument, this->name(),
              ": pool_size and strides must be positive");
  NNFIT_CHECK(options_.padding == "valid" || options_.padding == "same", InvalidArgument, this->name(),
              ": padding must be \"valid\" or \"same\", got \"", options_.padding, "\"");
}

std::string Pooling1D::class_name() const {
  return options_.kind == PoolKind::max ? "MaxPooling1D" : "AveragePooling1D";
}

Shape Pooling1D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 2, InvalidArgument, name(), ": ", class_name(), " expects (steps, channels), got ",
              s.to_string());
  if (s[0] < 0) return Shape{kUnknownDim, s[1]};  // known per batch (Note [Shapes known per batch])
  const Padding1d p = tf_padding(s[0], options_.pool_size, options_.strides, options_.padding);
  NNFIT_CHECK(p.out > 0, InvalidArgument, name(), ": pool ", options_.pool_size, " does not fit input ", s.to_string());
  return Shape{p.out, s[1]};
}

int Pooling1D::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;  // (batch, steps, channels)
  const Shape out = output_shape(Shape{s[1], s[2]});
  const int x2 = emit_reshape(b.graph(), x, {s[0], 1, s[1], s[2]}, name() + "/to_2d");
  Attrs a;
  a.set("pool_size", std::vector<std::int64_t>{1, options_.pool_size});
  a.set("strides", std::vector<std::int64_t>{1, options_.strides});
  a.set("padding", options_.padding);
  const std::string op = options_.kind == PoolKind::max ? "max_pool2d" : "avg_pool2d";
  const int y2 = b.graph().add(op, {x2}, a, name() + "/" + op);
  return emit_reshape(b.graph(), y2, {s[0], out[0], out[1]}, name() + "/to_1d");
}

}  // namespace nnfit
