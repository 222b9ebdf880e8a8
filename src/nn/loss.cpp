// Loss names and aliases as Keras accepts them.
#include "nnfit/nn/loss.h"

#include <algorithm>
#include <cctype>

#include "nnfit/core/error.h"
#include "nnfit/nn/layer.h"
#include "nnfit/nn/operation_graph.h"

namespace nnfit {

namespace {
std::string canonical(const std::string& name) {
  // "SparseCategoricalCrossentropy" -> "sparse_categorical_crossentropy"
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  // Keras's short names and the class names whose snake case differs from the function's.
  static const std::pair<const char*, const char*> kAliases[] = {
      {"mse", "mean_squared_error"}, {"m_s_e", "mean_squared_error"},
      {"bce", "binary_crossentropy"}, {"b_c_e", "binary_crossentropy"},
      {"mae", "mean_absolute_error"}, {"mape", "mean_absolute_percentage_error"},
      {"msle", "mean_squared_logarithmic_error"}, {"huber_loss", "huber"},
      {"logcosh", "log_cosh"}, {"kld", "kl_divergence"}, {"k_l_divergence", "kl_divergence"},
      {"kullback_leibler_divergence", "kl_divergence"}};
  for (const auto& [alias, kind] : kAliases) {
    if (out == alias) return kind;
  }
  return out;
}

struct KindInfo {
  const char* kind;
  const char* class_name;
  bool from_logits, label_smoothing;
};

constexpr KindInfo kKinds[] = {
    {"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy", true, false},
    {"categorical_crossentropy", "CategoricalCrossentropy", true, true},
    {"binary_crossentropy", "BinaryCrossentropy", true, true},
    {"mean_squared_error", "MeanSquaredError", false, false},
    {"mean_absolute_error", "MeanAbsoluteError", false, false},
    {"mean_absolute_percentage_error", "MeanAbsolutePercentageError", false, false},
    {"mean_squared_logarithmic_error", "MeanSquaredLogarithmicError", false, false},
    {"huber", "Huber", false, false},
    {"log_cosh", "LogCosh", false, false},
    {"poisson", "Poisson", false, false},
    {"kl_divergence", "KLDivergence", false, false},
    {"hinge", "Hinge", false, false},
    {"squared_hinge", "SquaredHinge", false, false},
    {"categorical_hinge", "CategoricalHinge", false, false},
    {"cosine_similarity", "CosineSimilarity", false, false},
    {"binary_focal_crossentropy", "BinaryFocalCrossentropy", true, true},
    {"categorical_focal_crossentropy", "CategoricalFocalCrossentropy", true, true},
};

const KindInfo* info(const std::string& kind) {
  for (const KindInfo& k : kKinds) {
    if (kind == k.kind) return &k;
  }
  return nullptr;
}
}  // namespace

std::string Loss::class_name_of(const std::string& kind) {
  const KindInfo* k = info(kind);
  return k ? k->class_name : "";
}

bool Loss::takes_from_logits(const std::string& kind) {
  const KindInfo* k = info(kind);
  return k && k->from_logits;
}

bool Loss::takes_label_smoothing(const std::string& kind) {
  const KindInfo* k = info(kind);
  return k && k->label_smoothing;
}

Loss Loss::from_name(const std::string& name, bool from_logits) {
  const std::string k = canonical(name);
  if (info(k)) {
    Loss l;
    l.kind = k;
    l.from_logits = from_logits && takes_from_logits(k);
    return l;
  }
  std::string names;
  for (const KindInfo& i : kKinds) names += (names.empty() ? "" : ", ") + std::string(i.kind);
  throw InvalidArgument("unknown loss '" + name + "'; supported: " + names +
                        " (or their Keras class names; mse, mae, mape, msle, kld, logcosh)");
}

TensorDesc Loss::target_desc(const TensorDesc& pred, std::size_t output) const {
  if (traced) {
    const Shape& shape = target_shapes.empty() ? target_shape : target_shapes.at(output);
    std::vector<std::int64_t> dims{pred.shape[0]};
    dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
    return {Shape(dims), DType::f32};
  }
  if (kind == "sparse_categorical_crossentropy") {  // one class id per position: the predictions' shape but the classes
    std::vector<std::int64_t> dims = pred.shape.dims();
    if (dims.size() > 1) dims.pop_back();  // (batch,) predictions are refused by the loss itself, naming it
    return {Shape(dims), DType::i32};
  }
  return {pred.shape, DType::f32};
}

namespace {

// Keras's reduce_weighted_values (keras/src/losses/loss.py) on the values of a traced loss:
// weighted by the samples' weights (broadcast along the batch axis), then summed, and for
// the mean reductions divided by the number of values (or by the weights' sum).
int reduce_traced(Graph& g, const Loss& loss, int values, int sample_weight) {
  const int weights = sample_weight;
  const std::string at = "loss/" + loss.name;
  if (g.desc(values).dtype != DType::f32) values = g.add("cast", {values}, Attrs{{"dtype", std::string("float32")}}, at + "/cast");
  if (g.desc(values).shape.rank() == 0) {
    // Keras returns a scalar as it is, and weighs one by broadcasting it over the weights.
    if (sample_weight < 0) return values;
    values = g.add("binary", {values, sample_weight}, Attrs{{"kind", std::string("multiply")}}, at + "/weighted");
    sample_weight = -1;
  }
  const Shape shape = g.desc(values).shape;
  NNFIT_CHECK(loss.reduction != "none" && !loss.reduction.empty(), Unsupported, "loss '", loss.name,
              "': reduction=\"none\" gives one loss per sample, and a model trains on one number; use ",
              "\"sum_over_batch_size\" (Keras's default), \"sum\" or \"mean_with_sample_weight\"");
  if (sample_weight >= 0) {
    NNFIT_CHECK(shape[0] == g.desc(sample_weight).shape[0], InvalidArgument, "loss '", loss.name, "': its values ",
                shape.to_string(), " do not keep the batch axis, so sample weights cannot weigh them");
    std::vector<std::int64_t> dims(static_cast<std::size_t>(shape.rank()), 1);
    dims[0] = shape[0];
    const int w = emit_reshape(g, sample_weight, dims, at + "/sample_weight");
    values = g.add("binary", {values, w}, Attrs{{"kind", std::string("multiply")}}, at + "/weighted");
  }
  const int sum = g.add("reduce", {values}, Attrs{{"kind", std::string("sum")}, {"keepdims", std::int64_t{0}}}, at + "/sum");
  if (loss.reduction == "sum") return sum;
  if (loss.reduction == "mean_with_sample_weight" && weights >= 0) {
    const int total = g.add("reduce", {weights}, Attrs{{"kind", std::string("sum")}, {"keepdims", std::int64_t{0}}},
                            at + "/weight_sum");
    return g.add("binary", {sum, total}, Attrs{{"kind", std::string("divide")}}, at + "/mean");
  }
  Attrs a;
  a.set("factor", 1.0 / static_cast<double>(shape.numel()));
  return g.add("scale", {sum}, a, at + "/mean");
}

// Note [Crossentropy from the logits]: Keras 3 on TensorFlow keeps a softmax's or a
// sigmoid's input on its output tensor (`_keras_logits`, backend/tensorflow/nn.py
// _get_logits), and its crossentropies read the logits from there whatever from_logits
// says: a model ending in Dense(activation="softmax") gets softmax_cross_entropy_with_logits,
// not the probabilities clipped to [1e-7, 1 - 1e-7] (66.0 where clipping gives 12.1 when the
// softmax saturates), and from_logits=True on a softmax output does not apply it twice. The
// logits are found only when the prediction is that node's own output, as Keras's attribute
// lives on that one tensor: a cast in between (a float16 output) or any other layer drops it.
// The logits of `pred` when it is a softmax's (or, for the binary loss, a sigmoid's)
// output, else -1.
int keras_logits(const Graph& g, int pred, const std::string& kind) {
  const int producer = g.value(pred).producer;
  if (producer < 0) return -1;
  const Node& n = g.node(producer);
  const bool softmax = n.op == "softmax" && n.inputs.size() == 1;
  const bool sigmoid = n.op == "activation" && n.attrs.s_or("kind", "") == "sigmoid" && n.inputs.size() == 1;
  if (kind == "binary_crossentropy") return sigmoid ? n.inputs[0] : -1;
  if (kind == "categorical_crossentropy" || kind == "sparse_categorical_crossentropy") return softmax ? n.inputs[0] : -1;
  return -1;
}

}  // namespace

// Note [compute_loss in the step]: Keras's train_step calls compute_loss(x, y, y_pred,
// sample_weight) with the batch's inputs as given, its targets (None without them) and the
// model's outputs, each in the model's structure. Traced once by nnfit.keras over inputs in
// that order, it is emitted here on the step graph's own values: the model's inputs are
// the program's x inputs, so nothing extra leaves the model's graph (unlike add_loss, whose
// feeds are values inside a layer's graph and leave it as extra outputs). A compute_loss
// that never reads y makes the model take no targets (CompileOptions::takes_targets): fit(x)
// as Keras's autoencoders use it, with no target inputs planned, staged or copied.
bool Loss::reads_targets() const {
  if (!computes_loss()) return true;
  const std::size_t outputs = target_shapes.size();
  for (const OperationGraph* g : {traced.get(), traced_weighted.get()}) {
    for (std::size_t i = 0; g && i < outputs; ++i) {
      if (g->reads_input(compute_loss_inputs + i)) return true;
    }
  }
  return false;
}

Loss Loss::for_output(std::size_t output) const {
  Loss out = *this;
  if (computes_loss() && output < target_shapes.size()) out.target_shape = target_shapes[output];
  out.target_shapes.clear();
  return out;
}

int Loss::emit_compute_loss(Graph& graph, const std::vector<int>& xs, const std::vector<int>& ys,
                            const std::vector<int>& preds, int sample_weight) const {
  NNFIT_CHECK(computes_loss() && traced && xs.size() == compute_loss_inputs && preds.size() == target_shapes.size() &&
                  (ys.empty() || ys.size() == preds.size()),
              InvalidArgument, name, ": traced for ", compute_loss_inputs, " input(s) and ", target_shapes.size(),
              " output(s), the model has ", xs.size(), " and ", preds.size(), "; compile the model again");
  const bool weighted = sample_weight >= 0 && traced_weighted;
  std::vector<int> in = xs;
  for (std::size_t i = 0; i < preds.size(); ++i) in.push_back(ys.empty() ? -1 : ys[i]);
  in.insert(in.end(), preds.begin(), preds.end());
  if (weighted) in.push_back(sample_weight);
  const std::vector<int> out = (weighted ? traced_weighted : traced)->emit(graph, in, "loss/" + name);
  NNFIT_CHECK(out.size() == 1 && graph.desc(out[0]).shape.numel() == 1, InvalidArgument, name,
              " returns a value of shape ", graph.desc(out[0]).shape.to_string(),
              "; Keras's compute_loss returns the loss, one number");
  int v = out[0];
  if (graph.desc(v).dtype != DType::f32) v = graph.add("cast", {v}, Attrs{{"dtype", std::string("float32")}}, "loss/cast");
  return graph.desc(v).shape.rank() == 0 ? v : emit_reshape(graph, v, {}, "loss/" + name + "/scalar");
}

int Loss::emit(Graph& graph, int pred, int target, int sample_weight) const {
  NNFIT_CHECK(!kind.empty(), InvalidArgument, "no loss was given to compile()");
  NNFIT_CHECK(!computes_loss(), InvalidArgument, name, " is emitted once for the whole model (emit_compute_loss)");
  if (traced) {
    const bool weighted = sample_weight >= 0 && traced_weighted;
    const std::vector<int> out = weighted ? traced_weighted->emit(graph, {target, pred, sample_weight}, "loss/" + name)
                                          : traced->emit(graph, {target, pred}, "loss/" + name);
    NNFIT_CHECK(out.size() == 1, InvalidArgument, "loss '", name, "' returns ", out.size(), " values; a loss returns one");
    return reduce_traced(graph, *this, out[0], sample_weight);
  }
  Attrs a;
  a.set("kind", kind);
  const int logits = keras_logits(graph, pred, kind);  // Note [Crossentropy from the logits]
  if (logits >= 0 && graph.desc(logits).dtype == graph.desc(pred).dtype) pred = logits;
  a.set("from_logits", std::int64_t{from_logits || pred == logits ? 1 : 0});
  if (label_smoothing != 0.0) a.set("label_smoothing", label_smoothing);
  if (kind == "huber") a.set("delta", delta);
  if (kind == "binary_focal_crossentropy" || kind == "categorical_focal_crossentropy") {
    a.set("alpha", alpha);
    a.set("gamma", gamma);
    a.set("apply_class_balancing", std::int64_t{apply_class_balancing ? 1 : 0});
  }
  const Shape p = graph.desc(pred).shape;
  if ((kind == "categorical_crossentropy" || kind == "sparse_categorical_crossentropy") && p.rank() > 2) {
    // Keras's crossentropy over the last axis at every position (a sequence's steps, an
    // image's pixels), averaged over all of them: the positions as rows of (batch x
    // positions, classes), each sample's weight given to each of its positions.
    const std::int64_t n = p[0], classes = p.dim(-1), positions = p.numel() / std::max<std::int64_t>(n * classes, 1);
    const std::string at = "loss/" + kind + "/positions";
    pred = emit_reshape(graph, pred, {n * positions, classes}, at + "/pred");
    target = emit_reshape(graph, target,
                          kind == "categorical_crossentropy" ? std::vector<std::int64_t>{n * positions, classes}
                                                             : std::vector<std::int64_t>{n * positions},
                          at + "/target");
    if (sample_weight >= 0) {
      Attrs b;
      b.set("shape", std::vector<std::int64_t>{n, positions});
      const int column = emit_reshape(graph, sample_weight, {n, 1}, at + "/sample_weight");
      sample_weight = emit_reshape(graph, graph.add("broadcast_to", {column}, b, at + "/sample_weight_each"),
                                   {n * positions}, at + "/sample_weight_rows");
    }
  }
  std::vector<int> in{pred, target};
  if (sample_weight >= 0) in.push_back(sample_weight);
  return graph.add("loss", in, a, "loss/" + kind);
}

}  // namespace nnfit
