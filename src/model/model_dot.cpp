// model_to_dot (include/nnfit/model/model_dot.h): Keras's node labels (an HTML table: name
// and class, activation, input and output shapes, output dtype, trainable), one node per
// layer (a Functional model's Inputs too, a Sequential's not), edges from the layer making
// a tensor to each layer reading it, nested models as one box or, expanded, as clusters
// whose edges reach the layers inside (their output layers, their InputLayers or first layer).
#include "nnfit/model/model_dot.h"

#include <set>
#include <sstream>

#include "model/keras/codecs/codec.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/nested_model.h"

namespace nnfit {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Python's repr of a Keras shape: (None, 28, 28, 1); (None,) for one axis.
std::string shape_text(const Shape& s) {
  std::string out = "(None";
  for (std::int64_t d : s.dims()) out += ", " + (d == kUnknownDim ? std::string("None") : std::to_string(d));
  return out + (s.rank() == 0 ? ",)" : ")");
}

std::string shapes_text(const std::vector<Shape>& shapes) {
  if (shapes.size() == 1) return shape_text(shapes[0]);
  std::string out = "[";
  for (std::size_t i = 0; i < shapes.size(); ++i) out += (i ? ", " : "") + shape_text(shapes[i]);
  return out + "]";
}

struct Box {
  std::string id;
  std::string name, class_name;
  std::string activation;  // "" when the layer has none
  std::vector<Shape> in, out;
  bool is_input = false;
  std::string dtype;
  bool has_weights = false, trainable = true;
};

class DotWriter {
 public:
  DotWriter(const Model& model, const DotOptions& o) : model_(model), o_(o) {}

  std::string write() {
    std::ostringstream dot;
    if (o_.subgraph) {
      dot << "subgraph " << quoted("cluster_" + model_.name()) << " {\nlabel=" << quoted(model_.name())
          << ";\nlabeljust=l;\nstyle=dashed;\n";
    } else {
      dot << "digraph G {\nrankdir=" << quoted(o_.rankdir) << ";\nconcentrate=true;\ndpi=" << o_.dpi
          << ";\nsplines=" << quoted(o_.splines) << ";\nnode [shape=record];\n";
    }
    if (o_.single_node) {
      Box b{model_.name(), model_.name(), model_.class_name(), "", {}, {}, false, "float32", !model_.weights().empty(), true};
      node(dot, b);
    } else {
      graph(dot, model_.graph(), model_.class_name() == "Sequential", model_.name() + "/");
    }
    dot << "}\n";
    return dot.str();
  }

 private:
  // Where an edge into `node`'s input `i` of graph g lands, and where one out of its output
  // `k` starts: the layer itself, or inside a nested model when expanded.
  std::string source(const LayerGraph& g, const std::string& prefix, int node, int k) const {
    const LayerNode& n = g.nodes()[static_cast<std::size_t>(node)];
    if (n.layer == nullptr) return prefix + g.inputs()[static_cast<std::size_t>(n.input_index)].name;
    const auto* nested = dynamic_cast<const NestedModel*>(n.layer);
    if (nested == nullptr || !o_.expand_nested) return prefix + n.layer->name();
    const TensorRef out = nested->graph().outputs()[static_cast<std::size_t>(k)];
    return source(nested->graph(), prefix + n.layer->name() + "/", out.node, out.index);
  }

  std::string destination(const Layer& l, const std::string& prefix, std::size_t i) const {
    const auto* nested = dynamic_cast<const NestedModel*>(&l);
    if (nested == nullptr || !o_.expand_nested) return prefix + l.name();
    const LayerGraph& g = nested->graph();
    const std::string inner = prefix + l.name() + "/";
    if (nested->class_name() == "Functional") return inner + g.inputs()[i].name;  // its InputLayer
    for (const LayerNode& n : g.nodes()) {  // a Sequential: its first layer
      if (n.layer != nullptr) return destination(*n.layer, inner, 0);
    }
    return inner;
  }

  void graph(std::ostringstream& dot, const LayerGraph& g, bool sequential, const std::string& prefix) {
    const std::vector<std::vector<Shape>> shapes = g.infer_shapes();
    // Boxes: a Functional model's Inputs, then each layer once (a shared layer's first call).
    if (!sequential) {
      for (const InputSpec& in : g.inputs()) {
        node(dot, {prefix + in.name, in.name, "InputLayer", "", {}, {in.shape}, true, std::string(dtype_name(in.dtype)), false, true});
      }
    }
    std::set<const Layer*> drawn;
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      const LayerNode& n = g.nodes()[i];
      if (n.layer == nullptr || !drawn.insert(n.layer).second) continue;
      const auto* nested = dynamic_cast<const NestedModel*>(n.layer);
      if (nested != nullptr && o_.expand_nested) {
        dot << "subgraph " << quoted("cluster_" + prefix + n.layer->name()) << " {\nlabel=" << quoted(n.layer->name())
            << ";\nlabeljust=l;\nstyle=dashed;\n";
        graph(dot, nested->graph(), nested->class_name() == "Sequential", prefix + n.layer->name() + "/");
        dot << "}\n";
        continue;
      }
      Box b;
      b.id = prefix + n.layer->name();
      b.name = n.layer->name();
      b.class_name = n.layer->type_name();
      for (const TensorRef& r : n.inputs) b.in.push_back(shapes[static_cast<std::size_t>(r.node)][static_cast<std::size_t>(r.index)]);
      b.out = shapes[i];
      b.dtype = std::string(dtype_name(n.layer->computes_in_float32() ? DType::f32
                                       : n.layer->dtype_policy().value_or(model_.dtype_policy()).compute));
      b.has_weights = !const_cast<Layer*>(n.layer)->saved_weights().empty();
      b.trainable = n.layer->trainable();
      if (nested == nullptr) {
        try {
          const keras_json::ojson object = keras_json::write_layer_object({}, *n.layer);
          const auto a = object["config"].find("activation");
          if (a != object["config"].end() && a->is_string()) b.activation = a->get<std::string>();
        } catch (const Error&) {
          // A layer with no Keras config (a traced one) shows no activation.
        }
      }
      node(dot, b);
    }
    // Edges: from what made each input to the layer reading it; a Sequential chains its layers.
    std::set<std::pair<std::string, std::string>> edges;
    auto edge = [&](const std::string& from, const std::string& to) {
      if (edges.insert({from, to}).second) dot << quoted(from) << " -> " << quoted(to) << " [penwidth=2];\n";
    };
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      const LayerNode& n = g.nodes()[i];
      if (n.layer == nullptr) continue;
      for (std::size_t k = 0; k < n.inputs.size(); ++k) {
        const TensorRef& r = n.inputs[k];
        if (sequential && g.nodes()[static_cast<std::size_t>(r.node)].layer == nullptr) continue;  // no Input box
        edge(source(g, prefix, r.node, r.index), destination(*n.layer, prefix, k));
      }
    }
  }

  void node(std::ostringstream& dot, const Box& b) const {
    int colspan = (o_.show_dtype ? 1 : 0) + (o_.show_trainable ? 1 : 0) + (o_.show_shapes ? 2 : 0);
    colspan = std::max(1, colspan);
    std::string t = "<<table border=\"0\" cellborder=\"1\" bgcolor=\"black\" cellpadding=\"10\">";
    t += "<tr><td colspan=\"" + std::to_string(colspan) + "\" bgcolor=\"black\"><font point-size=\"16\" color=\"white\">";
    t += o_.show_layer_names ? "<b>" + escape(b.name) + "</b> (" + escape(b.class_name) + ")" : "<b>" + escape(b.class_name) + "</b>";
    t += "</font></td></tr>";
    if (o_.show_layer_activations && !b.activation.empty()) {
      t += "<tr><td bgcolor=\"white\" colspan=\"" + std::to_string(colspan) +
           "\"><font point-size=\"14\">Activation: <b>" + escape(b.activation) + "</b></font></td></tr>";
    }
    std::string cols;
    auto cell = [&](const std::string& text) { cols += "<td bgcolor=\"white\"><font point-size=\"14\">" + text + "</font></td>"; };
    if (o_.show_shapes) {
      if (!b.is_input) cell("Input shape: <b>" + (b.in.empty() ? std::string("?") : shapes_text(b.in)) + "</b>");
      cell("Output shape: <b>" + (b.out.empty() ? std::string("?") : shapes_text(b.out)) + "</b>");
    }
    if (o_.show_dtype) cell("Output dtype: <b>" + b.dtype + "</b>");
    if (o_.show_trainable && b.has_weights) {
      cols += b.trainable ? "<td bgcolor=\"forestgreen\"><font point-size=\"14\" color=\"white\"><b>Trainable</b></font></td>"
                          : "<td bgcolor=\"firebrick\"><font point-size=\"14\" color=\"white\"><b>Non-trainable</b></font></td>";
    }
    if (!cols.empty()) t += "<tr>" + cols + "</tr>";
    t += "</table>>";
    dot << quoted(b.id) << " [label=" << t << ", fontname=Helvetica, border=0, margin=0];\n";
  }

  const Model& model_;
  const DotOptions& o_;
};

}  // namespace

std::string model_to_dot(const Model& model, const DotOptions& options) {
  NNFIT_CHECK(model.built(), InvalidArgument,
              "This model has not yet been built. Build the model first by calling `build()` or by calling the model "
              "on a batch of data.");
  return DotWriter(model, options).write();
}

}  // namespace nnfit
