// Keras codecs of the convolutions: Conv1D (valid, same, causal), Conv2D and Conv3D with
// dilation_rate and groups, DepthwiseConv1D/2D, SeparableConv1D/2D, Conv1DTranspose,
// Conv2DTranspose and Conv3DTranspose. Keras 2 writes the base Conv's keys into every subclass's config
// (groups, kernel_initializer in a SeparableConv2D): they are accepted where harmless.
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

// The window keys of every convolution, read for `rank` spatial axes into the options'
// kernel_size, strides, dilation_rate (vectors) and padding.
template <typename Options>
void read_window(const Reader& r, const std::string& p, const json& c, std::size_t rank, Options& o) {
  check_data_format(r, p, c);
  if (!value(c, "kernel_size")) r.invalid(p, "missing required key \"kernel_size\"");
  o.kernel_size = get_tuple(r, p, c, "kernel_size", rank, {});
  o.strides = get_tuple(r, p, c, "strides", rank, std::vector<std::int64_t>(rank, 1));
  o.dilation_rate = get_tuple(r, p, c, "dilation_rate", rank, std::vector<std::int64_t>(rank, 1));
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  o.activation = get_activation(r, p, c, o.activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
}

std::int64_t read_filters(const Reader& r, const std::string& p, const json& c) {
  const std::int64_t filters = get_int(r, p, c, "filters", std::nullopt);
  if (filters <= 0) r.invalid(p, "\"filters\" must be positive, got " + std::to_string(filters));
  return filters;
}

std::int64_t read_depth_multiplier(const Reader& r, const std::string& p, const json& c) {
  const std::int64_t m = get_int(r, p, c, "depth_multiplier", 1);
  if (m <= 0) r.invalid(p, "\"depth_multiplier\" must be positive, got " + std::to_string(m));
  return m;
}

const Keys kConvKeys{"filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "groups",
                     "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
                     "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint", "lora_rank",
                     "lora_alpha"};
const Keys kNullConvKeys{"lora_rank"};

template <typename Options>
void read_conv(const Reader& r, const std::string& p, const json& c, std::size_t rank, Options& o) {
  check_keys(r, p, c, kCommon, kConvKeys);
  require_null(r, p, c, kNullConvKeys);
  read_window(r, p, c, rank, o);
  o.filters = read_filters(r, p, c);
  o.groups = get_int(r, p, c, "groups", 1);
  if (o.groups <= 0 || o.filters % o.groups != 0) {
    r.invalid(p, "\"groups\" = " + std::to_string(o.groups) + " must be positive and divide \"filters\" = " +
                     std::to_string(o.filters));
  }
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
}

LayerPtr read_conv2d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  Conv2DOptions o;
  read_conv(r, p, c, 2, o);
  return std::make_unique<Conv2D>(name, o);
}

LayerPtr read_conv3d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  Conv3DOptions o;
  read_conv(r, p, c, 3, o);
  return std::make_unique<Conv3D>(name, o);
}

LayerPtr read_conv1d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  Conv2DOptions w;  // the keys as vectors of one entry
  read_conv(r, p, c, 1, w);
  Conv1DOptions o;
  o.filters = w.filters, o.groups = w.groups, o.padding = w.padding, o.activation = w.activation;
  o.kernel_size = w.kernel_size[0], o.strides = w.strides[0], o.dilation_rate = w.dilation_rate[0];
  o.use_bias = w.use_bias, o.kernel_initializer = w.kernel_initializer, o.bias_initializer = w.bias_initializer;
  return std::make_unique<Conv1D>(name, o);
}

LayerPtr read_depthwise(const Reader& r, const std::string& p, const json& c, std::size_t rank,
                        const std::string& name) {
  check_keys(r, p, c, kCommon,
             {"kernel_size", "strides", "padding", "depth_multiplier", "data_format", "dilation_rate", "groups",
              "activation", "use_bias", "depthwise_initializer", "bias_initializer", "depthwise_regularizer",
              "bias_regularizer", "activity_regularizer", "depthwise_constraint", "bias_constraint"});
  require_value(r, p, c, "groups", 1);
  DepthwiseConvOptions o;
  read_window(r, p, c, rank, o);
  o.depth_multiplier = read_depth_multiplier(r, p, c);
  o.depthwise_initializer = get_initializer(r, p, c, "depthwise_initializer", o.depthwise_initializer);
  return std::make_unique<DepthwiseConv>(name, o);
}

LayerPtr read_separable(const Reader& r, const std::string& p, const json& c, std::size_t rank,
                        const std::string& name) {
  check_keys(r, p, c, kCommon,
             {"filters", "kernel_size", "strides", "padding", "data_format", "depth_multiplier", "dilation_rate",
              "groups", "activation", "use_bias", "depthwise_initializer", "pointwise_initializer", "bias_initializer",
              "kernel_initializer", "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
              "kernel_regularizer", "activity_regularizer", "depthwise_constraint", "pointwise_constraint",
              "bias_constraint", "kernel_constraint"});
  require_value(r, p, c, "groups", 1);
  SeparableConvOptions o;
  read_window(r, p, c, rank, o);
  o.filters = read_filters(r, p, c);
  o.depth_multiplier = read_depth_multiplier(r, p, c);
  o.depthwise_initializer = get_initializer(r, p, c, "depthwise_initializer", o.depthwise_initializer);
  o.pointwise_initializer = get_initializer(r, p, c, "pointwise_initializer", o.pointwise_initializer);
  return std::make_unique<SeparableConv>(name, o);
}

LayerPtr read_transpose(const Reader& r, const std::string& p, const json& c, std::size_t rank,
                        const std::string& name) {
  check_keys(r, p, c, kCommon,
             {"filters", "kernel_size", "strides", "padding", "output_padding", "data_format", "dilation_rate",
              "groups", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint"});
  require_null(r, p, c, kNullConvKeys);
  require_value(r, p, c, "groups", 1);
  ConvTransposeOptions o;
  read_window(r, p, c, rank, o);
  o.filters = read_filters(r, p, c);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  if (value(c, "output_padding")) {
    const json& v = c["output_padding"];
    const bool ints = v.is_number_integer() || (v.is_array() && v.size() == rank);
    if (ints) {
      for (const json& e : v.is_array() ? v : json::array({v})) {
        if (!e.is_number_integer() || e.get<std::int64_t>() < 0) {
          r.invalid(p, "\"output_padding\" must be null or " + std::to_string(rank) +
                           " non-negative integers, got " + show(v));
        }
        o.output_padding.push_back(e.get<std::int64_t>());
      }
      if (o.output_padding.size() == 1) o.output_padding.resize(rank, o.output_padding[0]);
    } else {
      r.invalid(p, "\"output_padding\" must be null or " + std::to_string(rank) + " non-negative integers, got " +
                       show(v));
    }
  }
  return std::make_unique<ConvTranspose>(name, o);
}

template <std::size_t Rank>
LayerPtr depthwise(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_depthwise(r, p, c, Rank, name);
}
template <std::size_t Rank>
LayerPtr separable(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_separable(r, p, c, Rank, name);
}
template <std::size_t Rank>
LayerPtr transpose(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_transpose(r, p, c, Rank, name);
}

// The keys every writer shares: the window, activation and bias.
void write_window(const Writer& w, const Layer& l, const std::vector<std::int64_t>& kernel_size,
                  const std::vector<std::int64_t>& strides, const std::string& padding,
                  const std::vector<std::int64_t>& dilation_rate, const std::string& activation, bool use_bias,
                  const std::string& bias_initializer, ojson& c) {
  c.update({{"kernel_size", kernel_size}, {"strides", strides}, {"padding", padding},
            {"data_format", "channels_last"}, {"dilation_rate", dilation_rate},
            {"activation", write_activation(w, l, activation)}, {"use_bias", use_bias},
            {"bias_initializer", write_initializer(bias_initializer)}, {"bias_regularizer", nullptr},
            {"activity_regularizer", nullptr}, {"bias_constraint", nullptr}});
}

bool write_conv(const Writer& w, const Layer& l, ojson& c) {
  if (auto* cv = dynamic_cast<const Conv2D*>(&l)) {
    const Conv2DOptions& o = cv->options();
    write_window(w, l, o.kernel_size, o.strides, o.padding, o.dilation_rate, o.activation, o.use_bias,
                 o.bias_initializer, c);
    c.update({{"filters", o.filters}, {"groups", o.groups},
              {"kernel_initializer", write_initializer(o.kernel_initializer)}, {"kernel_regularizer", nullptr},
              {"kernel_constraint", nullptr}});
  } else if (auto* c3 = dynamic_cast<const Conv3D*>(&l)) {
    const Conv3DOptions& o = c3->options();
    write_window(w, l, o.kernel_size, o.strides, o.padding, o.dilation_rate, o.activation, o.use_bias,
                 o.bias_initializer, c);
    c.update({{"filters", o.filters}, {"groups", o.groups},
              {"kernel_initializer", write_initializer(o.kernel_initializer)}, {"kernel_regularizer", nullptr},
              {"kernel_constraint", nullptr}});
  } else if (auto* c1 = dynamic_cast<const Conv1D*>(&l)) {
    const Conv1DOptions& o = c1->options();
    write_window(w, l, {o.kernel_size}, {o.strides}, o.padding, {o.dilation_rate}, o.activation, o.use_bias,
                 o.bias_initializer, c);
    c.update({{"filters", o.filters}, {"groups", o.groups},
              {"kernel_initializer", write_initializer(o.kernel_initializer)}, {"kernel_regularizer", nullptr},
              {"kernel_constraint", nullptr}});
  } else if (auto* dw = dynamic_cast<const DepthwiseConv*>(&l)) {
    const DepthwiseConvOptions& o = dw->options();
    write_window(w, l, o.kernel_size, o.strides, o.padding, o.dilation_rate, o.activation, o.use_bias,
                 o.bias_initializer, c);
    c.update({{"depth_multiplier", o.depth_multiplier},
              {"depthwise_initializer", write_initializer(o.depthwise_initializer)},
              {"depthwise_regularizer", nullptr}, {"depthwise_constraint", nullptr}});
  } else if (auto* sc = dynamic_cast<const SeparableConv*>(&l)) {
    const SeparableConvOptions& o = sc->options();
    write_window(w, l, o.kernel_size, o.strides, o.padding, o.dilation_rate, o.activation, o.use_bias,
                 o.bias_initializer, c);
    c.update({{"filters", o.filters}, {"depth_multiplier", o.depth_multiplier},
              {"depthwise_initializer", write_initializer(o.depthwise_initializer)},
              {"pointwise_initializer", write_initializer(o.pointwise_initializer)},
              {"depthwise_regularizer", nullptr}, {"pointwise_regularizer", nullptr},
              {"depthwise_constraint", nullptr}, {"pointwise_constraint", nullptr}});
  } else if (auto* ct = dynamic_cast<const ConvTranspose*>(&l)) {
    const ConvTransposeOptions& o = ct->options();
    write_window(w, l, o.kernel_size, o.strides, o.padding, o.dilation_rate, o.activation, o.use_bias,
                 o.bias_initializer, c);
    c.update({{"filters", o.filters},
              {"output_padding", o.output_padding.empty() ? ojson(nullptr) : ojson(o.output_padding)},
              {"kernel_initializer", write_initializer(o.kernel_initializer)}, {"kernel_regularizer", nullptr},
              {"kernel_constraint", nullptr}});
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& conv_layers() {
  static const LayerFamily family{{{"Conv2D", read_conv2d},
                                   {"Conv3D", read_conv3d},
                                   {"Conv1D", read_conv1d},
                                   {"DepthwiseConv1D", depthwise<1>},
                                   {"DepthwiseConv2D", depthwise<2>},
                                   {"SeparableConv1D", separable<1>},
                                   {"SeparableConv2D", separable<2>},
                                   {"Conv1DTranspose", transpose<1>},
                                   {"Conv2DTranspose", transpose<2>},
                                   {"Conv3DTranspose", transpose<3>}},
                                  write_conv};
  return family;
}

}  // namespace nnfit::keras_json
