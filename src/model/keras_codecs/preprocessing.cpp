// Keras codecs of the preprocessing layers that run inside a model: Rescaling and
// Normalization.
#include "model/keras_codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

// Rescaling's scale and offset: numbers (Keras also takes one per channel: Unsupported).
double number_of(const Reader& r, const std::string& p, const json& c, const char* key, double fallback) {
  const json* v = value(c, key);
  if (!v) return fallback;
  if (!v->is_number()) {
    r.unsupported(p, std::string("\"") + key + "\" = " + show(*v) + " is not supported (only a single number)");
  }
  return v->get<double>();
}

LayerPtr read_rescaling(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"scale", "offset"});
  if (!value(c, "scale")) r.invalid(p, "missing required key \"scale\"");
  return std::make_unique<Rescaling>(name, number_of(r, p, c, "scale", 1.0), number_of(r, p, c, "offset", 0.0));
}

// Normalization's mean or variance: null (adapted), a number, or a nested list of numbers,
// flattened into `out` with its nesting in `shape`.
void flatten_numbers(const Reader& r, const std::string& p, const json& v, std::vector<double>& out,
                     std::vector<std::int64_t>& shape, std::size_t depth = 0) {
  if (v.is_number()) {
    out.push_back(v.get<double>());
    return;
  }
  if (!v.is_array() || v.empty()) r.invalid(p, "expected a number or a non-empty list of numbers, got " + show(v));
  if (shape.size() == depth) shape.push_back(static_cast<std::int64_t>(v.size()));
  if (shape[depth] != static_cast<std::int64_t>(v.size())) r.invalid(p, "a ragged list of numbers: " + show(v));
  for (const json& e : v) flatten_numbers(r, p, e, out, shape, depth + 1);
}

LayerPtr read_normalization(const Reader& r, const std::string& p, const json& c, const std::string& name,
                            const Shape&) {
  check_keys(r, p, c, kCommon, {"axis", "invert", "mean", "variance"});
  NormalizationOptions o;
  if (const json* axis = find(c, "axis")) {
    o.axes.clear();
    if (axis->is_number_integer()) {
      o.axes.push_back(axis->get<std::int64_t>());
    } else if (axis->is_array()) {
      for (const json& a : *axis) {
        if (!a.is_number_integer()) r.invalid(p, "\"axis\" must be an integer, a list of integers or null, got " + show(*axis));
        o.axes.push_back(a.get<std::int64_t>());
      }
    } else if (!axis->is_null()) {
      r.invalid(p, "\"axis\" must be an integer, a list of integers or null, got " + show(*axis));
    }
  }
  o.invert = get_bool(r, p, c, "invert", false);
  const json* mean = value(c, "mean");
  const json* variance = value(c, "variance");
  if (static_cast<bool>(mean) != static_cast<bool>(variance)) {
    r.invalid(p, "\"mean\" and \"variance\" must both be given or both be null");
  }
  if (mean) {
    std::vector<std::int64_t> vshape;
    flatten_numbers(r, p + ".mean", *mean, o.mean, o.given_shape);
    flatten_numbers(r, p + ".variance", *variance, o.variance, vshape);
    if (vshape != o.given_shape) r.invalid(p, "\"mean\" and \"variance\" must have the same shape");
    for (double v : o.variance) {
      if (v < 0.0) r.invalid(p + ".variance", "a variance must be non-negative, got " + show(*variance));
    }
  }
  return std::make_unique<Normalization>(name, o);
}

// The flat values nested as `shape` says (a number for no shape).
ojson nest(const std::vector<double>& v, const std::vector<std::int64_t>& shape, std::size_t depth = 0,
           std::size_t* at = nullptr) {
  std::size_t start = 0;
  if (!at) at = &start;
  if (depth == shape.size()) return v[(*at)++];
  ojson out = ojson::array();
  for (std::int64_t i = 0; i < shape[depth]; ++i) out.push_back(nest(v, shape, depth + 1, at));
  return out;
}

bool write_preprocessing(const Writer&, const Layer& l, ojson& c) {
  if (auto* n = dynamic_cast<const Normalization*>(&l)) {
    const NormalizationOptions& o = n->options();
    c.update({{"axis", o.axes}, {"invert", o.invert}});
    if (o.mean.empty()) {
      c.update({{"mean", nullptr}, {"variance", nullptr}});
    } else {
      c.update({{"mean", nest(o.mean, o.given_shape)}, {"variance", nest(o.variance, o.given_shape)}});
    }
    return true;
  }
  if (auto* rs = dynamic_cast<const Rescaling*>(&l)) {
    c.update({{"scale", rs->scale()}, {"offset", rs->offset()}});
    return true;
  }
  return false;
}

}  // namespace

const LayerFamily& preprocessing_layers() {
  static const LayerFamily family{{{"Rescaling", read_rescaling}, {"Normalization", read_normalization}},
                                  write_preprocessing};
  return family;
}

}  // namespace nnfit::keras_json
