// nnfit.data: input pipelines from the JSON that nnfit.data.Dataset writes (the config
// format of `nnfit train`'s data sections), built by the library's config reader.
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "binding.h"
#include "nnfit/config/pipeline.h"
#include "nnfit/core/error.h"

namespace nnfit::python {

namespace {

// A Python object held by C++ code that may run without the GIL: released with it.
std::shared_ptr<py::object> held(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// Note [Batches from Python]: Keras's fit takes a PyDataset or any iterable of batches
// (x, y[, sample_weight]); nnfit.keras turns one into a step function per pass, and the
// engine reads it as a dataset of whole batches (from_generator), one Python call per
// batch with the GIL taken for it, so the training step itself runs without Python.
// Batches may change shape from one to the next (Note [Shapes known per batch]).
data::Dataset from_batches(const py::object& start_pass, const std::vector<std::pair<std::string, int>>& components,
                           std::int64_t cardinality) {
  data::ElementSpec spec;
  for (const auto& [dtype, rank] : components) {
    spec.push_back({dtype_from_name(dtype), Shape(std::vector<std::int64_t>(static_cast<std::size_t>(rank), -1))});
  }
  auto start = held(start_pass);
  return data::Dataset::from_generator(
      [start] {
        std::shared_ptr<py::object> step;
        {
          py::gil_scoped_acquire gil;
          step = held((*start)());
        }
        auto index = std::make_shared<std::int64_t>(0);
        return [step, index]() -> std::optional<data::Element> {
          py::gil_scoped_acquire gil;
          const std::int64_t i = (*index)++;
          py::object batch;
          try {
            batch = (*step)();
          } catch (py::error_already_set& e) {
            throw InvalidArgument("batch " + std::to_string(i + 1) + " from Python: " + e.what());
          }
          if (batch.is_none()) return std::nullopt;
          std::vector<Tensor> views = tensor_views(batch.cast<py::sequence>(), "batch " + std::to_string(i + 1));
          data::Element out;
          for (const Tensor& t : views) out.push_back(t.clone());  // the arrays go with the GIL
          return out;
        };
      },
      std::move(spec), cardinality);
}

}  // namespace

void define_data(py::module_& m) {
  py::class_<DatasetHandle>(m, "Dataset")
      // start_pass() returns a function giving the next batch (a list of arrays) or None;
      // components: (dtype name, rank) per array of a batch (Note [Batches from Python]).
      .def_static(
          "from_batches",
          [](const py::object& start_pass, const std::vector<std::pair<std::string, int>>& components,
             std::int64_t cardinality) { return DatasetHandle{from_batches(start_pass, components, cardinality)}; },
          py::arg("start_pass"), py::arg("components"), py::arg("cardinality"))
      .def_static(
          "build",
          [](const std::string& json, const std::string& where, const py::sequence& tensors, std::uint64_t seed) {
            // from_tensor_slices keeps the arrays as they are (read in place while the
            // pipeline runs); the caller converted them to dtypes the engine reads.
            std::vector<Tensor> ts = tensor_views(tensors, "tensors");
            return DatasetHandle{config::build_pipeline_json(json, where, ts, seed)};
          },
          py::arg("json"), py::arg("where"), py::arg("tensors"), py::arg("seed"))
      .def_property_readonly("element_spec",
                             [](const DatasetHandle& d) { return data::to_string(d.dataset.element_spec()); })
      // Batches per pass: -1 repeats forever, -2 unknown (data::kInfiniteCardinality, ...).
      .def_property_readonly("cardinality", [](const DatasetHandle& d) { return d.dataset.cardinality(); })
      .def("collect", [](const DatasetHandle& d) {
        std::vector<data::Element> elements;
        {
          py::gil_scoped_release nogil;
          elements = d.dataset.collect();
        }
        py::list out;
        for (const data::Element& e : elements) {
          py::list parts;
          for (const Tensor& t : e) parts.append(to_array(t));
          out.append(py::tuple(parts));
        }
        return out;
      });
}

}  // namespace nnfit::python
