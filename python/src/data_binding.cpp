// nnfit.data: input pipelines from the JSON that nnfit.data.Dataset writes (the config
// format of `nnfit train`'s data sections), built by the library's config reader.
#include <pybind11/stl.h>

#include "arrays.h"
#include "binding.h"
#include "nnfit/config/pipeline.h"

namespace nnfit::python {

void define_data(py::module_& m) {
  py::class_<DatasetHandle>(m, "Dataset")
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
