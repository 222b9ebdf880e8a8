// NumPy arrays to nnfit tensors and back, for the extension module.
#pragma once
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "nnfit/core/tensor.h"

namespace nnfit::python {

namespace py = pybind11;

// A tensor over the array's own memory (no copy): the array must be C-contiguous, of a
// dtype nnfit reads (float32, float16, int32, int64, uint8, bool) and of rank >= 1; the
// tensor keeps a reference to it (released under the GIL). nnfit.keras converts what
// does not qualify before calling (as Keras converts to its input dtype). `what` names
// the argument in errors. throws: TypeError (py::type_error) naming it.
Tensor tensor_view(const py::handle& array, const std::string& what);
std::vector<Tensor> tensor_views(const py::sequence& arrays, const std::string& what);
// A new array holding the tensor's values (float32 for bf16), sharing its buffer when
// the dtype has a NumPy twin: the array keeps the tensor's buffer alive.
py::array to_array(const Tensor& tensor);

}  // namespace nnfit::python
