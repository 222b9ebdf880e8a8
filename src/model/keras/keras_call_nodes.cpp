// The call nodes of a Functional config (model/keras/keras_call_nodes.h): Keras 3's {"args",
// "kwargs"} nodes (positional tensors, keyword tensors and flags, masks, the numbers after
// an operation's tensors; an operation's whole argument list) and Keras 2's lists.
#include "model/keras/keras_call_nodes.h"

#include <algorithm>

#include "model/keras/codecs/codec.h"

namespace nnfit::keras_json {

bool is_operation_entry(const json& entry) {
  if (!keras_json::is_operation_module(entry)) return false;
  const json* c = find(entry, "class_name");
  if (!c || !c->is_string()) return false;
  const std::string cls = c->get<std::string>();
  return cls != "NotEqual" && cls != "LogicalOr" && cls != "LogicalAnd" && cls != "ConvertToTensor";
}

// A tensor reference [name, node, tensor] (Keras 2 and input_layers/output_layers).
KerasHistory read_history(const Reader& r, const std::string& path, const json& v) {
  if (!v.is_array() || v.size() < 3 || !v[0].is_string() || !v[1].is_number_integer() || !v[2].is_number_integer()) {
    r.invalid(path, "expected a tensor reference [\"layer\", node_index, tensor_index], got " + show(v));
  }
  return {v[0].get<std::string>(), v[1].get<std::int64_t>(), v[2].get<std::int64_t>()};
}

// input_layers / output_layers: one reference, a list of them (Keras 3 writes a single
// reference for a single input), or a dict of them (Keras's dict inputs and outputs), taken
// in the order of its sorted keys as Keras flattens a dict.
std::vector<KerasHistory> read_endpoints(const Reader& r, const std::string& path, const json& config, const char* key) {
  const json* v = value(config, key);
  if (v && v->is_object() && !v->empty()) {
    std::vector<KerasHistory> out;
    for (const std::string& k : endpoint_keys(config, key)) out.push_back(read_history(r, path + "." + key + "." + k, (*v)[k]));
    return out;
  }
  if (!v || !v->is_array() || v->empty()) {
    r.invalid(path, std::string("\"") + key + "\" must be a non-empty list (or a dict of tensor references)");
  }
  if ((*v)[0].is_string()) return {read_history(r, path + "." + key, *v)};
  std::vector<KerasHistory> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(read_history(r, path + "." + key + "[" + std::to_string(i) + "]", (*v)[i]));
  }
  return out;
}

std::vector<std::string> endpoint_keys(const json& config, const char* key) {
  const json* v = value(config, key);
  std::vector<std::string> keys;
  if (!v || !v->is_object()) return keys;
  for (const auto& [k, _] : v->items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());  // Python's sorted(): code point order, as std::string's for UTF-8
  return keys;
}

namespace {

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

KerasHistory keras_tensor_history(const Reader& r, const std::string& path, const json& v) {
  const json* c = find(v, "config");
  const json* h = c && c->is_object() ? find(*c, "keras_history") : nullptr;
  if (!h) r.invalid(path, "a __keras_tensor__ needs config.keras_history");
  return read_history(r, path + ".config.keras_history", *h);
}

// Collects the keras tensors of a Keras 3 call argument (a tensor or a list of them).
void collect_tensors(const Reader& r, const std::string& path, const json& arg, std::vector<KerasHistory>& out) {
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

}  // namespace

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

}  // namespace nnfit::keras_json
