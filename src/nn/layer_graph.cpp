// LayerGraph: nodes are appended in call order, so the node list is already a topological
// order and shape inference, building and emission are single passes over it.
#include "nnfit/nn/layer_graph.h"

#include "nnfit/nn/operation_graph.h"

#include <algorithm>
#include <set>

#include "nnfit/core/error.h"
#include "nnfit/nn/operation_graph.h"

namespace nnfit {

TensorRef LayerGraph::add_input(std::string name, Shape shape, DType dtype) {
  NNFIT_CHECK(!find_layer(name) && std::none_of(inputs_.begin(), inputs_.end(),
                                                [&](const InputSpec& in) { return in.name == name; }),
              InvalidArgument, "two layers are named '", name, "'; layer names must be unique");
  LayerNode n;
  n.input_index = static_cast<int>(inputs_.size());
  inputs_.push_back({std::move(name), std::move(shape), dtype});
  nodes_.push_back(std::move(n));
  return {static_cast<int>(nodes_.size()) - 1, 0};
}

void LayerGraph::set_input_shape(std::size_t input, Shape shape) { inputs_.at(input).shape = std::move(shape); }

Layer& LayerGraph::add_layer(std::unique_ptr<Layer> layer) {
  const std::string& name = layer->name();
  NNFIT_CHECK(!find_layer(name) && std::none_of(inputs_.begin(), inputs_.end(),
                                                [&](const InputSpec& in) { return in.name == name; }),
              InvalidArgument, "two layers are named '", name, "'; layer names must be unique");
  layers_.push_back(std::move(layer));
  calls_of_.push_back(0);
  return *layers_.back();
}

Layer* LayerGraph::find_layer(const std::string& name) const {
  for (const auto& l : layers_) {
    if (l->name() == name) return l.get();
  }
  return nullptr;
}

TensorRef LayerGraph::input_ref(std::size_t input) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].input_index == static_cast<int>(input)) return {static_cast<int>(i), 0};
  }
  throw InvalidArgument("internal: no node for input " + std::to_string(input));
}

std::vector<TensorRef> LayerGraph::call(Layer& layer, const std::vector<TensorRef>& inputs, std::vector<TensorRef> masks) {
  auto it = std::find_if(layers_.begin(), layers_.end(), [&](const auto& l) { return l.get() == &layer; });
  NNFIT_CHECK(it != layers_.end(), InvalidArgument, layer.name(), ": the layer is not part of this model");
  NNFIT_CHECK(!inputs.empty(), InvalidArgument, layer.name(), ": a layer call needs at least one input");
  NNFIT_CHECK(masks.empty() || masks.size() == inputs.size(), InvalidArgument, layer.name(), ": ", masks.size(),
              " masks for ", inputs.size(), " inputs");
  std::vector<TensorRef> refs = inputs;
  for (const TensorRef& m : masks) {
    if (m.node >= 0) refs.push_back(m);
  }
  for (const TensorRef& in : refs) {
    NNFIT_CHECK(in.node >= 0 && in.node < static_cast<int>(nodes_.size()), InvalidArgument, layer.name(),
                ": input refers to node ", in.node, ", which does not exist yet");
    const LayerNode& src = nodes_[static_cast<std::size_t>(in.node)];
    const int outs = src.layer ? src.layer->num_outputs() : 1;
    NNFIT_CHECK(in.index >= 0 && in.index < outs, InvalidArgument, layer.name(), ": input refers to output ",
                in.index, " of ", src.layer ? src.layer->name() : inputs_[static_cast<std::size_t>(src.input_index)].name,
                ", which has ", outs);
  }
  LayerNode n;
  n.layer = &layer;
  n.inputs = inputs;
  n.masks = std::move(masks);
  n.call_index = calls_of_[static_cast<std::size_t>(it - layers_.begin())]++;
  nodes_.push_back(std::move(n));
  std::vector<TensorRef> out;
  for (int i = 0; i < layer.num_outputs(); ++i) out.push_back({static_cast<int>(nodes_.size()) - 1, i});
  return out;
}

void LayerGraph::set_outputs(std::vector<TensorRef> outputs) {
  for (const TensorRef& r : outputs) {
    NNFIT_CHECK(r.node >= 0 && r.node < static_cast<int>(nodes_.size()), InvalidArgument,
                "a model output refers to node ", r.node, ", which does not exist");
  }
  outputs_ = std::move(outputs);
}

void LayerGraph::set_input_keys(std::vector<std::string> keys) {
  NNFIT_CHECK(keys.empty() || keys.size() == inputs_.size(), InvalidArgument, "a model with ", inputs_.size(),
              " inputs was given ", keys.size(), " input keys");
  input_keys_ = std::move(keys);
}

void LayerGraph::set_output_keys(std::vector<std::string> keys) {
  NNFIT_CHECK(keys.empty() || keys.size() == outputs_.size(), InvalidArgument, "a model with ", outputs_.size(),
              " outputs was given ", keys.size(), " output keys");
  output_keys_ = std::move(keys);
}

std::vector<std::vector<Shape>> LayerGraph::infer_shapes() const {
  std::vector<Shape> in;
  for (const InputSpec& spec : inputs_) in.push_back(spec.shape);
  return infer_shapes(in);
}

bool LayerGraph::has_unknown_dims() const {
  return std::any_of(inputs_.begin(), inputs_.end(), [](const InputSpec& in) { return !in.shape.is_static(); });
}

// Note [Shapes known per batch]: a model input may have dimensions Keras writes as None
// (kUnknownDim here): a text model's sequence length, an image model's height and width.
// The layer graph infers and builds with them unknown (a layer's weights never depend on
// them; one that would is refused, as Keras refuses Dense on an unknown last axis); each
// batch's program is planned for the shapes that batch brings (StepEngine::entry_mode
// keys its programs by them, as tf.function keeps one trace per input signature). Layers
// opt in (Layer::supports_unknown_dims) once their shape inference propagates the unknown
// dimensions and their emission reads shapes from the graph values alone; emission
// checks each call's outputs against the shapes inferred for that batch.
std::vector<std::vector<Shape>> LayerGraph::infer_shapes(const std::vector<Shape>& input_shapes) const {
  NNFIT_CHECK(input_shapes.size() == inputs_.size(), InvalidArgument, "internal: ", input_shapes.size(),
              " input shapes for ", inputs_.size(), " inputs");
  std::vector<std::vector<Shape>> shapes(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const LayerNode& n = nodes_[i];
    if (!n.layer) {
      const InputSpec& in = inputs_[static_cast<std::size_t>(n.input_index)];
      NNFIT_CHECK(in.shape.rank() > 0, InvalidArgument, "input '", in.name, "' has no shape; give an Input layer ",
                  "(keras.Input(shape=...)) or batch_shape on the first layer");
      shapes[i] = {input_shapes[static_cast<std::size_t>(n.input_index)]};
      continue;
    }
    std::vector<Shape> in;
    for (const TensorRef& r : n.inputs) in.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
    if (!n.layer->supports_unknown_dims()) {
      for (const Shape& s : in) {
        NNFIT_CHECK(s.is_static(), Unsupported, "layer '", n.layer->name(), "' (", n.layer->class_name(),
                    ") does not take inputs with a dimension known only per batch (None) in nnfit yet, and its ",
                    "input here is ", s.to_string(),
                    "; give the model's Input a fixed shape (pad or crop the data to it), or move this layer after ",
                    "one that makes the shape fixed (GlobalAveragePooling, an RNN without return_sequences)");
      }
    }
    shapes[i] = n.layer->compute_output_shapes(in);
    NNFIT_CHECK(static_cast<int>(shapes[i].size()) == n.layer->num_outputs(), InvalidArgument, "internal: ",
                n.layer->name(), " gave ", shapes[i].size(), " output shapes for ", n.layer->num_outputs(), " outputs");
  }
  return shapes;
}

std::vector<Shape> LayerGraph::output_shapes() const {
  const auto shapes = infer_shapes();
  std::vector<Shape> out;
  for (const TensorRef& r : outputs_) out.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
  return out;
}

void LayerGraph::build(WeightFactory& weights) {
  const auto shapes = infer_shapes();
  for (const LayerNode& n : nodes_) {
    if (!n.layer || n.layer->built()) continue;
    std::vector<Shape> in;
    for (const TensorRef& r : n.inputs) in.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
    // A weight too large for the machine or the memory policy names its layer (Note
    // [Weights larger than the machine]); a nested model's layers name themselves.
    const std::string who = "layer '" + n.layer->name() + "' (" + n.layer->class_name() + "): ";
    const auto named = [&](const Error& e) { return std::string(e.what()).rfind("layer '", 0) == 0 ? e.what() : who + e.what(); };
    try {
      n.layer->build_for(in, weights);
    } catch (const OutOfMemory& e) {
      throw OutOfMemory(named(e), e.hint(), e.shared_details());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(named(e), e.hint());
    }
    n.layer->attach_weight_options();
    if (!n.layer->trainable()) n.layer->set_trainable(false);  // freeze what build made
  }
}

bool LayerGraph::built() const {
  return std::all_of(layers_.begin(), layers_.end(), [](const auto& l) { return l->built(); });
}

std::vector<int> LayerGraph::emit(GraphBuilder& builder, const std::vector<int>& input_values) const {
  std::vector<int> output_masks;
  return emit_masked(builder, input_values, std::vector<int>(input_values.size(), -1), output_masks);
}

namespace {

// Note [Traced activations]: Keras applies a layer's activation, a function of one tensor,
// to the output of its computation (Dense: activation(x @ kernel + bias); the convolutions
// and EinsumDense alike, Activation being the function alone). A Python function given as
// activation= is traced by nnfit.keras with keras.ops on a symbolic tensor of the layer's
// output shape (python/nnfit/keras/_traced_activation.py) into an OperationGraph that the
// layer's Keras entry carries under its "activation" object's "nnfit_trace" key (Keras
// ignores it and reads the registered name). The reader gives the layer "linear" and the
// graph; it is emitted here, after the layer's call, where every layer's call is emitted.
// Layers whose activation is applied inside (recurrent cells) or that are emitted by a
// wrapper (TimeDistributed, Bidirectional) are refused by the reader, naming them.

// Keras's autocast: a layer computes in its policy's compute dtype (its own policy, else
// the model's); its floating inputs are cast to it, and so are the variables it reads
// (GraphBuilder::variable). A layer that computes in float32 under every policy (the
// normalizations) gets float32 inputs and its outputs are cast to the compute dtype.
std::vector<int> call_with_policy(GraphBuilder& builder, Layer& layer, std::vector<int> in,
                                  const std::vector<int>& masks, std::vector<int>& output_masks) {
  const DTypePolicy policy = layer.dtype_policy().value_or(builder.default_policy());
  const DType compute = layer.computes_in_float32() ? DType::f32 : policy.compute;
  for (int& v : in) {
    if (layer.casts_inputs() && is_floating(builder.graph().desc(v).dtype)) v = builder.cast(v, compute);
  }
  const DType outer = builder.compute_dtype();
  const bool outer_training = builder.training();
  builder.set_compute_dtype(compute);
  if (layer.inference_only()) builder.set_training(false);  // Keras's training=False on this call
  std::vector<int> out = layer.call_masked(builder, in, masks, output_masks);
  if (const auto& activation = layer.traced_activation()) {  // Note [Traced activations]
    out[0] = activation->emit(builder.graph(), {out[0]}, layer.name() + "/activation")[0];
  }
  builder.set_training(outer_training);
  builder.set_compute_dtype(outer);
  if (compute != policy.compute) {
    for (int& v : out) {
      if (is_floating(builder.graph().desc(v).dtype)) v = builder.cast(v, policy.compute);
    }
  }
  return out;
}

}  // namespace

std::vector<int> LayerGraph::emit_masked(GraphBuilder& builder, const std::vector<int>& input_values,
                                         const std::vector<int>& input_masks, std::vector<int>& output_masks) const {
  std::vector<std::size_t> all(outputs_.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
  return emit_outputs(builder, input_values, input_masks, all, output_masks);
}

std::vector<int> LayerGraph::emit_outputs(GraphBuilder& builder, const std::vector<int>& input_values,
                                          const std::vector<int>& input_masks, const std::vector<std::size_t>& selected,
                                          std::vector<int>& output_masks) const {
  std::vector<bool> needed(nodes_.size(), false);  // the calls the selected outputs read, directly or not
  std::vector<int> stack;
  for (const std::size_t k : selected) stack.push_back(outputs_.at(k).node);
  const bool losses = added_losses_ && builder.collect_losses();
  if (losses) {
    for (const TensorRef& r : added_loss_feeds_) stack.push_back(r.node);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (i < 0 || needed[static_cast<std::size_t>(i)]) continue;
    needed[static_cast<std::size_t>(i)] = true;
    for (const TensorRef& r : nodes_[static_cast<std::size_t>(i)].inputs) stack.push_back(r.node);
    for (const TensorRef& r : nodes_[static_cast<std::size_t>(i)].masks) stack.push_back(r.node);
  }
  NNFIT_CHECK(input_values.size() == inputs_.size() && input_masks.size() == inputs_.size(), InvalidArgument,
              "internal: ", input_values.size(), " input values for ", inputs_.size(), " inputs");
  std::vector<std::vector<int>> values(nodes_.size()), masks(nodes_.size());
  // With dimensions known per batch, each call's outputs are checked against the shapes
  // inferred for this batch's inputs (Note [Shapes known per batch]): a layer that read a
  // shape from its build instead of its graph values is caught here, naming it.
  std::vector<std::vector<Shape>> expected;
  if (has_unknown_dims()) {
    std::vector<Shape> batch_inputs;
    for (const int v : input_values) {
      const Shape& s = builder.graph().desc(v).shape;
      NNFIT_CHECK(s.rank() >= 1, InvalidArgument, "internal: a model input value without a batch axis");
      batch_inputs.emplace_back(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end()));
    }
    expected = infer_shapes(batch_inputs);
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const LayerNode& n = nodes_[i];
    if (!n.layer) {
      values[i] = {input_values[static_cast<std::size_t>(n.input_index)]};
      masks[i] = {input_masks[static_cast<std::size_t>(n.input_index)]};
      continue;
    }
    if (!needed[i]) continue;
    std::vector<int> in, in_masks;
    for (const TensorRef& r : n.inputs) {
      in.push_back(values[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
      in_masks.push_back(masks[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
    }
    for (std::size_t k = 0; k < n.masks.size(); ++k) {
      const TensorRef& r = n.masks[k];
      if (r.node < 0) continue;
      const int m = values[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)];
      const Shape& x = builder.graph().desc(in[k]).shape;
      NNFIT_CHECK(x.rank() >= 2 && builder.graph().desc(m).shape ==
                                       Shape(std::vector<std::int64_t>(x.dims().begin(), x.dims().end() - 1)),
                  InvalidArgument, n.layer->name(), ": the mask ", builder.graph().desc(m).shape.to_string(),
                  " of input ", k, " must be its shape ", x.to_string(), " without the last axis");
      in_masks[k] = m;
    }
    values[i] = call_with_policy(builder, *n.layer, in, in_masks, masks[i]);
    if (!expected.empty()) {
      for (std::size_t k = 0; k < values[i].size(); ++k) {
        const Shape& got = builder.graph().desc(values[i][k]).shape;
        const Shape& want = expected[i][k];
        const bool fits = got.rank() == want.rank() + 1 &&
                          std::equal(want.dims().begin(), want.dims().end(), got.dims().begin() + 1);
        NNFIT_CHECK(fits, InvalidArgument, "internal: layer '", n.layer->name(), "' (", n.layer->class_name(),
                    ") emitted output ", k, " of shape ", got.to_string(), " where its inferred shape is (batch, ",
                    want.to_string(), "); it reads a shape it does not take per batch");
      }
    }
    const Regularizer& activity = n.layer->activity_regularizer();
    if (activity.active() && builder.collect_losses()) {
      // Keras 3 adds the penalty of each output divided by the batch size.
      for (std::size_t k = 0; k < values[i].size(); ++k) {
        const int v = values[i][k];
        const double batch = static_cast<double>(builder.graph().desc(v).shape[0]);
        builder.add_loss(emit_penalty(builder.graph(), v, activity, 1.0 / batch,
                                      n.layer->name() + "/activity_regularizer" + (k ? "_" + std::to_string(k) : "")));
      }
    }
  }
  if (losses) {
    std::vector<int> feeds;
    for (const TensorRef& r : added_loss_feeds_) {
      feeds.push_back(values[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
    }
    emit_added_losses(builder, *added_losses_, feeds, "add_loss");
  }
  std::vector<int> out;
  output_masks.clear();
  for (const std::size_t k : selected) {
    const TensorRef& r = outputs_[k];
    out.push_back(values[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
    output_masks.push_back(masks[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
  }
  return out;
}

void LayerGraph::set_added_losses(std::shared_ptr<const OperationGraph> losses, std::vector<TensorRef> feeds,
                                  std::string keras_json) {
  NNFIT_CHECK(losses && losses->num_inputs() == feeds.size(), InvalidArgument, "add_loss: ", feeds.size(),
              " values for a loss graph of ", losses ? losses->num_inputs() : 0, " inputs");
  for (const TensorRef& r : feeds) {
    NNFIT_CHECK(r.node >= 0 && static_cast<std::size_t>(r.node) < nodes_.size(), InvalidArgument,
                "add_loss: a value of node ", r.node, " of ", nodes_.size());
  }
  added_losses_ = std::move(losses);
  added_loss_feeds_ = std::move(feeds);
  added_losses_json_ = std::move(keras_json);
}

std::vector<std::unique_ptr<Layer>> LayerGraph::release_layers() {
  std::vector<std::unique_ptr<Layer>> out = std::move(layers_);
  *this = LayerGraph();
  return out;
}

std::vector<Weight*> LayerGraph::weights() const {
  std::vector<Weight*> out;
  std::set<const Weight*> seen;
  for (const auto& l : layers_) {
    for (Weight* w : l->all_weights()) {
      if (seen.insert(w).second) out.push_back(w);
    }
  }
  return out;
}

std::vector<Weight*> LayerGraph::saved_weights() const {
  std::vector<Weight*> out;
  std::set<const Weight*> seen;
  for (const auto& l : layers_) {
    if (!l->built()) continue;  // no variables yet; its saved_weights may index them
    for (Weight* w : l->saved_weights()) {
      if (seen.insert(w).second) out.push_back(w);
    }
  }
  return out;
}

std::int64_t LayerGraph::count_params() const {
  std::int64_t n = 0;
  for (const Weight* w : saved_weights()) n += w->value.numel();
  return n;
}

}  // namespace nnfit
