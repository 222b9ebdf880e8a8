// Keras codecs of the core layers: Dense, Flatten, Reshape, Dropout (and SpatialDropout1D/2D/3D),
// Embedding, Masking, ActivityRegularization, Identity, GaussianNoise, GaussianDropout, AlphaDropout, and Keras's NotEqual,
// LogicalOr, LogicalAnd and ConvertToTensor operations.
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

LayerPtr read_dense(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"units", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint",
              "quantization_config", "lora_rank", "lora_alpha"});
  require_null(r, p, c, {"quantization_config", "lora_rank"});
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

double get_rate(const Reader& r, const std::string& p, const json& c) {
  if (!value(c, "rate")) r.invalid(p, "missing required key \"rate\"");
  const double rate = get_number(r, p, c, "rate", 0.0);
  if (!(rate >= 0.0 && rate < 1.0)) r.invalid(p, "\"rate\" must be in [0, 1), got " + show(c["rate"]));
  return rate;
}

LayerPtr read_dropout(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"rate", "noise_shape", "seed"});
  std::vector<std::int64_t> noise;
  if (const json* n = value(c, "noise_shape")) {
    // Keras's tuple with the batch axis; null entries take the input's size (-1 here).
    if (!n->is_array() || n->empty()) r.invalid(p, "\"noise_shape\" must be a list or null, got " + show(*n));
    for (const json& d : *n) {
      if (d.is_null()) {
        noise.push_back(-1);
      } else if (d.is_number_integer() && d.get<std::int64_t>() >= 1) {
        noise.push_back(d.get<std::int64_t>());
      } else {
        r.invalid(p, "\"noise_shape\" entries must be positive integers or null, got " + show(*n));
      }
    }
  }
  return std::make_unique<Dropout>(name, get_rate(r, p, c), get_int(r, p, c, "seed", 0), std::move(noise));
}

LayerPtr read_spatial_dropout(const Reader& r, const std::string& p, const json& c, const std::string& name, int rank) {
  check_keys(r, p, c, kCommon, {"rate", "seed", "data_format", "noise_shape"});
  require_null(r, p, c, {"noise_shape"});
  const bool channels_first = rank > 1 && get_channels_first(r, p, c);
  if (rank == 1) check_data_format(r, p, c);
  return std::make_unique<SpatialDropout>(name, rank, get_rate(r, p, c), get_int(r, p, c, "seed", 0), channels_first);
}

LayerPtr read_spatial_dropout1d(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                const Shape&) {
  return read_spatial_dropout(r, p, c, name, 1);
}
LayerPtr read_spatial_dropout2d(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                const Shape&) {
  return read_spatial_dropout(r, p, c, name, 2);
}
LayerPtr read_spatial_dropout3d(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                const Shape&) {
  return read_spatial_dropout(r, p, c, name, 3);
}

LayerPtr read_embedding(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon,
             {"input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer", "activity_regularizer",
              "embeddings_constraint", "mask_zero", "input_length", "quantization_config", "lora_rank", "lora_alpha",
              "sparse"});
  require_null(r, p, c, {"quantization_config", "lora_rank"});
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

LayerPtr read_activity_regularization(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                      const Shape&) {
  check_keys(r, p, c, kCommon, {"l1", "l2"});
  const double l1 = get_number(r, p, c, "l1", 0.0), l2 = get_number(r, p, c, "l2", 0.0);
  if (l1 < 0.0 || l2 < 0.0) r.invalid(p, "\"l1\" and \"l2\" must be non-negative, got " + show(c["l1"]) + " and " + show(c["l2"]));
  return std::make_unique<ActivityRegularization>(name, l1, l2);
}

LayerPtr read_identity(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon);
  return std::make_unique<Identity>(name);
}

// GaussianNoise (stddev), GaussianDropout and AlphaDropout (rate; AlphaDropout's noise_shape
// only null).
template <NoiseKind kKind>
LayerPtr read_noise(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  const bool stddev = kKind == NoiseKind::gaussian_noise;
  check_keys(r, p, c, kCommon, {stddev ? "stddev" : "rate", "seed", "noise_shape"});
  require_null(r, p, c, {"noise_shape"});
  const char* key = stddev ? "stddev" : "rate";
  if (!value(c, key)) r.invalid(p, std::string("missing required key \"") + key + "\"");
  const double v = get_number(r, p, c, key, 0.0);
  if (!(v >= 0.0 && (stddev || v < 1.0))) {
    r.invalid(p, std::string("\"") + key + "\" must be " + (stddev ? "non-negative" : "in [0, 1)") + ", got " +
                     show(c[key]));
  }
  return std::make_unique<NoiseLayer>(name, kKind, v, get_int(r, p, c, "seed", 0));
}

// Keras's operations: the config is the name; not_equal's value is a call argument.
template <LogicalOpKind kKind>
LayerPtr read_logical(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  if (kKind == LogicalOpKind::convert_to_tensor) {
    check_keys(r, p, c, {"name", "dtype", "sparse", "ragged"});
    require_null(r, p, c, {"dtype", "sparse", "ragged"});
  } else {
    check_keys(r, p, c, {"name"});
  }
  return std::make_unique<LogicalOp>(name, kKind);
}

bool write_core(const Writer& w, const Layer& l, ojson& c) {
  if (auto* n = dynamic_cast<const NoiseLayer*>(&l)) {
    c[n->kind() == NoiseKind::gaussian_noise ? "stddev" : "rate"] = n->value();
    c["seed"] = n->seed() != 0 ? ojson(n->seed()) : ojson(nullptr);
    if (n->kind() == NoiseKind::alpha_dropout) c["noise_shape"] = nullptr;
    return true;
  }
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
  if (dynamic_cast<const Identity*>(&l)) return true;  // Keras's config: name, trainable, dtype
  if (auto* a = dynamic_cast<const ActivityRegularization*>(&l)) {
    c.update({{"l1", a->l1()}, {"l2", a->l2()}});
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
  } else if (auto* sd = dynamic_cast<const SpatialDropout*>(&l)) {
    // Keras's SpatialDropout config has no "trainable" (its constructor refuses one) and a
    // plain dtype string.
    c.erase("trainable");
    c["dtype"] = "float32";
    c.update({{"rate", sd->rate()}, {"seed", sd->seed() ? ojson(sd->seed()) : ojson(nullptr)}});
    if (sd->rank() > 1) c["data_format"] = write_data_format(sd->channels_first());
  } else if (auto* dr = dynamic_cast<const Dropout*>(&l)) {
    ojson noise = nullptr;
    if (!dr->noise_shape().empty()) {
      noise = ojson::array();
      for (std::int64_t d : dr->noise_shape()) noise.push_back(d == -1 ? ojson(nullptr) : ojson(d));
    }
    c.update({{"rate", dr->rate()}, {"seed", dr->seed() ? ojson(dr->seed()) : ojson(nullptr)}, {"noise_shape", noise}});
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
                                   {"SpatialDropout1D", read_spatial_dropout1d},
                                   {"SpatialDropout2D", read_spatial_dropout2d},
                                   {"SpatialDropout3D", read_spatial_dropout3d},
                                   {"Embedding", read_embedding},
                                   {"Masking", read_masking},
                                   {"ActivityRegularization", read_activity_regularization},
                                   {"Identity", read_identity},
                                   {"NotEqual", read_logical<LogicalOpKind::not_equal>},
                                   {"LogicalOr", read_logical<LogicalOpKind::logical_or>},
                                   {"LogicalAnd", read_logical<LogicalOpKind::logical_and>},
                                   {"ConvertToTensor", read_logical<LogicalOpKind::convert_to_tensor>},
                                   {"GaussianNoise", read_noise<NoiseKind::gaussian_noise>},
                                   {"GaussianDropout", read_noise<NoiseKind::gaussian_dropout>},
                                   {"AlphaDropout", read_noise<NoiseKind::alpha_dropout>}},
                                  write_core};
  return family;
}

}  // namespace nnfit::keras_json
