// Keras codecs of Keras 3.15's element-wise image augmentation layers (ImageAugmentation:
// RandomBrightness, RandomGrayscale, RandomInvert, Solarization, RandomPosterization,
// AutoContrast, RandomErasing, RandomColorDegeneration, RandomSharpness,
// MaxNumBoundingBoxes, MixUp, CutMix, Equalization) and of RandomCrop. A config is read as Keras's constructor reads
// its arguments (a single factor means (-f, f), (0, f) or (1, f) by class, as each class's _set_factor says), so both
// what Keras writes and what a user passes read; it is written back as Keras's get_config writes it, in its key order.
// Keras's own omissions are kept: RandomGrayscale writes no seed, MaxNumBoundingBoxes no fill_value.
#include <algorithm>
#include <cmath>

#include "model/keras/codecs/codec.h"
#include "nnfit/nn/image_augmentation_layers.h"
#include "nnfit/nn/random_crop_layer.h"

namespace nnfit::keras_json {
namespace {
namespace image_augmentation_codec {

using Kind = ImageAugmentationKind;

// A factor (number or pair) as Keras's BaseImagePreprocessingLayer._set_factor reads it
// with `bounds`: a number must lie within them and gives (max(-|f|, lo), |f|); a pair must
// have its first <= hi and its second >= lo, and is sorted.
std::pair<double, double> read_factor(const Reader& r, const std::string& p, const json& c, const char* key,
                                      std::pair<double, double> bounds, const json& fallback) {
  const json* v = value(c, key);
  const json& f = v ? *v : fallback;
  const auto [lo, hi] = bounds;
  const auto bound = [](double b) {
    return b == std::floor(b) ? std::to_string(static_cast<long long>(b)) : show(json(b));
  };
  const std::string why = std::string("\"") + key + "\" = " + show(f) + " must be a number or two numbers in [" +
                          bound(lo) + ", " + bound(hi) + "]";
  if (f.is_number()) {
    const double x = f.get<double>();
    if (x < lo || x > hi) r.invalid(p, why);
    return {std::max(-std::abs(x), lo), std::abs(x)};
  }
  if (f.is_array() && f.size() == 2 && f[0].is_number() && f[1].is_number()) {
    const double a = f[0].get<double>(), b = f[1].get<double>();
    if (a > hi || b < lo) r.invalid(p, why);
    return {std::min(a, b), std::max(a, b)};
  }
  r.invalid(p, why);
}

// Solarization's own _set_factor: each number in [0, 1]; a number f means (0, f).
std::pair<double, double> read_unit_factor(const Reader& r, const std::string& p, const json& c, const char* key) {
  const json* v = value(c, key);
  const json f = v ? *v : json(0.0);
  const auto in_unit = [](const json& x) { return x.is_number() && x.get<double>() >= 0.0 && x.get<double>() <= 1.0; };
  if (in_unit(f)) return {0.0, f.get<double>()};
  if (f.is_array() && f.size() == 2 && in_unit(f[0]) && in_unit(f[1])) {
    return {std::min(f[0].get<double>(), f[1].get<double>()), std::max(f[0].get<double>(), f[1].get<double>())};
  }
  r.invalid(p, std::string("\"") + key + "\" = " + show(f) + " must be a number or two numbers in [0, 1]");
}

// value_range: two numbers, sorted as Keras sorts them except where it keeps the order.
std::pair<double, double> read_value_range(const Reader& r, const std::string& p, const json& c, bool sort) {
  const json* v = value(c, "value_range");
  if (!v) return {0.0, 255.0};
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number() || !(*v)[1].is_number()) {
    r.invalid(p, "\"value_range\" must be a list of two numbers, got " + show(*v));
  }
  const double a = (*v)[0].get<double>(), b = (*v)[1].get<double>();
  return sort ? std::pair<double, double>{std::min(a, b), std::max(a, b)} : std::pair<double, double>{a, b};
}

std::optional<std::int64_t> read_seed(const Reader& r, const std::string& p, const json& c) {
  if (!value(c, "seed")) return std::nullopt;
  return get_int(r, p, c, "seed", std::nullopt);
}

template <Kind kKind>
LayerPtr read(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  const char* cls = image_augmentation_class(kKind);
  if (r.keras2)
    r.unsupported(p, std::string(cls) + " is a Keras 3 layer; tf.keras has none",
                  "save the model with Keras 3 (.keras)");
  ImageAugmentationOptions o;
  switch (kKind) {
    case Kind::brightness:
    case Kind::color_degeneration:
    case Kind::sharpness:
    case Kind::posterization: {
      check_keys(r, p, c, kCommon, {"factor", "value_range", "seed", "data_format", "bounding_box_format"});
      if (!value(c, "factor")) r.invalid(p, "missing required key \"factor\"");
      const std::pair<double, double> bounds = kKind == Kind::sharpness       ? std::pair{0.0, 1.0}
                                               : kKind == Kind::posterization ? std::pair{1.0, 8.0}
                                                                              : std::pair{-1.0, 1.0};
      std::tie(o.lower, o.upper) = read_factor(r, p, c, "factor", bounds, json());
      if (kKind == Kind::posterization && (o.lower != std::floor(o.lower) || o.upper != std::floor(o.upper))) {
        r.invalid(p, "\"factor\" = " + show(*value(c, "factor")) + " must be whole numbers of bits in [1, 8]");
      }
      std::tie(o.value_first, o.value_second) = read_value_range(r, p, c, true);
      break;
    }
    case Kind::grayscale: {
      check_keys(r, p, c, kCommon, {"factor", "seed", "data_format", "bounding_box_format"});
      const double f = get_number(r, p, c, "factor", 0.5);
      if (f < 0.0 || f > 1.0) r.invalid(p, "\"factor\" = " + show(*value(c, "factor")) + " must lie in [0, 1]");
      o.upper = f;
      break;
    }
    case Kind::invert:
      check_keys(r, p, c, kCommon, {"factor", "value_range", "seed", "data_format", "bounding_box_format"});
      std::tie(o.lower, o.upper) = read_factor(r, p, c, "factor", {0.0, 1.0}, json(1.0));
      std::tie(o.value_first, o.value_second) = read_value_range(r, p, c, false);
      break;
    case Kind::solarization:
      check_keys(r, p, c, kCommon,
                 {"addition_factor", "threshold_factor", "value_range", "seed", "data_format", "bounding_box_format"});
      std::tie(o.lower, o.upper) = read_unit_factor(r, p, c, "addition_factor");
      std::tie(o.second_lower, o.second_upper) = read_unit_factor(r, p, c, "threshold_factor");
      std::tie(o.value_first, o.value_second) = read_value_range(r, p, c, true);
      break;
    case Kind::auto_contrast:
      check_keys(r, p, c, kCommon, {"value_range", "data_format", "bounding_box_format"});
      std::tie(o.value_first, o.value_second) = read_value_range(r, p, c, true);
      break;
    case Kind::erasing: {
      check_keys(r, p, c, kCommon,
                 {"factor", "scale", "fill_value", "value_range", "seed", "data_format", "bounding_box_format"});
      std::tie(o.lower, o.upper) = read_factor(r, p, c, "factor", {0.0, 1.0}, json(1.0));
      std::tie(o.second_lower, o.second_upper) = read_factor(r, p, c, "scale", {0.0, 1.0}, json::array({0.02, 0.33}));
      if (const json* f = value(c, "fill_value")) {
        if (f->is_number()) {
          o.fill_value = {f->get<double>()};
        } else if (f->is_array() && f->size() == 3 &&
                   std::all_of(f->begin(), f->end(), [](const json& x) { return x.is_number(); })) {
          for (const json& x : *f) o.fill_value.push_back(x.get<double>());
        } else {
          r.invalid(p, "\"fill_value\" must be null, a number or a list of three numbers, got " + show(*f));
        }
      }
      std::tie(o.value_first, o.value_second) = read_value_range(r, p, c, false);
      break;
    }
    case Kind::mix_up:
      check_keys(r, p, c, kCommon, {"alpha", "seed", "data_format", "bounding_box_format"});
      o.upper = get_number(r, p, c, "alpha", 0.2);
      if (!(o.upper > 0.0)) r.invalid(p, "\"alpha\" = " + show(*value(c, "alpha")) + " must be above 0");
      break;
    case Kind::cut_mix:
      check_keys(r, p, c, kCommon, {"factor", "seed", "data_format", "bounding_box_format"});
      std::tie(o.lower, o.upper) = read_factor(r, p, c, "factor", {0.0, 1.0}, json(1.0));
      break;
    case Kind::equalization:
      check_keys(r, p, c, kCommon, {"bins", "value_range", "data_format", "bounding_box_format"});
      o.bins = get_int(r, p, c, "bins", 256);
      if (o.bins < 1) r.invalid(p, "\"bins\" = " + show(*value(c, "bins")) + " must be at least 1");
      std::tie(o.value_first, o.value_second) = read_value_range(r, p, c, true);
      break;
    case Kind::max_num_bounding_boxes:
      check_keys(r, p, c, kCommon, {"max_number", "fill_value", "data_format", "bounding_box_format"});
      if (!value(c, "max_number")) r.invalid(p, "missing required key \"max_number\"");
      o.max_number = get_int(r, p, c, "max_number", std::nullopt);
      o.box_fill_value = get_int(r, p, c, "fill_value", -1);
      break;
  }
  check_data_format(r, p, c);
  if (kKind != Kind::auto_contrast && kKind != Kind::max_num_bounding_boxes && kKind != Kind::equalization) {
    o.seed = read_seed(r, p, c);
  }
  o.bounding_box_format = get_string(r, p, c, "bounding_box_format", "");
  return std::make_unique<ImageAugmentation>(name, kKind, o);
}

LayerPtr read_random_crop(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  if (r.keras2)
    r.unsupported(p, "tf.keras's RandomCrop is not supported (its behaviour differs from Keras 3's)",
                  "save the model with Keras 3 (.keras)");
  check_keys(r, p, c, kCommon, {"height", "width", "seed", "data_format", "bounding_box_format"});
  check_data_format(r, p, c);
  RandomCropOptions o;
  for (const char* key : {"height", "width"}) {
    if (!value(c, key)) r.invalid(p, std::string("missing required key \"") + key + "\"");
  }
  o.height = get_int(r, p, c, "height", std::nullopt);
  o.width = get_int(r, p, c, "width", std::nullopt);
  if (o.height < 1 || o.width < 1) r.invalid(p, "\"height\" and \"width\" must be at least 1");
  o.seed = read_seed(r, p, c);
  o.bounding_box_format = get_string(r, p, c, "bounding_box_format", "");
  return std::make_unique<RandomCrop>(name, o);
}

// A number as Keras holds it: whole numbers that came as integers stay integers.
ojson number(double v) {
  if (v == std::floor(v) && std::abs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  return v;
}

bool write(const Writer& w, const Layer& l, ojson& c) {
  if (const auto* crop = dynamic_cast<const RandomCrop*>(&l)) {
    if (w.keras2)
      throw Unsupported(l.name() + ": RandomCrop is not written in Keras 2's format", "save the model as .keras");
    const RandomCropOptions& o = crop->options();
    c["data_format"] = write_data_format(false);
    if (!o.bounding_box_format.empty()) c["bounding_box_format"] = o.bounding_box_format;
    c.update({{"height", o.height}, {"width", o.width}, {"seed", o.seed ? ojson(*o.seed) : ojson(nullptr)}});
    return true;
  }
  const auto* a = dynamic_cast<const ImageAugmentation*>(&l);
  if (!a) return false;
  if (w.keras2) {
    throw Unsupported(l.name() + ": " + l.class_name() + " is a Keras 3 layer; it has no Keras 2 form",
                      "save the model as .keras");
  }
  const ImageAugmentationOptions& o = a->options();
  const ojson seed = o.seed ? ojson(*o.seed) : ojson(nullptr);
  const ojson factor = ojson::array({number(o.lower), o.upper});
  const ojson range = ojson::array({number(o.value_first), number(o.value_second)});
  c["data_format"] = write_data_format(false);
  if (!o.bounding_box_format.empty()) c["bounding_box_format"] = o.bounding_box_format;
  switch (a->kind()) {
    case Kind::brightness:
    case Kind::invert:
    case Kind::color_degeneration:
    case Kind::sharpness:
      c.update({{"factor", factor}, {"value_range", range}, {"seed", seed}});
      break;
    case Kind::posterization:
      c.update({{"factor", ojson::array({number(o.lower), number(o.upper)})}, {"value_range", range}, {"seed", seed}});
      break;
    case Kind::grayscale:
      c["factor"] = o.upper;
      break;
    case Kind::solarization:
      c.update({{"value_range", range},
                {"addition_factor", factor},
                {"threshold_factor", ojson::array({number(o.second_lower), o.second_upper})},
                {"seed", seed}});
      break;
    case Kind::auto_contrast:
      c["value_range"] = range;
      break;
    case Kind::erasing: {
      ojson fill = nullptr;
      if (o.fill_value.size() == 1) fill = o.fill_value[0];
      if (o.fill_value.size() == 3) fill = ojson::array({o.fill_value[0], o.fill_value[1], o.fill_value[2]});
      c.update({{"factor", factor},
                {"scale", ojson::array({o.second_lower, o.second_upper})},
                {"fill_value", fill},
                {"value_range", range},
                {"seed", seed}});
      break;
    }
    case Kind::max_num_bounding_boxes:
      c["max_number"] = o.max_number;
      break;
    case Kind::mix_up:
      c.update({{"alpha", o.upper}, {"seed", seed}});
      break;
    case Kind::cut_mix:
      c.update({{"factor", factor}, {"seed", seed}});
      break;
    case Kind::equalization:
      c.update({{"bins", o.bins}, {"value_range", range}});
      break;
  }
  return true;
}

}  // namespace image_augmentation_codec
}  // namespace

const LayerFamily& image_augmentation_layers() {
  using namespace image_augmentation_codec;
  static const LayerFamily family{{{"RandomBrightness", read<Kind::brightness>},
                                   {"RandomGrayscale", read<Kind::grayscale>},
                                   {"RandomInvert", read<Kind::invert>},
                                   {"Solarization", read<Kind::solarization>},
                                   {"RandomPosterization", read<Kind::posterization>},
                                   {"AutoContrast", read<Kind::auto_contrast>},
                                   {"RandomErasing", read<Kind::erasing>},
                                   {"RandomColorDegeneration", read<Kind::color_degeneration>},
                                   {"RandomSharpness", read<Kind::sharpness>},
                                   {"MaxNumBoundingBoxes", read<Kind::max_num_bounding_boxes>},
                                   {"MixUp", read<Kind::mix_up>},
                                   {"CutMix", read<Kind::cut_mix>},
                                   {"Equalization", read<Kind::equalization>},
                                   {"RandomCrop", read_random_crop}},
                                  write};
  return family;
}

}  // namespace nnfit::keras_json
