// nnfit._nnfit: the engine for the Python package. Everything Keras-shaped (argument
// names, defaults, configs) lives in Python (python/nnfit/keras); this module takes Keras
// JSON, NumPy arrays and callbacks, and maps nnfit's errors to Python's exceptions.
#include <pybind11/pybind11.h>

#include "binding.h"
#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"

namespace py = pybind11;

namespace nnfit::python {
namespace {

std::string message(const Error& e) {
  return e.hint().empty() ? std::string(e.what()) : std::string(e.what()) + "\n  " + e.hint();
}

// Raises nnfit.errors.<name>(msg) with the attributes given, under the GIL.
void raise(const char* name, const std::string& msg, const py::dict& attrs) {
  py::object cls = py::module_::import("nnfit.errors").attr(name);
  py::object exc = cls(msg);
  for (auto item : attrs) py::setattr(exc, item.first, item.second);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const OutOfMemory& e) {
    py::dict attrs;
    if (const OutOfMemoryDetails* d = e.details()) {
      attrs["device"] = d->device.to_string();
      attrs["request_bytes"] = d->request_bytes;
      attrs["limit_bytes"] = d->limit_bytes;
      attrs["in_use_bytes"] = d->stats.in_use_bytes;
      attrs["peak_bytes"] = d->stats.peak_bytes;
    }
    raise("OutOfMemoryError", message(e), attrs);
  } catch (const DataError& e) {
    py::dict attrs;
    attrs["filename"] = e.file();
    attrs["offset"] = e.offset();
    raise("DataError", message(e), attrs);
  } catch (const InvalidArgument& e) {
    PyErr_SetString(PyExc_ValueError, message(e).c_str());
  } catch (const Unsupported& e) {
    PyErr_SetString(PyExc_NotImplementedError, message(e).c_str());
  } catch (const Error& e) {
    PyErr_SetString(PyExc_RuntimeError, message(e).c_str());
  }
}

}  // namespace
}  // namespace nnfit::python

PYBIND11_MODULE(_nnfit, m) {
  m.doc() = "nnfit's engine (use nnfit.keras)";
  m.attr("__version__") = NNFIT_VERSION;
  py::register_exception_translator(&nnfit::python::translate);
  nnfit::python::define_model(m);
  nnfit::python::define_data(m);
  // [(name, built and loaded, usable, detail)]: probes the CUDA plugin beside this module
  // (docs/design/cuda.md, "Plugins").
  m.def("backends", [] {
    py::list out;
    for (const nnfit::BackendInfo& b : nnfit::backend_infos()) out.append(py::make_tuple(b.name, b.compiled, b.available, b.detail));
    return out;
  });
}
