// Keras codecs of the normalization layers: BatchNormalization, LayerNormalization,
// GroupNormalization, UnitNormalization.
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

// Keras's "axis": an integer or a list of them, counting the batch axis (negative from the
// end); each checked against the input of rank in.rank() + 1 and kept as written.
std::vector<std::int64_t> read_axes(const Reader& r, const std::string& p, const json& c, const Shape& in,
                                    std::int64_t fallback) {
  const json* v = value(c, "axis");
  if (!v) return {fallback};
  std::vector<std::int64_t> out;
  const json list = v->is_array() ? *v : json::array({*v});
  const std::int64_t rank = in.rank() + 1;
  for (const json& a : list) {
    if (!a.is_number_integer()) r.invalid(p, "\"axis\" must be an integer or a list of them, got " + show(*v));
    const std::int64_t k = a.get<std::int64_t>();
    if (k == 0 || k >= rank || k < -rank + 1) {
      r.invalid(p, "\"axis\" = " + show(*v) + " is out of range for inputs of rank " + std::to_string(rank) +
                       " (with the batch axis, which cannot be normalized over)");
    }
    out.push_back(k);
  }
  if (out.empty()) r.invalid(p, "\"axis\" must name at least one axis");
  return out;
}

LayerPtr read_batch_norm(const Reader& r, const std::string& p, const json& c, const std::string& name,
                         const Shape& in) {
  check_keys(r, p, c, kCommon,
             {"axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
              "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
              "beta_constraint", "gamma_constraint", "synchronized", "renorm", "renorm_clipping", "renorm_momentum",
              "fused", "virtual_batch_size", "adjustment"});
  require_null(r, p, c, {"renorm_clipping", "virtual_batch_size", "adjustment"});
  require_value(r, p, c, "renorm", false);
  const std::vector<std::int64_t> axes = read_axes(r, p, c, in, -1);
  if (axes.size() != 1) r.unsupported(p, "\"axis\" = " + show(c["axis"]) + " is not supported (one features axis)");
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
  o.axis = axes[0];
  return std::make_unique<BatchNormalization>(name, o);
}

// LayerNormalization's and GroupNormalization's shared keys: beta/gamma at their default
// initializers (and GroupNormalization's last axis).
void check_affine(const Reader& r, const std::string& p, const json& c) {
  for (const auto& [key, def] : {std::pair<const char*, const char*>{"beta_initializer", "zeros"},
                                 std::pair<const char*, const char*>{"gamma_initializer", "ones"}}) {
    if (get_initializer(r, p, c, key, def) != def) {
      r.unsupported(p, std::string("\"") + key + "\" other than " + def + " is not supported");
    }
  }
}

LayerPtr read_layer_norm(const Reader& r, const std::string& p, const json& c, const std::string& name,
                         const Shape& in) {
  check_keys(r, p, c, kCommon,
             {"axis", "epsilon", "center", "scale", "rms_scaling", "beta_initializer", "gamma_initializer",
              "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  check_affine(r, p, c);
  LayerNormalizationOptions o;
  o.rms_scaling = get_bool(r, p, c, "rms_scaling", o.rms_scaling);
  o.axes = read_axes(r, p, c, in, -1);
  o.epsilon = get_number(r, p, c, "epsilon", o.epsilon);
  if (!(o.epsilon > 0.0)) r.invalid(p, "\"epsilon\" must be positive, got " + show(c["epsilon"]));
  o.center = get_bool(r, p, c, "center", o.center);
  o.scale = get_bool(r, p, c, "scale", o.scale);
  return std::make_unique<LayerNormalization>(name, o);
}

LayerPtr read_rms_norm(const Reader& r, const std::string& p, const json& c, const std::string& name,
                       const Shape& in) {
  check_keys(r, p, c, kCommon, {"axis", "epsilon"});
  RMSNormalizationOptions o;
  o.axes = read_axes(r, p, c, in, -1);
  o.epsilon = get_number(r, p, c, "epsilon", o.epsilon);
  if (!(o.epsilon > 0.0)) r.invalid(p, "\"epsilon\" must be positive, got " + show(c["epsilon"]));
  return std::make_unique<RMSNormalization>(name, o);
}

LayerPtr read_group_norm(const Reader& r, const std::string& p, const json& c, const std::string& name,
                         const Shape& in) {
  check_keys(r, p, c, kCommon,
             {"groups", "axis", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
              "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  check_affine(r, p, c);
  if (const json* axis = value(c, "axis"); axis && !is_last_axis(*axis, in)) {
    r.unsupported(p, "\"axis\" = " + show(*axis) + " is not supported (only the last axis, -1)");
  }
  GroupNormalizationOptions o;
  o.groups = get_int(r, p, c, "groups", o.groups);
  if (o.groups <= 0) r.invalid(p, "\"groups\" must be positive, got " + std::to_string(o.groups));
  o.epsilon = get_number(r, p, c, "epsilon", o.epsilon);
  if (!(o.epsilon > 0.0)) r.invalid(p, "\"epsilon\" must be positive, got " + show(c["epsilon"]));
  o.center = get_bool(r, p, c, "center", o.center);
  o.scale = get_bool(r, p, c, "scale", o.scale);
  return std::make_unique<GroupNormalization>(name, o);
}

LayerPtr read_unit_norm(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"axis"});
  const json* axis = value(c, "axis");
  std::int64_t a = -1;
  if (axis) {
    const json& one = axis->is_array() && axis->size() == 1 ? (*axis)[0] : *axis;
    if (!one.is_number_integer()) {
      r.unsupported(p, "\"axis\" = " + show(*axis) + " is not supported (one axis)");
    }
    a = one.get<std::int64_t>();
  }
  return std::make_unique<UnitNormalization>(name, a);
}

bool write_normalization(const Writer& w, const Layer& l, ojson& c) {
  if (auto* gn = dynamic_cast<const GroupNormalization*>(&l)) {
    const GroupNormalizationOptions& o = gn->options();
    c.update({{"groups", o.groups}, {"axis", -1}, {"epsilon", o.epsilon}, {"center", o.center}, {"scale", o.scale},
              {"beta_initializer", write_initializer("zeros")}, {"gamma_initializer", write_initializer("ones")},
              {"beta_regularizer", nullptr}, {"gamma_regularizer", nullptr}, {"beta_constraint", nullptr},
              {"gamma_constraint", nullptr}});
    return true;
  }
  if (auto* un = dynamic_cast<const UnitNormalization*>(&l)) {
    c["axis"] = un->axis();
    return true;
  }
  if (auto* bn = dynamic_cast<const BatchNormalization*>(&l)) {
    const BatchNormalizationOptions& o = bn->options();
    c.update({{"axis", o.axis}, {"momentum", o.momentum}, {"epsilon", o.epsilon}, {"center", o.center}, {"scale", o.scale},
              {"beta_initializer", write_initializer("zeros")}, {"gamma_initializer", write_initializer("ones")},
              {"moving_mean_initializer", write_initializer("zeros")},
              {"moving_variance_initializer", write_initializer("ones")}, {"beta_regularizer", nullptr},
              {"gamma_regularizer", nullptr}, {"beta_constraint", nullptr}, {"gamma_constraint", nullptr},
              {"synchronized", false}});
    return true;
  }
  if (auto* rn = dynamic_cast<const RMSNormalization*>(&l)) {
    if (w.keras2) {
      throw Unsupported(l.name() + ": RMSNormalization is not written in Keras 2's format (tf.keras has no such layer)",
                        "save the model as .keras");
    }
    const RMSNormalizationOptions& o = rn->options();
    c.update({{"axis", o.axes.size() > 1 ? ojson(o.axes) : ojson(o.axes[0])}, {"epsilon", o.epsilon}});
    return true;
  }
  if (auto* ln = dynamic_cast<const LayerNormalization*>(&l)) {
    const LayerNormalizationOptions& o = ln->options();
    // tf.keras stores the axis as a list and has no rms_scaling; Keras 3 an integer for one.
    const ojson axes(o.axes);
    c.update({{"axis", w.keras2 || o.axes.size() > 1 ? axes : ojson(o.axes[0])}, {"epsilon", o.epsilon},
              {"center", o.center}, {"scale", o.scale}});
    if (!w.keras2) {
      c["rms_scaling"] = o.rms_scaling;
    } else if (o.rms_scaling) {
      throw Unsupported(ln->name() + ": rms_scaling is not written in Keras 2's format (tf.keras has no such option)",
                        "save the model as .keras");
    }
    c.update({{"beta_initializer", write_initializer("zeros")}, {"gamma_initializer", write_initializer("ones")},
              {"beta_regularizer", nullptr}, {"gamma_regularizer", nullptr}, {"beta_constraint", nullptr},
              {"gamma_constraint", nullptr}});
    return true;
  }
  return false;
}

}  // namespace

const LayerFamily& normalization_layers() {
  static const LayerFamily family{
      {{"BatchNormalization", read_batch_norm}, {"LayerNormalization", read_layer_norm},
       {"UnitNormalization", read_unit_norm}, {"GroupNormalization", read_group_norm},
       {"RMSNormalization", read_rms_norm}},
      write_normalization};
  return family;
}

}  // namespace nnfit::keras_json
