// NestedModel: a Sequential or Functional model used as a layer of another model, as Keras
// allows. It owns its LayerGraph; calling it emits its layers' ops in place, and its
// weights belong to its layers (Keras's .keras files nest them as layers/<model>/layers/...).
#pragma once
#include <string>
#include <vector>

#include "nnfit/nn/layer_graph.h"

namespace nnfit {

class NestedModel final : public Layer {
 public:
  // class_name: "Sequential" or "Functional", as the model was saved.
  NestedModel(std::string name, std::string class_name, LayerGraph graph);
  std::string class_name() const override { return class_name_; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  // When every inner layer does: the inner graph is emitted on each batch's shapes.
  bool supports_unknown_dims() const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  // Masks flow through the nested layers as through the outer ones.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  int num_outputs() const override { return static_cast<int>(graph_.outputs().size()); }
  std::vector<Weight*> all_weights() override { return graph_.weights(); }
  std::vector<Weight*> saved_weights() override { return graph_.saved_weights(); }
  const LayerGraph& graph() const { return graph_; }
  // Freezing a model freezes each of its layers, as in Keras.
  void set_trainable(bool trainable) override;

 private:
  // throws: InvalidArgument naming this model when `inputs` differ from its inputs' shapes.
  void check_inputs(const std::vector<Shape>& inputs) const;

  std::string class_name_;
  LayerGraph graph_;
};

}  // namespace nnfit
