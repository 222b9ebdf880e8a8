// Optimizers: Keras 3 defaults; each variable gets one fused update node.
#include "nnfit/nn/optimizer.h"

#include <cmath>
#include <cstdio>

#include "nnfit/core/error.h"

namespace nnfit {

Optimizer::Optimizer(OptimizerOptions o) : options_(std::move(o)) {
  std::string& n = options_.name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double default_lr;
  if (n == "sgd") default_lr = 0.01;
  else if (n == "adam" || n == "adamw" || n == "rmsprop" || n == "adagrad" || n == "adamax" || n == "lion" ||
           n == "adadelta" || n == "nadam" || n == "ftrl" || n == "lamb" || n == "adafactor") default_lr = 0.001;
  else if (n == "schedulefreeadamw") default_lr = 0.0025;
  else throw InvalidArgument("unknown optimizer '" + options_.name +
                             "'; supported: sgd, adam, adamw, rmsprop, adagrad, adamax, lion, adadelta, nadam, ftrl, lamb, adafactor, "
                             "schedulefreeadamw");
  if (!options_.learning_rate) options_.learning_rate = std::make_shared<ConstantLearningRate>(default_lr);
  if (n == "adamw" && options_.weight_decay < 0) options_.weight_decay = 0.004;
  if (n != "adamw" && options_.weight_decay < 0) options_.weight_decay = 0.0;
  // A schedule may start at 0 (CosineDecay warming up from 0); a constant rate may not.
  const double lr0 = (*options_.learning_rate)(0);
  NNFIT_CHECK(std::isfinite(lr0) && lr0 >= 0, InvalidArgument, n, ": learning_rate must not be negative, got ", lr0);
  NNFIT_CHECK(options_.momentum >= 0 && options_.momentum < 1, InvalidArgument, n, ": momentum must be in [0, 1)");
  NNFIT_CHECK(options_.beta_1 >= 0 && options_.beta_1 < 1 && options_.beta_2 >= 0 && options_.beta_2 < 1,
              InvalidArgument, n, ": beta_1 and beta_2 must be in [0, 1)");
  NNFIT_CHECK(options_.epsilon > 0, InvalidArgument, n, ": epsilon must be positive");
  NNFIT_CHECK(n != "sgd" || !options_.nesterov || options_.momentum > 0, InvalidArgument,
              "sgd: nesterov needs momentum > 0");
  NNFIT_CHECK(options_.rho >= 0 && options_.rho < 1, InvalidArgument, n, ": rho must be in [0, 1)");
  NNFIT_CHECK(!options_.amsgrad || n == "adam" || n == "adamw", InvalidArgument, n,
              ": amsgrad is an option of Adam and AdamW only");
  NNFIT_CHECK(!options_.centered || n == "rmsprop", InvalidArgument, n, ": centered is an option of RMSprop only");
  NNFIT_CHECK(options_.initial_accumulator_value >= 0, InvalidArgument, n,
              ": initial_accumulator_value must not be negative");
  NNFIT_CHECK(options_.weight_decay >= 0, InvalidArgument, n, ": weight_decay must not be negative");
  NNFIT_CHECK(options_.ema_momentum >= 0 && options_.ema_momentum <= 1 && options_.ema_overwrite_frequency >= 0,
              InvalidArgument, n, ": ema_momentum must be in [0, 1] and ema_overwrite_frequency >= 1 or none (as in Keras)");
  NNFIT_CHECK(options_.learning_rate_power <= 0 && options_.l1_regularization_strength >= 0 &&
                  options_.l2_regularization_strength >= 0 && options_.l2_shrinkage_regularization_strength >= 0 &&
                  options_.beta >= 0,
              InvalidArgument, n,
              ": learning_rate_power must be <= 0 and the regularization strengths and beta >= 0 (as in Keras)");
  NNFIT_CHECK(options_.warmup_steps >= 0, InvalidArgument, n, ": warmup_steps must not be negative");
  NNFIT_CHECK(options_.clip_threshold > 0 && options_.epsilon_1 >= 0 && options_.epsilon_2 >= 0, InvalidArgument, n,
              ": clip_threshold must be positive and epsilon_1, epsilon_2 >= 0");
  NNFIT_CHECK(options_.clipnorm >= 0 && options_.global_clipnorm >= 0 && options_.clipvalue >= 0, InvalidArgument, n,
              ": clipnorm, global_clipnorm and clipvalue must not be negative");
  NNFIT_CHECK((options_.clipnorm > 0) + (options_.global_clipnorm > 0) + (options_.clipvalue > 0) <= 1, InvalidArgument,
              n, ": only one of clipnorm, global_clipnorm and clipvalue can be set (as in Keras)");
}

std::vector<int> Optimizer::clip_gradients(Graph& graph, const std::vector<int>& grads,
                                           const std::vector<std::string>& names) const {
  std::vector<int> out = grads;
  Attrs a;
  if (options_.clipnorm > 0) {
    a.set("clipnorm", options_.clipnorm);
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out[k] >= 0) out[k] = graph.add("clip_by_norm", {out[k]}, a, names[k] + "/clipnorm");
    }
  } else if (options_.global_clipnorm > 0) {
    std::vector<int> present;
    for (int g : out) {
      if (g >= 0) present.push_back(g);
    }
    if (present.empty()) return out;
    a.set("clipnorm", options_.global_clipnorm);
    const int scale = graph.add("global_norm_scale", present, a, "optimizer/global_clipnorm");
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out[k] >= 0) out[k] = graph.add("scale_by", {out[k], scale}, {}, names[k] + "/global_clipnorm");
    }
  } else if (options_.clipvalue > 0) {
    a.set("clipvalue", options_.clipvalue);
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out[k] >= 0) out[k] = graph.add("clip_by_value", {out[k]}, a, names[k] + "/clipvalue");
    }
  }
  return out;
}

double Optimizer::slot_initial_value(int k) const {
  const bool accumulator = options_.name == "adagrad" || options_.name == "ftrl";
  return accumulator && k == 0 ? options_.initial_accumulator_value : 0.0;
}

Shape Optimizer::slot_shape(int k, const Shape& v) const {
  if (options_.name != "adafactor" || k >= 2) return v;
  if (v.rank() < 2) return Shape{};
  std::vector<std::int64_t> d(v.dims().begin(), v.dims().end() - 1);  // r: without the last axis
  if (k == 1) d[d.size() - 1] = v.dims().back();                       // c: without the one before it
  return Shape(d);
}

bool Optimizer::slot_is_placeholder(int k, const Shape& v) const {
  return options_.name == "adafactor" && k < 2 && v.rank() < 2;
}

int Optimizer::num_slots() const {
  const std::string& n = options_.name;
  if (n == "adafactor") return 3;  // r, c, v (Keras's order)
  if (n == "sgd") return options_.momentum > 0 ? 1 : 0;
  if (n == "rmsprop") return 1 + (options_.momentum > 0 ? 1 : 0) + (options_.centered ? 1 : 0);
  if (n == "adagrad" || n == "lion") return 1;  // accumulator; momentum
  if ((n == "adam" || n == "adamw") && options_.amsgrad) return 3;  // m, v, v_hat
  return 2;  // adam, adamw, nadam, lamb, schedulefreeadamw: m, v; adamax: m, u; adadelta: accumulated grad and delta; ftrl: accumulator, linear
}

void Optimizer::emit_update(Graph& graph, int variable, int grad, const std::vector<int>& slots,
                            const std::string& name) const {
  NNFIT_CHECK(static_cast<int>(slots.size()) == num_kept_slots(), InvalidArgument, name, ": ", slots.size(),
              " optimizer slots for a ", options_.name, " that keeps ", num_kept_slots());
  emit_rule(graph, variable, grad, std::vector<int>(slots.begin(), slots.begin() + num_slots()), name);
}

void Optimizer::emit_average(Graph& graph, int variable, const std::vector<int>& slots, const std::string& name) const {
  if (!options_.use_ema) return;
  Attrs a;
  a.set("momentum", options_.ema_momentum);
  a.set("overwrite_frequency", options_.ema_overwrite_frequency);
  graph.add_node("ema_update", {variable, slots.back()}, a, name + "/ema");
}

void Optimizer::emit_rule(Graph& graph, int variable, int grad, const std::vector<int>& slots,
                          const std::string& name) const {
  const std::string& n = options_.name;
  std::vector<int> in{variable, grad};
  in.insert(in.end(), slots.begin(), slots.end());
  Attrs a;
  // Keras's _apply_weight_decay, before the update (Adam and AdamW fold it into theirs).
  if (options_.weight_decay > 0 && n != "adam" && n != "adamw") {
    Attrs d;
    d.set("weight_decay", options_.weight_decay);
    graph.add_node("decay_weights", {variable}, d, name + "/weight_decay");
  }
  if (n == "sgd") {
    if (options_.momentum == 0) {
      graph.add_node("sgd_update", in, a, name + "/sgd");
      return;
    }
    a.set("momentum", options_.momentum);
    a.set("nesterov", std::int64_t{options_.nesterov ? 1 : 0});
    graph.add_node("sgd_momentum_update", in, a, name + "/sgd_momentum");
  } else if (n == "rmsprop") {
    a.set("rho", options_.rho);
    a.set("momentum", options_.momentum);
    a.set("epsilon", options_.epsilon);
    a.set("centered", std::int64_t{options_.centered ? 1 : 0});
    graph.add_node("rmsprop_update", in, a, name + "/rmsprop");
  } else if (n == "adagrad") {
    a.set("epsilon", options_.epsilon);
    graph.add_node("adagrad_update", in, a, name + "/adagrad");
  } else if (n == "adadelta") {
    a.set("rho", options_.rho);
    a.set("epsilon", options_.epsilon);
    graph.add_node("adadelta_update", in, a, name + "/adadelta");
  } else if (n == "lion") {
    a.set("beta_1", options_.beta_1);
    a.set("beta_2", options_.beta_2);
    graph.add_node("lion_update", in, a, name + "/lion");
  } else if (n == "nadam") {
    a.set("beta_1", options_.beta_1);
    a.set("beta_2", options_.beta_2);
    a.set("epsilon", options_.epsilon);
    graph.add_node("nadam_update", in, a, name + "/nadam");
  } else if (n == "ftrl") {
    a.set("learning_rate_power", options_.learning_rate_power);
    a.set("l1", options_.l1_regularization_strength);
    a.set("l2", options_.l2_regularization_strength);
    a.set("l2_shrinkage", options_.l2_shrinkage_regularization_strength);
    a.set("beta", options_.beta);
    graph.add_node("ftrl_update", in, a, name + "/ftrl");
  } else if (n == "lamb") {  // Note [LAMB's trust ratio in two passes]
    a.set("beta_1", options_.beta_1);
    a.set("beta_2", options_.beta_2);
    a.set("epsilon", options_.epsilon);
    graph.add_node("lamb_update", in, a, name + "/lamb");
  } else if (n == "schedulefreeadamw") {
    a.set("beta_1", options_.beta_1);
    a.set("beta_2", options_.beta_2);
    a.set("epsilon", options_.epsilon);
    a.set("warmup_steps", options_.warmup_steps);
    graph.add_node("schedule_free_update", in, a, name + "/schedule_free_adamw");
  } else if (n == "adafactor") {  // Note [Adafactor's passes]
    a.set("beta_2_decay", options_.beta_2_decay);
    a.set("epsilon_1", options_.epsilon_1);
    a.set("epsilon_2", options_.epsilon_2);
    a.set("clip_threshold", options_.clip_threshold);
    graph.add_node("adafactor_update", in, a, name + "/adafactor");
  } else if (n == "adamax") {
    a.set("beta_1", options_.beta_1);
    a.set("beta_2", options_.beta_2);
    a.set("epsilon", options_.epsilon);
    graph.add_node("adamax_update", in, a, name + "/adamax");
  } else {
    a.set("beta_1", options_.beta_1);
    a.set("beta_2", options_.beta_2);
    a.set("epsilon", options_.epsilon);
    a.set("weight_decay", options_.weight_decay);
    a.set("amsgrad", std::int64_t{options_.amsgrad ? 1 : 0});
    graph.add_node("adam_update", in, a, name + "/" + n);
  }
}

}  // namespace nnfit
