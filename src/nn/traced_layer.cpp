// TracedLayer (include/nnfit/nn/traced_layer.h).
//
// Note [Traced layers]: Keras runs a Layer subclass's Python call() on every step; nnfit
// runs it once. nnfit.keras calls the user's build(input_shape) and then call() on
// symbolic tensors, in training mode and in inference mode (python/nnfit/keras/_tracing.py):
// each keras.ops call records an operation node (Note [Keras operations]), each sublayer
// call a layer node, and a weight made by add_weight enters an operation as a
// `__variable__` argument holding the weight's index and shape. The recorded graph is
// written inside the layer's Keras entry (key "nnfit_trace", beside Keras's module,
// class_name, config, registered_name and build_config, which Keras reads and nnfit
// writes back unchanged), so a .keras file holds what Keras needs (the class, its
// get_config, its variables under the layer's path) and what nnfit needs (the graph).
// Here the weights are made first, then bound to the operations that read them (one graph
// variable per weight however many operations read it, through GraphBuilder::variable),
// then the sublayers are built; emitting the layer emits its graph in place. A sublayer
// called with training=False while the layer traces in training mode runs in inference
// mode (Layer::inference_only), as Keras's Python call would run it.
#include "nnfit/nn/traced_layer.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "nnfit/core/error.h"
#include "nnfit/nn/nested_model.h"
#include "nnfit/nn/operation.h"

namespace nnfit {
namespace {

// Keras's naming.to_snake_case ("LayerNormalization" -> "layer_normalization"), which names
// a nested model's layers' groups in Keras's files.
std::string snake_case(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
    const bool after_lower = i > 0 && std::islower(static_cast<unsigned char>(name[i - 1])) != 0;
    const bool before_lower = i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1])) != 0;
    if (upper && i > 0 && (after_lower || before_lower)) out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The groups of sublayer `l` at `path`: its own, or for a nested model each of its layers'
// under "<path>/layers/<class in snake case>[_n]", as Keras's files nest them.
void sublayer_groups(Layer& l, const std::string& path, std::vector<WeightGroup>& out) {
  if (auto* nested = dynamic_cast<NestedModel*>(&l)) {
    std::map<std::string, int> used;
    for (const auto& inner : nested->graph().layers()) {
      std::string name = snake_case(inner->class_name());
      const int n = used[name]++;
      if (n > 0) name += "_" + std::to_string(n);
      sublayer_groups(*inner, path + "/layers/" + name, out);
    }
    return;
  }
  if (!l.built() || l.saved_weights().empty()) return;
  for (WeightGroup& g : l.saved_weight_groups()) {
    out.push_back({g.path.empty() ? path : path + "/" + g.path, std::move(g.weights)});
  }
}

}  // namespace

TracedLayer::TracedLayer(std::string name, std::string class_name, std::string object_json,
                         std::vector<TracedWeight> weights, LayerGraph graph,
                         std::vector<std::pair<std::string, std::string>> sublayers)
    : Layer(std::move(name)),
      class_name_(std::move(class_name)),
      object_json_(std::move(object_json)),
      specs_(std::move(weights)),
      graph_(std::move(graph)),
      sublayers_(std::move(sublayers)) {}

std::vector<Layer*> TracedLayer::ordered_layers() const {
  std::vector<Layer*> out;
  for (const auto& [name, path] : sublayers_) {
    if (Layer* l = graph_.find_layer(name)) out.push_back(l);
  }
  for (const auto& l : graph_.layers()) {
    if (std::find(out.begin(), out.end(), l.get()) == out.end()) out.push_back(l.get());
  }
  return out;
}

std::string TracedLayer::path_of(const Layer& l) const {
  for (const auto& [name, path] : sublayers_) {
    if (name == l.name()) return path;
  }
  return l.name();
}

void TracedLayer::check_inputs(const std::vector<Shape>& inputs) const {
  NNFIT_CHECK(inputs.size() == graph_.inputs().size(), InvalidArgument, name(), " (", class_name_, "): traced for ",
              graph_.inputs().size(), " input(s), called with ", inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Shape& want = graph_.inputs()[i].shape;
    NNFIT_CHECK(want == inputs[i], InvalidArgument, name(), " (", class_name_, "): input ", i, " has shape ",
                inputs[i].to_string(), " but the layer was traced for ", want.to_string(),
                "; nnfit traces a layer's call once, for the input shape of its first call");
  }
}

void TracedLayer::set_added_losses(std::shared_ptr<const OperationGraph> losses, int outputs) {
  NNFIT_CHECK(outputs >= 1 && outputs + losses->num_inputs() == graph_.outputs().size(), InvalidArgument, name(), " (",
              class_name_, "): the traced graph has ", graph_.outputs().size(), " outputs, not the call's ", outputs,
              " and add_loss's ", losses->num_inputs(), " values");
  losses_ = std::move(losses);
  num_outputs_ = outputs;
}

std::vector<Shape> TracedLayer::compute_output_shapes(const std::vector<Shape>& inputs) const {
  check_inputs(inputs);
  std::vector<Shape> out = graph_.output_shapes();
  if (losses_) out.resize(static_cast<std::size_t>(num_outputs_));
  return out;
}

void TracedLayer::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  check_inputs(inputs);
  weights_.clear();
  weights_.reserve(specs_.size());  // the operations keep pointers to them
  for (const TracedWeight& spec : specs_) {
    const std::size_t k = add_weight(weights, spec.name, spec.shape, spec.initializer);
    weights_[k].trainable = spec.trainable;
    weights_[k].frozen = !trainable();
  }
  std::vector<const Weight*> own;
  for (const Weight& w : weights_) own.push_back(&w);
  for (const auto& l : graph_.layers()) {
    if (auto* op = dynamic_cast<Operation*>(l.get())) op->bind_variables(own);
  }
  graph_.build(weights);
  built_ = true;
}

std::vector<int> TracedLayer::call_on(GraphBuilder& builder, const std::vector<int>& inputs) {
  std::vector<int> out = graph_.emit(builder, inputs);
  if (!losses_) return out;
  const std::vector<int> feeds(out.begin() + num_outputs_, out.end());
  out.resize(static_cast<std::size_t>(num_outputs_));
  if (!builder.collect_losses()) return out;
  Graph& g = builder.graph();
  for (int v : losses_->emit(g, feeds, name() + "/add_loss")) {
    // Keras's _aggregate_additional_loss: the value as float32, summed.
    if (g.desc(v).dtype != DType::f32) v = g.add("cast", {v}, Attrs{{"dtype", std::string("float32")}}, name() + "/add_loss");
    if (g.desc(v).shape.rank() > 0) {
      v = g.add("reduce", {v}, Attrs{{"kind", std::string("sum")}, {"keepdims", std::int64_t{0}}}, name() + "/add_loss");
    }
    builder.add_loss(v);
  }
  return out;
}

std::vector<Weight*> TracedLayer::all_weights() {
  std::vector<Weight*> out;
  for (Weight& w : weights_) out.push_back(&w);
  for (Layer* l : ordered_layers()) {
    for (Weight* w : l->all_weights()) {
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);  // a layer called twice
    }
  }
  return out;
}

std::vector<Weight*> TracedLayer::saved_weights() {
  std::vector<Weight*> out;
  for (Weight& w : weights_) out.push_back(&w);
  for (Layer* l : ordered_layers()) {
    if (!l->built()) continue;
    for (Weight* w : l->saved_weights()) {
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
  }
  return out;
}

std::vector<WeightGroup> TracedLayer::saved_weight_groups() {
  std::vector<WeightGroup> out(1);
  for (Weight& w : weights_) out[0].weights.push_back(&w);
  for (Layer* l : ordered_layers()) sublayer_groups(*l, path_of(*l), out);
  return out;
}

void TracedLayer::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  for (const auto& l : graph_.layers()) l->set_trainable(trainable);
}

void TracedLayer::attach_weight_options() {
  for (Weight& w : weights_) {
    if (!w.trainable) continue;
    const std::string leaf = w.name.substr(w.name.rfind('/') + 1);
    if (auto r = weight_regularizers().find(leaf); r != weight_regularizers().end()) w.regularizer = r->second;
    if (auto c = weight_constraints().find(leaf); c != weight_constraints().end()) w.constraint = c->second;
  }
}

}  // namespace nnfit
