// Keras codecs of the core layers: Dense, Flatten, Reshape, Dropout, Embedding, Masking.
#include "model/keras_codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

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

LayerPtr read_embedding(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer", "activity_regularizer",
              "embeddings_constraint", "mask_zero", "input_length", "quantization_config", "lora_rank", "lora_alpha",
              "sparse"});
  require_null(r, p, c, {"embeddings_regularizer", "activity_regularizer", "embeddings_constraint",
                         "quantization_config", "lora_rank"});
  require_value(r, p, c, "sparse", false);
  EmbeddingOptions o;
  o.mask_zero = get_bool(r, p, c, "mask_zero", false);
  o.input_dim = get_int(r, p, c, "input_dim", std::nullopt);
  if (o.input_dim <= 0) r.invalid(p, "\"input_dim\" must be positive, got " + std::to_string(o.input_dim));
  o.output_dim = get_int(r, p, c, "output_dim", std::nullopt);
  if (o.output_dim <= 0) r.invalid(p, "\"output_dim\" must be positive, got " + std::to_string(o.output_dim));
  o.embeddings_initializer = get_initializer(r, p, c, "embeddings_initializer", o.embeddings_initializer);
  return std::make_unique<Embedding>(name, o);
}

LayerPtr read_masking(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"mask_value"});
  return std::make_unique<Masking>(name, get_number(r, p, c, "mask_value", 0.0));
}

bool write_core(const Writer& w, const Layer& l, ojson& c) {
  if (auto* e = dynamic_cast<const Embedding*>(&l)) {
    const EmbeddingOptions& o = e->options();
    c.update({{"input_dim", o.input_dim}, {"output_dim", o.output_dim},
              {"embeddings_initializer", write_initializer(o.embeddings_initializer)},
              {"embeddings_regularizer", nullptr}, {"activity_regularizer", nullptr},
              {"embeddings_constraint", nullptr}, {"mask_zero", o.mask_zero}});
    return true;
  }
  if (auto* m = dynamic_cast<const Masking*>(&l)) {
    c["mask_value"] = m->mask_value();
    return true;
  }
  if (auto* d = dynamic_cast<const Dense*>(&l)) {
    const DenseOptions& o = d->options();
    c.update({{"units", o.units}, {"activation", write_activation(w, l, o.activation)}, {"use_bias", o.use_bias},
              {"kernel_initializer", write_initializer(o.kernel_initializer)},
              {"bias_initializer", write_initializer(o.bias_initializer)}, {"kernel_regularizer", nullptr},
              {"bias_regularizer", nullptr}, {"kernel_constraint", nullptr}, {"bias_constraint", nullptr}});
  } else if (dynamic_cast<const Flatten*>(&l)) {
    c["data_format"] = "channels_last";
  } else if (auto* r = dynamic_cast<const Reshape*>(&l)) {
    c["target_shape"] = r->target_shape();
  } else if (auto* dr = dynamic_cast<const Dropout*>(&l)) {
    c.update({{"rate", dr->rate()}, {"seed", dr->seed() ? ojson(dr->seed()) : ojson(nullptr)}, {"noise_shape", nullptr}});
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& core_layers() {
  static const LayerFamily family{{{"Dense", read_dense},
                                   {"Flatten", read_flatten},
                                   {"Reshape", read_reshape},
                                   {"Dropout", read_dropout},
                                   {"Embedding", read_embedding},
                                   {"Masking", read_masking}},
                                  write_core};
  return family;
}

}  // namespace nnfit::keras_json
