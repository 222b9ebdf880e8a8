// Keras JSON → Model: Sequential and Functional configs of both generations, and models
// nested as layers. A Functional config lists layers with their inbound nodes (Keras 2:
// [[["layer", node, tensor, {}]]]; Keras 3: {"args": [keras tensors], "kwargs": {}});
// calls are made once every tensor they read exists, as Keras's from_config does, so
// the order of the layer list does not matter and a shared layer's calls keep their
// node order. Layers themselves are read by keras_config.cpp.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "model/keras/keras_call_nodes.h"
#include "model/keras/codecs/codec.h"
#include "model/keras/keras_layers.h"
#include "model/keras/keras_traced_config.h"
#include "nnfit/core/error.h"
#include "nnfit/model/eager_operations.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/nested_model.h"
#include "nnfit/nn/traced_layer.h"

namespace nnfit {
namespace {

using namespace keras_json;

// Keras's keras_history: (layer name, node index, tensor index).

struct ReadModel {
  std::string class_name;  // "Sequential" or "Functional"
  std::string name;
  LayerGraph graph;
};

bool is_model_class(const std::string& cls) { return cls == "Sequential" || cls == "Functional" || cls == "Model"; }

// A layer entry's common parts; `extra`: keys beyond Keras's serialization envelope.
struct Entry {
  std::string cls, name, path;
  const json* cfg = nullptr;
  const json* json_entry = nullptr;
  bool custom = false;
  // A Keras operation (module keras.src.ops.*; Note [Keras operations]): its module and
  // class as written. The four LogicalOp classes Keras writes for masks stay layers.
  bool operation = false;
  std::string module, op_class;
};

Entry read_entry(const Reader& r, const std::string& epath, const json& entry, Keys extra) {
  expect_object(r, epath, entry);
  Entry e;
  e.cls = canonical_layer_class(get_string(r, epath, entry, "class_name", std::nullopt));
  if (is_model_class(e.cls)) {
    check_keys(r, epath, entry, {"module", "class_name", "config", "registered_name", "build_config", "compile_config"},
               extra);
  } else {
    // nnfit_trace: a Python Layer subclass's traced call (Note [Traced layers]).
    check_keys(r, epath, entry, {"module", "class_name", "config", "registered_name", "build_config", "nnfit_trace"},
               extra);
  }
  e.cfg = find(entry, "config");
  if (!e.cfg) r.invalid(epath, "missing required key \"config\"");
  expect_object(r, epath + ".config", *e.cfg);
  e.name = get_string(r, epath + ".config", *e.cfg, "name", snake_case(e.cls));
  if (const json* n = value(entry, "name"); n && n->is_string()) e.name = n->get<std::string>();
  e.path = epath + " (" + e.name + ")";
  e.json_entry = &entry;
  const json* registered = value(entry, "registered_name");
  e.custom = registered && !(registered->is_string() && (registered->get<std::string>() == e.cls ||
                                                          is_model_class(registered->get<std::string>())));
  if (is_operation_entry(entry)) {
    e.operation = true;
    e.module = entry["module"].get<std::string>();
    e.op_class = entry["class_name"].get<std::string>();
    e.custom = false;
  }
  return e;
}

ReadModel read_model(const Reader& r, const std::string& path, const json& root, Keys extra,
                     const std::optional<Shape>& nested_input);

// A Python Layer subclass traced by nnfit.keras (Note [Traced layers] in
// src/nn/traced_layer.cpp): its add_weight calls, its sublayers' attribute paths, the
// names of the sublayers it calls with training=False, and its call's graph.
std::unique_ptr<Layer> read_traced_layer(const Reader& r, const Entry& e, const json& trace,
                                         const std::vector<Shape>& in) {
  const std::string tpath = e.path + ".nnfit_trace";
  expect_object(r, tpath, trace);
  check_keys(r, tpath, trace,
             {"weights", "sublayers", "inference_layers", "graph", "losses", "num_outputs", "mask_inputs", "output_masks",
              "inference_outputs", "weight_values"});
  std::vector<TracedWeight> weights;
  json options = json::object();  // add_weight's regularizers and constraints, as "<weight>_..." keys
  if (const json* ws = value(trace, "weights")) {
    if (!ws->is_array()) r.invalid(tpath + ".weights", "must be a list of add_weight calls");
    for (std::size_t i = 0; i < ws->size(); ++i) {
      const std::string wpath = tpath + ".weights[" + std::to_string(i) + "]";
      const json& wj = (*ws)[i];
      expect_object(r, wpath, wj);
      check_keys(r, wpath, wj, {"name", "shape", "dtype", "initializer", "trainable", "regularizer", "constraint"});
      TracedWeight w;
      w.name = get_string(r, wpath, wj, "name", std::nullopt);
      const json* shape = find(wj, "shape");
      if (!shape || !shape->is_array()) r.invalid(wpath, "\"shape\" must be a list of sizes");
      std::vector<std::int64_t> dims;
      for (const json& d : *shape) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0) r.invalid(wpath + ".shape", "sizes must be integers >= 0");
        dims.push_back(d.get<std::int64_t>());
      }
      w.shape = Shape(dims);
      const std::string dtype = get_string(r, wpath, wj, "dtype", std::string("float32"));
      if (dtype != "float32") r.unsupported(wpath, "add_weight(dtype=\"" + dtype + "\") is not supported (float32 is)");
      w.initializer = get_initializer(r, wpath, wj, "initializer", "glorot_uniform");
      w.trainable = get_bool(r, wpath, wj, "trainable", true);
      for (const char* k : {"regularizer", "constraint"}) {
        if (const json* v = value(wj, k); v && !v->is_null()) options[w.name + "_" + k] = *v;
      }
      weights.push_back(std::move(w));
    }
  }
  std::vector<std::pair<std::string, std::string>> sublayers;  // (name, attribute path), in Keras's order
  if (const json* subs = value(trace, "sublayers")) {
    if (!subs->is_array()) r.invalid(tpath + ".sublayers", "must be a list of [name, attribute path] pairs");
    for (const json& pair : *subs) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
        r.invalid(tpath + ".sublayers", "each entry must be [name, attribute path], got " + show(pair));
      }
      sublayers.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    }
  }
  const json* graph = find(trace, "graph");
  if (!graph) r.invalid(tpath, "missing required key \"graph\" (the traced call)");
  ReadModel m = read_model(r, tpath + ".graph", *graph, {}, in.size() == 1 ? std::optional<Shape>(in[0]) : std::nullopt);
  if (const json* inference = value(trace, "inference_layers")) {
    if (!inference->is_array()) r.invalid(tpath + ".inference_layers", "must be a list of sublayer names");
    for (const json& n : *inference) {
      Layer* l = n.is_string() ? m.graph.find_layer(n.get<std::string>()) : nullptr;
      if (!l) r.invalid(tpath + ".inference_layers", "names no layer of the traced graph: " + show(n));
      l->set_inference_only(true);
    }
  }
  json object = *e.json_entry;
  object.erase("name");
  object.erase("inbound_nodes");
  auto layer = std::make_unique<TracedLayer>(e.name, e.cls, object.dump(), std::move(weights), std::move(m.graph),
                                             std::move(sublayers));
  read_traced_masks(r, tpath, trace, *layer);
  read_traced_weight_values(r, tpath, trace, *layer);
  if (const json* losses = value(trace, "losses")) {  // add_loss in call (Note [Traced losses and metrics])
    const std::int64_t outputs = get_int(r, tpath, trace, "num_outputs", std::nullopt);
    layer->set_added_losses(operation_graph_from_keras_json(losses->dump(), r.where + ": " + tpath + ".losses"),
                            static_cast<int>(outputs));
  }
  if (value(trace, "inference_outputs")) {  // Note [Traced layers in two modes]
    const std::int64_t first = get_int(r, tpath, trace, "inference_outputs", std::nullopt);
    with_path(r, tpath, e.name, [&] { layer->set_inference_outputs(static_cast<int>(first)); });
  }
  read_weight_options(r, tpath + ".weights", options, *layer);
  if (!get_bool(r, e.path + ".config", *e.cfg, "trainable", true)) layer->set_trainable(false);
  return layer;
}

std::unique_ptr<Layer> make_layer(const Reader& r, const Entry& e, const std::vector<Shape>& in) {
  if (const json* trace = value(*e.json_entry, "nnfit_trace")) return read_traced_layer(r, e, *trace, in);
  if (is_model_class(e.cls) && !e.custom) {
    ReadModel m = read_model(r, e.path, *e.json_entry, {"name", "inbound_nodes"},
                             in.size() == 1 ? std::optional<Shape>(in[0]) : std::nullopt);
    auto nested = std::make_unique<NestedModel>(e.name, m.class_name, std::move(m.graph));
    if (!get_bool(r, e.path + ".config", *e.cfg, "trainable", true)) nested->set_trainable(false);
    return nested;
  }
  if (e.operation) return keras_json::read_operation(r, e.path, e.op_class, e.module, *e.cfg, e.name);
  const json* activation = value(*e.cfg, "activation");
  if (activation && activation->is_object() && value(*activation, "nnfit_trace")) {  // Note [Traced activations]
    json cfg = *e.cfg;
    cfg["activation"] = "linear";
    std::unique_ptr<Layer> layer = read_layer(r, e.path, e.cls, cfg, e.name, e.custom, in);
    layer->set_traced_activation(read_traced_activation(r, e.path + ".config.activation", e.cls, *activation),
                                 activation->dump());
    return layer;
  }
  return read_layer(r, e.path, e.cls, *e.cfg, e.name, e.custom, in);
}

std::vector<Shape> output_shapes_at(const Reader& r, const Entry& e, Layer& layer, const std::vector<Shape>& in) {
  return with_path(r, e.path, e.name, [&] { return layer.compute_output_shapes(in); });
}

// Keras 3 records each layer's input shape in its entry's build_config; where a layer
// nnfit cannot read leaves the next shape unknown, that record carries the reading on.
std::optional<Shape> recorded_input_shape(const Reader& r, const json& entry) {
  const json* bc = entry.is_object() ? value(entry, "build_config") : nullptr;
  const json* s = bc && bc->is_object() ? value(*bc, "input_shape") : nullptr;
  if (!s) return std::nullopt;
  try {
    return read_batch_shape(r, "", *s, "input_shape");
  } catch (const Error&) {
    return std::nullopt;
  }
}

// What a model uses that nnfit does not support, said together once the whole model has
// been read: one line per feature, each naming its layer and key.
class UnsupportedList {
 public:
  void add(const Unsupported& e) {
    lines_.emplace_back(e.what());
    if (hint_.empty()) hint_ = e.hint();
  }
  void throw_if_any(const Reader& r) const {
    if (lines_.empty()) return;
    if (lines_.size() == 1) throw Unsupported(lines_[0], hint_);
    std::string what = r.where + ": the model uses " + std::to_string(lines_.size()) +
                       " features nnfit does not support:";
    for (const std::string& l : lines_) what += "\n  " + l;
    throw Unsupported(what, "change or remove each of them; docs/config.md lists what nnfit supports");
  }

 private:
  std::vector<std::string> lines_;
  std::string hint_;
};

ReadModel read_sequential(const Reader& r, const std::string& path, const json& root, const json& config,
                          const std::optional<Shape>& nested_input) {
  check_keys(r, path, config, {"name", "trainable", "dtype", "layers", "build_input_shape"});
  check_float32(r, path, config);
  get_bool(r, path, config, "trainable", true);  // applied by make_layer (nested) or model_from_keras_json
  ReadModel m{"Sequential", get_string(r, path, config, "name", "sequential"), {}};
  // Input shape candidates in the order Keras itself trusts them: an explicit input, then
  // the recorded build shape, then (nested) the shape the outer model calls it with.
  std::optional<Shape> shape;
  if (const json* b = value(config, "build_input_shape")) shape = read_batch_shape(r, path, *b, "build_input_shape");
  if (const json* bc = value(root, "build_config"); !shape && bc && bc->is_object()) {
    if (const json* s = value(*bc, "input_shape")) shape = read_batch_shape(r, path + ".build_config", *s, "input_shape");
  }
  if (!shape) shape = nested_input;
  const json* layers = find(config, "layers");
  if (!layers || !layers->is_array() || layers->empty()) r.invalid(path, "\"layers\" must be a non-empty list");
  std::optional<Shape> input;  // from an InputLayer or a first layer's batch_input_shape
  std::string input_name = "input_layer";
  DType input_dtype = DType::f32;
  std::vector<std::unique_ptr<Layer>> chain;
  Shape start;  // the shape the first layer is called with
  bool first = true;
  UnsupportedList unsupported;
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const Entry e = read_entry(r, path + ".layers[" + std::to_string(i) + "]", (*layers)[i], {});
    auto set_input = [&](const Shape& s, const char* what) {
      if (!chain.empty() || (e.cls == "InputLayer" && i > 0)) r.invalid(e.path, std::string(what) + " is only valid on the first layer");
      if (input && *input != s) {
        r.invalid(e.path, std::string(what) + " " + s.to_string() + " disagrees with the input shape " +
                              input->to_string() + " given before");
      }
      input = s;
      shape = s;
    };
    if (e.cls == "InputLayer" && !e.custom) {
      set_input(read_input_layer(r, e.path, *e.cfg), "InputLayer");
      input_dtype = read_input_dtype(r, e.path, *e.cfg);
      input_name = e.name;
      continue;
    }
    if (const json* b = value(*e.cfg, "batch_input_shape")) {
      set_input(read_batch_shape(r, e.path, *b, "batch_input_shape"), "batch_input_shape");
    }
    if (!shape) {
      r.invalid(e.path, "the model has no input shape",
                "start the model with an InputLayer (keras.Input(shape=...)) or give the first layer an input shape");
    }
    if (first) start = *shape;
    first = false;
    std::unique_ptr<Layer> layer;
    std::vector<Shape> out;
    try {
      layer = make_layer(r, e, {*shape});
      out = output_shapes_at(r, e, *layer, {*shape});
    } catch (const Unsupported& ex) {
      unsupported.add(ex);
      shape = i + 1 < layers->size() ? recorded_input_shape(r, (*layers)[i + 1]) : std::nullopt;
      if (!shape) break;
      continue;
    }
    if (out.size() != 1) r.invalid(e.path, "a Sequential model's layers have one output each");
    shape = out[0];
    chain.push_back(std::move(layer));
  }
  unsupported.throw_if_any(r);
  if (chain.empty()) r.invalid(path + ".layers", "the model has no layers after its InputLayer");
  TensorRef h = m.graph.add_input(input_name, start, input_dtype);
  for (auto& l : chain) {
    const std::string name = l->name();
    Layer* added = with_path(r, path, name, [&] { return &m.graph.add_layer(std::move(l)); });
    h = m.graph.call(*added, {h})[0];
  }
  m.graph.set_outputs({h});
  return m;
}

// Note [Keras 2 node indices]: Keras 3 numbers a layer's nodes within the config, from 0.
// Keras 2 numbers them as the rebuilt layer's _inbound_nodes, and a nested model built on
// its own Input already has node 0 (its internal one) when the outer model calls it: tf.keras
// writes ["head", 1, 0] for the first call of a nested Sequential that starts with an
// InputLayer. So in a Keras 2 config such a layer's calls start at node 1.
std::int64_t keras2_node_offset(const Entry& e) {
  if (e.custom || !is_model_class(e.cls)) return 0;
  if (e.cls != "Sequential") return 1;
  const json* layers = find(*e.cfg, "layers");
  if (!layers || !layers->is_array() || layers->empty() || !(*layers)[0].is_object()) return 0;
  const json& first = (*layers)[0];
  const json* cfg = find(first, "config");
  const bool input_layer = find(first, "class_name") && first["class_name"] == "InputLayer";
  return input_layer || (cfg && cfg->is_object() && value(*cfg, "batch_input_shape")) ? 1 : 0;
}

// `losses`: the model's "nnfit_losses" (add_loss in a subclassed model's call, Note [Traced
// losses and metrics]): {"graph": the operations from the values it reads, "feeds": those
// values as [layer, node, tensor]}.
ReadModel read_functional(const Reader& r, const std::string& path, const json& config, const json* losses = nullptr) {
  check_keys(r, path, config, {"name", "trainable", "layers", "input_layers", "output_layers", "dtype"});
  get_bool(r, path, config, "trainable", true);  // applied by make_layer (nested) or model_from_keras_json
  ReadModel m{"Functional", get_string(r, path, config, "name", "functional"), {}};
  const json* layers = find(config, "layers");
  if (!layers || !layers->is_array() || layers->empty()) r.invalid(path, "\"layers\" must be a non-empty list");

  struct Pending {
    Entry entry;
    std::vector<CallNode> nodes;
    Layer* layer = nullptr;
    std::size_t done = 0;  // calls made
    bool failed = false;   // unsupported: its calls are not made, what reads them waits
    CallArguments arguments;  // of the first call
  };
  UnsupportedList unsupported;
  std::vector<Pending> pending;
  std::map<std::string, std::size_t> by_name;
  bool keras2 = false;
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const std::string epath = path + ".layers[" + std::to_string(i) + "]";
    Pending p;
    p.entry = read_entry(r, epath, (*layers)[i], {"name", "inbound_nodes"});
    if (!by_name.emplace(p.entry.name, i).second) r.invalid(p.entry.path, "two layers are named \"" + p.entry.name + "\"");
    p.nodes = read_nodes(r, p.entry.path, (*layers)[i], &keras2);
    pending.push_back(std::move(p));
  }
  std::map<KerasHistory, TensorRef> tensors;
  // Inputs in the order of input_layers (the model's input order).
  for (const KerasHistory& h : read_endpoints(r, path, config, "input_layers")) {
    auto it = by_name.find(std::get<0>(h));
    if (it == by_name.end()) r.invalid(path + ".input_layers", "no layer is named \"" + std::get<0>(h) + "\"");
    Pending& p = pending[it->second];
    if (p.entry.cls != "InputLayer") r.invalid(p.entry.path, "listed in input_layers but is a " + p.entry.cls);
    tensors[{p.entry.name, 0, 0}] = m.graph.add_input(p.entry.name, read_input_layer(r, p.entry.path, *p.entry.cfg),
                                                      read_input_dtype(r, p.entry.path, *p.entry.cfg));
    p.done = 1;
    p.nodes.clear();
  }
  const auto shapes_of = [&](const std::vector<TensorRef>& refs) {
    const auto all = m.graph.infer_shapes();
    std::vector<Shape> out;
    for (const TensorRef& t : refs) out.push_back(all[static_cast<std::size_t>(t.node)][static_cast<std::size_t>(t.index)]);
    return out;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (Pending& p : pending) {
      while (p.entry.cls != "InputLayer" && !p.failed && p.done < p.nodes.size()) {
        const CallNode& call = p.nodes[p.done];
        bool ready = true;
        for (const KerasHistory& h : call.every_ref()) ready = ready && tensors.count(h);
        if (!ready) break;  // not all inputs exist yet
        std::vector<TensorRef> in;
        try {
          const CallArguments args = call.arguments();
          if (!p.layer) {
            std::vector<TensorRef> positional;
            for (const KerasHistory& h : call.refs) positional.push_back(tensors.at(h));
            std::unique_ptr<Layer> layer = make_layer(r, p.entry, shapes_of(positional));
            with_path(r, p.entry.path, p.entry.name, [&] {
              layer->set_call_arguments(args);
              return 0;
            });
            p.layer = &m.graph.add_layer(std::move(layer));
            p.arguments = args;
          } else if (!same_arguments(args, p.arguments)) {
            r.unsupported(call.path, "the layer is called with other arguments than in its first call",
                          "nnfit fixes a layer's call arguments (use_causal_mask, key, attention_mask) at its first call");
          }
          for (const KerasHistory& h : call.inputs(p.layer->call_arguments())) in.push_back(tensors.at(h));
          if (!call.masks.empty() && call.masks.size() != in.size()) {
            r.unsupported(call.path + ".kwargs", "a mask= argument with " + std::to_string(call.masks.size()) +
                                                     " entries for " + std::to_string(in.size()) + " inputs is not supported");
          }
          output_shapes_at(r, p.entry, *p.layer, shapes_of(in));  // a call that does not fit is named here
        } catch (const Unsupported& e) {
          unsupported.add(e);
          p.failed = true;
          break;
        }
        std::vector<TensorRef> masks;
        for (const auto& h : call.masks) masks.push_back(h ? tensors.at(*h) : TensorRef{-1, 0});
        const std::vector<TensorRef> out = m.graph.call(*p.layer, in, masks);
        const std::int64_t node = static_cast<std::int64_t>(p.done) + (keras2 ? keras2_node_offset(p.entry) : 0);
        for (std::size_t k = 0; k < out.size(); ++k) tensors[{p.entry.name, node, static_cast<std::int64_t>(k)}] = out[k];
        ++p.done;
        progress = true;
      }
    }
  }
  // Layers downstream of an unsupported one are not reached; what was found is said first.
  unsupported.throw_if_any(r);
  for (const Pending& p : pending) {
    if (p.entry.cls == "InputLayer" && p.done == 0) {
      r.invalid(p.entry.path, "an InputLayer that is not in input_layers", "list every model input in \"input_layers\"");
    }
    if (p.entry.cls != "InputLayer" && p.done < p.nodes.size()) {
      std::string missing;
      for (const KerasHistory& h : p.nodes[p.done].every_ref()) {
        if (!tensors.count(h)) {
          missing = "[\"" + std::get<0>(h) + "\", " + std::to_string(std::get<1>(h)) + ", " +
                    std::to_string(std::get<2>(h)) + "]";
        }
      }
      r.invalid(p.entry.path + ".inbound_nodes[" + std::to_string(p.done) + "]",
                "reads tensor " + missing + ", which no layer of the model makes");
    }
  }
  std::vector<TensorRef> outputs;
  for (const KerasHistory& h : read_endpoints(r, path, config, "output_layers")) {
    auto t = tensors.find(h);
    if (t == tensors.end()) {
      r.invalid(path + ".output_layers", "output [\"" + std::get<0>(h) + "\", " + std::to_string(std::get<1>(h)) +
                                             ", " + std::to_string(std::get<2>(h)) + "] is not made by any layer");
    }
    outputs.push_back(t->second);
  }
  m.graph.set_outputs(std::move(outputs));
  m.graph.set_input_keys(endpoint_keys(config, "input_layers"));
  m.graph.set_output_keys(endpoint_keys(config, "output_layers"));
  if (losses) {
    const std::string lpath = path.substr(0, path.rfind('.')) + ".nnfit_losses";
    expect_object(r, lpath, *losses);
    check_keys(r, lpath, *losses, {"graph", "feeds"});
    const json* feeds = find(*losses, "feeds");
    if (!feeds || !feeds->is_array()) r.invalid(lpath, "\"feeds\" must be a list of [layer, node, tensor]");
    std::vector<TensorRef> refs;
    for (const KerasHistory& h : read_endpoints(r, lpath, *losses, "feeds")) {
      auto t = tensors.find(h);
      if (t == tensors.end()) r.invalid(lpath + ".feeds", "[\"" + std::get<0>(h) + "\", ...] is not made by any layer");
      refs.push_back(t->second);
    }
    const json* graph = find(*losses, "graph");
    if (!graph) r.invalid(lpath, "missing required key \"graph\"");
    m.graph.set_added_losses(operation_graph_from_keras_json(graph->dump(), r.where + ": " + lpath + ".graph"),
                             std::move(refs), losses->dump());
  }
  return m;
}

// Keras's preprocessing layers of strings and categories run in Python before the engine's
// graph (Note [Preprocessing prefix] in python/nnfit/keras/_prefix.py): the engine alone
// (the CLI) cannot run a model that starts with one, and says so naming it.
void refuse_python_preprocessing(const Reader& r, const std::string& path, const json& config) {
  static const std::set<std::string> kPython = {"TextVectorization", "StringLookup",  "IntegerLookup", "CategoryEncoding",
                                                "Hashing",           "Discretization", "HashedCrossing"};
  const json* layers = find(config, "layers");
  if (!layers || !layers->is_array()) return;
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const json& e = (*layers)[i];
    const json* cls = e.is_object() ? find(e, "class_name") : nullptr;
    if (!cls || !cls->is_string() || !kPython.count(cls->get<std::string>())) continue;
    const json* c = find(e, "config");
    const json* name = c && c->is_object() ? find(*c, "name") : nullptr;
    const std::string layer = name && name->is_string() ? " '" + name->get<std::string>() + "'" : "";
    r.unsupported(path + ".config.layers[" + std::to_string(i) + "]",
                  cls->get<std::string>() + layer + " is a preprocessing layer of strings or categories, which nnfit "
                  "runs in Python before the engine's graph; the engine (and so the CLI) cannot run it",
                  "load the file with `from nnfit import keras; keras.models.load_model(...)`, or train the CLI's "
                  "model on the layer's outputs (token ids or encodings) with the layers after it");
  }
}

ReadModel read_model(const Reader& r, const std::string& path, const json& root, Keys extra,
                     const std::optional<Shape>& nested_input) {
  expect_object(r, path, root);
  check_keys(r, path, root,
             {"module", "class_name", "config", "registered_name", "build_config", "compile_config", "keras_version",
              "backend", "nnfit_losses"},
             extra);
  const std::string cls = get_string(r, path, root, "class_name", std::nullopt);
  if (!is_model_class(cls)) {
    r.invalid(path + ".class_name", "expected \"Sequential\" or \"Functional\", got \"" + cls + "\"");
  }
  const json* config = find(root, "config");
  if (!config) r.invalid(path, "missing required key \"config\"");
  expect_object(r, path + ".config", *config);
  refuse_python_preprocessing(r, path, *config);
  if (cls == "Sequential") return read_sequential(r, path + ".config", root, *config, nested_input);
  return read_functional(r, path + ".config", *config, value(root, "nnfit_losses"));
}

}  // namespace

namespace {

void collect_policed_layers(const LayerGraph& g, std::vector<Layer*>& out) {
  for (const auto& l : g.layers()) {
    out.push_back(l.get());
    if (const auto* nested = dynamic_cast<const NestedModel*>(l.get())) collect_policed_layers(nested->graph(), out);
  }
}

// Keras writes every layer's policy. A model whose layers all say "float32" was built
// without a policy in mind, so a model-wide policy (--dtype-policy, compile.dtype_policy)
// applies to all of them; a model with any other policy was built under a policy, and its
// float32 layers (Keras's advice for the output layer) keep float32.
void release_uniform_float32(const LayerGraph& g) {
  std::vector<Layer*> layers;
  collect_policed_layers(g, layers);
  for (const Layer* l : layers) {
    if (l->dtype_policy() && l->dtype_policy()->name != "float32") return;
  }
  for (Layer* l : layers) l->set_dtype_policy(std::nullopt);
}

}  // namespace

std::unique_ptr<Model> model_from_keras_json(const std::string& json_text, const std::string& where,
                                             const std::string& keras_version) {
  Reader r{where};
  const json root = parse(r, json_text);
  std::string version = keras_version;
  if (root.is_object() && root.contains("keras_version") && root["keras_version"].is_string()) {
    version = root["keras_version"].get<std::string>();
  }
  r.keras2 = version.rfind("1.", 0) == 0 || version.rfind("2.", 0) == 0;
  ReadModel m = read_model(r, "model", root, {}, std::nullopt);
  release_uniform_float32(m.graph);
  // The model's own policy (Keras's global policy when it was built): under mixed_float16
  // Keras's compile wraps the optimizer in a LossScaleOptimizer, and so does nnfit's.
  const std::optional<DTypePolicy> policy = read_dtype_policy(r, "model.config", root["config"]);
  std::unique_ptr<Model> out;
  if (m.class_name == "Functional") {
    out = std::make_unique<Model>(m.name, std::move(m.graph));
  } else {
    auto seq = std::make_unique<Sequential>(m.name);
    seq->set_input(m.graph.inputs()[0]);
    for (auto& l : m.graph.release_layers()) seq->add(std::move(l));
    out = std::move(seq);
  }
  if (policy && policy->name != "float32") out->set_dtype_policy(*policy);
  // Keras's model.trainable = False freezes every layer (its fit trains nothing).
  if (!get_bool(r, "model", root["config"], "trainable", true)) {
    for (const auto& l : out->layers()) l->set_trainable(false);
  }
  return out;
}

std::vector<bool> output_masks_from_keras_json(const std::string& json_text, const std::string& where) {
  Reader r{where};
  ReadModel m = read_model(r, "model", parse(r, json_text), {}, std::nullopt);
  WeightFactory weights(0);  // host memory: the graph is emitted, never run
  m.graph.build(weights);
  Graph g;
  GraphBuilder b(g, false);
  std::vector<int> xs;
  for (const InputSpec& in : m.graph.inputs()) {  // a batch of 2, and 2 for a dimension known per batch
    std::vector<std::int64_t> dims{2};
    for (const std::int64_t d : in.shape.dims()) dims.push_back(d == kUnknownDim ? 2 : d);
    xs.push_back(g.add_input(in.name, {Shape(dims), DType::f32}));
  }
  std::vector<int> masks;
  m.graph.emit_masked(b, xs, std::vector<int>(xs.size(), -1), masks);
  std::vector<bool> out;
  for (const int mask : masks) out.push_back(mask >= 0);
  return out;
}

std::unique_ptr<Sequential> sequential_from_keras_json(const std::string& json_text, const std::string& where) {
  std::unique_ptr<Model> m = model_from_keras_json(json_text, where);
  if (auto* seq = dynamic_cast<Sequential*>(m.get())) {
    m.release();
    return std::unique_ptr<Sequential>(seq);
  }
  throw Unsupported(where + ": model: a " + m->class_name() + " model where a Sequential one was expected",
                    "use model_from_keras_json");
}

}  // namespace nnfit
