// Keras 3's operations in a Functional config (Note [Keras operations] in
// src/nn/layers/operation.cpp): an entry whose module is keras.src.ops.* ("Add", "Sum",
// "GetItem", ...) and whose call arguments are tensors, numbers, None, constant arrays
// (`__tensor__`), GetItem keys (`__slice__`, `__ellipsis__`, None, integers) and, in a
// traced layer's graph, that layer's weights (`__variable__`, nnfit's own). Read into
// an Operation and written back in the same form, so Keras and nnfit load each other's
// models built with keras.ops.
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/keras/codecs/codec.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/operation.h"

namespace nnfit::keras_json {
namespace {

bool is_tensor_object(const json& v, const char* cls) {
  return v.is_object() && v.contains("class_name") && v["class_name"].is_string() && v["class_name"] == cls;
}

// The largest array an argument may hold inline: a constant is a model's config, not data.
constexpr std::size_t kMaxConstantValues = std::size_t{1} << 20;

std::optional<std::int64_t> slice_bound(const Reader& r, const std::string& path, const json& cfg, const char* key) {
  const json* v = find(cfg, key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_number_integer()) r.invalid(path, std::string("slice \"") + key + "\" must be an integer or null, got " + show(*v));
  return v->get<std::int64_t>();
}

IndexItem read_index_item(const Reader& r, const std::string& path, const json& v) {
  IndexItem it;
  if (v.is_null()) {
    it.kind = IndexItem::Kind::newaxis;
  } else if (v.is_number_integer()) {
    it.kind = IndexItem::Kind::integer;
    it.value = v.get<std::int64_t>();
  } else if (is_tensor_object(v, "__ellipsis__")) {
    it.kind = IndexItem::Kind::ellipsis;
  } else if (is_tensor_object(v, "__slice__")) {
    const json* cfg = find(v, "config");
    if (!cfg || !cfg->is_object()) r.invalid(path, "a __slice__ needs a config object");
    check_keys(r, path + ".config", *cfg, {"start", "stop", "step"});
    it.kind = IndexItem::Kind::slice;
    it.start = slice_bound(r, path, *cfg, "start");
    it.stop = slice_bound(r, path, *cfg, "stop");
    it.step = slice_bound(r, path, *cfg, "step");
  } else {
    r.unsupported(path, "an index " + show(v) + " is not supported (integers, slices, None and Ellipsis are)");
  }
  return it;
}

void flatten_values(const Reader& r, const std::string& path, const json& v, std::size_t depth, OperationArg& out) {
  if (v.is_number()) {
    if (depth != out.shape.size()) r.invalid(path, "a constant's nesting is ragged");
    out.values.push_back(v.get<double>());
    if (out.values.size() > kMaxConstantValues) {
      r.unsupported(path, "a constant of more than " + std::to_string(kMaxConstantValues) + " values is not supported");
    }
    return;
  }
  if (!v.is_array() || v.empty()) r.invalid(path, "a constant's value must be nested lists of numbers, got " + show(v));
  if (depth == out.shape.size()) {
    if (!out.values.empty()) r.invalid(path, "a constant's nesting is ragged");
    out.shape.push_back(static_cast<std::int64_t>(v.size()));
  } else if (depth > out.shape.size() || out.shape[depth] != static_cast<std::int64_t>(v.size())) {
    r.invalid(path, "a constant's rows differ in length");
  }
  for (std::size_t i = 0; i < v.size(); ++i) flatten_values(r, path, v[i], depth + 1, out);
}

}  // namespace

bool is_operation_module(const json& entry) {
  const json* m = entry.is_object() ? find(entry, "module") : nullptr;
  if (!m || !m->is_string()) return false;
  const std::string& module = m->get_ref<const std::string&>();
  // keras.src.random.random: keras.random's draws in a traced call, nnfit's own nodes (Note
  // [Random draws in traced calls] in src/nn/layers/random_operations.cpp).
  return module.rfind("keras.src.ops.", 0) == 0 || module == "keras.src.random.random";
}

std::vector<OperationArg> read_operation_args(const Reader& r, const std::string& path, const json& args,
                                              std::vector<json>& tensors) {
  std::vector<OperationArg> out;
  const json list = args.is_array() ? args : json::array({args});
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string apath = path + ".args[" + std::to_string(k) + "]";
    const json& v = list[k];
    OperationArg a;
    if (is_tensor_object(v, "__keras_tensor__")) {
      a.kind = OperationArg::Kind::tensor;
      a.tensors = {static_cast<int>(tensors.size())};
      // Its recorded shape (-1 where unknown), which Unstack's outputs count without "num".
      const json* cfg = find(v, "config");
      const json* shape = cfg && cfg->is_object() ? find(*cfg, "shape") : nullptr;
      if (shape && shape->is_array()) {
        for (const json& d : *shape) a.shape.push_back(d.is_number_integer() ? d.get<std::int64_t>() : -1);
      }
      tensors.push_back(list[k]);
    } else if (v.is_boolean()) {
      a.kind = OperationArg::Kind::number;
      a.number = v.get<bool>() ? 1.0 : 0.0;
      a.integer = true;
    } else if (v.is_number()) {
      a.kind = OperationArg::Kind::number;
      a.number = v.get<double>();
      a.integer = v.is_number_integer();
    } else if (v.is_null()) {
      a.kind = OperationArg::Kind::none;
    } else if (is_tensor_object(v, "__tensor__") || is_tensor_object(v, "__numpy__")) {  // Keras: a tensor, a NumPy array
      const json* cfg = find(v, "config");
      if (!cfg || !cfg->is_object() || !find(*cfg, "value")) r.invalid(apath, "a constant array needs config.value");
      check_keys(r, apath + ".config", *cfg, {"value", "dtype"});
      a.kind = OperationArg::Kind::constant;
      a.dtype = get_string(r, apath + ".config", *cfg, "dtype", std::string("float32"));
      flatten_values(r, apath + ".config.value", (*cfg)["value"], 0, a);
    } else if (is_tensor_object(v, "__variable__")) {
      // A weight of the traced layer whose graph this is (Note [Traced layers]).
      const json* cfg = find(v, "config");
      if (!cfg || !cfg->is_object()) r.invalid(apath, "a __variable__ needs a config object");
      check_keys(r, apath + ".config", *cfg, {"index", "shape", "name"});
      const json* index = find(*cfg, "index");
      const json* shape = find(*cfg, "shape");
      if (!index || !index->is_number_integer() || index->get<std::int64_t>() < 0) {
        r.invalid(apath, "a __variable__'s \"index\" must be a weight's index (an integer >= 0)");
      }
      if (!shape || !shape->is_array()) r.invalid(apath, "a __variable__ needs its \"shape\" (a list of sizes)");
      a.kind = OperationArg::Kind::variable;
      a.variable = index->get<std::int64_t>();
      for (const json& d : *shape) {
        if (!d.is_number_integer() || d.get<std::int64_t>() < 0) r.invalid(apath, "a __variable__'s shape holds sizes >= 0");
        a.shape.push_back(d.get<std::int64_t>());
      }
    } else if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const json& t) { return is_tensor_object(t, "__keras_tensor__"); })) {
      a.kind = OperationArg::Kind::tensors;
      for (std::size_t i = 0; i < v.size(); ++i) {
        a.tensors.push_back(static_cast<int>(tensors.size()));
        tensors.push_back(list[k][i]);
      }
    } else if (k > 0 && (v.is_array() || is_tensor_object(v, "__slice__") || is_tensor_object(v, "__ellipsis__"))) {
      a.kind = OperationArg::Kind::index;
      const json key = v.is_array() ? v : json::array({v});
      for (std::size_t i = 0; i < key.size(); ++i) a.index.push_back(read_index_item(r, apath + "[" + std::to_string(i) + "]", key[i]));
    } else {
      r.unsupported(apath, "an operation argument " + show(v) + " is not supported");
    }
    out.push_back(std::move(a));
  }
  return out;
}

LayerPtr read_operation(const Reader& r, const std::string& path, const std::string& cls, const std::string& module,
                        const json& cfg, const std::string& name) {
  if (!has_operation(cls)) {
    r.unsupported(path, "Keras's operation " + module + "." + cls + " is not supported by nnfit",
                  "docs/python.md lists the keras.ops nnfit implements");
  }
  Attrs attrs;
  for (const auto& [key, v] : cfg.items()) {
    const std::string kpath = path + ".config." + key;
    if (key == "name" || v.is_null()) continue;
    if (v.is_boolean()) {
      attrs.set(key, std::int64_t{v.get<bool>() ? 1 : 0});
    } else if (v.is_number_integer()) {
      attrs.set(key, v.get<std::int64_t>());
    } else if (v.is_number()) {
      attrs.set(key, v.get<double>());
    } else if (v.is_string()) {
      attrs.set(key, v.get<std::string>());
    } else if (v.is_array()) {
      // A list of ints, or of int lists (Pad's pad_width) flattened row by row; a list of
      // numbers not all ints (GaussianBlur's sigma) as one float per entry, "key.0", "key.1", ...
      if (std::any_of(v.begin(), v.end(), [](const json& x) { return x.is_number_float(); }) &&
          std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); })) {
        for (std::size_t i = 0; i < v.size(); ++i) attrs.set(key + "." + std::to_string(i), v[i].get<double>());
        continue;
      }
      std::vector<std::int64_t> ints;
      for (const json& item : v) {
        const json row = item.is_array() ? item : json::array({item});
        for (const json& x : row) {
          if (!x.is_number_integer()) r.unsupported(kpath, "a list of " + show(x) + " is not supported (integers)");
          ints.push_back(x.get<std::int64_t>());
        }
      }
      attrs.set(key, ints);
    } else {
      r.unsupported(kpath, "the value " + show(v) + " is not supported");
    }
  }
  return std::make_unique<Operation>(name, module, cls, std::move(attrs), cfg.dump());
}

ojson write_operation_object(const Operation& op) {
  ojson config = ojson::parse(op.config_json());
  config["name"] = op.name();
  return {{"module", op.module()}, {"class_name", op.class_name()}, {"config", config}, {"registered_name", op.class_name()}};
}

ojson write_operation_call(const Operation& op, const std::vector<ojson>& tensors) {
  ojson args = ojson::array();
  for (const OperationArg& a : op.call_arguments().operation_args) {
    const auto tensor = [&](int t) { return tensors.at(static_cast<std::size_t>(t)); };
    switch (a.kind) {
      case OperationArg::Kind::tensor: args.push_back(tensor(a.tensors.at(0))); break;
      case OperationArg::Kind::tensors: {
        ojson list = ojson::array();
        for (int t : a.tensors) list.push_back(tensor(t));
        args.push_back(list);
        break;
      }
      case OperationArg::Kind::number:
        args.push_back(a.integer ? ojson(static_cast<std::int64_t>(a.number)) : ojson(a.number));
        break;
      case OperationArg::Kind::none: args.push_back(nullptr); break;
      case OperationArg::Kind::constant: {
        // Nested lists of the flat values, row-major.
        std::function<ojson(std::size_t, std::size_t&)> nest = [&](std::size_t depth, std::size_t& at) -> ojson {
          if (depth == a.shape.size()) return a.values.at(at++);
          ojson row = ojson::array();
          for (std::int64_t i = 0; i < a.shape[depth]; ++i) row.push_back(nest(depth + 1, at));
          return row;
        };
        std::size_t at = 0;
        args.push_back({{"class_name", "__tensor__"}, {"config", {{"value", nest(0, at)}, {"dtype", a.dtype}}}});
        break;
      }
      case OperationArg::Kind::variable:
        args.push_back({{"class_name", "__variable__"}, {"config", {{"index", a.variable}, {"shape", a.shape}}}});
        break;
      case OperationArg::Kind::index: {
        ojson key = ojson::array();
        for (const IndexItem& it : a.index) {
          switch (it.kind) {
            case IndexItem::Kind::integer: key.push_back(it.value); break;
            case IndexItem::Kind::newaxis: key.push_back(nullptr); break;
            case IndexItem::Kind::ellipsis: key.push_back({{"class_name", "__ellipsis__"}, {"config", ojson::object()}}); break;
            case IndexItem::Kind::slice: {
              const auto bound = [](const std::optional<std::int64_t>& b) { return b ? ojson(*b) : ojson(nullptr); };
              key.push_back({{"class_name", "__slice__"},
                             {"config", {{"start", bound(it.start)}, {"stop", bound(it.stop)}, {"step", bound(it.step)}}}});
              break;
            }
          }
        }
        args.push_back(key);
        break;
      }
    }
  }
  return {{"args", args}, {"kwargs", ojson::parse(op.kwargs_json())}};
}

}  // namespace nnfit::keras_json
