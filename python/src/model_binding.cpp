// Building models from Keras JSON, their weights and files.
#include <pybind11/stl.h>

#include <algorithm>
#include <set>

#include "arrays.h"
#include "binding.h"
#include "nnfit/core/dtype.h"
#include "nnfit/backend/device_placement.h"
#include "nnfit/model/eager_operations.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/model_dot.h"
#include "nnfit/model/onnx_export.h"
#include "nnfit/model/saving.h"
#include "nnfit/model/summary_options.h"
#include "nnfit/nn/traced_layer.h"

namespace nnfit::python {
namespace {

py::list specs(const std::vector<Shape>& shapes) {
  py::list out;
  for (const Shape& s : shapes) {
    py::list dims;
    dims.append(py::none());  // the batch axis
    for (std::int64_t d : s.dims()) {
      if (d == kUnknownDim) dims.append(py::none());  // known per batch
      else dims.append(d);
    }
    out.append(py::tuple(dims));
  }
  return out;
}

py::list arrays(const std::vector<Tensor>& tensors) {
  py::list out;
  for (const Tensor& t : tensors) out.append(to_array(t));
  return out;
}

// Copies of the arrays' values as float32 tensors for set_weights.
std::vector<Tensor> weight_values(const py::sequence& values) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(values[i]);
    if (!a) throw py::type_error("weights[" + std::to_string(i) + "]: expected an array of numbers");
    std::vector<std::int64_t> dims(a.shape(), a.shape() + a.ndim());
    Tensor t = Tensor::uninitialized(Shape(std::move(dims)), DType::f32);
    std::copy(a.data(), a.data() + a.size(), t.data<float>());
    out.push_back(std::move(t));
  }
  return out;
}

// A weight's values (float32 from weight_values) in the weight's own dtype: Normalization's
// count is an integer, as Keras's, and set_weights gives it back as a number.
Tensor as_weight_dtype(const Tensor& values, DType dtype, const std::string& layer) {
  if (dtype == DType::f32) return values;
  if (dtype != DType::i64 && dtype != DType::i32) {
    throw py::type_error("Layer " + layer + ": weights of dtype " + std::string(dtype_name(dtype)) +
                         " cannot be set from Python");
  }
  Tensor t = Tensor::uninitialized(values.shape(), dtype);
  const float* src = values.data<float>();
  for (std::int64_t k = 0; k < values.numel(); ++k) {
    if (dtype == DType::i64) t.data<std::int64_t>()[k] = static_cast<std::int64_t>(src[k]);
    else t.data<std::int32_t>()[k] = static_cast<std::int32_t>(src[k]);
  }
  return t;
}

// Keras's model.get_weights / set_weights: every weight of model.weights() but those of
// layers made of constants only (keras_weights: a Rescaling per channel, a Normalization
// given its statistics), which Keras's layers do not hold as variables.
std::vector<bool> keras_visible(const Model& m);

Layer& layer_named(const Model& m, const std::string& name) {
  Layer* l = m.get_layer(name);
  if (!l) throw py::value_error("No such layer: " + name);
  return *l;
}

// Keras's layer.weights (nnfit/nn/layer.h keras_variables).
std::vector<Weight*> keras_weights(Layer& l) { return keras_variables(l); }

// Which of the model's weights (Model::weights, in its order) Keras's model.get_weights
// holds: each layer's keras_weights, so a traced layer's operation constants (`x * 2.0`)
// and constant-only layers are left out.
std::vector<bool> keras_visible(const Model& m) {
  std::set<const Weight*> shown;
  for (const auto& l : m.layers()) {
    for (const Weight* w : keras_weights(*l)) shown.insert(w);
  }
  std::vector<bool> out;
  for (const Weight* w : m.weights()) out.push_back(shown.count(w) > 0);
  return out;
}

// Metric objects as Keras's JSON, named in errors by their place ("metrics[1]", "metrics[0][1]").
std::vector<MetricSpec> metric_list(const std::vector<std::string>& json, const std::string& where) {
  std::vector<MetricSpec> out;
  for (std::size_t i = 0; i < json.size(); ++i) {
    out.push_back(metric_from_keras_json(json[i], where + "[" + std::to_string(i) + "]"));
  }
  return out;
}

void compile(ModelHandle& h, const std::string& optimizer, const std::vector<std::string>& losses,
             const std::vector<double>& loss_weights, const std::vector<std::string>& metrics,
             const std::vector<std::string>& weighted_metrics,
             const std::vector<std::vector<std::string>>& output_metrics,
             const std::vector<std::vector<std::string>>& output_weighted_metrics) {
  CompileOptions o;
  o.optimizer = optimizer_from_keras_json(optimizer, "optimizer");
  if (losses.size() == 1) {
    o.loss = loss_from_keras_json(losses[0], "loss");
  } else {
    for (std::size_t i = 0; i < losses.size(); ++i) {
      o.losses.push_back(loss_from_keras_json(losses[i], "loss[" + std::to_string(i) + "]"));
    }
  }
  o.loss_weights = loss_weights;
  o.metrics = metric_list(metrics, "metrics");
  o.weighted_metrics = metric_list(weighted_metrics, "weighted_metrics");
  for (std::size_t i = 0; i < output_metrics.size(); ++i) {
    o.output_metrics.push_back(metric_list(output_metrics[i], "metrics[" + std::to_string(i) + "]"));
  }
  for (std::size_t i = 0; i < output_weighted_metrics.size(); ++i) {
    o.output_weighted_metrics.push_back(
        metric_list(output_weighted_metrics[i], "weighted_metrics[" + std::to_string(i) + "]"));
  }
  py::gil_scoped_release nogil;
  h.get().compile(std::move(o));
}

}  // namespace

// Places a model built from Python (before its weights exist): "auto" (the first usable
// GPU, else the CPU), "cpu" or "cuda:N", as the CLI's --device; returns the reason.
std::string place(Model& model, const std::string& device) {
  const DevicePlacement p = place_device(parse_device_request(device, "nnfit.keras.device"));
  model.set_device(p.device);
  return p.reason;
}

// Keras's SwapEMAWeights (callbacks.py): with use_ema the optimizer's first slots are the
// trainable weights' averages, in their order (Model::optimizer_slots, as Keras lists
// them). `finalize` false: each weight and its average exchange values; true: the averages
// take the weights' values (Keras's _finalize_ema_values before fit's own finalize).
void exchange_ema_weights(Model& m, bool finalize) {
  if (!m.compiled() || !m.compile_options().optimizer.use_ema) {
    throw py::value_error("SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. Received: use_ema=" +
                          std::string(m.compiled() ? "False" : "None (the model is not compiled)"));
  }
  std::vector<Weight*> trainable;
  for (Weight* w : m.weights()) {
    if (w->trains()) trainable.push_back(w);
  }
  const std::vector<Tensor> slots = m.optimizer_slots();
  if (slots.size() < trainable.size()) {
    throw py::value_error("model '" + m.name() + "': " + std::to_string(trainable.size()) +
                          " trainable weights but the optimizer averages " + std::to_string(slots.size()) +
                          "; compile again after changing `trainable`");
  }
  for (std::size_t k = 0; k < trainable.size(); ++k) {
    const Tensor weight = m.host_view(trainable[k]->value).clone();
    if (!finalize) m.write_tensor(trainable[k]->value, m.host_view(slots[k]).clone());
    m.write_tensor(slots[k], weight);
  }
}

void define_model(py::module_& m) {
  py::class_<ModelHandle> cls(m, "Model");
  cls.def_static(
         "from_json",
         [](const std::string& json, const std::string& where, std::uint64_t seed, const std::string& policy,
            const std::string& device) {
           auto model = model_from_keras_json(json, where);
           model->set_seed(seed);
           if (!policy.empty()) model->set_dtype_policy(DTypePolicy::from_name(policy));
           std::string reason = place(*model, device);
           return ModelHandle{std::move(model), std::move(reason)};
         },
         py::arg("json"), py::arg("where"), py::arg("seed"), py::arg("policy") = "", py::arg("device") = "auto")
      .def_static(
          "load",
          [](const std::string& path, bool compile, std::uint64_t seed, const std::string& device) {
            LoadOptions o;
            o.compile = compile;
            std::string reason;
            o.configure = [seed, &device, &reason](Model& model) {
              model.set_seed(seed);
              reason = place(model, device);
            };
            py::gil_scoped_release nogil;
            auto model = load_model(path, o);
            return ModelHandle{std::move(model), std::move(reason)};
          },
          py::arg("path"), py::arg("compile"), py::arg("seed"), py::arg("device") = "auto")
      .def("to_json", [](const ModelHandle& h) { return model_to_keras_json(h.get()); })
      .def_property_readonly("device", [](const ModelHandle& h) {
        const Device d = h.get().device();
        return d.type == DeviceType::cpu ? std::string("cpu") : d.to_string();
      })
      .def_property_readonly("device_reason", [](const ModelHandle& h) { return h.device_reason; })
      .def(
          "summary",
          [](ModelHandle& h, int columns, int line_length, std::vector<double> positions, bool expand_nested,
             bool show_trainable, std::size_t first_row, std::size_t last_row) {
            SummaryOptions o;
            o.line_length = line_length;
            o.positions = std::move(positions);
            o.expand_nested = expand_nested;
            o.show_trainable = show_trainable;
            o.first_row = first_row;
            o.last_row = last_row;
            return h.get().summary(columns, o);
          },
          py::arg("columns") = 80, py::arg("line_length") = 0, py::arg("positions") = std::vector<double>{},
          py::arg("expand_nested") = false, py::arg("show_trainable") = false, py::arg("first_row") = 0,
          py::arg("last_row") = 0)
      .def("build", [](ModelHandle& h) { h.get().build(); })
      .def("compile", &compile, py::arg("optimizer"), py::arg("losses"), py::arg("loss_weights"), py::arg("metrics"),
           py::arg("weighted_metrics") = std::vector<std::string>{},
           py::arg("output_metrics") = std::vector<std::vector<std::string>>{},
           py::arg("output_weighted_metrics") = std::vector<std::vector<std::string>>{})
      .def_property_readonly("compiled", [](const ModelHandle& h) { return h.get().compiled(); })
      .def_property_readonly("built", [](const ModelHandle& h) { return h.get().built(); })
      .def_property_readonly("name", [](const ModelHandle& h) { return h.get().name(); })
      .def_property_readonly("input_shapes", [](const ModelHandle& h) { return specs(h.get().input_shapes()); })
      .def_property_readonly("output_shapes", [](const ModelHandle& h) { return specs(h.get().output_shapes()); })
      .def_property_readonly("output_names", [](const ModelHandle& h) { return h.get().output_names(); })
      .def("count_params", [](const ModelHandle& h) { return h.get().count_params(); })
      // The step engine's programs by input shape (Note [Shapes known per batch]).
      .def("program_cache_stats",
           [](const ModelHandle& h) {
             const ProgramCacheStats st = h.get().program_cache_stats();
             py::dict d;
             d["planned"] = st.programs;
             d["input_shapes"] = st.input_shapes;
             d["hits"] = st.hits;
             d["misses"] = st.misses;
             d["arena_bytes"] = st.arena_bytes;
             d["evicted"] = st.evicted;
             return d;
           })
      .def("get_weights",
           [](const ModelHandle& h) {
             std::vector<Tensor> all = h.get().get_weights(), out;
             const std::vector<bool> visible = keras_visible(h.get());
             for (std::size_t i = 0; i < all.size(); ++i) {
               if (visible[i]) out.push_back(std::move(all[i]));
             }
             return arrays(out);
           })
      .def("set_weights",
           [](ModelHandle& h, const py::sequence& v) {
             std::vector<Tensor> given = weight_values(v), all = h.get().get_weights();
             const std::vector<Weight*> ws = h.get().weights();
             const std::vector<bool> visible = keras_visible(h.get());
             const auto expected = static_cast<std::size_t>(std::count(visible.begin(), visible.end(), true));
             if (given.size() != expected) {
               throw py::value_error("model '" + h.get().name() + "' has " + std::to_string(expected) +
                                     " weights, got " + std::to_string(given.size()) + " values");
             }
             for (std::size_t i = 0, k = 0; i < all.size(); ++i) {
               if (visible[i]) all[i] = as_weight_dtype(given[k++], ws[i]->value.dtype(), ws[i]->name);
             }
             h.get().set_weights(all);
           })
      .def("swap_ema_weights", [](ModelHandle& h) { exchange_ema_weights(h.get(), false); })
      .def("finalize_ema_weights", [](ModelHandle& h) { exchange_ema_weights(h.get(), true); })
      .def("layer_names", [](const ModelHandle& h) {
        std::vector<std::string> out;
        for (const auto& l : h.get().layers()) out.push_back(l->name());
        return out;
      })
      .def("layer_weights", [](const ModelHandle& h, const std::string& name) {
        std::vector<Tensor> out;
        for (Weight* w : keras_weights(layer_named(h.get(), name))) out.push_back(h.get().host_view(w->value).clone());
        return arrays(out);
      })
      .def("set_layer_weights",
           [](ModelHandle& h, const std::string& name, const py::sequence& values) {
             Layer& layer = layer_named(h.get(), name);
             std::vector<Weight*> weights = keras_weights(layer);
             std::vector<Tensor> v = weight_values(values);
             if (v.size() != weights.size()) {
               throw py::value_error("Layer " + name + " expects " + std::to_string(weights.size()) +
                                     " weights, but the weight list has " + std::to_string(v.size()));
             }
             for (std::size_t i = 0; i < v.size(); ++i) {
               if (!(v[i].shape() == weights[i]->value.shape())) {
                 throw py::value_error("Layer " + name + " weight " + weights[i]->name + " has shape " +
                                       weights[i]->value.shape().to_string() + ", got " + v[i].shape().to_string());
               }
             }
             for (std::size_t i = 0; i < v.size(); ++i) {
               Tensor& dst = weights[i]->value;
               if (dst.dtype() == DType::i64) {  // Normalization's count, Keras's int variable: read as integers
                 auto a = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(values[i]);
                 Tensor t = Tensor::uninitialized(dst.shape(), DType::i64);
                 std::copy(a.data(), a.data() + a.size(), t.data<std::int64_t>());
                 h.get().write_tensor(dst, t);
                 continue;
               }
               h.get().write_tensor(dst, as_weight_dtype(v[i], dst.dtype(), name));  // into device memory on a GPU
             }
           })
      // Keras's layer.trainable, applied at the next compile (as Keras's takes effect then).
      .def("set_layer_trainable",
           [](ModelHandle& h, const std::string& name, bool trainable) { layer_named(h.get(), name).set_trainable(trainable); })
      // A subclassed model's call passing training=False to a layer: it runs in inference
      // mode in every program compiled from now on (Layer::inference_only).
      .def("set_layer_inference_only", [](ModelHandle& h, const std::string& name,
                                          bool inference_only) { layer_named(h.get(), name).set_inference_only(inference_only); })
      // Each weight's name and whether it trains by nature (a BatchNormalization's moving
      // statistics do not), in layer_weights order: Keras's trainable_weights and
      // non_trainable_weights.
      .def("layer_weight_info",
           [](const ModelHandle& h, const std::string& name) {
             std::vector<std::pair<std::string, bool>> out;
             for (Weight* w : keras_weights(layer_named(h.get(), name))) out.emplace_back(w->name, w->trainable);
             return out;
           })
      .def("layer_count_params", [](const ModelHandle& h, const std::string& name) {
        return layer_named(h.get(), name).count_params();
      })
      .def("save", [](const ModelHandle& h, const std::string& path) {
        py::gil_scoped_release nogil;
        save_model(h.get(), path);
      })
      // Keras's model.export(format="onnx") (nnfit/model/onnx_export.h): `signature` holds,
      // per input, (name or "", shape with the batch axis and -1 for None, or empty).
      .def("export_onnx",
           [](const ModelHandle& h, const std::string& path, std::int64_t opset,
              const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& signature) {
             OnnxExportOptions o;
             o.opset = opset;
             for (const auto& [name, shape] : signature) o.input_signature.push_back({name, shape});
             OnnxExportSummary s;
             {
               py::gil_scoped_release nogil;
               s = export_onnx(h.get(), path, o);
             }
             py::dict out;
             out["inputs"] = s.input_names;
             out["outputs"] = s.output_names;
             out["nodes"] = s.nodes;
             out["initializers"] = s.initializers;
             out["bytes"] = s.bytes;
             return out;
           })
      // keras.utils.model_to_dot's text (nnfit/model/model_dot.h).
      .def("to_dot",
           [](const ModelHandle& h, bool show_shapes, bool show_dtype, bool show_layer_names, const std::string& rankdir,
              bool expand_nested, std::int64_t dpi, bool subgraph, bool show_layer_activations, bool show_trainable,
              const std::string& splines, bool single_node) {
             return model_to_dot(h.get(), {show_shapes, show_dtype, show_layer_names, rankdir, expand_nested, dpi, subgraph,
                                           show_layer_activations, show_trainable, splines, single_node});
           })
      .def("save_weights", [](const ModelHandle& h, const std::string& path) {
        py::gil_scoped_release nogil;
        save_weights(h.get(), path);
      })
      .def("load_weights", [](ModelHandle& h, const std::string& path) {
        py::gil_scoped_release nogil;
        load_weights(h.get(), path);
      })
      .def_property("stop_training", [](const ModelHandle& h) { return h.get().stop_training(); },
                    [](ModelHandle& h, bool v) { h.get().set_stop_training(v); })
      .def_property("learning_rate", [](const ModelHandle& h) { return h.get().learning_rate(); },
                    [](ModelHandle& h, double v) { h.get().set_learning_rate(v); })
      .def_property_readonly("iterations", [](const ModelHandle& h) { return h.get().iterations(); })
      .def("set_num_threads", [](ModelHandle& h, int n) { h.get().set_num_threads(n); })
      .def("set_memory_limit", [](ModelHandle& h, std::int64_t bytes) {
        MemoryPolicy p = h.get().memory_policy();
        p.limit_bytes = bytes;
        h.get().set_memory_policy(p);
      });
  define_fit(cls);

  // The shapes of a Functional config's outputs without building weights: what
  // nnfit.keras gives a symbolic tensor after a layer call.
  m.def("output_shapes", [](const std::string& json, const std::string& where) {
    return specs(model_from_keras_json(json, where)->output_shapes());
  });

  // Whether each output of a Functional config carries a Keras mask (Note [Masks of traced layers]).
  m.def("output_masks", [](const std::string& json, const std::string& where) {
    return output_masks_from_keras_json(json, where);
  });

  // keras.ops on arrays (include/nnfit/model/eager_operations.h): the outputs, and with
  // cotangents the inputs' gradients of sum(outputs · cotangents).
  m.def(
      "run_operations",
      [](const std::string& json, const py::sequence& inputs, const py::object& cotangents) {
        std::vector<Tensor> in;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          // A 0-d array (a traced metric's scalar variable) runs as a rank-0 tensor.
          const bool scalar = py::isinstance<py::array>(inputs[i]) && py::reinterpret_borrow<py::array>(inputs[i]).ndim() == 0;
          const py::object a = scalar ? inputs[i].attr("reshape")(1) : py::reinterpret_borrow<py::object>(inputs[i]);
          Tensor t = tensor_view(a, "argument " + std::to_string(i)).clone();
          in.push_back(scalar ? t.reshape(Shape{}) : t);
        }
        std::vector<Tensor> cot;
        if (!cotangents.is_none()) cot = weight_values(cotangents.cast<py::sequence>());
        EagerResult r;
        {
          py::gil_scoped_release release;
          r = run_operations(json, in, cot);
        }
        return py::make_tuple(arrays(r.outputs), arrays(r.input_gradients));
      },
      py::arg("config"), py::arg("inputs"), py::arg("cotangents") = py::none());
}

}  // namespace nnfit::python
