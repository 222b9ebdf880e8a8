// TracedLayer: a keras.layers.Layer subclass written in Python (its build() making weights
// with add_weight, its call() written with keras.ops and sublayers), traced once by
// nnfit.keras into a graph of layer calls and operations (Note [Traced layers] in
// src/nn/traced_layer.cpp). It owns add_weight's weights and the traced graph, whose
// operations read those weights and whose layers are the Python layer's sublayers; a call
// emits the graph in place, so a step costs what the same Functional graph's costs, and no
// Python runs in it.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "nnfit/nn/layer_graph.h"
#include "nnfit/nn/operation_graph.h"

namespace nnfit {

// One add_weight call, as the trace records it.
struct TracedWeight {
  std::string name;         // add_weight's name: "kernel" (the weight is "<layer>/kernel")
  Shape shape;
  std::string initializer;  // a Keras initializer name: "glorot_uniform", "zeros", ...
  bool trainable = true;
};

class TracedLayer final : public Layer {
 public:
  // `class_name`: the Python class's name ("Scale"); `object_json`: the layer's Keras object
  // as read (module, class_name, config, registered_name, build_config and the trace),
  // written back unchanged; `weights`: add_weight's calls in Keras's order (trainable ones
  // first, each group in creation order); `graph`: the traced call, whose inputs are the
  // layer's; `sublayers`: (name, attribute path) of each sublayer in the order the Python
  // layer tracks them (its attributes' assignment order: Keras's order of the layer's
  // weights, and so of its optimizer's variables), the path ("dense", "blocks/dense_1")
  // being where Keras's files keep its variables.
  TracedLayer(std::string name, std::string class_name, std::string object_json, std::vector<TracedWeight> weights,
              LayerGraph graph, std::vector<std::pair<std::string, std::string>> sublayers);
  std::string class_name() const override { return class_name_; }
  const std::string& object_json() const { return object_json_; }
  const LayerGraph& graph() const { return graph_; }

  // Keras's add_loss inside call (Note [Traced losses and metrics]): the graph's outputs past
  // the first `outputs` are the values `losses` reads (sublayers' outputs or the layer's
  // inputs); each of its outputs, summed, is added to the model's loss when the graph
  // computes one (GraphBuilder::add_loss), as Keras adds a layer's losses.
  void set_added_losses(std::shared_ptr<const OperationGraph> losses, int outputs);
  // Keras's masks in a traced call (Note [Masks of traced layers]): the graph's inputs past
  // the layer's own are the masks of the inputs `mask_inputs` names (a call(inputs,
  // mask=None) traced with the mask that reaches it); `output_masks` has one entry per
  // output of the call: none, the mask of input k passed through (Keras's default
  // compute_mask), or graph output j (the traced compute_mask, after the call's outputs).
  struct MaskSource {
    enum class Kind { none, input, output } kind = Kind::none;
    int index = 0;
  };
  void set_masks(std::vector<int> mask_inputs, std::vector<MaskSource> output_masks, int mask_outputs);
  // Values computed from the layer's weights alone (Note [Weight-only values] in
  // src/nn/traced_layer.cpp): `values` takes the layer's weights (one input per weight, in
  // their order) and gives, first, the values the graph's operations read as variable
  // indices weights.size() + k, then `losses` add_loss values, each summed and added to the
  // model's loss (as set_added_losses' are). Emitted once per call, before the call's graph.
  // throws: InvalidArgument when the graph's inputs are not one per weight.
  void set_weight_values(std::shared_ptr<const OperationGraph> values, int losses);
  // A call traced in both modes with different graphs (Note [Traced layers in two modes]):
  // the graph's outputs from `first` on are the inference call's, as many as the call's.
  // Set after set_masks and set_added_losses.
  void set_inference_outputs(int first);

  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  int num_outputs() const override { return num_outputs_; }
  // Its graph takes them where each of its layers does (LayerGraph refuses the others, naming them).
  bool supports_unknown_dims() const override { return true; }

  // Its own weights, then its sublayers' (Keras's layer.weights order).
  std::vector<Weight*> all_weights() override;
  std::vector<Weight*> saved_weights() override;
  // Keras 3's files: its own variables in the layer's group, each sublayer's under its
  // attribute path ("<layer>/dense/vars").
  std::vector<WeightGroup> saved_weight_groups() override;
  // Freezing the layer freezes its sublayers, as in Keras.
  void set_trainable(bool trainable) override;
  // add_weight's regularizer and constraint, set by the reader as "<weight name>" options,
  // go to that weight only (not to a sublayer's weight of the same name).
  void attach_weight_options() override;

 private:
  // throws: InvalidArgument naming the layer when `inputs` differ from the traced inputs.
  void check_inputs(const std::vector<Shape>& inputs) const;
  // Emits the weight-only values' graph on the layer's weights (and adds its losses).
  void emit_weight_values(GraphBuilder& builder);
  // The graph's layers: the tracked sublayers in their order, then the others (operations,
  // layers made inside call) in graph order.
  std::vector<Layer*> ordered_layers() const;
  std::string path_of(const Layer& l) const;

  std::string class_name_;
  std::string object_json_;
  std::vector<TracedWeight> specs_;
  LayerGraph graph_;
  std::vector<std::pair<std::string, std::string>> sublayers_;
  // The layer's own inputs: the graph's, less the masks fed after them.
  std::size_t num_inputs() const { return graph_.inputs().size() - mask_inputs_.size(); }

  std::shared_ptr<const OperationGraph> losses_;  // add_loss's values, or null
  int num_outputs_ = 0;                           // the call's outputs (the graph's first ones)
  std::vector<int> mask_inputs_;                  // the input whose mask feeds each extra graph input
  std::vector<MaskSource> output_masks_;          // per call output; empty: none
  int mask_outputs_ = 0;                          // graph outputs after the call's that are masks
  int inference_first_ = -1;                      // the inference call's first graph output; -1: one graph
  std::shared_ptr<const OperationGraph> weight_values_;  // Note [Weight-only values], or null
  int weight_losses_ = 0;                                // its outputs that are add_loss values (its last ones)
  std::vector<int> weight_value_nodes_;                  // its values in the graph being emitted now
};

}  // namespace nnfit
