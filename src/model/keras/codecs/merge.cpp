// Keras codecs of the merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum,
// Concatenate (any axis), Dot.
#include "model/keras/codecs/codec.h"

#include <array>

#include "nnfit/nn/merge_layers.h"

namespace nnfit::keras_json {
namespace {

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

bool write_merge(const Writer&, const Layer& l, ojson& c) {
  if (dynamic_cast<const Merge*>(&l)) {
    // the common keys only
  } else if (auto* cat = dynamic_cast<const Concatenate*>(&l)) {
    c["axis"] = cat->axis();
  } else if (auto* dot = dynamic_cast<const Dot*>(&l)) {
    c.update({{"axes", {dot->axes()[0], dot->axes()[1]}}, {"normalize", dot->normalize()}});
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& merge_layers() {
  static const LayerFamily family{{{"Add", read_merge<MergeOp::add>},
                                   {"Subtract", read_merge<MergeOp::subtract>},
                                   {"Multiply", read_merge<MergeOp::multiply>},
                                   {"Average", read_merge<MergeOp::average>},
                                   {"Maximum", read_merge<MergeOp::maximum>},
                                   {"Minimum", read_merge<MergeOp::minimum>},
                                   {"Concatenate", read_concatenate},
                                   {"Dot", read_dot}},
                                  write_merge};
  return family;
}

}  // namespace nnfit::keras_json
