// Readers of the losses and metrics nnfit.keras traced from Python (Note [Traced losses and
// metrics] in src/nn/traced_metric.cpp): Keras's serialization of the object with the key
// "nnfit_trace" beside module, class_name, config and registered_name; and a layer's
// activation traced from a Python function.
#pragma once
#include <memory>
#include <string>

#include "model/keras/keras_json.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/traced_layer.h"
#include "nnfit/nn/traced_metric.h"

namespace nnfit {

// throws: InvalidArgument or Unsupported naming the key under `r`'s prefix.
Loss traced_loss_from_keras_json(const keras_json::Reader& r, const keras_json::json& object, const std::string& where);
std::shared_ptr<const TracedMetric> traced_metric_from_keras_json(const keras_json::Reader& r,
                                                                  const keras_json::json& object,
                                                                  const std::string& where);

// A traced layer's masks (Note [Masks of traced layers] in src/nn/traced_layer.cpp): its
// trace's "mask_inputs", the inputs whose masks the graph reads after the layer's inputs,
// and "output_masks", per call output null, {"input": k} or {"output": j} (the graph's
// outputs after the call's are its computed masks), set on `layer`.
void read_traced_masks(const keras_json::Reader& r, const std::string& tpath, const keras_json::json& trace,
                       TracedLayer& layer);
// A traced layer's values computed from its weights alone (Note [Weight-only values] in
// src/nn/traced_layer.cpp): the trace's "weight_values", {"graph": the operations from one
// input per weight to the values, then the add_loss values, "losses": how many of its
// outputs are add_loss values}, set on `layer`.
void read_traced_weight_values(const keras_json::Reader& r, const std::string& tpath, const keras_json::json& trace,
                               TracedLayer& layer);

// A layer's "activation" given as a Python function (Note [Traced activations] in
// src/nn/layer_graph.cpp): Keras's object for it with nnfit.keras's trace under
// "nnfit_trace", read as the graph of one input the layer's output goes through.
// throws: Unsupported naming `path` for a layer class that applies its activation inside.
std::shared_ptr<const OperationGraph> read_traced_activation(const keras_json::Reader& r, const std::string& path,
                                                             const std::string& layer_class,
                                                             const keras_json::json& activation);

}  // namespace nnfit
