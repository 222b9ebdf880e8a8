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
#include <set>

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
      sublayers_(std::move(sublayers)),
      num_outputs_(static_cast<int>(graph_.outputs().size())) {}

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
  NNFIT_CHECK(inputs.size() == num_inputs(), InvalidArgument, name(), " (", class_name_, "): traced for ",
              num_inputs(), " input(s), called with ", inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Shape& want = graph_.inputs()[i].shape;
    bool fits = want.rank() == inputs[i].rank();
    for (std::int64_t d = 0; fits && d < want.rank(); ++d) fits = want[d] == kUnknownDim || want[d] == inputs[i][d];
    NNFIT_CHECK(fits, InvalidArgument, name(), " (", class_name_, "): input ", i, " has shape ",
                inputs[i].to_string(), " but the layer was traced for ", want.to_string(),
                "; nnfit traces a layer's call once, for the input shape of its first call");
  }
}

void TracedLayer::set_masks(std::vector<int> mask_inputs, std::vector<MaskSource> output_masks, int mask_outputs) {
  NNFIT_CHECK(!losses_ && mask_inputs.size() < graph_.inputs().size() && mask_outputs >= 0 &&
                  static_cast<std::size_t>(mask_outputs) < graph_.outputs().size(),
              InvalidArgument, name(), " (", class_name_, "): the traced graph has ", graph_.inputs().size(),
              " inputs and ", graph_.outputs().size(), " outputs, too few for ", mask_inputs.size(), " input masks and ",
              mask_outputs, " output masks");
  mask_inputs_ = std::move(mask_inputs);
  mask_outputs_ = mask_outputs;
  num_outputs_ = static_cast<int>(graph_.outputs().size()) - mask_outputs;
  for (const int k : mask_inputs_) {
    NNFIT_CHECK(k >= 0 && static_cast<std::size_t>(k) < num_inputs(), InvalidArgument, name(), " (", class_name_,
                "): a mask of input ", k, " of ", num_inputs());
  }
  NNFIT_CHECK(output_masks.empty() || output_masks.size() == static_cast<std::size_t>(num_outputs_), InvalidArgument,
              name(), " (", class_name_, "): ", output_masks.size(), " output masks for ", num_outputs_, " outputs");
  for (const MaskSource& m : output_masks) {
    const bool fits = m.kind == MaskSource::Kind::none ||
                      (m.kind == MaskSource::Kind::input && m.index >= 0 && static_cast<std::size_t>(m.index) < num_inputs()) ||
                      (m.kind == MaskSource::Kind::output && m.index >= 0 && m.index < mask_outputs);
    NNFIT_CHECK(fits, InvalidArgument, name(), " (", class_name_, "): an output mask's source ", m.index, " is out of range");
  }
  output_masks_ = std::move(output_masks);
}

void TracedLayer::set_inference_outputs(int first) {
  if (!losses_) num_outputs_ = first;
  NNFIT_CHECK(first >= num_outputs_ && static_cast<std::size_t>(first + num_outputs_) == graph_.outputs().size() &&
                  mask_inputs_.empty() && output_masks_.empty(),
              InvalidArgument, name(), " (", class_name_, "): the inference outputs start at ", first, " of ",
              graph_.outputs().size(), " graph outputs, for ", num_outputs_, " call outputs (and no masks)");
  inference_first_ = first;
}

void TracedLayer::set_added_losses(std::shared_ptr<const OperationGraph> losses, int outputs) {
  const std::size_t training = inference_first_ >= 0 ? static_cast<std::size_t>(inference_first_) : graph_.outputs().size();
  NNFIT_CHECK(outputs >= 1 && outputs + mask_outputs_ + losses->num_inputs() == training,
              InvalidArgument, name(), " (", class_name_, "): the traced graph has ", graph_.outputs().size(),
              " outputs, not the call's ", outputs, ", ", mask_outputs_, " masks and add_loss's ", losses->num_inputs(),
              " values");
  losses_ = std::move(losses);
  num_outputs_ = outputs;
}

void TracedLayer::set_weight_values(std::shared_ptr<const OperationGraph> values, int losses) {
  NNFIT_CHECK(values->num_inputs() == specs_.size() && losses >= 0 && static_cast<std::size_t>(losses) <= values->num_outputs(),
              InvalidArgument, name(), " (", class_name_, "): its weight-only values' graph takes ", values->num_inputs(),
              " inputs and gives ", values->num_outputs(), " values, for ", specs_.size(), " weights and ", losses,
              " added losses");
  weight_values_ = std::move(values);
  weight_losses_ = losses;
}

std::vector<Shape> TracedLayer::compute_output_shapes(const std::vector<Shape>& inputs) const {
  check_inputs(inputs);
  std::vector<Shape> out;
  bool traced = true;
  for (std::size_t i = 0; i < inputs.size(); ++i) traced = traced && inputs[i] == graph_.inputs()[i].shape;
  if (traced) {
    out = graph_.output_shapes();
  } else {  // one batch's shapes of dimensions known per batch (Note [Shapes known per batch])
    std::vector<Shape> all = inputs;
    for (const int k : mask_inputs_) {  // a mask is shaped as its input without the last axis
      const std::vector<std::int64_t>& d = inputs[static_cast<std::size_t>(k)].dims();
      all.emplace_back(std::vector<std::int64_t>(d.begin(), d.end() - 1));
    }
    const std::vector<std::vector<Shape>> nodes = graph_.infer_shapes(all);
    for (const TensorRef& r : graph_.outputs()) {
      out.push_back(nodes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
    }
  }
  out.resize(static_cast<std::size_t>(num_outputs_));
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
  const std::size_t values = weight_values_ ? weight_values_->num_outputs() - static_cast<std::size_t>(weight_losses_) : 0;
  for (const auto& l : graph_.layers()) {
    if (auto* op = dynamic_cast<Operation*>(l.get())) op->bind_variables(own, &weight_value_nodes_, values);
  }
  graph_.build(weights);
  built_ = true;
}

std::vector<int> TracedLayer::call_on(GraphBuilder& builder, const std::vector<int>& inputs) {
  std::vector<int> output_masks;
  return call_masked(builder, inputs, std::vector<int>(inputs.size(), -1), output_masks);
}

// Note [Masks of traced layers]: Keras passes a layer whose call takes `mask` the mask of
// its (only) tensor argument, and sets its outputs' masks from compute_mask when the layer
// supports masking (Layer.__call__). Whether a mask reaches a layer is known from the
// model's graph alone, so nnfit.keras asks the engine when it traces the call (the user's
// Python may branch on `mask is None`) and traces call and compute_mask with symbolic masks
// as extra inputs; here the masks that flow with the inputs feed them, and the traced
// output masks flow on. The mask is the engine's: float32 0/1, which keras.ops take as
// Keras's booleans.
std::vector<int> TracedLayer::call_masked(GraphBuilder& builder, const std::vector<int>& inputs,
                                          const std::vector<int>& masks, std::vector<int>& output_masks) {
  std::vector<int> feed = inputs;
  for (const int k : mask_inputs_) {
    const int m = static_cast<std::size_t>(k) < masks.size() ? masks[static_cast<std::size_t>(k)] : -1;
    NNFIT_CHECK(m >= 0, InvalidArgument, name(), " (", class_name_, "): its call was traced with the mask of input ", k,
                ", and no mask reaches that input here (a traced layer's call is traced for the masks of its "
                "first call)");
    feed.push_back(m);
  }
  const auto calls = static_cast<std::size_t>(num_outputs_);
  // Note [Traced layers in two modes]: a call that branches on `training` (keras.io's VAE
  // sampling: `if not training: return z_mean`) is traced in both modes into one graph whose
  // outputs past inference_first_ are the inference call's; each mode emits only what its
  // outputs read, so neither runs the other's branch.
  std::vector<std::size_t> selected;
  const bool inference = inference_first_ >= 0 && !builder.training();
  const std::size_t first = inference ? static_cast<std::size_t>(inference_first_) : 0;
  const std::size_t end = inference ? first + calls
                                    : (inference_first_ >= 0 ? static_cast<std::size_t>(inference_first_)
                                                             : graph_.outputs().size());
  for (std::size_t k = first; k < end; ++k) selected.push_back(k);
  emit_weight_values(builder);
  std::vector<int> graph_masks;
  std::vector<int> out = graph_.emit_outputs(builder, feed, std::vector<int>(feed.size(), -1), selected, graph_masks);
  if (inference) {
    output_masks.assign(calls, -1);
    return out;
  }
  output_masks.assign(calls, -1);
  for (std::size_t i = 0; i < output_masks_.size(); ++i) {
    const MaskSource& m = output_masks_[i];
    if (m.kind == MaskSource::Kind::input) output_masks[i] = masks[static_cast<std::size_t>(m.index)];
    if (m.kind == MaskSource::Kind::output) output_masks[i] = out[calls + static_cast<std::size_t>(m.index)];
  }
  if (!losses_) {
    out.resize(calls);
    return out;
  }
  const std::vector<int> feeds(out.begin() + static_cast<std::ptrdiff_t>(calls) + mask_outputs_, out.end());
  out.resize(calls);
  emit_added_losses(builder, *losses_, feeds, name() + "/add_loss");
  return out;
}

// Note [Weight-only values]: Keras users compute from a layer's weights alone inside call()
// (a penalty `add_loss(1e-3 * ops.sum(ops.square(self.w)))`, a reparametrised kernel
// `ops.softplus(self.w)`, a temperature `ops.exp(self.t)`), and Keras runs those ops on the
// variables on every step. nnfit's layer graph cannot hold such a value: its values carry
// the batch axis, and an operation whose output lacks it is refused. So nnfit.keras traces
// the ops whose operands are only weights (or such values) into a graph of their own
// (python/nnfit/keras/_weight_values.py), an OperationGraph over one input per weight with
// no batch axis reserved, and an operation of the call that reads one of its values names
// it as a `__variable__` argument past the weights (index weights + k), so the value enters
// the call's operations as a weight does. Each call emits that graph once, on the layer's
// graph variables (GraphBuilder::variable), before the call's graph: its ops are ordinary
// engine ops of the step, planned, differentiated (the gradients reach the weights through
// them) and run with no Python, once per step as Keras runs them; its add_loss outputs are
// summed and added to the loss as Keras's _aggregate_additional_loss does. The alternative,
// broadcasting a weight-only value to the batch inside the layer's graph, would compute it
// once per sample and sum gradients over the batch for nothing.
void TracedLayer::emit_weight_values(GraphBuilder& builder) {
  weight_value_nodes_.clear();
  if (!weight_values_) return;
  std::vector<int> weights;
  for (const Weight& w : weights_) weights.push_back(builder.variable(w));
  std::vector<int> values = weight_values_->emit(builder.graph(), weights, name() + "/weights");
  const auto first_loss = values.end() - weight_losses_;
  weight_value_nodes_.assign(values.begin(), first_loss);
  if (weight_losses_ == 0 || !builder.collect_losses()) return;
  for (auto it = first_loss; it != values.end(); ++it) add_summed_loss(builder, *it, name() + "/add_loss");
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

std::vector<Weight*> keras_variables(Layer& layer) {
  std::vector<Weight*> saved = layer.saved_weights();
  if (dynamic_cast<TracedLayer*>(&layer) || saved.empty()) return saved;
  const std::set<Weight*> kept(saved.begin(), saved.end());
  std::vector<Weight*> out;
  for (Weight* w : layer.all_weights()) {
    if (kept.count(w)) out.push_back(w);
  }
  return out;
}

}  // namespace nnfit
