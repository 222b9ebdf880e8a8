// Shared by the extension module's files: the model handle Python holds, and each file's
// part of the module definition.
#pragma once
#include <memory>

#include <pybind11/pybind11.h>

#include "nnfit/data/dataset.h"
#include "nnfit/model/model.h"

namespace nnfit::python {

namespace py = pybind11;

// The engine's model behind a nnfit.keras.Model. Python holds it by unique ownership;
// fit, evaluate and predict run with the GIL released.
struct ModelHandle {
  std::unique_ptr<Model> model;
  std::string device_reason;  // why it trains where it does (place_device's reason)
  Model& get() const { return *model; }
};

// An input pipeline nnfit.data built (immutable; fit iterates it once per epoch).
struct DatasetHandle {
  data::Dataset dataset;
};

void define_model(py::module_& m);  // model_binding.cpp: building, weights, files
void define_fit(py::class_<ModelHandle>& cls);  // fit_binding.cpp: fit, evaluate, predict
void define_data(py::module_& m);  // data_binding.cpp: nnfit.data's pipelines

}  // namespace nnfit::python
