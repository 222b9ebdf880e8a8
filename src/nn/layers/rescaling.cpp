// Rescaling (the scale op with an offset; per channel, broadcasting binary ops) and UnitNormalization (l2_normalize along one
// axis).
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Rescaling::Rescaling(std::string name, double scale, double offset)
    : Rescaling(std::move(name), std::vector<double>{scale}, std::vector<double>{offset}) {}

Rescaling::Rescaling(std::string name, std::vector<double> scale, std::vector<double> offset)
    : Layer(std::move(name)), scale_(std::move(scale)), offset_(std::move(offset)) {
  NNFIT_CHECK(!scale_.empty() && !offset_.empty(), InvalidArgument, this->name(),
              ": Rescaling's scale and offset need at least one number each");
}

Shape Rescaling::output_shape(const Shape& s) const {
  for (const std::vector<double>* v : {&scale_, &offset_}) {
    NNFIT_CHECK(v->size() == 1 || (s.rank() >= 1 && static_cast<std::int64_t>(v->size()) == s[s.rank() - 1]),
                InvalidArgument, name(), ": Rescaling's ", v == &scale_ ? "scale" : "offset", " holds ", v->size(),
                " values, which do not broadcast against inputs of shape ", s.to_string(),
                " (one number, or one per channel of the last axis)");
  }
  return s;
}

// Per channel: the lists as the layer's constant weights (Operation's constants do the same).
void Rescaling::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  weights_.clear();
  if (per_channel()) {
    for (const std::vector<double>* v : {&scale_, &offset_}) {
      Tensor t = weights.zeros(Shape{static_cast<std::int64_t>(v->size())});
      for (std::size_t i = 0; i < v->size(); ++i) t.data<float>()[i] = static_cast<float>((*v)[i]);
      weights_.emplace_back(name() + (v == &scale_ ? "/scale" : "/offset"), t, false);
    }
  }
  built_ = true;
}

int Rescaling::call(GraphBuilder& b, int x) {
  if (!per_channel()) {
    Attrs a;
    a.set("factor", scale_[0]);
    a.set("offset", offset_[0]);
    return b.graph().add("scale", {x}, a, name() + "/rescale");
  }
  Graph& g = b.graph();
  const int scaled = g.add("binary", {x, b.variable(weights_[0])}, Attrs{{"kind", std::string("multiply")}},
                           name() + "/multiply");
  return g.add("binary", {scaled, b.variable(weights_[1])}, Attrs{{"kind", std::string("add")}}, name() + "/add");
}

UnitNormalization::UnitNormalization(std::string name, std::int64_t axis) : Layer(std::move(name)), axis_(axis) {}

Shape UnitNormalization::output_shape(const Shape& s) const {
  const std::int64_t rank = s.rank() + 1;  // with the batch axis
  const std::int64_t a = axis_ < 0 ? axis_ + rank : axis_;
  NNFIT_CHECK(a >= 1 && a < rank, InvalidArgument, name(), ": axis ", axis_, " is out of range for inputs of rank ",
              rank, " (with the batch axis); normalizing across the batch is not supported");
  return s;
}

int UnitNormalization::call(GraphBuilder& b, int x) {
  const std::int64_t rank = b.graph().desc(x).shape.rank();
  output_shape(Shape(std::vector<std::int64_t>(static_cast<std::size_t>(rank - 1), 1)));
  Attrs a;
  a.set("axis", axis_ < 0 ? axis_ + rank : axis_);
  return b.graph().add("l2_normalize", {x}, a, name() + "/l2_normalize");
}

}  // namespace nnfit
