// Keras codecs of the convolutions: Conv1D (valid, same, causal) and Conv2D.
#include "model/keras_codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

// The keys every convolution shares (the per-axis tuples kernel_size, strides and
// dilation_rate are the caller's): Conv1DOptions or Conv2DOptions.
template <typename Options>
void read_conv_common(const Reader& r, const std::string& p, const json& c, Options& o) {
  check_keys(r, p, c, kCommon,
             {"filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups", "activation",
              "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
              "activity_regularizer", "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha"});
  require_null(r, p, c, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                         "bias_constraint", "lora_rank"});
  check_data_format(r, p, c);
  require_value(r, p, c, "groups", 1);
  o.filters = get_int(r, p, c, "filters", std::nullopt);
  if (o.filters <= 0) r.invalid(p, "\"filters\" must be positive, got " + std::to_string(o.filters));
  if (!value(c, "kernel_size")) r.invalid(p, "missing required key \"kernel_size\"");
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  o.activation = get_activation(r, p, c, o.activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
}

void unsupported_dilation(const Reader& r, const std::string& p, const json& c) {
  r.unsupported(p, "\"dilation_rate\" = " + show(c["dilation_rate"]) + " is not supported (only 1)");
}

LayerPtr read_conv2d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  Conv2DOptions o;
  read_conv_common(r, p, c, o);
  if (get_pair(r, p, c, "dilation_rate", {1, 1}) != std::vector<std::int64_t>{1, 1}) unsupported_dilation(r, p, c);
  o.kernel_size = get_pair(r, p, c, "kernel_size", {});
  o.strides = get_pair(r, p, c, "strides", o.strides);
  return std::make_unique<Conv2D>(name, o);
}

LayerPtr read_conv1d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  Conv1DOptions o;
  read_conv_common(r, p, c, o);
  if (get_tuple(r, p, c, "dilation_rate", 1, {1})[0] != 1) unsupported_dilation(r, p, c);
  o.kernel_size = get_tuple(r, p, c, "kernel_size", 1, {})[0];
  o.strides = get_tuple(r, p, c, "strides", 1, {o.strides})[0];
  return std::make_unique<Conv1D>(name, o);
}

bool write_conv(const Writer& w, const Layer& l, ojson& c) {
  if (auto* cv = dynamic_cast<const Conv2D*>(&l)) {
    const Conv2DOptions& o = cv->options();
    c.update({{"filters", o.filters}, {"kernel_size", o.kernel_size}, {"strides", o.strides},
              {"padding", o.padding}, {"data_format", "channels_last"}, {"dilation_rate", {1, 1}}, {"groups", 1},
              {"activation", write_activation(w, l, o.activation)}, {"use_bias", o.use_bias},
              {"kernel_initializer", write_initializer(o.kernel_initializer)},
              {"bias_initializer", write_initializer(o.bias_initializer)}, {"kernel_regularizer", nullptr},
              {"bias_regularizer", nullptr}, {"activity_regularizer", nullptr}, {"kernel_constraint", nullptr},
              {"bias_constraint", nullptr}});
  } else if (auto* c1 = dynamic_cast<const Conv1D*>(&l)) {
    const Conv1DOptions& o = c1->options();
    c.update({{"filters", o.filters}, {"kernel_size", {o.kernel_size}}, {"strides", {o.strides}},
              {"padding", o.padding}, {"data_format", "channels_last"}, {"dilation_rate", {1}}, {"groups", 1},
              {"activation", write_activation(w, l, o.activation)}, {"use_bias", o.use_bias},
              {"kernel_initializer", write_initializer(o.kernel_initializer)},
              {"bias_initializer", write_initializer(o.bias_initializer)}, {"kernel_regularizer", nullptr},
              {"bias_regularizer", nullptr}, {"activity_regularizer", nullptr}, {"kernel_constraint", nullptr},
              {"bias_constraint", nullptr}});
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& conv_layers() {
  static const LayerFamily family{{{"Conv2D", read_conv2d}, {"Conv1D", read_conv1d}}, write_conv};
  return family;
}

}  // namespace nnfit::keras_json
