// PipelineLayer (nnfit/nn/pipeline_layer.h): Keras's Pipeline.call, each layer on the
// previous one's output and mask. Every layer is emitted in the builder's mode, so the
// augmentation layers inside are random in training and the identity at inference, as
// Keras's Functional model runs a Pipeline (its recorded training=True is overridden by the
// model's mode there too).
#include "nnfit/nn/pipeline_layer.h"

#include "nnfit/core/error.h"

namespace nnfit {

PipelineLayer::PipelineLayer(std::string name, std::vector<std::unique_ptr<Layer>> layers,
                             std::vector<std::string> groups)
    : Layer(std::move(name)), layers_(std::move(layers)), groups_(std::move(groups)) {
  NNFIT_CHECK(!layers_.empty(), InvalidArgument, this->name(), ": a Pipeline needs at least one layer");
  NNFIT_CHECK(groups_.size() == layers_.size(), InvalidArgument, this->name(), ": ", groups_.size(),
              " weight groups for ", layers_.size(), " layers");
  for (const auto& l : layers_) {
    NNFIT_CHECK(l->num_outputs() == 1, Unsupported, this->name(), ": a Pipeline of ", l->class_name(), " '", l->name(),
                "', which gives ", l->num_outputs(), " outputs, is not supported (each layer feeds the next)");
  }
}

bool PipelineLayer::supports_unknown_dims() const {
  for (const auto& l : layers_) {
    if (!l->supports_unknown_dims()) return false;
  }
  return true;
}

std::vector<Shape> PipelineLayer::compute_output_shapes(const std::vector<Shape>& inputs) const {
  NNFIT_CHECK(inputs.size() == 1, InvalidArgument, name(), ": a Pipeline takes one input, got ", inputs.size());
  std::vector<Shape> shapes = inputs;
  for (const auto& l : layers_) shapes = l->compute_output_shapes(shapes);
  return shapes;
}

void PipelineLayer::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  compute_output_shapes(inputs);
  std::vector<Shape> shapes = inputs;
  for (const auto& l : layers_) {
    if (!l->built()) l->build_for(shapes, weights);
    shapes = l->compute_output_shapes(shapes);
  }
  built_ = true;
}

std::vector<int> PipelineLayer::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  std::vector<int> out_masks;
  return call_masked(b, inputs, std::vector<int>(inputs.size(), -1), out_masks);
}

std::vector<int> PipelineLayer::call_masked(GraphBuilder& b, const std::vector<int>& inputs,
                                            const std::vector<int>& masks, std::vector<int>& output_masks) {
  std::vector<int> values = inputs, carried = masks;
  for (const auto& l : layers_) {
    std::vector<int> next_masks;
    values = l->call_masked(b, values, carried, next_masks);
    carried = next_masks.empty() ? std::vector<int>(values.size(), -1) : next_masks;
  }
  output_masks = carried;
  return values;
}

void PipelineLayer::attach_weight_options() {
  for (const auto& l : layers_) l->attach_weight_options();
  Layer::attach_weight_options();
}

void PipelineLayer::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  for (const auto& l : layers_) l->set_trainable(trainable);
}

std::vector<Weight*> PipelineLayer::all_weights() {
  std::vector<Weight*> out;
  for (const auto& l : layers_) {
    for (Weight* w : l->all_weights()) out.push_back(w);
  }
  return out;
}

std::vector<Weight*> PipelineLayer::saved_weights() {
  std::vector<Weight*> out;
  for (const auto& l : layers_) {
    for (Weight* w : l->saved_weights()) out.push_back(w);
  }
  return out;
}

std::vector<WeightGroup> PipelineLayer::saved_weight_groups() {
  std::vector<WeightGroup> out{{"", {}}};
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    for (WeightGroup& group : layers_[i]->saved_weight_groups()) {
      out.push_back({groups_[i] + (group.path.empty() ? "" : "/" + group.path), std::move(group.weights)});
    }
  }
  return out;
}

}  // namespace nnfit
