// Readers of the losses and metrics nnfit.keras traced from Python (Note [Traced losses and
// metrics] in src/nn/traced_metric.cpp): Keras's serialization of the object with the key
// "nnfit_trace" beside module, class_name, config and registered_name.
#pragma once
#include <memory>
#include <string>

#include "model/keras_json.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/traced_metric.h"

namespace nnfit {

// throws: InvalidArgument or Unsupported naming the key under `r`'s prefix.
Loss traced_loss_from_keras_json(const keras_json::Reader& r, const keras_json::json& object, const std::string& where);
std::shared_ptr<const TracedMetric> traced_metric_from_keras_json(const keras_json::Reader& r,
                                                                  const keras_json::json& object,
                                                                  const std::string& where);

}  // namespace nnfit
