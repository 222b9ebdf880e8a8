// Keras JSON → layers (the layer readers; keras_model_config.cpp reads the models). Each Keras object is read against
// the list of keys Keras 2 or Keras 3 writes for it: a key outside that list is a typo or a
// feature we would silently drop, so it is an error; a known key whose value nnfit does not
// implement (regularizers, dilation, channels_first, frozen layers) is Unsupported. Shapes
// are inferred layer by layer while reading, so a layer that does not fit its input is
// reported with its index and name before compile().
#include "nnfit/model/keras_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "model/keras_json.h"
#include "nnfit/core/error.h"
#include "model/keras_layers.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/merge_layers.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit::keras_json {
namespace {

// An initializer as a string or a Keras object; only argument-free ones (seed aside)
// can be expressed by a name, so any other argument is Unsupported.
std::string get_initializer(const Reader& r, const std::string& path, const json& obj, const char* key,
                            const std::string& fallback) {
  const json* v = value(obj, key);
  if (!v) return fallback;
  if (v->is_string()) return lower(v->get<std::string>());
  const std::string ipath = path + "." + key;
  expect_object(r, ipath, *v);
  check_keys(r, ipath, *v, {"module", "class_name", "config", "registered_name"});
  std::string name = snake_case(get_string(r, ipath, *v, "class_name", std::nullopt));
  if (const json* c = value(*v, "config")) {
    expect_object(r, ipath + ".config", *c);
    for (const auto& [k, arg] : c->items()) {
      if (k == "seed" || arg.is_null()) continue;  // nnfit seeds every weight from the model seed
      r.unsupported(ipath + ".config", "initializer argument \"" + k + "\" = " + show(arg) + " is not supported",
                    "nnfit initializers take no arguments; use the Keras defaults");
    }
  }
  return name;
}

// Keras 2's hard_sigmoid is clip(0.2 x + 0.5, 0, 1), Keras 3's relu6(x + 3) / 6.
std::string activation_name(const Reader& r, std::string name) {
  return r.keras2 && name == "hard_sigmoid" ? "hard_sigmoid_keras2" : name;
}

std::string get_activation(const Reader& r, const std::string& path, const json& obj, std::string fallback) {
  const json* v = value(obj, "activation");
  if (!v) return fallback;
  if (v->is_string()) return activation_name(r, v->get<std::string>());
  // Some Keras versions serialize a built-in activation as {"class_name": "function", "config": "relu"}.
  if (v->is_object() && find(*v, "config") && (*v)["config"].is_string()) {
    return activation_name(r, (*v)["config"].get<std::string>());
  }
  r.unsupported(path, "\"activation\" = " + show(*v) + " is not supported (only built-in activation names)");
}

void check_dtype(const Reader& r, const std::string& path, const json& obj) {
  const json* v = value(obj, "dtype");
  if (!v) return;
  std::string name;
  if (v->is_string()) {
    name = v->get<std::string>();
  } else if (v->is_object() && find(*v, "config") && (*v)["config"].is_object() && find((*v)["config"], "name")) {
    name = (*v)["config"]["name"].is_string() ? (*v)["config"]["name"].get<std::string>() : "";
  }
  if (name != "float32") {
    r.unsupported(path, "\"dtype\" = " + show(*v) + " is not supported (only float32)");
  }
}

void check_data_format(const Reader& r, const std::string& path, const json& obj) {
  require_value(r, path, obj, "data_format", "channels_last");
}

// Keras batch shape [null, d1, ...] -> Shape{d1, ...}.
Shape batch_shape(const Reader& r, const std::string& path, const json& v, const char* key) {
  if (!v.is_array() || v.empty()) r.invalid(path, std::string("\"") + key + "\" must be a list, got " + show(v));
  std::vector<std::int64_t> dims;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i].is_null()) r.unsupported(path, std::string("\"") + key + "\" = " + show(v) + ": variable-size dimensions are not supported");
    if (!v[i].is_number_integer() || v[i].get<std::int64_t>() <= 0) {
      r.invalid(path, std::string("\"") + key + "\" must hold positive sizes after the batch entry, got " + show(v));
    }
    dims.push_back(v[i].get<std::int64_t>());
  }
  return Shape(std::move(dims));
}

// Keys every layer config may carry (Keras 2 and 3). batch_input_shape is Keras 2's
// input shape on the first layer.
const Keys kCommon = {"name", "trainable", "dtype", "dtype_policy", "batch_input_shape"};

using LayerPtr = std::unique_ptr<Layer>;
using LayerReader = LayerPtr (*)(const Reader&, const std::string& path, const json& cfg, const std::string& name,
                                 const Shape& in);

LayerPtr read_dense(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"units", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint",
              "quantization_config", "lora_rank", "lora_alpha"});
  require_null(r, p, c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                         "bias_constraint", "quantization_config", "lora_rank"});
  DenseOptions o;
  o.units = get_int(r, p, c, "units", std::nullopt);
  if (o.units <= 0) r.invalid(p, "\"units\" must be positive, got " + std::to_string(o.units));
  o.activation = get_activation(r, p, c, o.activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  return std::make_unique<Dense>(name, o);
}

LayerPtr read_conv2d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups", "activation",
              "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
              "activity_regularizer", "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha"});
  require_null(r, p, c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                         "bias_constraint", "lora_rank"});
  check_data_format(r, p, c);
  if (get_pair(r, p, c, "dilation_rate", {1, 1}) != std::vector<std::int64_t>{1, 1}) {
    r.unsupported(p, "\"dilation_rate\" = " + show(c["dilation_rate"]) + " is not supported (only 1)");
  }
  require_value(r, p, c, "groups", 1);
  Conv2DOptions o;
  o.filters = get_int(r, p, c, "filters", std::nullopt);
  if (o.filters <= 0) r.invalid(p, "\"filters\" must be positive, got " + std::to_string(o.filters));
  o.kernel_size = get_pair(r, p, c, "kernel_size", {});
  if (o.kernel_size.empty()) r.invalid(p, "missing required key \"kernel_size\"");
  o.strides = get_pair(r, p, c, "strides", o.strides);
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  o.activation = get_activation(r, p, c, o.activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  return std::make_unique<Conv2D>(name, o);
}

LayerPtr read_conv1d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups", "activation",
              "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
              "activity_regularizer", "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha"});
  require_null(r, p, c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                         "bias_constraint", "lora_rank"});
  check_data_format(r, p, c);
  if (get_tuple(r, p, c, "dilation_rate", 1, {1})[0] != 1) {
    r.unsupported(p, "\"dilation_rate\" = " + show(c["dilation_rate"]) + " is not supported (only 1)");
  }
  require_value(r, p, c, "groups", 1);
  Conv1DOptions o;
  o.filters = get_int(r, p, c, "filters", std::nullopt);
  if (o.filters <= 0) r.invalid(p, "\"filters\" must be positive, got " + std::to_string(o.filters));
  if (!value(c, "kernel_size")) r.invalid(p, "missing required key \"kernel_size\"");
  o.kernel_size = get_tuple(r, p, c, "kernel_size", 1, {})[0];
  o.strides = get_tuple(r, p, c, "strides", 1, {o.strides})[0];
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  o.activation = get_activation(r, p, c, o.activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  return std::make_unique<Conv1D>(name, o);
}

Pooling2DOptions read_pooling(const Reader& r, const std::string& p, const json& c) {
  check_keys(r, p, c, kCommon, {"pool_size", "padding", "strides", "data_format"});
  check_data_format(r, p, c);
  Pooling2DOptions o;
  o.pool_size = get_pair(r, p, c, "pool_size", o.pool_size);
  o.strides = get_pair(r, p, c, "strides", {});
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  return o;
}

LayerPtr read_max_pool(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return std::make_unique<MaxPooling2D>(name, read_pooling(r, p, c));
}

LayerPtr read_avg_pool(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return std::make_unique<AveragePooling2D>(name, read_pooling(r, p, c));
}

LayerPtr read_pool1d(const Reader& r, const std::string& p, const json& c, const std::string& name, PoolKind kind) {
  check_keys(r, p, c, kCommon, {"pool_size", "padding", "strides", "data_format"});
  check_data_format(r, p, c);
  Pooling1DOptions o;
  o.kind = kind;
  o.pool_size = get_tuple(r, p, c, "pool_size", 1, {o.pool_size})[0];
  o.strides = get_tuple(r, p, c, "strides", 1, {0})[0];
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  return std::make_unique<Pooling1D>(name, o);
}

template <PoolKind kKind>
LayerPtr read_pool1d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_pool1d(r, p, c, name, kKind);
}

// data_format for layers that take either: true for channels_first.
bool get_channels_first(const Reader& r, const std::string& p, const json& c) {
  const std::string format = get_string(r, p, c, "data_format", "channels_last");
  if (format != "channels_last" && format != "channels_first") {
    r.invalid(p, "\"data_format\" must be \"channels_last\" or \"channels_first\", got \"" + format + "\"");
  }
  return format == "channels_first";
}

template <PoolKind kKind, int kRank>
LayerPtr read_global_pool(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"data_format", "keepdims"});
  GlobalPoolingOptions o;
  o.kind = kKind;
  o.rank = kRank;
  o.channels_first = get_channels_first(r, p, c);
  o.keepdims = get_bool(r, p, c, "keepdims", false);
  return std::make_unique<GlobalPooling>(name, o);
}

// Keras's padding/cropping argument for `rank` spatial axes: an integer (every side), and
// for rank 1 a pair (before, after); for rank 2 and 3 a list of `rank` integers (both
// sides of each axis) or of `rank` pairs.
SpatialPairs get_spatial_pairs(const Reader& r, const std::string& p, const json& c, const char* key, int rank) {
  const json* v = value(c, key);
  const SpatialPairs fallback(static_cast<std::size_t>(rank), {1, 1});
  if (!v) return key == std::string("cropping") ? SpatialPairs(static_cast<std::size_t>(rank), {0, 0}) : fallback;
  auto bad = [&]() {
    r.invalid(p, std::string("\"") + key + "\" must be an integer" +
                     (rank == 1 ? " or a pair" : ", a list of " + std::to_string(rank) + " integers or of " +
                                                     std::to_string(rank) + " pairs") +
                     " of integers >= 0, got " + show(*v));
  };
  auto amount = [&](const json& e) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0) bad();
    return e.get<std::int64_t>();
  };
  if (v->is_number()) {
    const std::int64_t n = amount(*v);
    return SpatialPairs(static_cast<std::size_t>(rank), {n, n});
  }
  if (!v->is_array()) bad();
  if (rank == 1) {
    if (v->size() != 2) bad();
    return {{amount((*v)[0]), amount((*v)[1])}};
  }
  if (v->size() != static_cast<std::size_t>(rank)) bad();
  SpatialPairs out;
  for (const json& e : *v) {
    if (e.is_array()) {
      if (e.size() != 2) bad();
      out.push_back({amount(e[0]), amount(e[1])});
    } else {
      out.push_back({amount(e), amount(e)});
    }
  }
  return out;
}

template <int kRank>
LayerPtr read_zero_padding(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"padding", "data_format"});
  return std::make_unique<ZeroPadding>(
      name, ZeroPaddingOptions{kRank, get_spatial_pairs(r, p, c, "padding", kRank), get_channels_first(r, p, c)});
}

template <int kRank>
LayerPtr read_cropping(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"cropping", "data_format"});
  if (kRank == 1) check_data_format(r, p, c);
  return std::make_unique<Cropping>(
      name, CroppingOptions{kRank, get_spatial_pairs(r, p, c, "cropping", kRank), get_channels_first(r, p, c)});
}

template <int kRank>
LayerPtr read_up_sampling(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"size", "data_format", "interpolation"});
  const std::string interpolation = get_string(r, p, c, "interpolation", "nearest");
  if (interpolation != "nearest") {
    r.unsupported(p, "\"interpolation\" = \"" + interpolation + "\" is not supported (only \"nearest\")");
  }
  const std::vector<std::int64_t> size = get_tuple(r, p, c, "size", kRank, std::vector<std::int64_t>(kRank, 2));
  return std::make_unique<UpSampling>(name, UpSamplingOptions{kRank, size, get_channels_first(r, p, c)});
}

LayerPtr read_permute(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"dims"});
  const json* d = value(c, "dims");
  if (!d) r.invalid(p, "missing required key \"dims\"");
  if (!d->is_array()) r.invalid(p, "\"dims\" must be a list, got " + show(*d));
  std::vector<std::int64_t> dims;
  for (const json& e : *d) {
    if (!e.is_number_integer()) r.invalid(p, "\"dims\" must hold integers, got " + show(*d));
    dims.push_back(e.get<std::int64_t>());
  }
  return std::make_unique<Permute>(name, std::move(dims));
}

LayerPtr read_repeat_vector(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"n"});
  if (!value(c, "n")) r.invalid(p, "missing required key \"n\"");
  return std::make_unique<RepeatVector>(name, get_int(r, p, c, "n", std::nullopt));
}

LayerPtr read_flatten(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"data_format"});
  check_data_format(r, p, c);
  return std::make_unique<Flatten>(name);
}

LayerPtr read_reshape(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"target_shape"});
  const json* t = value(c, "target_shape");
  if (!t) r.invalid(p, "missing required key \"target_shape\"");
  if (!t->is_array()) r.invalid(p, "\"target_shape\" must be a list, got " + show(*t));
  std::vector<std::int64_t> target;
  for (const json& d : *t) {
    if (!d.is_number_integer()) r.invalid(p, "\"target_shape\" must hold integers, got " + show(*t));
    target.push_back(d.get<std::int64_t>());
  }
  return std::make_unique<Reshape>(name, std::move(target));
}

LayerPtr read_dropout(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"rate", "noise_shape", "seed"});
  require_null(r, p, c, {"noise_shape"});
  if (!value(c, "rate")) r.invalid(p, "missing required key \"rate\"");
  return std::make_unique<Dropout>(name, get_number(r, p, c, "rate", 0.0), get_int(r, p, c, "seed", 0));
}

LayerPtr read_activation(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"activation"});
  if (!value(c, "activation")) r.invalid(p, "missing required key \"activation\"");
  return std::make_unique<Activation>(name, get_activation(r, p, c, ""));
}

LayerPtr read_relu(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"max_value", "negative_slope", "threshold"});
  require_null(r, p, c, {"max_value"});
  if (get_number(r, p, c, "negative_slope", 0.0) != 0.0 || get_number(r, p, c, "threshold", 0.0) != 0.0) {
    r.unsupported(p, "ReLU with a negative_slope or threshold other than 0 is not supported");
  }
  return std::make_unique<ReLU>(name);
}

// Keras's axis: -1, the last axis counted with the batch axis, or (Keras 2 BN) a list of one.
bool is_last_axis(const json& axis, const Shape& in) {
  const json& a = axis.is_array() && axis.size() == 1 ? axis[0] : axis;
  if (!a.is_number_integer()) return false;
  std::int64_t v = a.get<std::int64_t>();
  return v == -1 || v == in.rank();
}

LayerPtr read_softmax(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape& in) {
  check_keys(r, p, c, kCommon, {"axis"});
  const json* axis = value(c, "axis");
  if (axis && !is_last_axis(*axis, in)) r.unsupported(p, "\"axis\" = " + show(*axis) + " is not supported (only -1)");
  return std::make_unique<Softmax>(name);
}

LayerPtr read_batch_norm(const Reader& r, const std::string& p, const json& c, const std::string& name,
                         const Shape& in) {
  check_keys(r, p, c, kCommon,
             {"axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
              "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
              "beta_constraint", "gamma_constraint", "synchronized", "renorm", "renorm_clipping", "renorm_momentum",
              "fused", "virtual_batch_size", "adjustment"});
  require_null(r, p, c, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
                         "renorm_clipping", "virtual_batch_size", "adjustment"});
  require_value(r, p, c, "renorm", false);
  const json* axis = value(c, "axis");
  if (axis && !is_last_axis(*axis, in)) {
    r.unsupported(p, "\"axis\" = " + show(*axis) + " is not supported (only the last axis, -1)");
  }
  const std::pair<const char*, const char*> defaults[] = {{"beta_initializer", "zeros"},
                                                          {"gamma_initializer", "ones"},
                                                          {"moving_mean_initializer", "zeros"},
                                                          {"moving_variance_initializer", "ones"}};
  for (const auto& [key, def] : defaults) {
    if (get_initializer(r, p, c, key, def) != def) {
      r.unsupported(p, std::string("\"") + key + "\" other than " + def + " is not supported");
    }
  }
  BatchNormalizationOptions o;
  o.momentum = get_number(r, p, c, "momentum", o.momentum);
  o.epsilon = get_number(r, p, c, "epsilon", o.epsilon);
  o.center = get_bool(r, p, c, "center", o.center);
  o.scale = get_bool(r, p, c, "scale", o.scale);
  return std::make_unique<BatchNormalization>(name, o);
}

// The merge layers: Add, Subtract, ... take only the common keys.
template <MergeOp kOp>
LayerPtr read_merge(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon);
  return std::make_unique<Merge>(name, kOp);
}

LayerPtr read_concatenate(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"axis"});
  return std::make_unique<Concatenate>(name, get_int(r, p, c, "axis", -1));
}

LayerPtr read_dot(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"axes", "normalize"});
  const json* a = value(c, "axes");
  if (!a) r.invalid(p, "missing required key \"axes\"");
  std::array<std::int64_t, 2> axes{};
  if (a->is_number_integer()) {
    axes = {a->get<std::int64_t>(), a->get<std::int64_t>()};
  } else if (a->is_array() && a->size() == 2 && (*a)[0].is_number_integer() && (*a)[1].is_number_integer()) {
    axes = {(*a)[0].get<std::int64_t>(), (*a)[1].get<std::int64_t>()};
  } else {
    r.invalid(p, "\"axes\" must be an integer or a list of two, got " + show(*a));
  }
  return std::make_unique<Dot>(name, axes, get_bool(r, p, c, "normalize", false));
}

struct LayerKind {
  const char* class_name;
  LayerReader read;
};

constexpr LayerKind kLayers[] = {
    {"Dense", read_dense},         {"Conv2D", read_conv2d},      {"Conv1D", read_conv1d},
    {"MaxPooling2D", read_max_pool}, {"AveragePooling2D", read_avg_pool},
    {"MaxPooling1D", read_pool1d<PoolKind::max>}, {"AveragePooling1D", read_pool1d<PoolKind::average>},
    {"GlobalAveragePooling1D", read_global_pool<PoolKind::average, 1>},
    {"GlobalAveragePooling2D", read_global_pool<PoolKind::average, 2>},
    {"GlobalAveragePooling3D", read_global_pool<PoolKind::average, 3>},
    {"GlobalMaxPooling1D", read_global_pool<PoolKind::max, 1>},
    {"GlobalMaxPooling2D", read_global_pool<PoolKind::max, 2>},
    {"GlobalMaxPooling3D", read_global_pool<PoolKind::max, 3>},
    {"ZeroPadding1D", read_zero_padding<1>}, {"ZeroPadding2D", read_zero_padding<2>},
    {"ZeroPadding3D", read_zero_padding<3>}, {"Cropping1D", read_cropping<1>},
    {"Cropping2D", read_cropping<2>},       {"Cropping3D", read_cropping<3>},
    {"UpSampling1D", read_up_sampling<1>},  {"UpSampling2D", read_up_sampling<2>},
    {"UpSampling3D", read_up_sampling<3>},  {"Permute", read_permute},
    {"RepeatVector", read_repeat_vector},
    {"Flatten", read_flatten},     {"Reshape", read_reshape},
    {"Dropout", read_dropout},     {"Activation", read_activation},
    {"ReLU", read_relu},           {"Softmax", read_softmax},
    {"BatchNormalization", read_batch_norm},
    {"Add", read_merge<MergeOp::add>},     {"Subtract", read_merge<MergeOp::subtract>},
    {"Multiply", read_merge<MergeOp::multiply>}, {"Average", read_merge<MergeOp::average>},
    {"Maximum", read_merge<MergeOp::maximum>}, {"Minimum", read_merge<MergeOp::minimum>},
    {"Concatenate", read_concatenate}, {"Dot", read_dot},
};

// Keras's aliases for the same classes.
std::string canonical_class(const std::string& c) {
  if (c == "Convolution2D") return "Conv2D";
  if (c == "Convolution1D") return "Conv1D";
  // Keras's short aliases: MaxPool1D -> MaxPooling1D, GlobalAvgPool2D -> GlobalAveragePooling2D, ...
  const struct {
    const char* alias;
    const char* full;
  } kAliases[] = {{"GlobalMaxPool", "GlobalMaxPooling"}, {"GlobalAvgPool", "GlobalAveragePooling"},
                  {"MaxPool", "MaxPooling"}, {"AvgPool", "AveragePooling"}};
  for (const auto& [alias, full] : kAliases) {
    const std::string a = alias;
    if (c.size() == a.size() + 2 && c.compare(0, a.size(), a) == 0 && c.back() == 'D') return full + c.substr(a.size());
  }
  return c;
}

std::string supported_classes() {
  std::string out = "InputLayer";
  for (const LayerKind& k : kLayers) out += std::string(", ") + k.class_name;
  return out;
}

}  // namespace

Shape read_input_layer(const Reader& r, const std::string& p, const json& c) {
  check_keys(r, p, c, {"name", "dtype", "batch_shape", "batch_input_shape", "sparse", "ragged", "optional"});
  check_dtype(r, p, c);
  require_value(r, p, c, "sparse", false);
  require_value(r, p, c, "ragged", false);
  require_value(r, p, c, "optional", false);
  const json* s = value(c, "batch_shape");
  const char* key = "batch_shape";
  if (!s) {
    s = value(c, "batch_input_shape");
    key = "batch_input_shape";
  }
  if (!s) r.invalid(p, "an InputLayer needs \"batch_shape\" (Keras 3) or \"batch_input_shape\" (Keras 2)");
  return batch_shape(r, p, *s, key);
}


std::unique_ptr<Layer> read_layer(const Reader& r, const std::string& lpath, const std::string& lcls, const json& cfg,
                                  const std::string& name, bool custom, const std::vector<Shape>& in) {
  const LayerKind* kind = nullptr;
  for (const LayerKind& k : kLayers) kind = !custom && lcls == k.class_name ? &k : kind;
  if (!kind) {
    r.invalid(lpath, "unknown layer class \"" + lcls + "\"" + (custom ? " (a custom layer)" : ""),
              "supported layer classes: " + supported_classes());
  }
  check_dtype(r, lpath, cfg);
  require_value(r, lpath, cfg, "trainable", true);
  const Shape one = in.size() == 1 ? in[0] : Shape{};
  LayerPtr layer = with_path(r, lpath, name, [&] { return kind->read(r, lpath, cfg, name, one); });
  return layer;
}

std::string canonical_layer_class(const std::string& c) { return canonical_class(c); }

Shape read_batch_shape(const Reader& r, const std::string& path, const json& v, const char* key) {
  return batch_shape(r, path, v, key);
}

void check_float32(const Reader& r, const std::string& path, const json& obj) { check_dtype(r, path, obj); }

}  // namespace nnfit::keras_json
