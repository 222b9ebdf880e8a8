// Keras codecs of the pooling layers: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D (channels
// last), the global poolings (1D/2D/3D, either data format, keepdims) and the adaptive
// poolings (AdaptiveAverage/MaxPooling1D/2D/3D: output_size, either data format).
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

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

template <PoolKind kKind>
LayerPtr read_pool3d(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"pool_size", "padding", "strides", "data_format"});
  check_data_format(r, p, c);
  Pooling3DOptions o;
  o.kind = kKind;
  o.pool_size = get_tuple(r, p, c, "pool_size", 3, o.pool_size);
  o.strides = get_tuple(r, p, c, "strides", 3, {});
  o.padding = lower(get_string(r, p, c, "padding", o.padding));
  return std::make_unique<Pooling3D>(name, o);
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

template <PoolKind kKind, int kRank>
LayerPtr read_adaptive_pool(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"output_size", "data_format"});
  if (!value(c, "output_size")) r.invalid(p, "\"output_size\" is required");
  AdaptivePoolingOptions o;
  o.kind = kKind;
  o.output_size = get_tuple(r, p, c, "output_size", kRank, {});
  o.channels_first = get_channels_first(r, p, c);
  return std::make_unique<AdaptivePooling>(name, o);
}

bool write_pooling(const Writer&, const Layer& l, ojson& c) {
  if (dynamic_cast<const MaxPooling2D*>(&l) || dynamic_cast<const AveragePooling2D*>(&l)) {
    auto* mp = dynamic_cast<const MaxPooling2D*>(&l);
    const Pooling2DOptions& o = mp ? mp->options() : dynamic_cast<const AveragePooling2D*>(&l)->options();
    c.update({{"pool_size", o.pool_size}, {"padding", o.padding},
              {"strides", o.strides.empty() ? o.pool_size : o.strides}, {"data_format", "channels_last"}});
  } else if (auto* p1 = dynamic_cast<const Pooling1D*>(&l)) {
    const Pooling1DOptions& o = p1->options();
    c.update({{"pool_size", {o.pool_size}}, {"padding", o.padding}, {"strides", {o.strides}},
              {"data_format", "channels_last"}});
  } else if (auto* p3 = dynamic_cast<const Pooling3D*>(&l)) {
    const Pooling3DOptions& o = p3->options();
    c.update({{"pool_size", o.pool_size}, {"padding", o.padding}, {"strides", o.strides},
              {"data_format", "channels_last"}});
  } else if (auto* ap = dynamic_cast<const AdaptivePooling*>(&l)) {
    c.update({{"output_size", ap->options().output_size},
              {"data_format", write_data_format(ap->options().channels_first)}});
  } else if (auto* gp = dynamic_cast<const GlobalPooling*>(&l)) {
    c.update({{"data_format", write_data_format(gp->options().channels_first)}, {"keepdims", gp->options().keepdims}});
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& pooling_layers() {
  static const LayerFamily family{{{"MaxPooling2D", read_max_pool},
                                   {"AveragePooling2D", read_avg_pool},
                                   {"MaxPooling1D", read_pool1d<PoolKind::max>},
                                   {"AveragePooling1D", read_pool1d<PoolKind::average>},
                                   {"MaxPooling3D", read_pool3d<PoolKind::max>},
                                   {"AveragePooling3D", read_pool3d<PoolKind::average>},
                                   {"GlobalAveragePooling1D", read_global_pool<PoolKind::average, 1>},
                                   {"GlobalAveragePooling2D", read_global_pool<PoolKind::average, 2>},
                                   {"GlobalAveragePooling3D", read_global_pool<PoolKind::average, 3>},
                                   {"GlobalMaxPooling1D", read_global_pool<PoolKind::max, 1>},
                                   {"GlobalMaxPooling2D", read_global_pool<PoolKind::max, 2>},
                                   {"GlobalMaxPooling3D", read_global_pool<PoolKind::max, 3>},
                                   {"AdaptiveAveragePooling1D", read_adaptive_pool<PoolKind::average, 1>},
                                   {"AdaptiveAveragePooling2D", read_adaptive_pool<PoolKind::average, 2>},
                                   {"AdaptiveAveragePooling3D", read_adaptive_pool<PoolKind::average, 3>},
                                   {"AdaptiveMaxPooling1D", read_adaptive_pool<PoolKind::max, 1>},
                                   {"AdaptiveMaxPooling2D", read_adaptive_pool<PoolKind::max, 2>},
                                   {"AdaptiveMaxPooling3D", read_adaptive_pool<PoolKind::max, 3>}},
                                  write_pooling};
  return family;
}

}  // namespace nnfit::keras_json
