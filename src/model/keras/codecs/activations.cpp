// Keras codecs of the activation layers: Activation, ReLU (max_value, negative_slope,
// threshold), LeakyReLU, ELU, PReLU (shared_axes) and Softmax (any axis).
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

LayerPtr read_activation(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"activation"});
  if (!value(c, "activation")) r.invalid(p, "missing required key \"activation\"");
  return std::make_unique<Activation>(name, get_activation(r, p, c, ""));
}

LayerPtr read_relu(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"max_value", "negative_slope", "threshold"});
  ReLUOptions o;
  if (value(c, "max_value")) o.max_value = get_number(r, p, c, "max_value", 0.0);
  o.negative_slope = get_number(r, p, c, "negative_slope", 0.0);
  o.threshold = get_number(r, p, c, "threshold", 0.0);
  if (o.max_value && *o.max_value < 0.0) r.invalid(p, "\"max_value\" must be >= 0, got " + show(c["max_value"]));
  if (o.negative_slope < 0.0) r.invalid(p, "\"negative_slope\" must be >= 0, got " + show(c["negative_slope"]));
  if (o.threshold < 0.0) r.invalid(p, "\"threshold\" must be >= 0, got " + show(c["threshold"]));
  return std::make_unique<ReLU>(name, o);
}

// Keras 3 names the slope negative_slope (default 0.3); Keras 2 named it alpha.
LayerPtr read_leaky_relu(const Reader& r, const std::string& p, const json& c, const std::string& name,
                         const Shape&) {
  check_keys(r, p, c, kCommon, {"negative_slope", "alpha"});
  if (value(c, "negative_slope") && value(c, "alpha")) {
    r.invalid(p, "give \"negative_slope\" (Keras 3) or \"alpha\" (Keras 2), not both");
  }
  const double slope = get_number(r, p, c, value(c, "alpha") ? "alpha" : "negative_slope", 0.3);
  if (slope < 0.0) r.invalid(p, "the negative slope must be >= 0, got " + std::to_string(slope));
  return std::make_unique<LeakyReLU>(name, slope);
}

LayerPtr read_elu(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"alpha"});
  return std::make_unique<ELU>(name, get_number(r, p, c, "alpha", 1.0));
}

LayerPtr read_prelu(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape& in) {
  check_keys(r, p, c, kCommon, {"alpha_initializer", "alpha_regularizer", "alpha_constraint", "shared_axes"});
  PReLUOptions o;
  o.alpha_initializer = get_initializer(r, p, c, "alpha_initializer", o.alpha_initializer);
  if (const json* axes = value(c, "shared_axes")) {
    const json list = axes->is_array() ? *axes : json::array({*axes});
    for (const json& a : list) {
      if (!a.is_number_integer() || a.get<std::int64_t>() < 1 || a.get<std::int64_t>() > in.rank()) {
        r.invalid(p, "\"shared_axes\" must hold axes 1.." + std::to_string(in.rank()) + " of the input (" +
                         in.to_string() + " after the batch axis), got " + show(*axes));
      }
      o.shared_axes.push_back(a.get<std::int64_t>());
    }
  }
  return std::make_unique<PReLU>(name, o);
}

LayerPtr read_softmax(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape& in) {
  check_keys(r, p, c, kCommon, {"axis"});
  const json* axis = value(c, "axis");
  if (!axis) return std::make_unique<Softmax>(name);
  const json& a = axis->is_array() && axis->size() == 1 ? (*axis)[0] : *axis;
  if (axis->is_array() && axis->size() > 1) {
    r.unsupported(p, "\"axis\" = " + show(*axis) + ": a softmax over several axes at once is not supported");
  }
  if (!a.is_number_integer()) r.invalid(p, "\"axis\" must be an integer, got " + show(*axis));
  const std::int64_t v = a.get<std::int64_t>(), rank = in.rank() + 1;
  if (v == 0 || v == -rank || v < -rank || v >= rank) {
    r.invalid(p, "\"axis\" = " + show(*axis) + " is not a feature axis of the input (" + in.to_string() +
                     " after the batch axis)");
  }
  return std::make_unique<Softmax>(name, v);
}

bool write_activation_layer(const Writer& w, const Layer& l, ojson& c) {
  if (auto* a = dynamic_cast<const Activation*>(&l)) {
    c["activation"] = write_activation(w, l, a->activation());
  } else if (auto* relu = dynamic_cast<const ReLU*>(&l)) {
    const ReLUOptions& o = relu->options();
    c.update({{"max_value", o.max_value ? ojson(*o.max_value) : ojson(nullptr)},
              {"negative_slope", o.negative_slope},
              {"threshold", o.threshold}});
  } else if (auto* lr = dynamic_cast<const LeakyReLU*>(&l)) {
    c[w.keras2 ? "alpha" : "negative_slope"] = lr->negative_slope();
  } else if (auto* elu = dynamic_cast<const ELU*>(&l)) {
    c["alpha"] = elu->alpha();
  } else if (auto* pr = dynamic_cast<const PReLU*>(&l)) {
    const PReLUOptions& o = pr->options();
    c.update({{"alpha_initializer", write_initializer(o.alpha_initializer)},
              {"alpha_regularizer", nullptr},
              {"alpha_constraint", nullptr},
              {"shared_axes", o.shared_axes.empty() ? ojson(nullptr) : ojson(o.shared_axes)}});
  } else if (auto* sm = dynamic_cast<const Softmax*>(&l)) {
    c["axis"] = sm->axis();
  } else {
    return false;
  }
  return true;
}

}  // namespace

const LayerFamily& activation_layers() {
  static const LayerFamily family{{{"Activation", read_activation},
                                   {"ReLU", read_relu},
                                   {"LeakyReLU", read_leaky_relu},
                                   {"ELU", read_elu},
                                   {"PReLU", read_prelu},
                                   {"Softmax", read_softmax}},
                                  write_activation_layer};
  return family;
}

}  // namespace nnfit::keras_json
