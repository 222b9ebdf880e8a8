// Keras codecs of Keras 3's random image augmentation layers: RandomFlip,
// RandomTranslation, RandomRotation, RandomZoom, RandomShear and RandomContrast. Factors are kept as
// Keras wrote them (a number or a pair) and written back the same, in Keras 3.15's key
// order. tf.keras's versions of these layers differ in keys and semantics (no data_format,
// RandomContrast without value_range): those files are refused, and so is writing them.
#include "model/keras/codecs/codec.h"

#include <algorithm>

#include "backend/common/augment.h"
#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

void refuse_keras2(const Reader& r, const std::string& p, const char* cls) {
  if (r.keras2) {
    r.unsupported(p, std::string("tf.keras's ") + cls + " is not supported (its keys and behaviour differ from Keras 3's)",
                  "save the model with Keras 3 (.keras)");
  }
}

// A factor: one number or a list of two; `nullable` accepts null (RandomZoom's width_factor),
// read as an empty list.
std::vector<double> get_factor(const Reader& r, const std::string& p, const json& c, const char* key, bool nullable) {
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

// seed: null or an integer.
std::optional<std::int64_t> get_seed(const Reader& r, const std::string& p, const json& c) {
  if (!value(c, "seed")) return std::nullopt;
  return get_int(r, p, c, "seed", std::nullopt);
}

void check_choice(const Reader& r, const std::string& p, const char* key, const std::string& v, bool ok,
                  const char* choices) {
  if (!ok) r.invalid(p, std::string("\"") + key + "\" = \"" + v + "\" is not one of " + choices);
}

LayerPtr read_random_flip(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  refuse_keras2(r, p, "RandomFlip");
  check_keys(r, p, c, kCommon, {"mode", "seed", "data_format", "bounding_box_format"});
  check_data_format(r, p, c);
  RandomFlipOptions o;
  o.mode = get_string(r, p, c, "mode", "horizontal_and_vertical");
  bool h = false, v = false;
  check_choice(r, p, "mode", o.mode, parse_flip_mode(o.mode, &h, &v), kFlipModeNames);
  o.seed = get_seed(r, p, c);
  o.bounding_box_format = get_string(r, p, c, "bounding_box_format", "");
  return std::make_unique<RandomFlip>(name, o);
}

template <RandomAffineKind kKind>
LayerPtr read_random_affine(const Reader& r, const std::string& p, const json& c, const std::string& name,
                            const Shape&) {
  const bool rotation = kKind == RandomAffineKind::rotation, shear = kKind == RandomAffineKind::shear;
  refuse_keras2(r, p, rotation ? "RandomRotation" : kKind == RandomAffineKind::zoom ? "RandomZoom" : shear ? "RandomShear" : "RandomTranslation");
  if (shear) {
    check_keys(r, p, c, kCommon,
               {"x_factor", "y_factor", "fill_mode", "interpolation", "seed", "fill_value", "data_format",
                "bounding_box_format"});
  } else if (rotation) {
    check_keys(r, p, c, kCommon,
               {"factor", "fill_mode", "interpolation", "seed", "fill_value", "data_format", "bounding_box_format"});
  } else {
    check_keys(r, p, c, kCommon,
               {"height_factor", "width_factor", "fill_mode", "interpolation", "seed", "fill_value", "data_format",
                "bounding_box_format"});
  }
  check_data_format(r, p, c);
  RandomAffineOptions o;
  if (shear) {  // both default to 0.0
    o.height_factor = value(c, "y_factor") ? get_factor(r, p, c, "y_factor", false) : std::vector<double>{0.0};
    o.width_factor = value(c, "x_factor") ? get_factor(r, p, c, "x_factor", false) : std::vector<double>{0.0};
  } else {
    o.height_factor = get_factor(r, p, c, rotation ? "factor" : "height_factor", false);
    if (!rotation) o.width_factor = get_factor(r, p, c, "width_factor", kKind == RandomAffineKind::zoom);
  }
  o.fill_mode = get_string(r, p, c, "fill_mode", "reflect");
  o.interpolation = get_string(r, p, c, "interpolation", "bilinear");
  AffineFill fill;
  AffineInterpolation interpolation;
  check_choice(r, p, "fill_mode", o.fill_mode, parse_affine_fill(o.fill_mode, &fill), kAffineFillNames);
  check_choice(r, p, "interpolation", o.interpolation, parse_affine_interpolation(o.interpolation, &interpolation),
               kAffineInterpolationNames);
  o.fill_value = get_number(r, p, c, "fill_value", 0.0);
  o.seed = get_seed(r, p, c);
  o.bounding_box_format = get_string(r, p, c, "bounding_box_format", "");
  return std::make_unique<RandomAffine>(name, kKind, o);
}

LayerPtr read_random_contrast(const Reader& r, const std::string& p, const json& c, const std::string& name,
                              const Shape&) {
  refuse_keras2(r, p, "RandomContrast");
  check_keys(r, p, c, kCommon, {"factor", "value_range", "seed", "data_format"});
  check_data_format(r, p, c);
  const std::vector<double> f = get_factor(r, p, c, "factor", false);
  // Keras's base _set_factor with bounds (0, 1): a number in [0, 1] means (0, f); a pair
  // fails when its first is above 1 or its second below 0, and is then sorted.
  const bool ok = f.size() == 1 ? f[0] >= 0.0 && f[0] <= 1.0 : f[0] <= 1.0 && f[1] >= 0.0;
  if (!ok) r.invalid(p, "\"factor\" = " + show(*value(c, "factor")) + " is outside [0, 1]");
  RandomContrastOptions o;
  o.lower = f.size() == 1 ? 0.0 : std::min(f[0], f[1]);
  o.upper = f.size() == 1 ? f[0] : std::max(f[0], f[1]);
  if (const json* vr = value(c, "value_range")) {
    if (!vr->is_array() || vr->size() != 2 || !(*vr)[0].is_number() || !(*vr)[1].is_number() ||
        (*vr)[0].get<double>() > (*vr)[1].get<double>()) {
      r.invalid(p, "\"value_range\" must be two numbers [lower, upper], got " + show(*vr));
    }
    o.value_min = (*vr)[0].get<double>();
    o.value_max = (*vr)[1].get<double>();
  }
  o.seed = get_seed(r, p, c);
  return std::make_unique<RandomContrast>(name, o);
}

ojson factor_json(const std::vector<double>& f) {
  if (f.empty()) return nullptr;
  if (f.size() == 1) return f[0];
  return ojson::array({f[0], f[1]});
}

ojson seed_json(const std::optional<std::int64_t>& seed) { return seed ? ojson(*seed) : ojson(nullptr); }

void refuse_in_keras2(const Writer& w, const Layer& l) {
  if (w.keras2) {
    throw Unsupported(l.name() + ": " + l.class_name() + " is not written in Keras 2's format (tf.keras's differs)",
                      "save the model as .keras");
  }
}

bool write_augmentation(const Writer& w, const Layer& l, ojson& c) {
  if (auto* f = dynamic_cast<const RandomFlip*>(&l)) {
    refuse_in_keras2(w, l);
    const RandomFlipOptions& o = f->options();
    c["data_format"] = write_data_format(false);
    if (!o.bounding_box_format.empty()) c["bounding_box_format"] = o.bounding_box_format;
    c.update({{"seed", seed_json(o.seed)}, {"mode", o.mode}});
    return true;
  }
  if (auto* a = dynamic_cast<const RandomAffine*>(&l)) {
    refuse_in_keras2(w, l);
    const RandomAffineOptions& o = a->options();
    c["data_format"] = write_data_format(false);
    if (!o.bounding_box_format.empty()) c["bounding_box_format"] = o.bounding_box_format;
    if (a->kind() == RandomAffineKind::shear) {
      // As read (Keras writes a number f as (-f, f), which its own reader refuses: Note
      // [RandomShear's pairs]), so a file nnfit writes loads in Keras.
      c.update({{"x_factor", factor_json(o.width_factor)}, {"y_factor", factor_json(o.height_factor)}, {"fill_mode", o.fill_mode},
                {"interpolation", o.interpolation}, {"seed", seed_json(o.seed)}, {"fill_value", o.fill_value}});
    } else if (a->kind() == RandomAffineKind::rotation) {
      // Keras writes the range it derived, (lower, upper), not the factor as given.
      const auto [lower, upper] = RandomAffine::factor_range(o.height_factor);
      c.update({{"factor", ojson::array({lower, upper})}, {"fill_mode", o.fill_mode}, {"fill_value", o.fill_value},
                {"interpolation", o.interpolation}, {"seed", seed_json(o.seed)}});
    } else {
      c.update({{"height_factor", factor_json(o.height_factor)}, {"width_factor", factor_json(o.width_factor)},
                {"fill_mode", o.fill_mode}, {"interpolation", o.interpolation}, {"seed", seed_json(o.seed)},
                {"fill_value", o.fill_value}});
    }
    return true;
  }
  if (auto* rc = dynamic_cast<const RandomContrast*>(&l)) {
    refuse_in_keras2(w, l);
    const RandomContrastOptions& o = rc->options();
    c["data_format"] = write_data_format(false);
    c.update({{"factor", ojson::array({o.lower, o.upper})},
              {"value_range", ojson::array({o.value_min, o.value_max})},
              {"seed", seed_json(o.seed)}});
    return true;
  }
  return false;
}

}  // namespace

const LayerFamily& augmentation_layers() {
  static const LayerFamily family{{{"RandomFlip", read_random_flip},
                                   {"RandomTranslation", read_random_affine<RandomAffineKind::translation>},
                                   {"RandomRotation", read_random_affine<RandomAffineKind::rotation>},
                                   {"RandomZoom", read_random_affine<RandomAffineKind::zoom>},
                                   {"RandomShear", read_random_affine<RandomAffineKind::shear>},
                                   {"RandomContrast", read_random_contrast}},
                                  write_augmentation};
  return family;
}

}  // namespace nnfit::keras_json
