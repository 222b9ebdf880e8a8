// The helpers the Keras layer codecs share, and the list of families (codec.h).
#include "model/keras/codecs/codec.h"

#include <cctype>
#include <iomanip>
#include <sstream>

namespace nnfit::keras_json {

const Keys kCommon = {"name", "trainable", "dtype", "dtype_policy", "batch_input_shape"};

const std::vector<const LayerFamily*>& layer_families() {
  static const std::vector<const LayerFamily*> families = {
      &core_layers(),      &activation_layers(),   &conv_layers(), &pooling_layers(),
      &reshaping_layers(), &normalization_layers(), &merge_layers(),  &recurrent_layers(),
      &preprocessing_layers(), &augmentation_layers(), &image_augmentation_layers(), &attention_layers(),
      &color_augmentation_layers()};
  return families;
}

namespace {

// Arguments that Keras writes at their defaults, which the initializer's name implies.
bool is_default_argument(const std::string& initializer, const std::string& key, const json& arg) {
  static const struct {
    const char* initializer;
    const char* key;
    double value;
  } kDefaults[] = {{"orthogonal", "gain", 1.0},         {"random_uniform", "minval", -0.05},
                   {"random_uniform", "maxval", 0.05},  {"random_normal", "mean", 0.0},
                   {"random_normal", "stddev", 0.05}};
  for (const auto& d : kDefaults) {
    if (initializer == d.initializer && key == d.key && arg.is_number() && arg.get<double>() == d.value) return true;
  }
  return false;
}

// Keras's short names for initializers (keras.initializers.get): "uniform" is
// RandomUniform(-0.05, 0.05), Embedding's default; "normal" RandomNormal(0, 0.05).
std::string canonical_initializer(const std::string& name) {
  if (name == "uniform") return "random_uniform";
  if (name == "normal") return "random_normal";
  if (name == "one") return "ones";
  if (name == "zero") return "zeros";
  return name;
}

}  // namespace

namespace {

std::string short_number(double x) {
  std::ostringstream o;
  o << std::setprecision(17) << x;
  return o.str();
}

// Note [VarianceScaling spelling]. The engine names initializers by a string; Keras's
// VarianceScaling, the one initializer whose arguments change the weights' law (EfficientNet's
// kernels: scale 2, fan_out, truncated_normal), is spelled
// "variance_scaling(<scale>,<mode>,<distribution>)", which WeightFactory::make parses and
// write_initializer writes back as Keras's object.
std::string variance_scaling_name(const Reader& r, const std::string& ipath, const json* c) {
  double scale = 1.0;
  std::string mode = "fan_in", distribution = "truncated_normal";
  if (c) {
    expect_object(r, ipath + ".config", *c);
    for (const auto& [k, arg] : c->items()) {
      if (k == "seed" || arg.is_null()) continue;
      if (k == "scale" && arg.is_number() && arg.get<double>() > 0) {
        scale = arg.get<double>();
      } else if (k == "mode" && arg.is_string() &&
                 (arg == "fan_in" || arg == "fan_out" || arg == "fan_avg")) {
        mode = arg.get<std::string>();
      } else if (k == "distribution" && arg.is_string() &&
                 (arg == "truncated_normal" || arg == "untruncated_normal" || arg == "uniform" || arg == "normal")) {
        distribution = arg == "normal" ? "truncated_normal" : arg.get<std::string>();  // Keras's alias
      } else {
        r.unsupported(ipath + ".config", "VarianceScaling argument \"" + k + "\" = " + show(arg) + " is not supported",
                      "nnfit's VarianceScaling takes scale > 0, mode (fan_in, fan_out, fan_avg) and distribution "
                      "(truncated_normal, untruncated_normal, uniform)");
      }
    }
  }
  return "variance_scaling(" + short_number(scale) + "," + mode + "," + distribution + ")";
}

}  // namespace

// Only argument-free initializers (seed and arguments at their defaults aside) can be
// expressed by a name, so any other argument is Unsupported.
std::string get_initializer(const Reader& r, const std::string& path, const json& obj, const char* key,
                            const std::string& fallback) {
  const json* v = value(obj, key);
  if (!v) return fallback;
  if (v->is_string()) return canonical_initializer(lower(v->get<std::string>()));
  const std::string ipath = path + "." + key;
  expect_object(r, ipath, *v);
  // Keras 3 adds shared_object_id where one initializer object serves two layers (an RNN
  // and its cell).
  check_keys(r, ipath, *v, {"module", "class_name", "config", "registered_name", "shared_object_id"});
  std::string name = snake_case(get_string(r, ipath, *v, "class_name", std::nullopt));
  if (name == "variance_scaling") return variance_scaling_name(r, ipath, value(*v, "config"));
  if (const json* c = value(*v, "config")) {
    expect_object(r, ipath + ".config", *c);
    for (const auto& [k, arg] : c->items()) {
      if (k == "seed" || arg.is_null()) continue;  // nnfit seeds every weight from the model seed
      if (is_default_argument(name, k, arg)) continue;
      r.unsupported(ipath + ".config", "initializer argument \"" + k + "\" = " + show(arg) + " is not supported",
                    "nnfit initializers take no arguments; use the Keras defaults");
    }
  }
  return name;
}

namespace {

// Keras 2's hard_sigmoid is clip(0.2 x + 0.5, 0, 1), Keras 3's relu6(x + 3) / 6.
std::string activation_name(const Reader& r, std::string name) {
  return r.keras2 && name == "hard_sigmoid" ? "hard_sigmoid_keras2" : name;
}

}  // namespace

std::string get_activation(const Reader& r, const std::string& path, const json& obj, std::string fallback) {
  return get_activation(r, path, obj, "activation", std::move(fallback));
}

std::string get_activation(const Reader& r, const std::string& path, const json& obj, const char* key,
                           std::string fallback) {
  const json* v = value(obj, key);
  if (!v) return fallback;
  if (v->is_string()) return activation_name(r, v->get<std::string>());
  // Some Keras versions serialize a built-in activation as {"class_name": "function", "config": "relu"}.
  if (v->is_object() && find(*v, "config") && (*v)["config"].is_string()) {
    const std::string name = activation_name(r, (*v)["config"].get<std::string>());
    try {
      check_activation(name, "");
    } catch (const InvalidArgument&) {  // a Python function Keras wrote by its registered name
      r.unsupported(path, "\"" + std::string(key) + "\" is the Python function '" + name +
                              "', which the engine cannot run without its trace: load the file with nnfit.keras's "
                              "load_model with the function registered (keras.saving.register_keras_serializable) "
                              "or in custom_objects, which traces it");
    }
    return name;
  }
  r.unsupported(path, "\"" + std::string(key) + "\" = " + show(*v) + " is not supported (only built-in activation names)");
}

std::optional<DTypePolicy> read_dtype_policy(const Reader& r, const std::string& path, const json& obj) {
  const json* v = value(obj, "dtype");
  if (!v) return std::nullopt;
  // Keras 2's "mixed_float16" and Policy object, Keras 3's DTypePolicy (FloatDTypePolicy
  // in 3.0-3.3) object.
  std::string name;
  if (v->is_string()) {
    name = v->get<std::string>();
  } else if (v->is_object() && find(*v, "config") && (*v)["config"].is_object() && find((*v)["config"], "name")) {
    name = (*v)["config"]["name"].is_string() ? (*v)["config"]["name"].get<std::string>() : "";
  }
  // Name the policy first: Keras 3 wraps it in a DTypePolicy object.
  const std::string what = v->is_string() || name.empty() ? show(*v) : "\"" + name + "\" (" + show(*v) + ")";
  try {
    return DTypePolicy::from_name(name);
  } catch (const Unsupported& e) {
    r.unsupported(path, "\"dtype\" = " + what + ": " + e.what(), e.hint());
  } catch (const InvalidArgument& e) {
    r.invalid(path, "\"dtype\" = " + what + ": " + e.what());
  }
}

void check_dtype(const Reader& r, const std::string& path, const json& obj) { read_dtype_policy(r, path, obj); }

void check_data_format(const Reader& r, const std::string& path, const json& obj) {
  require_value(r, path, obj, "data_format", "channels_last");
}

bool get_channels_first(const Reader& r, const std::string& p, const json& c) {
  const std::string format = get_string(r, p, c, "data_format", "channels_last");
  if (format != "channels_last" && format != "channels_first") {
    r.invalid(p, "\"data_format\" must be \"channels_last\" or \"channels_first\", got \"" + format + "\"");
  }
  return format == "channels_first";
}

bool is_last_axis(const json& axis, const Shape& in) {
  const json& a = axis.is_array() && axis.size() == 1 ? axis[0] : axis;
  if (!a.is_number_integer()) return false;
  std::int64_t v = a.get<std::int64_t>();
  return v == -1 || v == in.rank();
}

ojson write_initializer(const std::string& name) {
  if (name.rfind("variance_scaling(", 0) == 0) {  // Note [VarianceScaling spelling]
    const std::string args = name.substr(17, name.size() - 18);
    const std::size_t a = args.find(','), b = args.find(',', a + 1);
    return {{"module", "keras.initializers"},
            {"class_name", "VarianceScaling"},
            {"config", ojson{{"scale", std::stod(args.substr(0, a))},
                             {"mode", args.substr(a + 1, b - a - 1)},
                             {"distribution", args.substr(b + 1)},
                             {"seed", nullptr}}},
            {"registered_name", nullptr}};
  }
  std::string cls;
  bool up = true;
  for (char c : name) {
    if (c == '_') {
      up = true;
      continue;
    }
    cls += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  const bool seeded = name != "zeros" && name != "ones";
  return {{"module", "keras.initializers"},
          {"class_name", cls},
          {"config", seeded ? ojson{{"seed", nullptr}} : ojson::object()},
          {"registered_name", nullptr}};
}

// Keras 2 and 3 both name a hard_sigmoid, with different formulas (keras_config.h): each
// is written only where its generation reads it so.
std::string write_activation(const Writer& w, const Layer& l, const std::string& name) {
  if (name == "hard_sigmoid" && w.keras2) {
    throw Unsupported(l.name() + ": Keras 3's hard_sigmoid (relu6(x + 3) / 6) has no name in Keras 2's format, "
                      "where hard_sigmoid means clip(0.2 x + 0.5, 0, 1)",
                      "save the model as .keras");
  }
  if (name == "hard_sigmoid_keras2") {
    if (w.keras2) return "hard_sigmoid";
    throw Unsupported(l.name() + ": Keras 2's hard_sigmoid (clip(0.2 x + 0.5, 0, 1)) has no name in Keras 3's format",
                      "save the model as a legacy .h5");
  }
  return name;
}

const char* write_data_format(bool channels_first) { return channels_first ? "channels_first" : "channels_last"; }

}  // namespace nnfit::keras_json
