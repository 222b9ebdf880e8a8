// Traced losses, metrics and activations from their Keras JSON
// (src/model/keras/keras_traced_config.h).
#include "model/keras/keras_traced_config.h"

#include <algorithm>
#include <iterator>

#include "nnfit/model/eager_operations.h"
#include "nnfit/nn/traced_layer.h"

namespace nnfit {

using namespace keras_json;

namespace {

Shape read_shape(const Reader& r, const std::string& path, const json& obj, const char* key) {
  const json* v = find(obj, key);
  if (!v || !v->is_array()) r.invalid(path, std::string("\"") + key + "\" must be a list of sizes");
  std::vector<std::int64_t> dims;
  for (const json& d : *v) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0) r.invalid(path, std::string("\"") + key + "\" holds " + show(d));
    dims.push_back(d.get<std::int64_t>());
  }
  return Shape(dims);
}

std::shared_ptr<const OperationGraph> read_graph(const Reader& r, const std::string& path, const json& obj,
                                                 const char* key, const std::string& where, std::size_t inputs,
                                                 const char* what) {
  const json* g = find(obj, key);
  if (!g || !g->is_object()) r.invalid(path, std::string("missing \"") + key + "\"");
  auto graph = operation_graph_from_keras_json(g->dump(), where + ": " + path + "." + key);
  if (graph->num_inputs() != inputs) {
    r.invalid(path + "." + key, std::string(what) + " takes " + std::to_string(inputs) + " inputs, the graph has " +
                                    std::to_string(graph->num_inputs()));
  }
  return graph;
}

std::vector<int> read_indices(const Reader& r, const std::string& path, const json& obj, const char* key,
                              std::size_t variables) {
  const json* v = find(obj, key);
  if (!v || !v->is_array()) r.invalid(path, std::string("\"") + key + "\" must be a list of variable indices");
  std::vector<int> out;
  for (const json& i : *v) {
    if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::size_t>() >= variables) {
      r.invalid(path, std::string("\"") + key + "\" holds " + show(i) + ", not a variable's index");
    }
    out.push_back(i.get<int>());
  }
  return out;
}

}  // namespace

Loss traced_loss_from_keras_json(const Reader& r, const json& j, const std::string& where) {
  const json& t = j["nnfit_trace"];
  const std::string p = "nnfit_trace";
  expect_object(r, p, t);
  check_keys(r, p, t, {"name", "reduction", "y_true_shape", "graph", "weighted_graph", "keras_form", "x_inputs",
                       "y_true_shapes"});
  Loss loss;
  loss.kind = "custom";
  loss.name = get_string(r, p, t, "name", "loss");
  loss.reduction = get_string(r, p, t, "reduction", "sum_over_batch_size");
  static const char* const kReductions[] = {"sum_over_batch_size", "mean", "sum", "mean_with_sample_weight",
                                            "compute_loss"};
  if (std::none_of(std::begin(kReductions), std::end(kReductions), [&](const char* k) { return loss.reduction == k; })) {
    r.unsupported(p, "\"reduction\" = \"" + loss.reduction + "\" is not supported",
                  "use sum_over_batch_size (Keras's default), mean, sum or mean_with_sample_weight");
  }
  if (loss.reduction == "mean") loss.reduction = "sum_over_batch_size";  // Keras treats them alike
  std::size_t inputs = 2;  // y_true, y_pred
  const char* what = "a loss (y_true, y_pred)";
  const char* weighted_what = "a loss (y_true, y_pred, sample_weight)";
  if (loss.computes_loss()) {  // (x..., y..., y_pred...): Note [compute_loss in the step]
    const json* x = find(t, "x_inputs");
    const json* ys = find(t, "y_true_shapes");
    if (!x || !x->is_number_integer() || x->get<std::int64_t>() < 0) r.invalid(p, "\"x_inputs\" must be a count");
    if (!ys || !ys->is_array() || ys->empty()) r.invalid(p, "\"y_true_shapes\" must list one shape per output");
    loss.compute_loss_inputs = x->get<std::size_t>();
    for (std::size_t i = 0; i < ys->size(); ++i) {
      loss.target_shapes.push_back(read_shape(r, p + ".y_true_shapes", json{{"shape", (*ys)[i]}}, "shape"));
    }
    loss.target_shape = loss.target_shapes[0];
    inputs = loss.compute_loss_inputs + 2 * loss.target_shapes.size();
    what = "compute_loss (x..., y..., y_pred...)";
    weighted_what = "compute_loss (x..., y..., y_pred..., sample_weight)";
  } else {
    loss.target_shape = read_shape(r, p, t, "y_true_shape");
  }
  loss.traced = read_graph(r, p, t, "graph", where, inputs, what);
  if (loss.traced->num_outputs() != 1) r.invalid(p + ".graph", "a loss's graph gives one value");
  if (find(t, "weighted_graph")) {
    loss.traced_weighted = read_graph(r, p, t, "weighted_graph", where, inputs + 1, weighted_what);
    if (loss.traced_weighted->num_outputs() != 1) r.invalid(p + ".weighted_graph", "a loss's graph gives one value");
  }
  // A compute_loss override is no object of Keras's compile_config: its file keeps what the
  // user compiled with ("keras_form", null without a loss), and the model's class retraces it.
  const json* form = find(t, "keras_form");
  loss.object_json = form ? form->dump() : j.dump();
  return loss;
}

std::shared_ptr<const TracedMetric> traced_metric_from_keras_json(const Reader& r, const json& j,
                                                                  const std::string& where) {
  const json& t = j["nnfit_trace"];
  const std::string p = "nnfit_trace";
  expect_object(r, p, t);
  check_keys(r, p, t, {"name", "variables", "y_true_shape", "update", "updated", "update_weighted", "updated_weighted",
                       "result"});
  auto m = std::make_shared<TracedMetric>();
  m->name = get_string(r, p, t, "name", std::nullopt);
  m->object_json = j.dump();
  m->target_shape = read_shape(r, p, t, "y_true_shape");
  const json* vars = find(t, "variables");
  if (!vars || !vars->is_array()) r.invalid(p, "\"variables\" must be a list");
  for (std::size_t i = 0; i < vars->size(); ++i) {
    const std::string vp = p + ".variables[" + std::to_string(i) + "]";
    const json& v = (*vars)[i];
    expect_object(r, vp, v);
    m->variable_names.push_back(get_string(r, vp, v, "name", std::nullopt));
    m->variable_shapes.push_back(read_shape(r, vp, v, "shape"));
    const json* init = find(v, "initial");
    if (!init || !init->is_array() || init->size() != static_cast<std::size_t>(m->variable_shapes.back().numel())) {
      r.invalid(vp, "\"initial\" must hold one number per element of the variable");
    }
    std::vector<double> values;
    for (const json& x : *init) {
      if (!x.is_number()) r.invalid(vp, "\"initial\" holds " + show(x));
      values.push_back(x.get<double>());
    }
    m->initial.push_back(std::move(values));
  }
  const std::size_t n = m->variable_shapes.size();
  m->update = read_graph(r, p, t, "update", where, 2 + n, "update_state (y_true, y_pred, variables...)");
  m->updated = read_indices(r, p, t, "updated", n);
  if (find(t, "update_weighted")) {  // absent: update_state takes no sample_weight
    m->update_weighted =
        read_graph(r, p, t, "update_weighted", where, 3 + n, "update_state (y_true, y_pred, sample_weight, variables...)");
    m->updated_weighted = read_indices(r, p, t, "updated_weighted", n);
    if (m->update_weighted->num_outputs() != m->updated_weighted.size()) {
      r.invalid(p, "update_state's graphs give one value per updated variable");
    }
  }
  if (m->update->num_outputs() != m->updated.size()) r.invalid(p, "update_state's graphs give one value per updated variable");
  m->result = read_graph(r, p, t, "result", where, n, "result (variables...)");
  return m;
}

}  // namespace nnfit

namespace nnfit {

void read_traced_masks(const Reader& r, const std::string& tpath, const json& trace, TracedLayer& layer) {
  std::vector<int> inputs;
  std::vector<TracedLayer::MaskSource> outputs;
  int computed = 0;
  if (const json* m = value(trace, "mask_inputs")) {
    if (!m->is_array()) r.invalid(tpath + ".mask_inputs", "must be a list of input indices");
    for (const json& k : *m) {
      if (!k.is_number_integer()) r.invalid(tpath + ".mask_inputs", "holds " + show(k) + ", not an input index");
      inputs.push_back(k.get<int>());
    }
  }
  if (const json* m = value(trace, "output_masks")) {
    if (!m->is_array()) r.invalid(tpath + ".output_masks", "must be a list, one entry per output");
    for (const json& o : *m) {
      TracedLayer::MaskSource src;
      const json* k = o.is_object() ? (value(o, "input") ? value(o, "input") : value(o, "output")) : nullptr;
      if (k && k->is_number_integer()) {
        src.kind = value(o, "input") ? TracedLayer::MaskSource::Kind::input : TracedLayer::MaskSource::Kind::output;
        src.index = k->get<int>();
        if (src.kind == TracedLayer::MaskSource::Kind::output) computed = std::max(computed, src.index + 1);
      } else if (!o.is_null()) {
        r.invalid(tpath + ".output_masks", "holds " + show(o) + "; expected null, {\"input\": k} or {\"output\": j}");
      }
      outputs.push_back(src);
    }
  }
  if (!inputs.empty() || !outputs.empty()) {
    with_path(r, tpath, layer.name(), [&] { layer.set_masks(std::move(inputs), std::move(outputs), computed); });
  }
}

void read_traced_weight_values(const Reader& r, const std::string& tpath, const json& trace, TracedLayer& layer) {
  const json* w = value(trace, "weight_values");
  if (!w) return;
  const std::string wpath = tpath + ".weight_values";
  expect_object(r, wpath, *w);
  check_keys(r, wpath, *w, {"graph", "losses"});
  const json* graph = find(*w, "graph");
  if (!graph || !graph->is_object()) r.invalid(wpath, "missing \"graph\" (the operations on the layer's weights)");
  const std::int64_t losses = get_int(r, wpath, *w, "losses", std::int64_t{0});
  auto values = operation_graph_from_keras_json(graph->dump(), r.where + ": " + wpath + ".graph");
  with_path(r, tpath, layer.name(), [&] { layer.set_weight_values(std::move(values), static_cast<int>(losses)); });
}

std::shared_ptr<const OperationGraph> read_traced_activation(const Reader& r, const std::string& path,
                                                             const std::string& layer_class, const json& activation) {
  static const char* const kApplied[] = {"Dense",           "EinsumDense",     "Activation",      "Conv1D",
                                         "Conv2D",          "Conv3D",          "Conv1DTranspose", "Conv2DTranspose",
                                         "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv1D",
                                         "DepthwiseConv2D"};
  if (std::find(std::begin(kApplied), std::end(kApplied), layer_class) == std::end(kApplied)) {
    r.unsupported(path, "a Python function as the activation of a " + layer_class +
                            " layer is not supported (it is for Dense, EinsumDense, Activation and the convolutions)");
  }
  const json& trace = activation["nnfit_trace"];
  expect_object(r, path + ".nnfit_trace", trace);
  check_keys(r, path + ".nnfit_trace", trace, {"graph"});
  std::shared_ptr<const OperationGraph> graph =
      read_graph(r, path + ".nnfit_trace", trace, "graph", r.where, 1, "an activation");
  if (graph->num_outputs() != 1) r.invalid(path + ".nnfit_trace.graph", "an activation has one output");
  return graph;
}

}  // namespace nnfit
