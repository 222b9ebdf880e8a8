// Keras codecs of Keras 3's colour augmentation layers (color_augmentation_layers.h):
// RandomHue, RandomSaturation, RandomColorJitter and RandomGaussianBlur. A factor read as a
// single number takes Keras's _set_factor reading (bounds (0, 1) for RandomHue and
// RandomGaussianBlur, (-1, 1) for RandomSaturation); Keras writes the pair it derived, and
// so does nnfit; RandomColorJitter's factors are written back as given, as Keras writes
// them. channels_first and tf.keras (which has none of these layers) are refused.
#include <algorithm>
#include <cmath>

#include "model/keras/codecs/codec.h"
#include "nnfit/nn/color_augmentation_layers.h"

namespace nnfit::keras_json {
namespace {

// A number or a list of two numbers; null (where `nullable`) reads as empty.
std::vector<double> color_factor(const Reader& r, const std::string& p, const json& c, const char* key, bool nullable) {
  const json* v = value(c, key);
  if (!v) {
    if (nullable) return {};
    r.invalid(p, std::string("missing required key \"") + key + "\"");
  }
  if (v->is_number()) return {v->get<double>()};
  if (v->is_array() && v->size() == 2 && (*v)[0].is_number() && (*v)[1].is_number()) {
    return {(*v)[0].get<double>(), (*v)[1].get<double>()};
  }
  r.invalid(p, std::string("\"") + key + "\" must be a number or a list of two numbers, got " + show(*v));
}

std::pair<double, double> color_range(const Reader& r, const std::string& p, const json& c, const char* key,
                                      double lo_bound, double hi_bound) {
  bool ok = true;
  const auto range = keras_factor_range(color_factor(r, p, c, key, false), lo_bound, hi_bound, &ok);
  if (!ok) {
    r.invalid(p, std::string("\"") + key + "\" = " + show(*value(c, key)) + " is outside [" + show(json(lo_bound)) + ", " +
                     show(json(hi_bound)) + "]");
  }
  return range;
}

LayerPtr read_color_augmentation(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                 const Shape&, ColorAugmentationKind kind) {
  const char* cls = color_augmentation_class(kind);
  if (r.keras2) r.unsupported(p, std::string(cls) + " is a Keras 3 layer; tf.keras has none", "save the model as .keras");
  check_data_format(r, p, c);
  ColorAugmentationOptions o;
  if (kind == ColorAugmentationKind::color_jitter) {
    check_keys(r, p, c, kCommon, {"value_range", "brightness_factor", "contrast_factor", "saturation_factor", "hue_factor",
                                  "seed", "data_format"});
    o.brightness = color_factor(r, p, c, "brightness_factor", true);
    o.contrast = color_factor(r, p, c, "contrast_factor", true);
    o.saturation = color_factor(r, p, c, "saturation_factor", true);
    o.hue = color_factor(r, p, c, "hue_factor", true);
  } else if (kind == ColorAugmentationKind::gaussian_blur) {
    check_keys(r, p, c, kCommon, {"factor", "kernel_size", "sigma", "value_range", "seed", "data_format"});
    std::tie(o.lower, o.upper) = color_range(r, p, c, "factor", 0.0, 1.0);
    std::tie(o.sigma_lower, o.sigma_upper) = color_range(r, p, c, "sigma", 0.0, 1.0);
    const std::vector<double> k = color_factor(r, p, c, "kernel_size", false);
    for (double v : k) {
      if (v != std::floor(v) || v < 1 || static_cast<std::int64_t>(v) % 2 == 0) {
        r.invalid(p, "\"kernel_size\" = " + show(*value(c, "kernel_size")) + " must be odd positive integers");
      }
    }
    o.kernel_h = static_cast<std::int64_t>(k[0]);
    o.kernel_w = static_cast<std::int64_t>(k.size() == 2 ? k[1] : k[0]);
  } else {
    check_keys(r, p, c, kCommon, {"factor", "value_range", "seed", "data_format"});
    std::tie(o.lower, o.upper) = color_range(r, p, c, "factor", kind == ColorAugmentationKind::hue ? 0.0 : -1.0, 1.0);
  }
  if (const json* vr = value(c, "value_range")) {
    if (!vr->is_array() || vr->size() != 2 || !(*vr)[0].is_number() || !(*vr)[1].is_number()) {
      r.invalid(p, "\"value_range\" must be two numbers [lower, upper], got " + show(*vr));
    }
    o.value_first = (*vr)[0].get<double>();
    o.value_second = (*vr)[1].get<double>();
    if (kind == ColorAugmentationKind::saturation && o.value_first > o.value_second) std::swap(o.value_first, o.value_second);
  }
  if (value(c, "seed")) o.seed = get_int(r, p, c, "seed", std::nullopt);
  return std::make_unique<ColorAugmentation>(name, kind, o);
}

template <ColorAugmentationKind kKind>
LayerPtr read_kind(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape& in) {
  return read_color_augmentation(r, p, c, name, in, kKind);
}

ojson color_factor_json(const std::vector<double>& f) {
  if (f.empty()) return nullptr;
  if (f.size() == 1) return f[0];
  return ojson::array({f[0], f[1]});
}

bool write_color_augmentation(const Writer& w, const Layer& l, ojson& c) {
  const auto* a = dynamic_cast<const ColorAugmentation*>(&l);
  if (!a) return false;
  if (w.keras2) throw Unsupported(l.name() + ": " + l.class_name() + " is a Keras 3 layer; tf.keras has none", "save the model as .keras");
  const ColorAugmentationOptions& o = a->options();
  const ojson range = ojson::array({o.value_first, o.value_second});
  const ojson seed = o.seed ? ojson(*o.seed) : ojson(nullptr);
  c["data_format"] = write_data_format(false);
  switch (a->kind()) {
    case ColorAugmentationKind::color_jitter:
      c.update({{"value_range", range}, {"brightness_factor", color_factor_json(o.brightness)},
                {"contrast_factor", color_factor_json(o.contrast)}, {"saturation_factor", color_factor_json(o.saturation)},
                {"hue_factor", color_factor_json(o.hue)}, {"seed", seed}});
      break;
    case ColorAugmentationKind::gaussian_blur:
      c.update({{"factor", ojson::array({o.lower, o.upper})}, {"kernel_size", ojson::array({o.kernel_h, o.kernel_w})},
                {"sigma", ojson::array({o.sigma_lower, o.sigma_upper})}, {"value_range", range}, {"seed", seed}});
      break;
    default:
      c.update({{"factor", ojson::array({o.lower, o.upper})}, {"value_range", range}, {"seed", seed}});
  }
  return true;
}

}  // namespace

const LayerFamily& color_augmentation_layers() {
  static const LayerFamily family{{{"RandomHue", read_kind<ColorAugmentationKind::hue>},
                                   {"RandomSaturation", read_kind<ColorAugmentationKind::saturation>},
                                   {"RandomColorJitter", read_kind<ColorAugmentationKind::color_jitter>},
                                   {"RandomGaussianBlur", read_kind<ColorAugmentationKind::gaussian_blur>}},
                                  write_color_augmentation};
  return family;
}

}  // namespace nnfit::keras_json
