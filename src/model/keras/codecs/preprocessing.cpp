// Keras codecs of the preprocessing layers that run inside a model: Rescaling,
// Normalization, Resizing, CenterCrop, and Pipeline (its layers read one after the other,
// each with the previous one's output shape).
#include "model/keras/codecs/codec.h"

#include <map>
#include <tuple>

#include "backend/common/resize_taps.h"
#include "model/keras/keras_layers.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/pipeline_layer.h"

namespace nnfit::keras_json {
namespace {

// Rescaling's scale and offset: a number, or a flat list of them (one per channel).
std::vector<double> numbers_of(const Reader& r, const std::string& p, const json& c, const char* key, double fallback) {
  const json* v = value(c, key);
  if (!v) return {fallback};
  if (v->is_number()) return {v->get<double>()};
  std::vector<double> out;
  if (v->is_array() && !v->empty()) {
    for (const json& e : *v) {
      if (!e.is_number()) break;
      out.push_back(e.get<double>());
    }
  }
  if (out.empty() || out.size() != v->size()) {
    r.unsupported(p, std::string("\"") + key + "\" = " + show(*v) + " is not supported (a number, or a flat list "
                  "of numbers, one per channel)");
  }
  return out;
}

LayerPtr read_rescaling(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"scale", "offset"});
  if (!value(c, "scale")) r.invalid(p, "missing required key \"scale\"");
  return std::make_unique<Rescaling>(name, numbers_of(r, p, c, "scale", 1.0), numbers_of(r, p, c, "offset", 0.0));
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

// Resizing's and CenterCrop's target size: both keys required, each >= 1.
std::pair<std::int64_t, std::int64_t> target_size(const Reader& r, const std::string& p, const json& c) {
  const std::int64_t h = get_int(r, p, c, "height", std::nullopt), w = get_int(r, p, c, "width", std::nullopt);
  if (h < 1 || w < 1) {
    r.invalid(p, "\"height\" and \"width\" must be integers >= 1, got " + std::to_string(h) + " and " +
                     std::to_string(w));
  }
  return {h, w};
}

// bounding_box_format: null ("") or a string, kept to be written back.
std::string box_format(const Reader& r, const std::string& p, const json& c) {
  return get_string(r, p, c, "bounding_box_format", "");
}

LayerPtr read_resizing(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"height", "width", "interpolation", "crop_to_aspect_ratio", "pad_to_aspect_ratio", "fill_mode",
              "fill_value", "antialias", "data_format", "bounding_box_format"});
  ResizingOptions o;
  std::tie(o.height, o.width) = target_size(r, p, c);
  o.interpolation = get_string(r, p, c, "interpolation", "bilinear");
  ResizeInterpolation method;
  if (!parse_resize_method(o.interpolation, &method)) {
    r.unsupported(p, "\"interpolation\" = \"" + o.interpolation + "\" is not supported (one of " +
                         kResizeMethodNames + ")");
  }
  o.crop_to_aspect_ratio = get_bool(r, p, c, "crop_to_aspect_ratio", false);
  o.pad_to_aspect_ratio = get_bool(r, p, c, "pad_to_aspect_ratio", false);
  if (o.crop_to_aspect_ratio && o.pad_to_aspect_ratio) {
    r.invalid(p, "\"crop_to_aspect_ratio\" and \"pad_to_aspect_ratio\" cannot both be true (Keras refuses it too)");
  }
  o.fill_mode = get_string(r, p, c, "fill_mode", "constant");
  if (o.fill_mode != "constant") {
    r.unsupported(p, "\"fill_mode\" = \"" + o.fill_mode + "\" is not supported (only \"constant\", as in Keras)");
  }
  o.fill_value = get_number(r, p, c, "fill_value", 0.0);
  o.antialias = get_bool(r, p, c, "antialias", false);
  o.channels_first = get_channels_first(r, p, c);
  o.bounding_box_format = box_format(r, p, c);
  return std::make_unique<Resizing>(name, o);
}

LayerPtr read_center_crop(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"height", "width", "data_format", "bounding_box_format"});
  CenterCropOptions o;
  std::tie(o.height, o.width) = target_size(r, p, c);
  o.channels_first = get_channels_first(r, p, c);
  o.bounding_box_format = box_format(r, p, c);
  return std::make_unique<CenterCrop>(name, o);
}

// tf.keras's Resizing and CenterCrop take neither data_format nor bounding boxes (nor
// Resizing's padding or antialias): a layer that uses one is not written for it.
void refuse_in_keras2(const Layer& l, bool uses, const char* what) {
  if (uses) {
    throw Unsupported(l.name() + ": " + l.class_name() + " with " + what + " is not written in Keras 2's format",
                      "save the model as .keras");
  }
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

// Keras's Pipeline(layers, name): its config holds only "layers" (each layer's whole entry)
// and "name".
LayerPtr read_pipeline(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape& in) {
  check_keys(r, p, c, kCommon, {"layers"});
  const json* list = find(c, "layers");
  if (!list || !list->is_array() || list->empty()) {
    r.invalid(p, "\"layers\" must be a non-empty list of layers (Keras's serialized layers)");
  }
  std::vector<std::unique_ptr<Layer>> layers;
  std::vector<std::string> groups;
  std::map<std::string, int> seen;
  Shape shape = in;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string lp = p + ".layers[" + std::to_string(i) + "]";
    const json& entry = (*list)[i];
    expect_object(r, lp, entry);
    check_keys(r, lp, entry, {"module", "class_name", "config", "registered_name", "build_config"});
    const std::string cls = canonical_layer_class(get_string(r, lp, entry, "class_name", std::nullopt));
    const json* cfg = find(entry, "config");
    if (!cfg) r.invalid(lp, "missing required key \"config\"");
    expect_object(r, lp + ".config", *cfg);
    layers.push_back(read_layer(r, lp, cls, *cfg, get_string(r, lp + ".config", *cfg, "name", snake_case(cls)), false,
                                {shape}));
    shape = with_path(r, lp, layers.back()->name(), [&] { return layers.back()->compute_output_shapes({shape})[0]; });
    // Keras's groups of a list's layers: the class in snake case, then _1, _2, ... for repeats.
    const std::string base = keras_snake_case(cls);
    const int n = seen.count(base) ? ++seen[base] : (seen[base] = 0);
    groups.push_back("layers/" + base + (n == 0 ? "" : "_" + std::to_string(n)));
  }
  return std::make_unique<PipelineLayer>(name, std::move(layers), std::move(groups));
}

bool write_preprocessing(const Writer& w, const Layer& l, ojson& c) {
  if (auto* pl = dynamic_cast<const PipelineLayer*>(&l)) {
    if (w.keras2) throw Unsupported(l.name() + ": Keras's Pipeline has no Keras 2 form", "save the model as .keras");
    ojson layers = ojson::array();
    for (const auto& inner : pl->layers()) layers.push_back(write_layer_object(w, *inner));
    c.erase("trainable");  // Keras's Pipeline(layers, name) takes nothing else
    c.erase("dtype");
    c["layers"] = layers;
    return true;
  }
  if (auto* rz = dynamic_cast<const Resizing*>(&l)) {
    const ResizingOptions& o = rz->options();
    if (w.keras2) {
      refuse_in_keras2(l, o.channels_first, "data_format channels_first");
      refuse_in_keras2(l, o.pad_to_aspect_ratio, "pad_to_aspect_ratio");
      refuse_in_keras2(l, o.antialias, "antialias");
      refuse_in_keras2(l, !o.bounding_box_format.empty(), "a bounding_box_format");
      c.update({{"height", o.height}, {"width", o.width}, {"interpolation", o.interpolation},
                {"crop_to_aspect_ratio", o.crop_to_aspect_ratio}});
      return true;
    }
    c["data_format"] = write_data_format(o.channels_first);
    if (!o.bounding_box_format.empty()) c["bounding_box_format"] = o.bounding_box_format;
    c.update({{"height", o.height}, {"width", o.width}, {"interpolation", o.interpolation},
              {"crop_to_aspect_ratio", o.crop_to_aspect_ratio}, {"pad_to_aspect_ratio", o.pad_to_aspect_ratio},
              {"fill_mode", o.fill_mode}, {"fill_value", o.fill_value}, {"antialias", o.antialias}});
    return true;
  }
  if (auto* cc = dynamic_cast<const CenterCrop*>(&l)) {
    const CenterCropOptions& o = cc->options();
    if (w.keras2) {
      refuse_in_keras2(l, o.channels_first, "data_format channels_first");
      refuse_in_keras2(l, !o.bounding_box_format.empty(), "a bounding_box_format");
    } else {
      c["data_format"] = write_data_format(o.channels_first);
      if (!o.bounding_box_format.empty()) c["bounding_box_format"] = o.bounding_box_format;
    }
    c.update({{"height", o.height}, {"width", o.width}});
    return true;
  }
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
    const auto number_or_list = [](const std::vector<double>& v) { return v.size() == 1 ? ojson(v[0]) : ojson(v); };
    c.update({{"scale", number_or_list(rs->scale())}, {"offset", number_or_list(rs->offset())}});
    return true;
  }
  return false;
}

}  // namespace

const LayerFamily& preprocessing_layers() {
  static const LayerFamily family{{{"Rescaling", read_rescaling},
                                   {"Normalization", read_normalization},
                                   {"Resizing", read_resizing},
                                   {"CenterCrop", read_center_crop},
                                   {"Pipeline", read_pipeline}},
                                  write_preprocessing};
  return family;
}

}  // namespace nnfit::keras_json
