// LayerGraph: Keras's Functional graph, a directed acyclic graph of layer calls. Nodes are
// model inputs or calls of a layer on earlier nodes' outputs; a layer called twice is
// shared (one set of weights). A Model holds one; a nested model used as a layer
// (NestedModel) holds one too. The graph only describes: shapes are inferred on demand,
// weights are created by build(), and emit() writes the ops of one forward pass into a
// compute Graph.
//
// Thread safety: none; built and used on one thread.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nnfit/core/dtype.h"
#include "nnfit/core/shape.h"
#include "nnfit/nn/layer.h"

namespace nnfit {

class OperationGraph;

// One output of one node: Keras's keras_history (layer, node index, tensor index).
struct TensorRef {
  int node = -1;
  int index = 0;
  friend bool operator==(const TensorRef&, const TensorRef&) = default;
};

struct InputSpec {
  std::string name;  // the InputLayer's name: "input_layer"
  Shape shape;       // without the batch axis; rank 0 while unknown (a Sequential without one yet)
  DType dtype = DType::f32;
};

struct LayerNode {
  Layer* layer = nullptr;         // nullptr for a model input
  int input_index = -1;           // which model input, for input nodes
  std::vector<TensorRef> inputs;  // what a call reads
  int call_index = 0;             // which call of `layer` this is (Keras's node index)
  std::vector<TensorRef> masks;   // Keras's mask= call argument: empty, or one per input (node -1: none)
};

class LayerGraph {
 public:
  LayerGraph() = default;
  LayerGraph(LayerGraph&&) = default;
  LayerGraph& operator=(LayerGraph&&) = default;

  // A model input. throws: InvalidArgument if the name is taken.
  TensorRef add_input(std::string name, Shape shape, DType dtype = DType::f32);
  void set_input_shape(std::size_t input, Shape shape);
  // Takes ownership. throws: InvalidArgument if a layer or input already has the name.
  Layer& add_layer(std::unique_ptr<Layer> layer);
  // A call of `layer` (owned by this graph) on `inputs`; returns its outputs. `masks`, when
  // given (Keras's mask= argument), hold one entry per input: a tensor of 0/1 shaped like
  // that input without its last axis, used in place of the mask that flows with it, or
  // node -1 to keep that.
  // throws: InvalidArgument naming the layer for an unknown layer or input reference.
  std::vector<TensorRef> call(Layer& layer, const std::vector<TensorRef>& inputs, std::vector<TensorRef> masks = {});
  void set_outputs(std::vector<TensorRef> outputs);
  // Keras's dict inputs and outputs (Model({"a": x}, {"b": y})): one key per input or
  // output, in their order (the keys sorted, as Keras flattens a dict); empty for a list.
  // throws: InvalidArgument when the count differs from the inputs' or outputs'.
  void set_input_keys(std::vector<std::string> keys);
  void set_output_keys(std::vector<std::string> keys);
  const std::vector<std::string>& input_keys() const { return input_keys_; }
  const std::vector<std::string>& output_keys() const { return output_keys_; }

  const std::vector<InputSpec>& inputs() const { return inputs_; }
  const std::vector<TensorRef>& outputs() const { return outputs_; }
  const std::vector<LayerNode>& nodes() const { return nodes_; }
  // Layers in the order they were added (Keras's model.layers, inputs aside).
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  Layer* find_layer(const std::string& name) const;
  // The node of each input, by input index.
  TensorRef input_ref(std::size_t input) const;

  // Every node's output shapes (without the batch axis), by node; throws InvalidArgument
  // naming the layer whose inputs do not fit, or when an input's shape is unknown.
  // Shapes may hold kUnknownDim where an input's does (Note [Shapes known per batch]); a
  // layer that does not take such inputs (Layer::supports_unknown_dims) is refused, naming it.
  std::vector<std::vector<Shape>> infer_shapes() const;
  // The same for the inputs' shapes of one batch (`inputs`, one per model input, each
  // admitted by the input's own shape): what each node gives at that batch.
  std::vector<std::vector<Shape>> infer_shapes(const std::vector<Shape>& inputs) const;
  std::vector<Shape> output_shapes() const;
  // Whether some input has a dimension known only per batch.
  bool has_unknown_dims() const;
  // Creates each layer's weights at its first call, for that call's input shapes.
  void build(WeightFactory& weights);
  bool built() const;
  // Emits one forward pass: `input_values` are the graph values of the model inputs (in
  // order); returns the values of the outputs. requires: built.
  std::vector<int> emit(GraphBuilder& builder, const std::vector<int>& input_values) const;
  // emit with masks flowing along the calls (Layer::call_masked): `input_masks` per model
  // input (-1: none); sets `output_masks` per model output.
  std::vector<int> emit_masked(GraphBuilder& builder, const std::vector<int>& input_values,
                               const std::vector<int>& input_masks, std::vector<int>& output_masks) const;
  // emit_masked of the outputs `selected` (indices into outputs()) alone: the calls no
  // selected output reads are not emitted (a traced layer's graph holds its training and
  // inference outputs: Note [Traced layers in two modes] in src/nn/traced_layer.cpp).
  std::vector<int> emit_outputs(GraphBuilder& builder, const std::vector<int>& input_values,
                                const std::vector<int>& input_masks, const std::vector<std::size_t>& selected,
                                std::vector<int>& output_masks) const;

  // Keras's add_loss in a subclassed model's call (Note [Traced losses and metrics]): `losses`
  // computes the added values from `feeds` (values of this graph); emitting the graph for a
  // loss emits them too and adds each to the model's loss. `keras_json`: nnfit's record of it
  // in the model's config (its "nnfit_losses" key), written back unchanged.
  void set_added_losses(std::shared_ptr<const OperationGraph> losses, std::vector<TensorRef> feeds,
                        std::string keras_json);
  const std::string& added_losses_json() const { return added_losses_json_; }

  // Hands the layers over in order and leaves the graph empty (a reader's chain becoming
  // a Sequential).
  std::vector<std::unique_ptr<Layer>> release_layers();

  // Every weight in layer order (nested models' weights in place), each once.
  std::vector<Weight*> weights() const;
  // The weights Keras has as variables (each layer's saved_weights), each once; what
  // count_params and the summary count.
  std::vector<Weight*> saved_weights() const;
  std::int64_t count_params() const;

 private:
  std::vector<InputSpec> inputs_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<LayerNode> nodes_;
  std::vector<int> calls_of_;  // by layer index: how many calls so far
  std::vector<TensorRef> outputs_;
  std::vector<std::string> input_keys_, output_keys_;
  std::shared_ptr<const OperationGraph> added_losses_;  // null: none
  std::vector<TensorRef> added_loss_feeds_;
  std::string added_losses_json_;
};

}  // namespace nnfit
