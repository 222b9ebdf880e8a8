// ONNX forms of Keras's window and spatial layers: Max/AveragePooling1D/2D/3D, the global
// poolings, ZeroPadding, Cropping and UpSampling (1D/2D/3D). Pooling ops read channels-first
// (Note [Layouts in the exported graph]); the others work in whichever layout the value has,
// with their axes placed accordingly.
#include <limits>

#include "model/onnx/layer_converters.h"

namespace nnfit::onnx_export {
namespace pooling_family {
namespace {

using V = std::vector<Value>;

// A spatial layer's input and where its spatial axes sit: for data_format="channels_first"
// the Keras tensor itself (axes 2..), else the value in its layout, moved channels-first
// first when the op needs it.
struct Spatial {
  Value x;
  std::vector<std::int64_t> axes;
};

Spatial spatial(LayerCall& c, bool needs_channels_first) {
  const bool channels_first = c.config.value("data_format", std::string("channels_last")) == "channels_first";
  Value x = c.emit.as_float(c.in());
  if (channels_first) {
    x = c.emit.to_keras(x);
  } else if (needs_channels_first) {
    x = c.emit.to_channels_first(x);
  }
  // For a channels-first Keras layer in the Keras layout, and a channels-last one moved
  // channels-first, the spatial axes are 2..; a channels-last one in place has them at 1..
  const bool from_two = channels_first || (x.layout == Layout::channels_first && x.rank >= 3);
  Spatial s{x, {}};
  for (int a = 0; a < x.rank - 2; ++a) s.axes.push_back(from_two ? a + 2 : a + 1);
  return s;
}

Value like(const Value& x, const std::string& name) { return LayerCall::out(name, x.rank, x.layout, x.mask_from); }

V pool(LayerCall& c, const char* op) {
  const Spatial s = spatial(c, /*needs_channels_first=*/true);
  const std::vector<std::int64_t> size = c.integers("pool_size");
  std::vector<std::int64_t> strides = size;
  if (c.config.contains("strides") && !c.config["strides"].is_null()) strides = c.integers("strides");
  const std::string padding = c.text("padding");
  if (padding != "same" && padding != "valid") c.refuse("padding '" + padding + "' is not exported");
  std::vector<Attribute> attrs{Attribute::of("kernel_shape", size), Attribute::of("strides", strides),
                               Attribute::of("auto_pad", std::string(padding == "same" ? "SAME_UPPER" : "VALID"))};
  // Keras's average leaves padding out of the count (ONNX's default, count_include_pad=0).
  return {like(s.x, c.emit.node(op, {s.x.name}, attrs, c.hint()))};
}

V max_pool(LayerCall& c) { return pool(c, "MaxPool"); }
V average_pool(LayerCall& c) { return pool(c, "AveragePool"); }

V global_pool(LayerCall& c, const char* op) {
  const Spatial s = spatial(c, false);
  const bool keepdims = c.flag("keepdims");
  const std::string y = c.emit.reduce(op, s.x.name, s.axes, keepdims, c.hint());
  return {keepdims ? like(s.x, y) : LayerCall::out(y, 2)};
}

V global_average(LayerCall& c) { return global_pool(c, "ReduceMean"); }
V global_max(LayerCall& c) { return global_pool(c, "ReduceMax"); }

// "padding" / "cropping": (before, after) for one spatial axis, or one such pair per axis.
std::vector<std::pair<std::int64_t, std::int64_t>> pairs(const LayerCall& c, const char* key) {
  const ojson& v = c.config.at(key);
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto pair = [&](const ojson& p) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer()) {
      c.refuse(std::string("config '") + key + "' is " + v.dump() + ", not (before, after) pairs");
    }
    out.emplace_back(p[0].get<std::int64_t>(), p[1].get<std::int64_t>());
  };
  if (v.is_array() && !v.empty() && v[0].is_number()) {
    pair(v);
  } else if (v.is_array()) {
    for (const ojson& p : v) pair(p);
  } else {
    c.refuse(std::string("config '") + key + "' is " + v.dump() + ", not (before, after) pairs");
  }
  return out;
}

V zero_padding(LayerCall& c) {
  const Spatial s = spatial(c, false);
  const auto p = pairs(c, "padding");
  if (p.size() != s.axes.size()) c.refuse("its padding has the wrong rank");
  std::vector<std::int64_t> pads(static_cast<std::size_t>(2 * s.x.rank), 0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    pads[static_cast<std::size_t>(s.axes[i])] = p[i].first;
    pads[static_cast<std::size_t>(s.x.rank + s.axes[i])] = p[i].second;
  }
  const std::string pad = c.emit.constant_i64(c.hint("pads"), {static_cast<std::int64_t>(pads.size())}, pads);
  return {like(s.x, c.emit.node("Pad", {s.x.name, pad}, {Attribute::of("mode", std::string("constant"))}, c.hint()))};
}

V cropping(LayerCall& c) {
  const Spatial s = spatial(c, false);
  const auto p = pairs(c, "cropping");
  if (p.size() != s.axes.size()) c.refuse("its cropping has the wrong rank");
  std::vector<std::int64_t> starts, ends;
  for (const auto& [before, after] : p) {
    starts.push_back(before);
    ends.push_back(after > 0 ? -after : std::numeric_limits<std::int64_t>::max());
  }
  const auto n = static_cast<std::int64_t>(p.size());
  const std::string y = c.emit.node("Slice",
                                    {s.x.name, c.emit.constant_i64(c.hint("starts"), {n}, starts),
                                     c.emit.constant_i64(c.hint("ends"), {n}, ends), c.emit.constant_i64(c.hint("axes"), {n}, s.axes)},
                                    {}, c.hint());
  return {like(s.x, y)};
}

V up_sampling(LayerCall& c) {
  const Spatial s = spatial(c, false);
  const std::vector<std::int64_t> size = c.integers("size");
  if (size.size() != s.axes.size()) c.refuse("its size has the wrong rank");
  std::vector<float> scales(static_cast<std::size_t>(s.x.rank), 1.0f);
  for (std::size_t i = 0; i < size.size(); ++i) scales[static_cast<std::size_t>(s.axes[i])] = static_cast<float>(size[i]);
  const std::string interpolation = c.config.value("interpolation", std::string("nearest"));
  std::vector<Attribute> attrs;
  if (interpolation == "nearest") {  // Keras repeats each pixel: source index = floor(i / size)
    attrs = {Attribute::of("mode", std::string("nearest")), Attribute::of("coordinate_transformation_mode", std::string("asymmetric")),
             Attribute::of("nearest_mode", std::string("floor"))};
  } else if (interpolation == "bilinear") {  // tf.image.resize's half-pixel centres
    attrs = {Attribute::of("mode", std::string("linear")), Attribute::of("coordinate_transformation_mode", std::string("half_pixel"))};
  } else {
    c.refuse("interpolation '" + interpolation + "' is not exported");
  }
  const std::string sc = c.emit.constant(c.hint("scales"), {s.x.rank}, scales);
  return {like(s.x, c.emit.node("Resize", {s.x.name, "", sc}, attrs, c.hint()))};
}

}  // namespace

std::vector<ConverterEntry> entries() {
  return {
      {"MaxPooling1D", max_pool},
      {"MaxPooling2D", max_pool},
      {"MaxPooling3D", max_pool},
      {"AveragePooling1D", average_pool},
      {"AveragePooling2D", average_pool},
      {"AveragePooling3D", average_pool},
      {"GlobalAveragePooling1D", global_average, /*reads_mask=*/true},
      {"GlobalAveragePooling2D", global_average},
      {"GlobalAveragePooling3D", global_average},
      {"GlobalMaxPooling1D", global_max, /*reads_mask=*/true},
      {"GlobalMaxPooling2D", global_max},
      {"GlobalMaxPooling3D", global_max},
      {"ZeroPadding1D", zero_padding},
      {"ZeroPadding2D", zero_padding},
      {"ZeroPadding3D", zero_padding},
      {"Cropping1D", cropping},
      {"Cropping2D", cropping},
      {"Cropping3D", cropping},
      {"UpSampling1D", up_sampling},
      {"UpSampling2D", up_sampling},
      {"UpSampling3D", up_sampling},
  };
}

}  // namespace pooling_family

std::vector<ConverterEntry> pooling_converters() { return pooling_family::entries(); }

}  // namespace nnfit::onnx_export
