// Keras JSON → Model: Sequential and Functional configs of both generations, and models
// nested as layers. A Functional config lists layers with their inbound nodes (Keras 2:
// [[["layer", node, tensor, {}]]]; Keras 3: {"args": [keras tensors], "kwargs": {}});
// calls are made once every tensor they read exists, as Keras's from_config does, so
// the order of the layer list does not matter and a shared layer's calls keep their
// node order. Layers themselves are read by keras_config.cpp.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "model/keras_codecs/codec.h"
#include "model/keras_layers.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/nested_model.h"

namespace nnfit {
namespace {

using namespace keras_json;

// Keras's keras_history: (layer name, node index, tensor index).
using History = std::tuple<std::string, std::int64_t, std::int64_t>;

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

bool is_operation_entry(const json& entry) {
  if (!keras_json::is_operation_module(entry)) return false;
  const json* c = find(entry, "class_name");
  if (!c || !c->is_string()) return false;
  const std::string cls = c->get<std::string>();
  return cls != "NotEqual" && cls != "LogicalOr" && cls != "LogicalAnd" && cls != "ConvertToTensor";
}

Entry read_entry(const Reader& r, const std::string& epath, const json& entry, Keys extra) {
  expect_object(r, epath, entry);
  Entry e;
  e.cls = canonical_layer_class(get_string(r, epath, entry, "class_name", std::nullopt));
  if (is_model_class(e.cls)) {
    check_keys(r, epath, entry, {"module", "class_name", "config", "registered_name", "build_config", "compile_config"},
               extra);
  } else {
    check_keys(r, epath, entry, {"module", "class_name", "config", "registered_name", "build_config"}, extra);
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

std::unique_ptr<Layer> make_layer(const Reader& r, const Entry& e, const std::vector<Shape>& in) {
  if (is_model_class(e.cls) && !e.custom) {
    ReadModel m = read_model(r, e.path, *e.json_entry, {"name", "inbound_nodes"},
                             in.size() == 1 ? std::optional<Shape>(in[0]) : std::nullopt);
    auto nested = std::make_unique<NestedModel>(e.name, m.class_name, std::move(m.graph));
    if (!get_bool(r, e.path + ".config", *e.cfg, "trainable", true)) nested->set_trainable(false);
    return nested;
  }
  if (e.operation) return keras_json::read_operation(r, e.path, e.op_class, e.module, *e.cfg, e.name);
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

// A tensor reference [name, node, tensor] (Keras 2 and input_layers/output_layers).
History read_history(const Reader& r, const std::string& path, const json& v) {
  if (!v.is_array() || v.size() < 3 || !v[0].is_string() || !v[1].is_number_integer() || !v[2].is_number_integer()) {
    r.invalid(path, "expected a tensor reference [\"layer\", node_index, tensor_index], got " + show(v));
  }
  return {v[0].get<std::string>(), v[1].get<std::int64_t>(), v[2].get<std::int64_t>()};
}

// input_layers / output_layers: one reference, or a list of them (Keras 3 writes a single
// reference for a single input).
std::vector<History> read_endpoints(const Reader& r, const std::string& path, const json& config, const char* key) {
  const json* v = value(config, key);
  if (!v || !v->is_array() || v->empty()) r.invalid(path, std::string("\"") + key + "\" must be a non-empty list");
  if ((*v)[0].is_string()) return {read_history(r, path + "." + key, *v)};
  std::vector<History> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(read_history(r, path + "." + key + "[" + std::to_string(i) + "]", (*v)[i]));
  }
  return out;
}

void require_no_kwargs(const Reader& r, const std::string& path, const json& kwargs) {
  if (kwargs.is_null()) return;
  expect_object(r, path, kwargs);
  for (const auto& [k, v] : kwargs.items()) {
    // A recorded training flag is overridden by the model's mode when Keras runs the graph
    // (Functional passes fit's training=True to every layer that takes it); so is nnfit's.
    if (k == "training" && v.is_boolean()) continue;
    if (!v.is_null()) {
      r.unsupported(path, "call argument \"" + k + "\" = " + show(v) + " is not supported",
                    "nnfit calls layers on tensors only; masks and training flags come from the model");
    }
  }
}

bool is_keras_tensor(const json& v) {
  return v.is_object() && find(v, "class_name") && v["class_name"] == "__keras_tensor__";
}

History keras_tensor_history(const Reader& r, const std::string& path, const json& v) {
  const json* c = find(v, "config");
  const json* h = c && c->is_object() ? find(*c, "keras_history") : nullptr;
  if (!h) r.invalid(path, "a __keras_tensor__ needs config.keras_history");
  return read_history(r, path + ".config.keras_history", *h);
}

// Collects the keras tensors of a Keras 3 call argument (a tensor or a list of them).
void collect_tensors(const Reader& r, const std::string& path, const json& arg, std::vector<History>& out) {
  if (arg.is_array()) {
    for (std::size_t i = 0; i < arg.size(); ++i) collect_tensors(r, path + "[" + std::to_string(i) + "]", arg[i], out);
    return;
  }
  if (is_keras_tensor(arg)) {
    out.push_back(keras_tensor_history(r, path, arg));
    return;
  }
  r.unsupported(path, "a call argument that is not a tensor (" + show(arg) + ") is not supported");
}

// One call of a layer: the tensors passed positionally, and Keras 3's keyword arguments
// (tensors by name, booleans as flags).
struct CallNode {
  std::vector<History> refs;
  std::vector<std::pair<std::string, History>> keyword_refs;
  std::vector<std::pair<std::string, bool>> flags;
  std::vector<double> constants;
  std::vector<std::optional<History>> masks;  // Keras's mask= argument: one tensor, or a list with nulls
  std::vector<OperationArg> operation_args;    // an operation's call (Note [Keras operations])
  std::string operation_kwargs;
  std::map<std::string, double> operation_kwarg_numbers;
  std::string path;

  CallArguments arguments() const {
    CallArguments a;
    a.positional = refs.size();
    for (const auto& [k, h] : keyword_refs) a.keyword_inputs.push_back(k);
    a.flags = flags;
    a.constants = constants;
    a.operation_args = operation_args;
    a.operation_kwargs = operation_kwargs;
    a.operation_kwarg_numbers = operation_kwarg_numbers;
    return a;
  }
  // Every tensor the call reads, positional ones first.
  std::vector<History> every_ref() const {
    std::vector<History> all = refs;
    for (const auto& kh : keyword_refs) all.push_back(kh.second);
    for (const auto& m : masks) {
      if (m) all.push_back(*m);
    }
    return all;
  }
  // Every tensor the call reads: positional ones, then keyword ones in `order`.
  std::vector<History> inputs(const CallArguments& order) const {
    std::vector<History> all = refs;
    for (const std::string& k : order.keyword_inputs) {
      for (const auto& [name, h] : keyword_refs) {
        if (name == k) all.push_back(h);
      }
    }
    return all;
  }
};

void read_kwargs(const Reader& r, const std::string& path, const json& kwargs, CallNode& node) {
  if (kwargs.is_null()) return;
  expect_object(r, path, kwargs);
  for (const auto& [k, v] : kwargs.items()) {
    if (v.is_null()) continue;
    // A recorded training flag is overridden by the model's mode when Keras runs the graph
    // (Functional passes fit's training=True to every layer that takes it); so is nnfit's.
    if (k == "training" && v.is_boolean()) continue;
    if (v.is_boolean()) {
      node.flags.push_back({k, v.get<bool>()});
    } else if (k == "mask" && is_keras_tensor(v)) {
      node.masks = {keras_tensor_history(r, path + ".mask", v)};
    } else if (k != "mask" && v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), is_keras_tensor)) {
      // A list of tensors (initial_state=[h, c]): one keyword input per entry, "name/i".
      for (std::size_t i = 0; i < v.size(); ++i) {
        node.keyword_refs.push_back(
            {k + "/" + std::to_string(i), keras_tensor_history(r, path + "." + k + "[" + std::to_string(i) + "]", v[i])});
      }
    } else if (k == "mask" && v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i].is_null()) {
          node.masks.push_back(std::nullopt);
        } else if (is_keras_tensor(v[i])) {
          node.masks.push_back(keras_tensor_history(r, path + ".mask[" + std::to_string(i) + "]", v[i]));
        } else {
          r.unsupported(path, "call argument \"mask\" = " + show(v) + " is not supported (tensors or nulls)");
        }
      }
    } else if (is_keras_tensor(v)) {
      node.keyword_refs.push_back({k, keras_tensor_history(r, path + "." + k, v)});
    } else {
      r.unsupported(path, "call argument \"" + k + "\" = " + show(v) + " is not supported",
                    "nnfit calls layers on tensors, with masks from the model and flags such as use_causal_mask");
    }
  }
}

// Two calls' arguments agree when they pass the same keyword tensors and flags (in any order).
bool same_arguments(CallArguments a, CallArguments b) {
  std::sort(a.keyword_inputs.begin(), a.keyword_inputs.end());
  std::sort(b.keyword_inputs.begin(), b.keyword_inputs.end());
  std::sort(a.flags.begin(), a.flags.end());
  std::sort(b.flags.begin(), b.flags.end());
  return a == b;
}

// The inbound nodes of a Functional layer entry: per call, the tensors it reads. Sets
// *keras2 when a node has Keras 2's list form.
std::vector<CallNode> read_nodes(const Reader& r, const std::string& path, const json& entry, bool* keras2) {
  std::vector<CallNode> nodes;
  const json* in = value(entry, "inbound_nodes");
  if (!in) return nodes;
  if (!in->is_array()) r.invalid(path, "\"inbound_nodes\" must be a list, got " + show(*in));
  for (std::size_t n = 0; n < in->size(); ++n) {
    const json& node = (*in)[n];
    CallNode call;
    call.path = path + ".inbound_nodes[" + std::to_string(n) + "]";
    if (node.is_object() && is_operation_entry(entry)) {
      check_keys(r, call.path, node, {"args", "kwargs"});
      std::vector<json> tensors;
      call.operation_args = keras_json::read_operation_args(r, call.path, node.contains("args") ? node["args"] : json::array(), tensors);
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        call.refs.push_back(keras_tensor_history(r, call.path + ".args", tensors[t]));
      }
      if (const json* kw = value(node, "kwargs")) {
        if (!kw->is_object()) r.invalid(call.path + ".kwargs", "must be an object, got " + show(*kw));
        for (const auto& [k, v] : kw->items()) {
          if (v.is_number()) {
            call.operation_kwarg_numbers[k] = v.get<double>();
          } else if (!v.is_null()) {
            r.unsupported(call.path + ".kwargs." + k, "the keyword argument " + show(v) + " is not supported");
          }
        }
        call.operation_kwargs = kw->dump();
      }
    } else if (node.is_object()) {  // Keras 3
      check_keys(r, call.path, node, {"args", "kwargs"});
      if (const json* args = value(node, "args")) {
        // Numbers after the tensors are an operation's constants (not_equal(x, 0)).
        const json one = args->is_array() ? json() : *args;
        const json& list = args->is_array() ? *args : json::array({one});
        for (std::size_t a = 0; a < list.size(); ++a) {
          if (list[a].is_number() && !call.refs.empty()) {
            call.constants.push_back(list[a].get<double>());
          } else {
            collect_tensors(r, call.path + ".args[" + std::to_string(a) + "]", list[a], call.refs);
          }
        }
      }
      if (const json* kw = value(node, "kwargs")) read_kwargs(r, call.path + ".kwargs", *kw, call);
    } else if (node.is_array()) {  // Keras 2
      *keras2 = true;
      for (std::size_t k = 0; k < node.size(); ++k) {
        const std::string rpath = call.path + "[" + std::to_string(k) + "]";
        call.refs.push_back(read_history(r, rpath, node[k]));
        if (node[k].size() > 3) require_no_kwargs(r, rpath + "[3]", node[k][3]);
      }
    } else {
      r.invalid(call.path, "expected a node (a list, or an object with \"args\"), got " + show(node));
    }
    if (call.refs.empty()) r.invalid(call.path, "the call reads no tensor");
    nodes.push_back(std::move(call));
  }
  return nodes;
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

ReadModel read_functional(const Reader& r, const std::string& path, const json& config) {
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
  std::map<History, TensorRef> tensors;
  // Inputs in the order of input_layers (the model's input order).
  for (const History& h : read_endpoints(r, path, config, "input_layers")) {
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
        for (const History& h : call.every_ref()) ready = ready && tensors.count(h);
        if (!ready) break;  // not all inputs exist yet
        std::vector<TensorRef> in;
        try {
          const CallArguments args = call.arguments();
          if (!p.layer) {
            std::vector<TensorRef> positional;
            for (const History& h : call.refs) positional.push_back(tensors.at(h));
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
          for (const History& h : call.inputs(p.layer->call_arguments())) in.push_back(tensors.at(h));
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
      for (const History& h : p.nodes[p.done].every_ref()) {
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
  for (const History& h : read_endpoints(r, path, config, "output_layers")) {
    auto t = tensors.find(h);
    if (t == tensors.end()) {
      r.invalid(path + ".output_layers", "output [\"" + std::get<0>(h) + "\", " + std::to_string(std::get<1>(h)) +
                                             ", " + std::to_string(std::get<2>(h)) + "] is not made by any layer");
    }
    outputs.push_back(t->second);
  }
  m.graph.set_outputs(std::move(outputs));
  return m;
}

ReadModel read_model(const Reader& r, const std::string& path, const json& root, Keys extra,
                     const std::optional<Shape>& nested_input) {
  expect_object(r, path, root);
  check_keys(r, path, root,
             {"module", "class_name", "config", "registered_name", "build_config", "compile_config", "keras_version",
              "backend"},
             extra);
  const std::string cls = get_string(r, path, root, "class_name", std::nullopt);
  if (!is_model_class(cls)) {
    r.invalid(path + ".class_name", "expected \"Sequential\" or \"Functional\", got \"" + cls + "\"");
  }
  const json* config = find(root, "config");
  if (!config) r.invalid(path, "missing required key \"config\"");
  expect_object(r, path + ".config", *config);
  if (cls == "Sequential") return read_sequential(r, path + ".config", root, *config, nested_input);
  return read_functional(r, path + ".config", *config);
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
