// LayerCall's helpers (layer_converters.h) and the dispatch table over every family.
#include <algorithm>

#include "model/onnx/layer_converters.h"
#include "nnfit/core/error.h"

namespace nnfit::onnx_export {

namespace {
std::string last_part(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

Tensor LayerCall::weight(const std::string& what) const {
  // all_weights: the variables and the constants a layer keeps in their place (an unscaled
  // BatchNormalization's gamma, a Normalization's mean given in its config).
  for (const Weight* w : const_cast<Layer&>(layer).all_weights()) {
    if (last_part(w->name) == what) return host(w->value);
  }
  return {};
}

Tensor LayerCall::require_weight(const std::string& what) const {
  Tensor t = weight(what);
  if (!t.defined()) refuse("it has no weight named '" + what + "' (is it built?)");
  return t;
}

void LayerCall::refuse(const std::string& why) const {
  throw Unsupported("cannot export layer '" + layer.name() + "' (" + layer.class_name() + ") to ONNX: " + why,
                    "export a model without it, or apply it outside the exported model");
}

namespace {
const ojson& key(const LayerCall& c, const char* k) {
  const auto it = c.config.find(k);
  if (it == c.config.end()) c.refuse(std::string("its config has no '") + k + "'");
  return *it;
}
}  // namespace

std::int64_t LayerCall::integer(const char* k) const {
  const ojson& v = key(*this, k);
  if (!v.is_number_integer()) refuse(std::string("config '") + k + "' is " + v.dump() + ", not an integer");
  return v.get<std::int64_t>();
}

double LayerCall::number(const char* k) const {
  const ojson& v = key(*this, k);
  if (!v.is_number()) refuse(std::string("config '") + k + "' is " + v.dump() + ", not a number");
  return v.get<double>();
}

bool LayerCall::flag(const char* k) const {
  const ojson& v = key(*this, k);
  if (!v.is_boolean()) refuse(std::string("config '") + k + "' is " + v.dump() + ", not true or false");
  return v.get<bool>();
}

std::string LayerCall::text(const char* k) const {
  const ojson& v = key(*this, k);
  if (!v.is_string()) refuse(std::string("config '") + k + "' is " + v.dump() + ", not a string");
  return v.get<std::string>();
}

std::vector<std::int64_t> LayerCall::integers(const char* k) const {
  const ojson& v = key(*this, k);
  if (v.is_number_integer()) return {v.get<std::int64_t>()};
  std::vector<std::int64_t> out;
  if (v.is_array()) {
    for (const ojson& e : v) {
      if (!e.is_number_integer()) refuse(std::string("config '") + k + "' is " + v.dump() + ", not a list of integers");
      out.push_back(e.get<std::int64_t>());
    }
    return out;
  }
  refuse(std::string("config '") + k + "' is " + v.dump() + ", not a list of integers");
}

std::string LayerCall::activation(const std::string& x, const char* k) const {
  const std::string name = text(k);
  const std::string y = emit.activation(x, name, hint());
  if (y.empty()) refuse("its activation '" + name + "' has no ONNX form in nnfit");
  return y;
}

Value LayerCall::out(const std::string& name, int rank, Layout layout, std::string mask) {
  return {name, rank, ElemType::float32, layout, std::move(mask)};
}

const std::vector<ConverterEntry>& all_converters() {
  static const std::vector<ConverterEntry> all = [] {
    std::vector<ConverterEntry> out;
    for (auto family : {core_converters, conv_converters, pooling_converters, normalization_converters,
                        merge_converters, recurrent_converters}) {
      for (const ConverterEntry& e : family()) out.push_back(e);
    }
    return out;
  }();
  return all;
}

}  // namespace nnfit::onnx_export
