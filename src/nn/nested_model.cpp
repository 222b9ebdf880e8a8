// NestedModel: the inner graph's input shapes are fixed when it is read, so a call only
// checks that it brings those shapes, or shapes they admit: an input of unknown length
// (Input(shape=(None,)), keras.io's text model) takes a known one (TextVectorization's
// output_sequence_length), as Keras's nested model does; the inner graph keeps its own
// output shapes and is emitted on the batch's concrete shapes.
#include "nnfit/nn/nested_model.h"

#include "nnfit/core/error.h"

namespace nnfit {

NestedModel::NestedModel(std::string name, std::string class_name, LayerGraph graph)
    : Layer(std::move(name)), class_name_(std::move(class_name)), graph_(std::move(graph)) {}

void NestedModel::check_inputs(const std::vector<Shape>& inputs) const {
  NNFIT_CHECK(inputs.size() == graph_.inputs().size(), InvalidArgument, name(), ": the nested model takes ",
              graph_.inputs().size(), " input(s), got ", inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Shape& want = graph_.inputs()[i].shape;
    NNFIT_CHECK(want.rank() == 0 || want == inputs[i] || (inputs[i].is_static() && want.admits(inputs[i])),
                InvalidArgument, name(), ": input ", i, " has shape ",
                inputs[i].to_string(), " but the nested model's input '", graph_.inputs()[i].name, "' is ",
                want.to_string());
  }
}

std::vector<Shape> NestedModel::compute_output_shapes(const std::vector<Shape>& inputs) const {
  check_inputs(inputs);
  if (!graph_.has_unknown_dims()) return graph_.output_shapes();
  // Inputs known per batch (Note [Shapes known per batch]): the inner graph's outputs for
  // the shapes this call brings, unknown or the batch's own.
  const auto shapes = graph_.infer_shapes(inputs);
  std::vector<Shape> out;
  for (const TensorRef& r : graph_.outputs()) out.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
  return out;
}

bool NestedModel::supports_unknown_dims() const {
  for (const auto& l : graph_.layers()) {
    if (!l->supports_unknown_dims()) return false;
  }
  return true;
}

void NestedModel::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  check_inputs(inputs);
  graph_.build(weights);
  built_ = true;
}

std::vector<int> NestedModel::call_on(GraphBuilder& builder, const std::vector<int>& inputs) {
  return graph_.emit(builder, inputs);
}

void NestedModel::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  for (const auto& l : graph_.layers()) l->set_trainable(trainable);
}

std::vector<int> NestedModel::call_masked(GraphBuilder& builder, const std::vector<int>& inputs,
                                          const std::vector<int>& masks, std::vector<int>& output_masks) {
  return graph_.emit_masked(builder, inputs, masks, output_masks);
}

}  // namespace nnfit
