// Keras JSON → layers: finds a layer class's reader among the families' codecs
// (codecs/, one file per family) and reads input layers; keras_model_config.cpp reads
// the models. Each Keras object is read against the list of keys Keras 2 or Keras 3 writes
// for it: a key outside that list is a typo or a feature we would silently drop, so it is
// an error; a known key whose value nnfit does not implement (regularizers, dilation,
// frozen layers) is Unsupported. Shapes are inferred layer by layer while reading, so a
// layer that does not fit its input is reported with its index and name before compile().
#include "nnfit/model/keras_config.h"

#include <string>

#include "model/keras/codecs/codec.h"
#include "model/keras/keras_json.h"
#include "model/keras/keras_layers.h"
#include "nnfit/core/error.h"

namespace nnfit::keras_json {
namespace {

// Keras batch shape [null, d1, ...] -> Shape{d1, ...}; a null dimension after the batch entry
// is kUnknownDim.
Shape batch_shape(const Reader& r, const std::string& path, const json& v, const char* key) {
  if (!v.is_array() || v.empty()) r.invalid(path, std::string("\"") + key + "\" must be a list, got " + show(v));
  // The batch entry is what Keras writes: null, or a fixed batch size.
  if (!v[0].is_null() && !(v[0].is_number_integer() && v[0].get<std::int64_t>() > 0)) {
    r.invalid(path, std::string("\"") + key + "\" must start with null or a positive batch size, got " + show(v));
  }
  std::vector<std::int64_t> dims;
  std::int64_t elements = 1;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i].is_null()) {  // known per batch (Note [Shapes known per batch])
      dims.push_back(kUnknownDim);
      continue;
    }
    if (!v[i].is_number_integer() || v[i].get<std::int64_t>() <= 0) {
      r.invalid(path, std::string("\"") + key + "\" must hold positive sizes after the batch entry, got " + show(v));
    }
    if (__builtin_mul_overflow(elements, v[i].get<std::int64_t>(), &elements)) {
      r.invalid(path, std::string("\"") + key + "\" = " + show(v) + ": the sizes' product overflows 64 bits");
    }
    dims.push_back(v[i].get<std::int64_t>());
  }
  return Shape(std::move(dims));
}

// Keras's aliases for the same classes.
std::string canonical_class(const std::string& c) {
  if (c == "Convolution2D") return "Conv2D";
  if (c == "Convolution1D") return "Conv1D";
  if (c == "Convolution3D") return "Conv3D";
  if (c == "Convolution1DTranspose") return "Conv1DTranspose";
  if (c == "Convolution2DTranspose") return "Conv2DTranspose";
  if (c == "Convolution3DTranspose") return "Conv3DTranspose";
  if (c == "GroupedQueryAttention") return "GroupQueryAttention";  // the class behind the name Keras writes
  if (c == "SeparableConvolution1D") return "SeparableConv1D";
  if (c == "SeparableConvolution2D") return "SeparableConv2D";
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
  for (const LayerFamily* f : layer_families()) {
    for (const LayerCodec& c : f->classes) out += std::string(", ") + c.class_name;
  }
  return out;
}

}  // namespace

DType read_input_dtype(const Reader& r, const std::string& p, const json& c) {
  const json* v = value(c, "dtype");
  if (!v) return DType::f32;
  std::string name;
  if (v->is_string()) {
    name = v->get<std::string>();
  } else if (v->is_object() && find(*v, "config") && (*v)["config"].is_object() && find((*v)["config"], "name") &&
             (*v)["config"]["name"].is_string()) {
    name = (*v)["config"]["name"].get<std::string>();
  }
  // float16 / bfloat16: Keras writes a nested model's InputLayer in the compute dtype of the
  // tensor it is called on (mixed policies); data enters as float32 and each layer casts it
  // to its own compute type, as under Keras's autocast.
  if (name == "float32" || name == "float16" || name == "bfloat16") return DType::f32;
  if (name == "int8" || name == "int16" || name == "int32" || name == "uint16") return DType::i32;
  if (name == "int64" || name == "uint32") return DType::i64;
  if (name == "uint8") return DType::u8;
  if (name == "bool") return DType::boolean;  // an attention mask, fed as 0/1
  r.unsupported(p, "\"dtype\" = " + show(*v) + " is not supported for an input (float32, float16, bfloat16, bool or an integer type)");
}

Shape read_input_layer(const Reader& r, const std::string& p, const json& c) {
  check_keys(r, p, c, {"name", "dtype", "batch_shape", "batch_input_shape", "sparse", "ragged", "optional"});
  read_input_dtype(r, p, c);
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
  const LayerCodec* codec = nullptr;
  for (const LayerFamily* f : layer_families()) {
    for (const LayerCodec& c : f->classes) codec = !custom && lcls == c.class_name ? &c : codec;
  }
  if (!codec) {
    r.invalid(lpath, "unknown layer class \"" + lcls + "\"" + (custom ? " (a custom layer)" : ""),
              "supported layer classes: " + supported_classes());
  }
  const std::optional<DTypePolicy> policy = read_dtype_policy(r, lpath, cfg);
  const bool trainable = get_bool(r, lpath, cfg, "trainable", true);
  const Shape one = in.size() == 1 ? in[0] : Shape{};
  LayerPtr layer = with_path(r, lpath, name, [&] {
    LayerPtr l = codec->read(r, lpath, cfg, name, one);
    read_weight_options(r, lpath, cfg, *l);
    return l;
  });
  if (!trainable) layer->set_trainable(false);
  if (policy) layer->set_dtype_policy(*policy);
  return layer;
}

std::string canonical_layer_class(const std::string& c) { return canonical_class(c); }

Shape read_batch_shape(const Reader& r, const std::string& path, const json& v, const char* key) {
  return batch_shape(r, path, v, key);
}

void check_float32(const Reader& r, const std::string& path, const json& obj) { check_dtype(r, path, obj); }

}  // namespace nnfit::keras_json
