// Model → Keras 3 JSON: what Keras's model.to_json() writes for the same model, so Keras
// and nnfit load each other's files. Every layer is written by its family's codec
// (codecs/) with the keys Keras 3.15 writes (defaults included), Functional graphs
// with Keras 3's `args` nodes; the optimizer and loss as Keras serializes them in
// compile_config.
#include <cmath>
#include <utility>
#include <nlohmann/json.hpp>

#include "model/keras/codecs/codec.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/traced_metric.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/nested_model.h"
#include "nnfit/nn/traced_layer.h"
#include "nnfit/nn/operation.h"

namespace nnfit {
namespace {

using ojson = nlohmann::ordered_json;

// Writes one model (and the models nested in it) for one Keras generation: the writer's
// keras2 flag and the model's dtype policy travel with it, down to the codecs and the
// layers they wrap, instead of through a thread_local global. Made per call; no state
// beyond the options.
class ModelWriter {
 public:
  explicit ModelWriter(keras_json::Writer w) : w_(std::move(w)) {}

  ojson dtype_policy(const std::string& name = "float32") {
    if (w_.keras2) return name;
    return {{"module", "keras"}, {"class_name", "DTypePolicy"}, {"config", {{"name", name}}}, {"registered_name", nullptr}};
  }

  ojson batch_shape(const Shape& s) {
    ojson out = ojson::array({nullptr});
    for (std::int64_t d : s.dims()) {
      if (d == kUnknownDim) out.push_back(nullptr);  // Keras's None (Note [Shapes known per batch])
      else out.push_back(d);
    }
    return out;
  }

  ojson layer_object(const std::string& cls, ojson config) {
    return {{"module", "keras.layers"}, {"class_name", cls}, {"config", std::move(config)}, {"registered_name", nullptr}};
  }

  // A layer's policy as Keras writes it: its own, else the model's (Keras writes each layer's).
  ojson common(const Layer& l) {
    const std::string policy = l.dtype_policy() ? l.dtype_policy()->name : w_.model_policy;
    return {{"name", l.name()}, {"trainable", l.trainable()}, {"dtype", dtype_policy(policy)}};
  }

  ojson layer_json(const Layer& l, const std::vector<Shape>& in) {
    if (auto* nm = dynamic_cast<const NestedModel*>(&l)) return model_object(nm->class_name(), nm->name(), nm->graph());
    if (auto* traced = dynamic_cast<const TracedLayer*>(&l)) {  // as read (Note [Traced layers]); its flag as now
      if (w_.keras2) throw Unsupported(l.name() + ": a traced Layer subclass has no Keras 2 form", "save as .keras");
      ojson object = ojson::parse(traced->object_json());
      object["config"]["trainable"] = l.trainable();
      return object;
    }
    if (auto* op = dynamic_cast<const Operation*>(&l)) {
      if (w_.keras2) throw Unsupported(l.name() + ": Keras's " + l.class_name() + " operation has no Keras 2 form", "save as .keras");
      return keras_json::write_operation_object(*op);
    }
    if (auto* op = dynamic_cast<const LogicalOp*>(&l)) {
      // An operation, as Keras 3 writes one: its name (not_equal's value is a call argument).
      if (w_.keras2) throw Unsupported(l.name() + ": Keras's " + l.class_name() + " operation has no Keras 2 form", "save as .keras");
      const bool convert = op->kind() == LogicalOpKind::convert_to_tensor;
      ojson config{{"name", l.name()}};
      if (convert) config.update({{"dtype", nullptr}, {"sparse", nullptr}, {"ragged", nullptr}});
      return {{"module", convert ? "keras.src.ops.core" : "keras.src.ops.numpy"},
              {"class_name", l.class_name()},
              {"config", config},
              {"registered_name", l.class_name()}};
    }
    ojson c = common(l);
    bool written = false;
    for (const keras_json::LayerFamily* f : keras_json::layer_families()) {
      if ((written = f->write(w_, l, c))) break;
    }
    if (!written) throw Unsupported(l.name() + ": cannot write a " + l.class_name() + " layer to a Keras config");
    keras_json::write_weight_options(l, c);
    if (l.traced_activation()) c["activation"] = ojson::parse(l.traced_activation_json());  // Note [Traced activations]
    ojson out = layer_object(l.class_name(), std::move(c));
    const CallArguments call = l.call_arguments();
    if (in.empty()) {
      // A wrapped layer: its wrapper builds it.
    } else if (!call.build_names.empty()) {
      // A build(query_shape, value_shape, ...) takes the shapes of its tensor arguments by
      // name (Keras's shapes_dict); a "name/i" entry is item i of a list.
      ojson shapes = ojson::object();
      for (std::size_t i = 0; i < call.build_names.size() && i < in.size(); ++i) {
        const std::string& n = call.build_names[i];
        if (n.empty()) continue;
        const std::size_t slash = n.find('/');
        if (slash == std::string::npos) {
          shapes[n + "_shape"] = batch_shape(in[i]);
        } else {
          shapes[n.substr(0, slash) + "_shape"].push_back(batch_shape(in[i]));
        }
      }
      out["build_config"] = {{"shapes_dict", shapes}};
    } else if (in.size() == 1) {
      out["build_config"] = {{"input_shape", batch_shape(in[0])}};
    } else {
      ojson shapes = ojson::array();
      for (const Shape& s : in) shapes.push_back(batch_shape(s));
      out["build_config"] = {{"input_shape", shapes}};
    }
    return out;
  }

  ojson input_layer(const InputSpec& in) {
    return layer_object("InputLayer", {{w_.keras2 ? "batch_input_shape" : "batch_shape", batch_shape(in.shape)},
                                       {"dtype", std::string(dtype_name(in.dtype))},
                                       {"sparse", false},
                                       {"ragged", false},
                                       {"name", in.name}});
  }

  ojson keras_tensor(const LayerGraph& g, const std::vector<std::vector<Shape>>& shapes, const TensorRef& t) {
    const LayerNode& src = g.nodes()[static_cast<std::size_t>(t.node)];
    const std::string name = src.layer ? src.layer->name() : g.inputs()[static_cast<std::size_t>(src.input_index)].name;
    return {{"class_name", "__keras_tensor__"},
            {"config",
             {{"shape", batch_shape(shapes[static_cast<std::size_t>(t.node)][static_cast<std::size_t>(t.index)])},
              {"dtype", "float32"},
              {"keras_history", {name, src.call_index, t.index}}}}};
  }

  // Keras 2's [layer, node, tensor, {}]; a nested graph model's calls count from 1 there
  // (Note [Keras 2 node indices] in keras_model_config.cpp).
  ojson keras2_ref(const LayerGraph& g, const TensorRef& t) {
    const LayerNode& src = g.nodes()[static_cast<std::size_t>(t.node)];
    const std::string name = src.layer ? src.layer->name() : g.inputs()[static_cast<std::size_t>(src.input_index)].name;
    const int offset = dynamic_cast<const NestedModel*>(src.layer) ? 1 : 0;
    return ojson::array({name, src.call_index + offset, t.index, ojson::object()});
  }

  ojson sequential_object(const std::string& name, const LayerGraph& g, const std::vector<std::vector<Shape>>& shapes) {
    ojson layers = ojson::array({input_layer(g.inputs()[0])});
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      const LayerNode& n = g.nodes()[i];
      if (!n.layer) continue;
      std::vector<Shape> in;
      for (const TensorRef& t : n.inputs) in.push_back(shapes[static_cast<std::size_t>(t.node)][static_cast<std::size_t>(t.index)]);
      layers.push_back(layer_json(*n.layer, in));
    }
    return {{"module", "keras"},
            {"class_name", "Sequential"},
            {"config", {{"name", name}, {"trainable", true}, {"dtype", dtype_policy(w_.model_policy)}, {"layers", layers}}},
            {"registered_name", nullptr},
            {"build_config", {{"input_shape", batch_shape(g.inputs()[0].shape)}}}};
  }

  // Keras's mask= argument: one tensor for one input, else a list with nulls.
  ojson mask_argument(const LayerGraph& g, const std::vector<std::vector<Shape>>& shapes, const std::vector<TensorRef>& masks) {
    ojson out = ojson::array();
    for (const TensorRef& m : masks) out.push_back(m.node >= 0 ? keras_tensor(g, shapes, m) : ojson(nullptr));
    return masks.size() == 1 ? out[0] : out;
  }

  // input_layers / output_layers as Keras 3 writes them: a dict by key for dict inputs or
  // outputs, one reference for one, else a list (Keras 2: always a list).
  ojson endpoints(const ojson& refs, const std::vector<std::string>& keys) const {
    if (w_.keras2) return refs;
    if (!keys.empty()) {
      ojson by_key = ojson::object();
      for (std::size_t i = 0; i < keys.size(); ++i) by_key[keys[i]] = refs[i];
      return by_key;
    }
    return refs.size() == 1 ? refs[0] : refs;
  }

  ojson functional_object(const std::string& name, const LayerGraph& g, const std::vector<std::vector<Shape>>& shapes) {
    ojson layers = ojson::array();
    ojson input_layers = ojson::array();
    for (const InputSpec& in : g.inputs()) {
      ojson l = input_layer(in);
      l["name"] = in.name;
      l["inbound_nodes"] = ojson::array();
      layers.push_back(std::move(l));
      input_layers.push_back({in.name, 0, 0});
    }
    for (const auto& layer : g.layers()) {
      ojson l;
      ojson nodes = ojson::array();
      for (const LayerNode& n : g.nodes()) {
        if (n.layer != layer.get()) continue;
        ojson args = ojson::array();
        std::vector<Shape> in;
        for (const TensorRef& t : n.inputs) {
          args.push_back(w_.keras2 ? keras2_ref(g, t) : keras_tensor(g, shapes, t));
          in.push_back(shapes[static_cast<std::size_t>(t.node)][static_cast<std::size_t>(t.index)]);
        }
        const CallArguments call = layer->call_arguments();
        if (auto* op = dynamic_cast<const Operation*>(layer.get()); op && !w_.keras2) {
          nodes.push_back(keras_json::write_operation_call(*op, std::vector<ojson>(args.begin(), args.end())));
        } else if (w_.keras2) {
          if (!call.flags.empty() || !call.keyword_inputs.empty()) {
            throw Unsupported(layer->name() + ": a call with keyword arguments is not written in Keras 2's format",
                              "save as .keras");
          }
          if (!n.masks.empty()) {
            throw Unsupported(layer->name() + ": a call with an explicit mask= has no Keras 2 form", "save as .keras");
          }
          nodes.push_back(args);
        } else if (call.positional > 0) {
          // Positional tensors one by one, then keyword tensors and flags (MultiHeadAttention).
          ojson kwargs = ojson::object();
          for (std::size_t k = 0; k < call.keyword_inputs.size(); ++k) {
            // "initial_state/1" is entry 1 of a list argument.
            const std::string& key = call.keyword_inputs[k];
            const std::size_t slash = key.find('/');
            if (slash == std::string::npos) {
              kwargs[key] = args[call.positional + k];
            } else {
              kwargs[key.substr(0, slash)].push_back(args[call.positional + k]);
            }
          }
          for (const auto& [k, v] : call.flags) kwargs[k] = v;
          args.erase(args.begin() + static_cast<std::ptrdiff_t>(call.positional), args.end());
          for (double c : call.constants) args.push_back(c == std::floor(c) ? ojson(static_cast<std::int64_t>(c)) : ojson(c));
          if (!n.masks.empty()) kwargs["mask"] = mask_argument(g, shapes, n.masks);
          nodes.push_back({{"args", args}, {"kwargs", kwargs}});
        } else {
          // A layer of several inputs takes them as one list argument, as Keras calls merges.
          if (n.inputs.size() > 1) args = ojson::array({args});
          ojson kwargs = ojson::object();
          for (const auto& [k, v] : call.flags) kwargs[k] = v;
          if (!n.masks.empty()) kwargs["mask"] = mask_argument(g, shapes, n.masks);
          nodes.push_back({{"args", args}, {"kwargs", kwargs}});
        }
        if (l.is_null()) l = layer_json(*layer, in);
      }
      l["name"] = layer->name();
      l["inbound_nodes"] = std::move(nodes);
      layers.push_back(std::move(l));
    }
    ojson output_layers = ojson::array();
    for (const TensorRef& t : g.outputs()) {
      if (w_.keras2) {
        ojson ref = keras2_ref(g, t);
        ref.erase(3);
        output_layers.push_back(std::move(ref));
      } else {
        output_layers.push_back(keras_tensor(g, shapes, t)["config"]["keras_history"]);
      }
    }
    return {{"module", "keras.src.models.functional"},
            {"class_name", "Functional"},
            {"config",
             {{"name", name},
              {"trainable", true},
              {"layers", layers},
              {"input_layers", endpoints(input_layers, g.input_keys())},
              {"output_layers", endpoints(output_layers, g.output_keys())}}},
            {"registered_name", "Functional"}};
  }

  ojson model_object(const std::string& cls, const std::string& name, const LayerGraph& g) {
    const auto shapes = g.infer_shapes();
    return cls == "Sequential" ? sequential_object(name, g, shapes) : functional_object(name, g, shapes);
  }

 private:
  keras_json::Writer w_;
};

}  // namespace

namespace keras_json {

ojson write_layer_object(const Writer& w, const Layer& l) { return ModelWriter(w).layer_json(l, {}); }

}  // namespace keras_json

std::string model_to_keras_json(const Model& model, KerasFormat format) {
  const keras_json::Writer w{format == KerasFormat::keras2, model.dtype_policy().name};
  ojson out = ModelWriter(w).model_object(model.class_name(), model.name(), model.graph());
  if (!model.graph().added_losses_json().empty()) {  // add_loss in a subclassed model's call, as read
    if (format == KerasFormat::keras2) throw Unsupported(model.name() + ": add_loss in a model has no Keras 2 form", "save as .keras");
    out["nnfit_losses"] = ojson::parse(model.graph().added_losses_json());
  }
  if (format == KerasFormat::keras2) {
    out.erase("module");
    out.erase("registered_name");
    out.erase("build_config");
    out["keras_version"] = "2.15.0";
    out["backend"] = "tensorflow";
  }
  return out.dump();
}

namespace {

// The optimizer alone, without a loss scale.
std::string inner_optimizer_json(const OptimizerOptions& o) {
  static const std::pair<const char*, const char*> kClasses[] = {
      {"adam", "Adam"},       {"adamw", "AdamW"},   {"sgd", "SGD"},   {"rmsprop", "RMSprop"},
      {"adagrad", "Adagrad"}, {"adamax", "Adamax"}, {"lion", "Lion"}, {"adadelta", "Adadelta"},
      {"nadam", "Nadam"},     {"ftrl", "Ftrl"},     {"lamb", "Lamb"},     {"adafactor", "Adafactor"},
      {"schedulefreeadamw", "ScheduleFreeAdamW"}};
  std::string cls;
  for (const auto& [n, c] : kClasses) cls = o.name == n ? c : cls;
  NNFIT_CHECK(!cls.empty(), InvalidArgument, "cannot write optimizer '", o.name, "' to a Keras config");
  ojson c = {{"name", o.name},
            {"learning_rate", o.learning_rate ? ojson::parse(o.learning_rate->keras_json()) : ojson(0.001)},
            {"weight_decay", o.name == "adamw" || o.weight_decay > 0 ? ojson(o.weight_decay) : ojson(nullptr)},
            {"clipnorm", o.clipnorm > 0 ? ojson(o.clipnorm) : ojson(nullptr)},
            {"global_clipnorm", o.global_clipnorm > 0 ? ojson(o.global_clipnorm) : ojson(nullptr)},
            {"clipvalue", o.clipvalue > 0 ? ojson(o.clipvalue) : ojson(nullptr)},
            {"use_ema", o.use_ema},
            {"ema_momentum", o.ema_momentum},
            {"ema_overwrite_frequency", o.ema_overwrite_frequency > 0 ? ojson(o.ema_overwrite_frequency) : ojson(nullptr)},
            {"loss_scale_factor", nullptr},
            {"gradient_accumulation_steps", nullptr}};
  if (o.name == "sgd") {
    c.update({{"momentum", o.momentum}, {"nesterov", o.nesterov}});
  } else if (o.name == "rmsprop") {
    c.update({{"rho", o.rho}, {"momentum", o.momentum}, {"epsilon", o.epsilon}, {"centered", o.centered}});
  } else if (o.name == "adagrad") {
    c.update({{"initial_accumulator_value", o.initial_accumulator_value}, {"epsilon", o.epsilon}});
  } else if (o.name == "adadelta") {
    c.update({{"rho", o.rho}, {"epsilon", o.epsilon}});
  } else if (o.name == "lion") {
    c.update({{"beta_1", o.beta_1}, {"beta_2", o.beta_2}});
  } else if (o.name == "adamax" || o.name == "nadam" || o.name == "lamb") {
    c.update({{"beta_1", o.beta_1}, {"beta_2", o.beta_2}, {"epsilon", o.epsilon}});
  } else if (o.name == "schedulefreeadamw") {
    c.update({{"beta_1", o.beta_1}, {"beta_2", o.beta_2}, {"epsilon", o.epsilon}, {"warmup_steps", o.warmup_steps}});
  } else if (o.name == "adafactor") {
    c.update({{"beta_2_decay", o.beta_2_decay},
              {"epsilon_1", o.epsilon_1},
              {"epsilon_2", o.epsilon_2},
              {"clip_threshold", o.clip_threshold},
              {"relative_step", o.relative_step}});
  } else if (o.name == "ftrl") {
    c.update({{"learning_rate_power", o.learning_rate_power},
              {"initial_accumulator_value", o.initial_accumulator_value},
              {"l1_regularization_strength", o.l1_regularization_strength},
              {"l2_regularization_strength", o.l2_regularization_strength},
              {"l2_shrinkage_regularization_strength", o.l2_shrinkage_regularization_strength},
              {"beta", o.beta}});
  } else {
    c.update({{"beta_1", o.beta_1}, {"beta_2", o.beta_2}, {"epsilon", o.epsilon}, {"amsgrad", o.amsgrad}});
  }
  return ojson{{"module", "keras.optimizers"}, {"class_name", cls}, {"config", c}, {"registered_name", nullptr}}.dump();
}

// Keras's form of one of its own functions given to compile.
std::string keras_function_json(const std::string& name) {
  return ojson{{"module", "builtins"}, {"class_name", "function"}, {"config", name}, {"registered_name", "function"}}
      .dump();
}

}  // namespace

std::string optimizer_to_keras_json(const OptimizerOptions& o) {
  if (!o.loss_scale.enabled) return inner_optimizer_json(o);
  OptimizerOptions inner = o;
  inner.loss_scale = {};
  ojson c = {{"name", "loss_scale_optimizer"},
            {"inner_optimizer", ojson::parse(inner_optimizer_json(inner))},
            {"initial_scale", o.loss_scale.initial_scale},
            {"dynamic_growth_steps", o.loss_scale.growth_steps}};
  if (!o.loss_scale.dynamic) c["dynamic"] = false;  // Keras 2's fixed scale
  return ojson{{"module", "keras.optimizers"}, {"class_name", "LossScaleOptimizer"}, {"config", c}, {"registered_name", nullptr}}
      .dump();
}

std::string metric_to_keras_json(const MetricSpec& m) {
  if (m.traced) return m.traced->object_json;  // as read, with its trace (Note [Traced losses and metrics])
  if (m.keras_function) return keras_function_json(m.name);
  if (m.class_name.empty()) return ojson(m.name).dump();
  ojson c = {{"name", m.name}, {"dtype", "float32"}};
  const std::string cls = keras_json::lower(m.class_name);
  const ojson threshold = m.threshold ? ojson(*m.threshold) : ojson(nullptr);
  const auto opt = [](const std::optional<std::int64_t>& v) { return v ? ojson(*v) : ojson(nullptr); };
  if (cls == "precision" || cls == "recall") {
    c.update({{"thresholds", threshold}, {"top_k", opt(m.top_k)}, {"class_id", opt(m.class_id)}});
  } else if (cls == "auc") {
    c.update({{"num_thresholds", m.num_thresholds},
              {"curve", m.curve}, {"summation_method", m.summation_method}, {"multi_label", false},
              {"num_labels", nullptr}, {"label_weights", nullptr}, {"from_logits", m.from_logits}});
    if (!m.thresholds.empty()) c["thresholds"] = m.thresholds;
  } else if (cls == "f1score" || cls == "fbetascore") {
    c["average"] = m.average.empty() ? ojson(nullptr) : ojson(m.average);
    if (cls == "fbetascore") c["beta"] = m.beta;
    c["threshold"] = threshold;
  } else if (cls == "binaryaccuracy") {
    c["threshold"] = m.threshold.value_or(0.5);
  } else if (cls == "topkcategoricalaccuracy" || cls == "sparsetopkcategoricalaccuracy") {
    c["k"] = m.k;
  }
  return ojson{{"module", "keras.metrics"}, {"class_name", m.class_name}, {"config", c}, {"registered_name", nullptr}}.dump();
}

std::string loss_to_keras_json(const Loss& loss) {
  if (loss.traced) return loss.object_json;  // as read, with its trace (Note [Traced losses and metrics])
  if (loss.keras_function) return keras_function_json(loss.kind);
  const std::string cls = Loss::class_name_of(loss.kind);
  NNFIT_CHECK(!cls.empty(), InvalidArgument, "cannot write loss '", loss.kind, "' to a Keras config");
  // Keras 3's keys and names (Huber's is "huber_loss"; Keras 3 drops its delta, which it
  // reads back when given).
  ojson c = {{"name", loss.kind == "huber" ? "huber_loss" : loss.kind}, {"reduction", "sum_over_batch_size"}};
  if (Loss::takes_from_logits(loss.kind)) c["from_logits"] = loss.from_logits;
  if (Loss::takes_label_smoothing(loss.kind)) c.update({{"label_smoothing", loss.label_smoothing}, {"axis", -1}});
  if (loss.kind == "huber") c["delta"] = loss.delta;
  if (loss.kind == "binary_focal_crossentropy") c["apply_class_balancing"] = loss.apply_class_balancing;
  if (loss.kind == "binary_focal_crossentropy" || loss.kind == "categorical_focal_crossentropy") {
    c.update({{"alpha", loss.alpha}, {"gamma", loss.gamma}});
  }
  return ojson{{"module", "keras.losses"}, {"class_name", cls}, {"config", c}, {"registered_name", nullptr}}.dump();
}

}  // namespace nnfit
