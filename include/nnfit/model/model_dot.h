// Keras's model_to_dot: a model's layers and connections as Graphviz DOT text, with the
// labels, attributes and edge rules of keras/src/utils/model_visualization.py (Keras 3.15),
// so `dot` draws what keras.utils.plot_model draws. Made from the layer graph, so models
// loaded from files draw as well as models built in code.
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/model/model.h"

namespace nnfit {

struct DotOptions {
  bool show_shapes = false;
  bool show_dtype = false;
  bool show_layer_names = true;
  std::string rankdir = "TB";
  bool expand_nested = false;  // nested models as dashed clusters of their layers
  std::int64_t dpi = 200;
  bool subgraph = false;  // the model as a cluster (Keras's pydot.Cluster), not a whole graph
  bool show_layer_activations = false;
  bool show_trainable = false;
  std::string splines = "ortho";
  bool single_node = false;  // Keras draws a subclassed model as one box
};

// requires: built. throws: InvalidArgument naming the model when it is not.
std::string model_to_dot(const Model& model, const DotOptions& options = {});

}  // namespace nnfit
