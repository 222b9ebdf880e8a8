// Keras JSON → OptimizerOptions, Loss and MetricSpec: a name or a Keras object, checked against the
// keys Keras writes; unset values take Keras 3's defaults.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "model/keras/keras_json.h"
#include "model/keras/keras_traced_config.h"
#include "nnfit/model/keras_config.h"

namespace nnfit {

using namespace keras_json;

namespace {

const char* const kSchedules =
    "ExponentialDecay, InverseTimeDecay, PolynomialDecay, PiecewiseConstantDecay, CosineDecay, CosineDecayRestarts";

std::vector<double> get_numbers(const Reader& r, const std::string& path, const json& obj, const char* key) {
  const json* v = value(obj, key);
  if (!v || !v->is_array() || v->empty()) r.invalid(path, std::string("\"") + key + "\" must be a non-empty list of numbers");
  std::vector<double> out;
  for (const json& x : *v) {
    if (!x.is_number()) r.invalid(path, std::string("\"") + key + "\" must hold numbers, got " + show(x));
    out.push_back(x.get<double>());
  }
  return out;
}

// A Keras LearningRateSchedule object as keras.optimizers.schedules.serialize writes it.
std::shared_ptr<LearningRateSchedule> read_schedule(const Reader& r, const std::string& sp, const json& v) {
  expect_object(r, sp, v);
  check_keys(r, sp, v, {"module", "class_name", "config", "registered_name"});
  const std::string cls = get_string(r, sp, v, "class_name", std::nullopt);
  const json* c = find(v, "config");
  if (!c) r.invalid(sp, "missing required key \"config\"");
  const std::string cp = sp + ".config";
  expect_object(r, cp, *c);
  auto number = [&](const char* key, std::optional<double> fallback = std::nullopt) {
    if (!fallback && !value(*c, key)) r.invalid(cp, cls + " needs \"" + key + "\"");
    return get_number(r, cp, *c, key, fallback.value_or(0.0));
  };
  auto steps = [&](const char* key) {
    const std::int64_t n = get_int(r, cp, *c, key, std::nullopt);
    if (n <= 0) r.invalid(cp, std::string("\"") + key + "\" must be positive, got " + std::to_string(n));
    return n;
  };
  // The constructors check ranges; their messages gain the config path here.
  auto make = [&](auto construct) -> std::shared_ptr<LearningRateSchedule> { return with_path(r, cp, cls, construct); };
  if (cls == "ExponentialDecay" || cls == "InverseTimeDecay") {
    check_keys(r, cp, *c, {"initial_learning_rate", "decay_steps", "decay_rate", "staircase", "name"});
    const double initial = number("initial_learning_rate"), rate = number("decay_rate");
    const std::int64_t n = steps("decay_steps");
    const bool staircase = get_bool(r, cp, *c, "staircase", false);
    if (cls == "ExponentialDecay") {
      return make([&] { return std::make_shared<ExponentialDecay>(initial, n, rate, staircase); });
    }
    return make([&] { return std::make_shared<InverseTimeDecay>(initial, n, rate, staircase); });
  }
  if (cls == "PolynomialDecay") {
    check_keys(r, cp, *c, {"initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle", "name"});
    const double initial = number("initial_learning_rate"), end = number("end_learning_rate", 0.0001);
    const double power = number("power", 1.0);
    const std::int64_t n = steps("decay_steps");
    const bool cycle = get_bool(r, cp, *c, "cycle", false);
    return make([&] { return std::make_shared<PolynomialDecay>(initial, n, end, power, cycle); });
  }
  if (cls == "PiecewiseConstantDecay") {
    check_keys(r, cp, *c, {"boundaries", "values", "name"});
    std::vector<std::int64_t> boundaries;
    for (double b : get_numbers(r, cp, *c, "boundaries")) {
      if (b != std::floor(b)) r.invalid(cp, "\"boundaries\" must be step numbers (integers), got " + show(b));
      boundaries.push_back(static_cast<std::int64_t>(b));
    }
    const std::vector<double> values = get_numbers(r, cp, *c, "values");
    return make([&] { return std::make_shared<PiecewiseConstantDecay>(boundaries, values); });
  }
  if (cls == "CosineDecay") {
    check_keys(r, cp, *c, {"initial_learning_rate", "decay_steps", "alpha", "name", "warmup_target", "warmup_steps"});
    const double initial = number("initial_learning_rate"), alpha = number("alpha", 0.0);
    const std::int64_t n = steps("decay_steps");
    std::optional<double> target;
    if (value(*c, "warmup_target")) target = number("warmup_target");
    const std::int64_t warmup = get_int(r, cp, *c, "warmup_steps", 0);
    return make([&] { return std::make_shared<CosineDecay>(initial, n, alpha, target, warmup); });
  }
  if (cls == "CosineDecayRestarts") {
    check_keys(r, cp, *c, {"initial_learning_rate", "first_decay_steps", "t_mul", "m_mul", "alpha", "name"});
    const double initial = number("initial_learning_rate"), t_mul = number("t_mul", 2.0);
    const double m_mul = number("m_mul", 1.0), alpha = number("alpha", 0.0);
    const std::int64_t n = steps("first_decay_steps");
    return make([&] { return std::make_shared<CosineDecayRestarts>(initial, n, t_mul, m_mul, alpha); });
  }
  r.unsupported(sp + ".class_name", "learning-rate schedule \"" + cls + "\" is not supported",
                std::string("supported: ") + kSchedules);
}

std::shared_ptr<LearningRateSchedule> read_learning_rate(const Reader& r, const std::string& p, const json& v) {
  if (v.is_number()) {
    if (!(v.get<double>() >= 0)) r.invalid(p, "\"learning_rate\" must not be negative, got " + show(v));
    return std::make_shared<ConstantLearningRate>(v.get<double>());
  }
  return read_schedule(r, p + ".learning_rate", v);
}

const Keys kOptimizerCommon = {"name", "learning_rate", "lr", "decay", "weight_decay", "clipnorm",
                                   "global_clipnorm", "clipvalue", "use_ema", "ema_momentum",
                                   "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps",
                                   "jit_compile", "is_legacy_optimizer", "mesh"};

}  // namespace

OptimizerOptions optimizer_from_keras_json(const std::string& json_text, const std::string& where) {
  const Reader r{where};
  const json j = parse(r, json_text);
  // Keras 3's LossScaleOptimizer (and Keras 2's, with "dynamic"): the inner optimizer, scaled.
  if (j.is_object() && find(j, "class_name") && j["class_name"].is_string() &&
      j["class_name"].get<std::string>() == "LossScaleOptimizer") {
    check_keys(r, "", j, {"module", "class_name", "config", "registered_name"});
    const json* c = value(j, "config");
    if (!c) r.invalid("", "a LossScaleOptimizer needs its config with \"inner_optimizer\"");
    expect_object(r, "config", *c);
    check_keys(r, "config", *c, {"name", "inner_optimizer", "initial_scale", "dynamic_growth_steps", "dynamic"},
               {"learning_rate", "weight_decay", "clipnorm", "global_clipnorm", "clipvalue", "use_ema", "ema_momentum",
                "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps"});
    const json* inner = value(*c, "inner_optimizer");
    if (!inner) r.invalid("config", "a LossScaleOptimizer needs \"inner_optimizer\"");
    OptimizerOptions o = optimizer_from_keras_json(inner->dump(), where + ": config.inner_optimizer");
    o.loss_scale.enabled = true;
    o.loss_scale.dynamic = get_bool(r, "config", *c, "dynamic", true);
    o.loss_scale.initial_scale = get_number(r, "config", *c, "initial_scale", 32768.0);
    o.loss_scale.growth_steps = get_int(r, "config", *c, "dynamic_growth_steps", 2000);
    if (!(o.loss_scale.initial_scale > 0.0) || !std::isfinite(o.loss_scale.initial_scale)) {
      r.invalid("config", "\"initial_scale\" must be a positive number, got " + show((*c)["initial_scale"]));
    }
    if (o.loss_scale.growth_steps < 1) {
      r.invalid("config", "\"dynamic_growth_steps\" must be >= 1, got " + show((*c)["dynamic_growth_steps"]));
    }
    return o;
  }
  OptimizerOptions o;
  std::string cls;
  if (j.is_string()) {
    cls = j.get<std::string>();
  } else {
    expect_object(r, "", j);
    check_keys(r, "", j, {"module", "class_name", "config", "registered_name"});
    cls = get_string(r, "", j, "class_name", std::nullopt);
  }
  o.name = lower(cls);
  static const char* const kNames[] = {"adam", "adamw", "sgd", "rmsprop", "adagrad", "adamax", "lion", "adadelta",
                                       "nadam", "ftrl", "lamb", "adafactor", "schedulefreeadamw"};
  if (std::find_if(std::begin(kNames), std::end(kNames), [&](const char* n) { return o.name == n; }) == std::end(kNames)) {
    r.invalid(j.is_string() ? "" : "class_name", "unknown optimizer \"" + cls + "\"",
              "supported optimizers: Adam, AdamW, SGD, RMSprop, Adagrad, Adamax, Lion, Adadelta, Nadam, Ftrl, Lamb, "
              "Adafactor, ScheduleFreeAdamW (or their lower-case names); Muon and MultiOptimizer are not implemented yet");
  }
  const double default_lr = o.name == "sgd" ? 0.01 : (o.name == "schedulefreeadamw" ? 0.0025 : 0.001);
  o.learning_rate = std::make_shared<ConstantLearningRate>(default_lr);
  if (o.name == "adamw") o.weight_decay = 0.004;
  if (o.name == "lion") o.beta_2 = 0.99;
  if (o.name == "adadelta") o.rho = 0.95;
  if (o.name == "schedulefreeadamw") o.epsilon = 1e-8;
  const json* c = j.is_object() ? value(j, "config") : nullptr;
  if (!c) return o;
  const std::string p = "config";
  expect_object(r, p, *c);
  if (o.name == "sgd") {
    check_keys(r, p, *c, kOptimizerCommon, {"momentum", "nesterov"});
  } else if (o.name == "rmsprop") {
    check_keys(r, p, *c, kOptimizerCommon, {"rho", "momentum", "epsilon", "centered"});
  } else if (o.name == "adagrad") {
    check_keys(r, p, *c, kOptimizerCommon, {"initial_accumulator_value", "epsilon"});
  } else if (o.name == "adadelta") {
    check_keys(r, p, *c, kOptimizerCommon, {"rho", "epsilon"});
  } else if (o.name == "lion") {
    check_keys(r, p, *c, kOptimizerCommon, {"beta_1", "beta_2"});
  } else if (o.name == "ftrl") {
    check_keys(r, p, *c, kOptimizerCommon,
               {"learning_rate_power", "initial_accumulator_value", "l1_regularization_strength",
                "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta"});
  } else if (o.name == "schedulefreeadamw") {
    check_keys(r, p, *c, kOptimizerCommon, {"beta_1", "beta_2", "epsilon", "warmup_steps"});
  } else if (o.name == "adafactor") {
    check_keys(r, p, *c, kOptimizerCommon, {"beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold", "relative_step"});
  } else if (o.name == "nadam" || o.name == "adamax" || o.name == "lamb") {
    check_keys(r, p, *c, kOptimizerCommon, {"beta_1", "beta_2", "epsilon"});
  } else {
    check_keys(r, p, *c, kOptimizerCommon, {"beta_1", "beta_2", "epsilon", "amsgrad"});
  }
  require_null(r, p, *c, {"loss_scale_factor", "gradient_accumulation_steps"});
  for (const auto& [key, to] : {std::pair<const char*, double*>{"clipnorm", &o.clipnorm},
                                {"global_clipnorm", &o.global_clipnorm}, {"clipvalue", &o.clipvalue}}) {
    *to = get_number(r, p, *c, key, 0.0);
    if (*to < 0) r.invalid(p, "\"" + std::string(key) + "\" must be positive or null, got " + show((*c)[key]));
  }
  if ((o.clipnorm > 0) + (o.global_clipnorm > 0) + (o.clipvalue > 0) > 1) {
    r.invalid(p, "only one of \"clipnorm\", \"global_clipnorm\" and \"clipvalue\" can be set (as in Keras)");
  }
  o.use_ema = get_bool(r, p, *c, "use_ema", false);
  o.ema_momentum = get_number(r, p, *c, "ema_momentum", o.ema_momentum);
  if (!(o.ema_momentum >= 0 && o.ema_momentum <= 1)) {
    r.invalid(p, "\"ema_momentum\" must be in [0, 1], got " + show((*c)["ema_momentum"]));
  }
  if (value(*c, "ema_overwrite_frequency")) {
    o.ema_overwrite_frequency = get_int(r, p, *c, "ema_overwrite_frequency", 0);
    if (o.ema_overwrite_frequency < 1) {
      r.invalid(p, "\"ema_overwrite_frequency\" must be an integer >= 1 or null, got " +
                       show((*c)["ema_overwrite_frequency"]));
    }
  }
  o.amsgrad = get_bool(r, p, *c, "amsgrad", false);
  o.centered = get_bool(r, p, *c, "centered", false);
  if (const json* lr = value(*c, "learning_rate")) {
    o.learning_rate = read_learning_rate(r, p, *lr);
  } else if (const json* lr2 = value(*c, "lr")) {
    o.learning_rate = read_learning_rate(r, p, *lr2);
  }
  // Keras 2's legacy "decay": lr / (1 + decay · iterations), an InverseTimeDecay with decay_steps 1.
  if (const double decay = get_number(r, p, *c, "decay", 0.0); decay != 0.0) {
    if (decay < 0) r.invalid(p, "\"decay\" must not be negative, got " + show(decay));
    const json* lr = value(*c, "learning_rate") ? value(*c, "learning_rate") : value(*c, "lr");
    if (lr && !lr->is_number()) {
      r.invalid(p, "Keras 2's \"decay\" and a learning_rate schedule cannot be combined",
                "drop \"decay\" or fold it into the schedule");
    }
    o.learning_rate = std::make_shared<InverseTimeDecay>((*o.learning_rate)(0), 1, decay, false);
  }
  o.weight_decay = get_number(r, p, *c, "weight_decay", o.name == "adamw" ? 0.004 : 0.0);
  if (o.weight_decay < 0) r.invalid(p, "\"weight_decay\" must not be negative, got " + show((*c)["weight_decay"]));
  o.momentum = get_number(r, p, *c, "momentum", o.momentum);
  o.nesterov = get_bool(r, p, *c, "nesterov", o.nesterov);
  o.beta_1 = get_number(r, p, *c, "beta_1", o.beta_1);
  o.beta_2 = get_number(r, p, *c, "beta_2", o.beta_2);
  o.epsilon = get_number(r, p, *c, "epsilon", o.epsilon);
  o.rho = get_number(r, p, *c, "rho", o.rho);
  o.initial_accumulator_value = get_number(r, p, *c, "initial_accumulator_value", o.initial_accumulator_value);
  o.learning_rate_power = get_number(r, p, *c, "learning_rate_power", o.learning_rate_power);
  o.l1_regularization_strength = get_number(r, p, *c, "l1_regularization_strength", o.l1_regularization_strength);
  o.l2_regularization_strength = get_number(r, p, *c, "l2_regularization_strength", o.l2_regularization_strength);
  o.l2_shrinkage_regularization_strength =
      get_number(r, p, *c, "l2_shrinkage_regularization_strength", o.l2_shrinkage_regularization_strength);
  o.beta = get_number(r, p, *c, "beta", o.beta);
  o.beta_2_decay = get_number(r, p, *c, "beta_2_decay", o.beta_2_decay);
  o.epsilon_1 = get_number(r, p, *c, "epsilon_1", o.epsilon_1);
  o.epsilon_2 = get_number(r, p, *c, "epsilon_2", o.epsilon_2);
  o.clip_threshold = get_number(r, p, *c, "clip_threshold", o.clip_threshold);
  o.relative_step = get_bool(r, p, *c, "relative_step", o.relative_step);
  o.warmup_steps = get_int(r, p, *c, "warmup_steps", o.warmup_steps);
  if (o.warmup_steps < 0) r.invalid(p, "\"warmup_steps\" must not be negative, got " + show((*c)["warmup_steps"]));
  if (!(o.clip_threshold > 0) || o.epsilon_1 < 0 || o.epsilon_2 < 0) {
    r.invalid(p, "Adafactor's clip_threshold must be positive and epsilon_1 and epsilon_2 >= 0");
  }
  if (o.learning_rate_power > 0 || o.l1_regularization_strength < 0 || o.l2_regularization_strength < 0 ||
      o.l2_shrinkage_regularization_strength < 0 || o.beta < 0) {
    r.invalid(p, "Ftrl's learning_rate_power must be <= 0 and its regularization strengths and beta >= 0");
  }
  return o;
}

namespace {

// Keras's form of one of its own loss or metric functions given to compile
// (keras.losses.mean_squared_error): {"module": "builtins", "class_name": "function",
// "config": "mean_squared_error", "registered_name": "function"}; its name, else nullopt.
std::optional<std::string> keras_builtin_function(const Reader& r, const json& j) {
  const json* cls = value(j, "class_name");
  if (!cls || !cls->is_string() || cls->get<std::string>() != "function") return std::nullopt;
  const json* module = value(j, "module");
  const json* name = value(j, "config");
  if (!module || !module->is_string() || module->get<std::string>() != "builtins" || !name || !name->is_string()) {
    r.unsupported("", "the function " + show(j) + " is not one of Keras's",
                  "a function of your own is traced from Python (nnfit.keras); the CLI takes Keras's own losses "
                  "and metrics");
  }
  return name->get<std::string>();
}

}  // namespace

Loss loss_from_keras_json(const std::string& json_text, const std::string& where) {
  const Reader r{where};
  const json j = parse(r, json_text);
  if (j.is_string()) return with_path(r, "", "", [&] { return Loss::from_name(j.get<std::string>()); });
  expect_object(r, "", j);
  if (find(j, "nnfit_trace")) return traced_loss_from_keras_json(r, j, where);
  check_keys(r, "", j, {"module", "class_name", "config", "registered_name"});
  const std::string cls = get_string(r, "", j, "class_name", std::nullopt);
  if (const auto fn = keras_builtin_function(r, j)) {
    Loss loss = with_path(r, "config", "", [&] { return Loss::from_name(*fn); });
    loss.keras_function = true;
    return loss;
  }
  Loss loss = with_path(r, "class_name", "", [&] { return Loss::from_name(cls); });
  const json* c = value(j, "config");
  if (!c) return loss;
  expect_object(r, "config", *c);
  // The keys of every Keras loss class (each writes its own subset); a value other than
  // the class's default where nnfit has no such option is Unsupported.
  check_keys(r, "config", *c,
             {"name", "reduction", "from_logits", "ignore_class", "axis", "label_smoothing", "dtype", "delta",
              "alpha", "gamma", "apply_class_balancing", "fn"});
  require_null(r, "config", *c, {"ignore_class"});
  require_value(r, "config", *c, "axis", -1);
  const std::string reduction = get_string(r, "config", *c, "reduction", "sum_over_batch_size");
  if (reduction != "sum_over_batch_size" && reduction != "auto") {
    r.unsupported("config", "\"reduction\" = \"" + reduction + "\" is not supported (only sum_over_batch_size)");
  }
  loss.from_logits = get_bool(r, "config", *c, "from_logits", false);
  if (loss.from_logits && !Loss::takes_from_logits(loss.kind)) {
    r.invalid("config", "\"from_logits\" is not an option of " + cls);
  }
  loss.label_smoothing = get_number(r, "config", *c, "label_smoothing", 0.0);
  if (loss.label_smoothing != 0.0 && !Loss::takes_label_smoothing(loss.kind)) {
    r.unsupported("config", "\"label_smoothing\" = " + show((*c)["label_smoothing"]) + " is not an option of " + cls);
  }
  if (!(loss.label_smoothing >= 0.0 && loss.label_smoothing <= 1.0)) {
    r.invalid("config", "\"label_smoothing\" must be in [0, 1], got " + show((*c)["label_smoothing"]));
  }
  loss.delta = get_number(r, "config", *c, "delta", 1.0);
  if (!(loss.delta > 0.0)) r.invalid("config", "\"delta\" must be positive, got " + show((*c)["delta"]));
  loss.alpha = get_number(r, "config", *c, "alpha", 0.25);
  loss.gamma = get_number(r, "config", *c, "gamma", 2.0);
  if (!(loss.gamma >= 0.0)) r.invalid("config", "\"gamma\" must be >= 0, got " + show((*c)["gamma"]));
  loss.apply_class_balancing = get_bool(r, "config", *c, "apply_class_balancing", false);
  return loss;
}

}  // namespace nnfit

namespace nnfit {

MetricSpec metric_from_keras_json(const std::string& json_text, const std::string& where) {
  const Reader r{where};
  const json j = parse(r, json_text);
  if (j.is_string()) return MetricSpec(j.get<std::string>());
  if (j.is_object() && find(j, "nnfit_trace")) {
    MetricSpec m;
    m.traced = traced_metric_from_keras_json(r, j, where);
    m.name = m.traced->name;
    m.class_name = j.value("class_name", std::string("Metric"));
    return m;
  }
  if (!j.is_object() || !find(j, "class_name")) {
    r.unsupported("", "a metric given as " + show(j) + " is not supported", "give a name or a Keras metric object");
  }
  check_keys(r, "", j, {"module", "class_name", "config", "registered_name"});
  if (const auto fn = keras_builtin_function(r, j)) {
    MetricSpec m(*fn);
    m.keras_function = true;
    return m;
  }
  MetricSpec m;
  m.class_name = get_string(r, "", j, "class_name", std::nullopt);
  m.name = keras_snake_case(m.class_name);
  const json* c = value(j, "config");
  if (!c) return m;
  expect_object(r, "config", *c);
  const std::string p = "config";
  m.name = get_string(r, p, *c, "name", m.name);
  const std::string dtype = find(*c, "dtype") && (*c)["dtype"].is_string() ? (*c)["dtype"].get<std::string>() : "float32";
  if (dtype != "float32") r.unsupported(p, "\"dtype\" = " + show((*c)["dtype"]) + ": metrics are computed in float32");
  const std::string cls = lower(m.class_name);
  const auto allowed = [&](Keys keys) { check_keys(r, p, *c, {"name", "dtype"}, keys); };
  if (cls == "precision" || cls == "recall") {
    allowed({"thresholds", "top_k", "class_id"});
    if (const json* t = value(*c, "thresholds")) {
      const json& one = t->is_array() && t->size() == 1 ? (*t)[0] : *t;
      if (!one.is_number()) r.unsupported(p, "\"thresholds\" = " + show(*t) + ": nnfit takes one threshold");
      m.threshold = one.get<double>();
    }
    if (value(*c, "top_k")) m.top_k = get_int(r, p, *c, "top_k", std::nullopt);
    if (value(*c, "class_id")) m.class_id = get_int(r, p, *c, "class_id", std::nullopt);
    if (m.top_k && *m.top_k < 1) r.invalid(p, "\"top_k\" must be >= 1, got " + std::to_string(*m.top_k));
  } else if (cls == "auc") {
    allowed({"num_thresholds", "curve", "summation_method", "multi_label", "num_labels", "label_weights",
             "from_logits", "thresholds"});
    m.num_thresholds = get_int(r, p, *c, "num_thresholds", 200);
    if (m.num_thresholds <= 1) r.invalid(p, "\"num_thresholds\" must be > 1, got " + std::to_string(m.num_thresholds));
    if (value(*c, "thresholds")) m.thresholds = get_numbers(r, p, *c, "thresholds");
    for (double t : m.thresholds) {
      if (!(t >= 0.0 && t <= 1.0)) r.invalid(p, "\"thresholds\" must lie in [0, 1], got " + show((*c)["thresholds"]));
    }
    // As Keras: given thresholds set the count (with the two ends added).
    if (!m.thresholds.empty()) m.num_thresholds = static_cast<std::int64_t>(m.thresholds.size()) + 2;
    m.curve = get_string(r, p, *c, "curve", "ROC");
    std::transform(m.curve.begin(), m.curve.end(), m.curve.begin(), ::toupper);
    if (m.curve != "ROC" && m.curve != "PR" && m.curve != "PRGAIN") {
      r.invalid(p, "\"curve\" = " + show((*c)["curve"]) + "; Keras's curves are ROC, PR and PRGAIN");
    }
    m.summation_method = lower(get_string(r, p, *c, "summation_method", "interpolation"));
    if (m.summation_method != "interpolation" && m.summation_method != "minoring" && m.summation_method != "majoring") {
      r.invalid(p, "\"summation_method\" = " + show((*c)["summation_method"]) +
                       "; Keras's are interpolation, minoring and majoring");
    }
    if (get_bool(r, p, *c, "multi_label", false)) {
      r.unsupported(p, "\"multi_label\" = true (one AUC per label, averaged) is not supported",
                    "use multi_label=False, which pools every label");
    }
    require_null(r, p, *c, {"label_weights"});
    m.from_logits = get_bool(r, p, *c, "from_logits", false);
  } else if (cls == "f1score" || cls == "fbetascore") {
    allowed(cls == "f1score" ? Keys{"average", "threshold"} : Keys{"average", "threshold", "beta"});
    if (const json* a = value(*c, "average")) {
      m.average = a->is_string() ? a->get<std::string>() : "?";
      if (m.average != "micro" && m.average != "macro" && m.average != "weighted") {
        r.invalid(p, "\"average\" = " + show(*a) + "; Keras's are null, \"micro\", \"macro\" and \"weighted\"");
      }
    }
    m.beta = get_number(r, p, *c, "beta", 1.0);
    if (!(m.beta > 0.0)) r.invalid(p, "\"beta\" must be > 0, got " + show((*c)["beta"]));
    if (value(*c, "threshold")) {
      m.threshold = get_number(r, p, *c, "threshold", 0.5);
      if (!(*m.threshold > 0.0 && *m.threshold <= 1.0)) {
        r.invalid(p, "\"threshold\" must be in (0, 1], got " + show((*c)["threshold"]));
      }
    }
  } else if (cls == "binaryaccuracy") {
    allowed({"threshold"});
    if (value(*c, "threshold")) m.threshold = get_number(r, p, *c, "threshold", 0.5);
  } else if (cls == "topkcategoricalaccuracy" || cls == "sparsetopkcategoricalaccuracy") {
    allowed({"k"});
    m.k = get_int(r, p, *c, "k", 5);
    if (m.k < 1) r.invalid(p, "\"k\" must be >= 1, got " + std::to_string(m.k));
  } else {
    allowed({});
  }
  return m;
}

}  // namespace nnfit
