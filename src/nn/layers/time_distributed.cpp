// TimeDistributed (nnfit/nn/recurrent_layers.h): the steps folded into the batch by a
// reshape (free: the planner aliases it), the inner layer once, and the steps unfolded.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

// An input shape (steps, ...) without its steps axis; InvalidArgument naming the layer.
Shape step_shape(const std::string& layer, const Shape& s) {
  NNFIT_CHECK(s.rank() >= 2, InvalidArgument, layer, ": TimeDistributed needs inputs of shape (steps, ...) with at ",
              "least one axis past the steps, got ", s.to_string());
  return Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end()));
}

}  // namespace

TimeDistributed::TimeDistributed(std::string name, std::unique_ptr<Layer> layer)
    : Layer(std::move(name)), layer_(std::move(layer)) {
  NNFIT_CHECK(layer_, InvalidArgument, this->name(), ": TimeDistributed needs a layer");
  NNFIT_CHECK(layer_->num_outputs() == 1, Unsupported, this->name(), ": TimeDistributed around ",
              layer_->class_name(), " '", layer_->name(), "', which gives ", layer_->num_outputs(),
              " outputs, is not supported (one output)");
}

std::vector<Shape> TimeDistributed::compute_output_shapes(const std::vector<Shape>& inputs) const {
  NNFIT_CHECK(inputs.size() == 1, InvalidArgument, name(), ": TimeDistributed takes one input, got ", inputs.size());
  const Shape step = step_shape(name(), inputs[0]);
  NNFIT_CHECK(step.is_static() || layer_->supports_unknown_dims(), Unsupported, "layer '", layer_->name(), "' (",
              layer_->class_name(), ") in TimeDistributed '", name(),
              "' does not take inputs with a dimension known only per batch (None) in nnfit yet, and each step here "
              "is ", step.to_string(), "; give the model's Input fixed step shapes (the number of steps may stay None)");
  const std::vector<Shape> inner = layer_->compute_output_shapes({step});
  std::vector<std::int64_t> dims{inputs[0][0]};
  dims.insert(dims.end(), inner[0].dims().begin(), inner[0].dims().end());
  return {Shape(dims)};
}

void TimeDistributed::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  compute_output_shapes(inputs);
  if (!layer_->built()) layer_->build_for({step_shape(name(), inputs[0])}, weights);
  built_ = true;
}

std::vector<int> TimeDistributed::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  Graph& g = b.graph();
  const Shape s = g.desc(inputs.at(0)).shape;  // (batch, steps, ...)
  NNFIT_CHECK(s.rank() >= 3, InvalidArgument, name(), ": TimeDistributed needs (batch, steps, ...) inputs, got ",
              s.to_string());
  std::vector<std::int64_t> folded{s[0] * s[1]};
  folded.insert(folded.end(), s.dims().begin() + 2, s.dims().end());
  const int x = emit_reshape(g, inputs[0], folded, name() + "/fold");
  const int y = layer_->call_on(b, {x})[0];
  const Shape out = g.desc(y).shape;
  std::vector<std::int64_t> unfolded{s[0], s[1]};
  unfolded.insert(unfolded.end(), out.dims().begin() + 1, out.dims().end());
  return {emit_reshape(g, y, unfolded, name() + "/unfold")};
}

void TimeDistributed::attach_weight_options() {
  layer_->attach_weight_options();
  Layer::attach_weight_options();
}

void TimeDistributed::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  layer_->set_trainable(trainable);
}

std::vector<Weight*> TimeDistributed::all_weights() { return layer_->all_weights(); }

std::vector<Weight*> TimeDistributed::saved_weights() { return layer_->saved_weights(); }

std::vector<WeightGroup> TimeDistributed::saved_weight_groups() {
  std::vector<WeightGroup> out{{"", {}}};
  for (WeightGroup& group : layer_->saved_weight_groups()) {
    out.push_back({"layer" + (group.path.empty() ? "" : "/" + group.path), std::move(group.weights)});
  }
  return out;
}

}  // namespace nnfit
