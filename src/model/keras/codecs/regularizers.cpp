// Keras's regularizer and constraint objects on any layer: every "<prefix>_regularizer",
// "<prefix>_constraint" and "activity_regularizer" key, read once for all layers (the
// families' readers only list the keys) and written back over the nulls the families'
// writers put there. Keras 3 writes {"module": "keras.regularizers", "class_name": "L2",
// "config": {"l2": 0.01}, "registered_name": null}; tf.keras the same without "module"
// or "registered_name"; both accept the short names ("l2", "max_norm").
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {

namespace {

// {"class_name": ..., "config": {...}} or a name: the class (snake_case names mapped to
// Keras's classes by `aliases`) and its config (empty for a name).
std::pair<std::string, json> class_and_config(const Reader& r, const std::string& p, const json& v,
                                              const std::vector<std::pair<const char*, const char*>>& aliases) {
  std::string cls;
  json config = json::object();
  if (v.is_string()) {
    cls = v.get<std::string>();
  } else {
    expect_object(r, p, v);
    check_keys(r, p, v, {"module", "class_name", "config", "registered_name", "shared_object_id"});
    cls = get_string(r, p, v, "class_name", std::nullopt);
    if (const json* c = value(v, "config")) {
      expect_object(r, p + ".config", *c);
      config = *c;
    }
  }
  for (const auto& [alias, name] : aliases) {
    if (cls == alias) cls = name;
  }
  return {cls, config};
}

Regularizer read_regularizer(const Reader& r, const std::string& p, const json& v) {
  auto [cls, c] = class_and_config(r, p, v,
                                   {{"l1", "L1"}, {"l2", "L2"}, {"l1_l2", "L1L2"},
                                    {"orthogonal_regularizer", "OrthogonalRegularizer"}});
  const std::string cp = p + ".config";
  Regularizer out;
  out.kind = cls;
  if (cls == "L1") {
    check_keys(r, cp, c, {"l1"});
    out.l1 = get_number(r, cp, c, "l1", 0.01);
  } else if (cls == "L2") {
    check_keys(r, cp, c, {"l2"});
    out.l2 = get_number(r, cp, c, "l2", 0.01);
  } else if (cls == "L1L2") {
    check_keys(r, cp, c, {"l1", "l2"});
    out.l1 = get_number(r, cp, c, "l1", 0.0);
    out.l2 = get_number(r, cp, c, "l2", 0.0);
  } else if (cls == "OrthogonalRegularizer") {
    check_keys(r, cp, c, {"factor", "mode"});
    out.factor = get_number(r, cp, c, "factor", 0.01);
    out.mode = get_string(r, cp, c, "mode", "rows");
  } else {
    r.unsupported(p, "regularizer " + show(v) + " is not supported",
                  "nnfit has Keras's L1, L2, L1L2 and OrthogonalRegularizer (custom regularizers are not supported)");
  }
  if (out.l1 < 0 || out.l2 < 0 || out.factor < 0) r.invalid(p, "a regularizer's factor must be non-negative, got " + show(v));
  if (out.mode != "rows" && out.mode != "columns") {
    r.invalid(cp, "\"mode\" must be \"rows\" or \"columns\", got \"" + out.mode + "\"");
  }
  return out;
}

std::vector<std::int64_t> read_constraint_axes(const Reader& r, const std::string& p, const json& c) {
  const json* a = value(c, "axis");
  if (!a) return {0};
  if (a->is_number_integer()) return {a->get<std::int64_t>()};
  std::vector<std::int64_t> out;
  if (a->is_array()) {
    for (const json& e : *a) {
      if (!e.is_number_integer()) r.invalid(p, "\"axis\" must be an integer or a list of integers, got " + show(*a));
      out.push_back(e.get<std::int64_t>());
    }
  }
  if (out.empty()) r.invalid(p, "\"axis\" must be an integer or a non-empty list of integers, got " + show(*a));
  return out;
}

Constraint read_constraint(const Reader& r, const std::string& p, const json& v) {
  auto [cls, c] = class_and_config(r, p, v,
                                   {{"max_norm", "MaxNorm"}, {"min_max_norm", "MinMaxNorm"}, {"non_neg", "NonNeg"},
                                    {"unit_norm", "UnitNorm"}});
  const std::string cp = p + ".config";
  Constraint out;
  out.kind = cls;
  if (cls == "MaxNorm") {
    check_keys(r, cp, c, {"max_value", "axis"});
    out.max_value = get_number(r, cp, c, "max_value", 2.0);
  } else if (cls == "MinMaxNorm") {
    check_keys(r, cp, c, {"min_value", "max_value", "rate", "axis"});
    out.min_value = get_number(r, cp, c, "min_value", 0.0);
    out.max_value = get_number(r, cp, c, "max_value", 1.0);
    out.rate = get_number(r, cp, c, "rate", 1.0);
  } else if (cls == "NonNeg") {
    check_keys(r, cp, c, {});
  } else if (cls == "UnitNorm") {
    check_keys(r, cp, c, {"axis"});
  } else {
    r.unsupported(p, "constraint " + show(v) + " is not supported",
                  "nnfit has Keras's MaxNorm, MinMaxNorm, NonNeg and UnitNorm (custom constraints are not supported)");
  }
  if (cls != "NonNeg") out.axes = read_constraint_axes(r, cp, c);
  if (!(out.min_value >= 0.0 && out.min_value <= out.max_value)) {
    r.invalid(cp, "needs 0 <= min_value <= max_value, got " + show(c));
  }
  if (!(out.rate >= 0.0 && out.rate <= 1.0)) r.invalid(cp, "\"rate\" must be in [0, 1], got " + show(c));
  return out;
}

ojson object(const char* module, const std::string& cls, ojson config) {
  return {{"module", module}, {"class_name", cls}, {"config", std::move(config)}, {"registered_name", nullptr}};
}

ojson write_regularizer(const Regularizer& r) {
  ojson c = ojson::object();
  if (r.kind == "L1" || r.kind == "L1L2") c["l1"] = r.l1;
  if (r.kind == "L2" || r.kind == "L1L2") c["l2"] = r.l2;
  if (r.kind == "OrthogonalRegularizer") c.update({{"factor", r.factor}, {"mode", r.mode}});
  return object("keras.regularizers", r.kind, std::move(c));
}

ojson write_constraint(const Constraint& k) {
  ojson c = ojson::object();
  const ojson axis = k.axes.size() == 1 ? ojson(k.axes[0]) : ojson(k.axes);
  if (k.kind == "MaxNorm") c.update({{"max_value", k.max_value}, {"axis", axis}});
  if (k.kind == "MinMaxNorm") {
    c.update({{"min_value", k.min_value}, {"max_value", k.max_value}, {"rate", k.rate}, {"axis", axis}});
  }
  if (k.kind == "UnitNorm") c["axis"] = axis;
  return object("keras.constraints", k.kind, std::move(c));
}

}  // namespace

void read_weight_options(const Reader& r, const std::string& p, const json& cfg, Layer& layer) {
  for (const auto& [key, v] : cfg.items()) {
    if (v.is_null()) continue;
    const std::string kp = p + "." + key;
    if (key == "activity_regularizer") {
      layer.set_activity_regularizer(read_regularizer(r, kp, v));
    } else if (key.ends_with("_regularizer")) {
      layer.set_weight_regularizer(key.substr(0, key.size() - 12), read_regularizer(r, kp, v));
    } else if (key.ends_with("_constraint")) {
      layer.set_weight_constraint(key.substr(0, key.size() - 11), read_constraint(r, kp, v));
    }
  }
}

void write_weight_options(const Layer& l, ojson& config) {
  auto put = [&](const std::string& key, ojson value) {
    // Keras 3's base Layer writes activity_regularizer only when it is set.
    if (!config.contains(key) && key != "activity_regularizer") {
      throw Unsupported(l.name() + ": its " + key + " cannot be written in a Keras config (" + l.class_name() +
                        " has no such key)");
    }
    config[key] = std::move(value);
  };
  for (const auto& [prefix, r] : l.weight_regularizers()) put(prefix + "_regularizer", write_regularizer(r));
  for (const auto& [prefix, c] : l.weight_constraints()) put(prefix + "_constraint", write_constraint(c));
  if (l.activity_regularizer().active() && !dynamic_cast<const ActivityRegularization*>(&l)) {
    put("activity_regularizer", write_regularizer(l.activity_regularizer()));
  }
}

}  // namespace nnfit::keras_json
