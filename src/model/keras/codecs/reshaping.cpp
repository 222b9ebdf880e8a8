// Keras codecs of the reshaping layers: ZeroPadding1D/2D/3D, Cropping1D/2D/3D,
// UpSampling1D/2D/3D, Permute, RepeatVector (Flatten and Reshape are core layers).
#include "model/keras/codecs/codec.h"

#include "backend/common/resize_taps.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit::keras_json {
namespace {

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
  // Keras lower-cases it; UpSampling2D resizes with any method its backend's resize takes.
  const std::string interpolation = lower(get_string(r, p, c, "interpolation", "nearest"));
  ResizeInterpolation method;
  if (interpolation != "nearest" && (kRank != 2 || !parse_resize_method(interpolation, &method))) {
    r.unsupported(p, "\"interpolation\" = \"" + interpolation + "\" is not supported (" +
                         (kRank == 2 ? std::string("one of ") + kResizeMethodNames : std::string("only \"nearest\"")) +
                         ")");
  }
  const std::vector<std::int64_t> size = get_tuple(r, p, c, "size", kRank, std::vector<std::int64_t>(kRank, 2));
  return std::make_unique<UpSampling>(name,
                                      UpSamplingOptions{kRank, size, get_channels_first(r, p, c), interpolation});
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

// Padding or cropping as Keras 3 stores it: (before, after) for one spatial axis, a list
// of such pairs for more.
ojson pairs(const SpatialPairs& p) {
  if (p.size() == 1) return {p[0][0], p[0][1]};
  ojson out = ojson::array();
  for (const auto& q : p) out.push_back({q[0], q[1]});
  return out;
}

bool write_reshaping(const Writer& w, const Layer& l, ojson& c) {
  if (auto* zp = dynamic_cast<const ZeroPadding*>(&l)) {
    c["padding"] = pairs(zp->options().padding);
    // tf.keras's ZeroPadding1D takes no data_format.
    if (!(w.keras2 && zp->options().rank == 1)) c["data_format"] = write_data_format(zp->options().channels_first);
  } else if (auto* cr = dynamic_cast<const Cropping*>(&l)) {
    c["cropping"] = pairs(cr->options().cropping);
    if (cr->options().rank > 1) c["data_format"] = write_data_format(cr->options().channels_first);
  } else if (auto* up = dynamic_cast<const UpSampling*>(&l)) {
    const UpSamplingOptions& o = up->options();
    c["size"] = o.rank == 1 ? ojson(o.size[0]) : ojson(o.size);
    if (o.rank > 1) c["data_format"] = write_data_format(o.channels_first);
    if (o.rank == 2) c["interpolation"] = o.interpolation;
  } else if (auto* pm = dynamic_cast<const Permute*>(&l)) {
    c["dims"] = pm->dims();
  } else if (auto* rv = dynamic_cast<const RepeatVector*>(&l)) {
    c["n"] = rv->n();
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& reshaping_layers() {
  static const LayerFamily family{{{"ZeroPadding1D", read_zero_padding<1>},
                                   {"ZeroPadding2D", read_zero_padding<2>},
                                   {"ZeroPadding3D", read_zero_padding<3>},
                                   {"Cropping1D", read_cropping<1>},
                                   {"Cropping2D", read_cropping<2>},
                                   {"Cropping3D", read_cropping<3>},
                                   {"UpSampling1D", read_up_sampling<1>},
                                   {"UpSampling2D", read_up_sampling<2>},
                                   {"UpSampling3D", read_up_sampling<3>},
                                   {"Permute", read_permute},
                                   {"RepeatVector", read_repeat_vector}},
                                  write_reshaping};
  return family;
}

}  // namespace nnfit::keras_json
