// fit_data.h: inputs, targets and metrics for fit, evaluate and predict.
#include "model/fit_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "nnfit/core/error.h"

namespace nnfit {

// nnfit/model/targets.h
void convert_targets(const Tensor& y, const TensorDesc& want, std::int64_t n, void* dst, std::int64_t classes) {
  NNFIT_CHECK(y.shape().rank() >= 1 && y.shape()[0] == n, InvalidArgument, "targets have shape ",
              y.shape().to_string(), " but the inputs have ", n, " samples");
  const std::int64_t per = want.shape.rank() > 0 && want.shape[0] > 0 ? want.shape.numel() / want.shape[0] : 1;
  NNFIT_CHECK(y.numel() == n * per, InvalidArgument, "targets of shape ", y.shape().to_string(),
              " do not match the model output ", Shape(want.shape).to_string(),
              want.dtype == DType::i32 ? " (sparse losses want one class id per sample)"
              : y.numel() == n && per > 1
                  ? " (one value per sample: class ids? categorical losses want one-hot rows; "
                    "sparse_categorical_crossentropy takes class ids)"
                  : "");
  const std::int64_t total = n * per;
  auto convert = [&](auto read) {
    for (std::int64_t i = 0; i < total; ++i) {
      double v = read(i);
      if (want.dtype == DType::i32) {
        if (v != std::floor(v)) {
          throw BadClassId(detail::concat("class id ", v, " at row ", i, " is not an integer"), i, v);
        }
        if (classes > 0 && !(v >= 0 && v < static_cast<double>(classes))) {
          throw BadClassId(detail::concat("class id ", v, " at row ", i, " is outside [0, ", classes,
                                          "): the model's output has ", classes, " classes"),
                           i, v);
        }
        static_cast<std::int32_t*>(dst)[i] = static_cast<std::int32_t>(v);
      } else {
        static_cast<float*>(dst)[i] = static_cast<float>(v);
      }
    }
  };
  switch (y.dtype()) {
    case DType::f32: convert([&](std::int64_t i) { return static_cast<double>(y.data<float>()[i]); }); break;
    case DType::i32: convert([&](std::int64_t i) { return static_cast<double>(y.data<std::int32_t>()[i]); }); break;
    case DType::i64: convert([&](std::int64_t i) { return static_cast<double>(y.data<std::int64_t>()[i]); }); break;
    case DType::u8: convert([&](std::int64_t i) { return static_cast<double>(y.data<std::uint8_t>()[i]); }); break;
    default: throw InvalidArgument("targets of dtype " + std::string(dtype_name(y.dtype())) + " are not supported");
  }
}

}  // namespace nnfit

namespace nnfit::fit_data {

// Targets for all n samples in a fresh tensor (the in-memory path converts once).
Tensor prepare_targets(const Tensor& y, const TensorDesc& want, std::int64_t n) {
  std::vector<std::int64_t> dims{n};
  dims.insert(dims.end(), want.shape.dims().begin() + 1, want.shape.dims().end());
  Tensor out = Tensor::zeros(Shape(dims), want.dtype);
  convert_targets(y, TensorDesc{Shape(dims), want.dtype}, n, out.raw());
  return out;
}

void cast_inputs_to_f32(const Tensor& x, float* dst) {
  const std::int64_t n = x.numel();
  switch (x.dtype()) {
    case DType::f32: std::copy(x.data<float>(), x.data<float>() + n, dst); return;
    case DType::u8: std::copy(x.data<std::uint8_t>(), x.data<std::uint8_t>() + n, dst); return;
    case DType::boolean: std::copy(x.data<std::uint8_t>(), x.data<std::uint8_t>() + n, dst); return;
    case DType::i32: std::copy(x.data<std::int32_t>(), x.data<std::int32_t>() + n, dst); return;
    case DType::i64:
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(x.data<std::int64_t>()[i]);
      return;
    default:
      throw InvalidArgument(std::string("inputs of dtype ") + std::string(dtype_name(x.dtype())) +
                            " cannot be fed to the model yet (float32, uint8, int32, int64 or bool)");
  }
}

std::optional<Shape> program_sample_shape(const Shape& given, const Shape& want) {
  std::vector<std::int64_t> g = given.dims();
  const auto& w = want.dims();
  if (g.size() == w.size() + 1 && g.back() == 1) g.pop_back();
  else if (w.size() == g.size() + 1 && w.back() == 1) g.push_back(1);
  Shape c(std::move(g));
  if (!want.admits(c)) return std::nullopt;
  return c;
}

bool keras_takes_sample_shape(const Shape& given, const Shape& want) {
  return program_sample_shape(given, want).has_value();
}

Tensor prepare_inputs(const Tensor& x_in, const Shape& input_shape) {
  Tensor x = x_in;
  if (x.dtype() != DType::f32) {  // uint8 images, integer ids: cast once, as Keras casts them
    Tensor f = Tensor::zeros(x.shape());
    cast_inputs_to_f32(x, f.data<float>());
    x = f;
  }
  NNFIT_CHECK(x.shape().rank() >= 1, InvalidArgument, "inputs need a batch axis");
  std::int64_t n = x.shape()[0];
  const Shape sample(std::vector<std::int64_t>(x.shape().dims().begin() + 1, x.shape().dims().end()));
  const std::optional<Shape> c = program_sample_shape(sample, input_shape);
  NNFIT_CHECK(c.has_value(), InvalidArgument, "inputs of shape ", x.shape().to_string(),
              " do not match the model's input shape ", input_shape.to_string(),
              " per sample (Keras takes that shape, or it with a trailing axis of 1 added or removed); reshape the data");
  std::vector<std::int64_t> dims{n};
  dims.insert(dims.end(), c->dims().begin(), c->dims().end());
  return x.reshape(Shape(dims));
}

TensorDesc one_prediction(const Shape& output_shape) {
  std::vector<std::int64_t> od{1};
  // A dimension known per batch is 1 here: the probe checks the losses' and metrics'
  // configuration, which does not depend on it (Note [Shapes known per batch]).
  for (const std::int64_t d : output_shape.dims()) od.push_back(d == kUnknownDim ? 1 : d);
  return TensorDesc{Shape(od), DType::f32};
}

std::vector<Metric> make_metrics(const CompileOptions& co, const TensorDesc& pred1) {
  std::vector<Metric> metrics;
  for (const MetricSpec& m : co.metrics) metrics.emplace_back(m, co.loss, pred1);
  return metrics;
}

std::vector<OutputMetric> make_output_metrics(const CompileOptions& co, const std::vector<Shape>& output_shapes,
                                              const std::vector<std::string>& output_names) {
  std::vector<OutputMetric> out;
  const bool several = output_shapes.size() > 1;
  const auto taken = [&](const std::string& key) {
    return std::any_of(out.begin(), out.end(), [&](const OutputMetric& m) { return m.key == key; });
  };
  for (const bool weighted : {false, true}) {
    for (std::size_t i = 0; i < output_shapes.size(); ++i) {
      for (const MetricSpec& spec : co.metrics_for(i, weighted)) {
        Metric m(spec, co.loss_for(i).for_output(i), one_prediction(output_shapes[i]));
        const std::string prefix = several ? output_names[i] + "_" : "";
        std::string key = prefix + m.name();
        // Keras's CompileMetrics.result: a weighted metric whose name is taken becomes
        // "weighted_<name>", and "weighted_<name>_<k>" from its second repeat on; a metric
        // whose name is taken becomes "<name>_<k>" (two metrics named kl_divergence: the
        // second is kl_divergence_1).
        if (weighted && taken(key)) {
          key = prefix + "weighted_" + m.name();
          for (int k = 1; taken(key); ++k) key = prefix + "weighted_" + m.name() + "_" + std::to_string(k);
        } else if (taken(key)) {
          const std::string base = key;
          for (int k = 1; taken(key); ++k) key = base + "_" + std::to_string(k);
        }
        out.push_back({i, std::move(key), std::move(m), weighted});
      }
    }
  }
  return out;
}

void gather_rows(const Tensor& src, const std::int64_t* idx, std::int64_t rows, void* dst) {
  const std::int64_t n = src.shape()[0];
  const std::size_t row = n ? src.nbytes() / static_cast<std::size_t>(n) : 0;
  const char* s = static_cast<const char*>(src.raw());
  char* d = static_cast<char*>(dst);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::memcpy(d + static_cast<std::size_t>(r) * row, s + static_cast<std::size_t>(idx[r]) * row, row);
  }
}

std::int64_t validation_batch_size(const FitOptions& o) {
  return o.validation_batch_size > 0 ? o.validation_batch_size : o.batch_size;
}

void check_validation_options(const FitOptions& o) {
  NNFIT_CHECK(!(o.validation_data && o.validation_dataset), InvalidArgument,
              "give validation_data or validation_dataset, not both");
  NNFIT_CHECK(o.validation_freq >= 1, InvalidArgument, "validation_freq must be a positive number of epochs, got ",
              o.validation_freq);
  for (std::int64_t e : o.validation_epochs) {
    NNFIT_CHECK(e >= 1, InvalidArgument, "validation_freq's epochs are counted from 1, got ", e);
  }
  NNFIT_CHECK(o.validation_steps >= 0, InvalidArgument,
              "validation_steps must be positive (or 0: the whole validation data), got ", o.validation_steps);
  NNFIT_CHECK(o.validation_batch_size >= 0, InvalidArgument, "validation_batch_size must be positive, got ",
              o.validation_batch_size);
  NNFIT_CHECK(!o.validation_dataset || o.validation_steps > 0 ||
                  o.validation_dataset->cardinality() != data::kInfiniteCardinality,
              InvalidArgument,
              "the validation dataset repeats forever (repeat() without a count) and no validation_steps are given; "
              "give validation_steps, or drop the repeat");
  NNFIT_CHECK(o.validation_batch_size == 0 || !o.validation_dataset, InvalidArgument,
              "validation_batch_size is for validation_data tensors; a validation dataset brings its own batches");
  if (o.validation_sample_weight.defined()) {
    NNFIT_CHECK(o.validation_data.has_value(), InvalidArgument,
                "validation sample weights go with validation_data tensors; a validation dataset brings them as a "
                "third component (x, y, sample_weight)");
    check_sample_weights(o.validation_sample_weight, o.validation_data->first.shape()[0],
                         "the validation sample weights");
  }
}

void check_sample_weights(const Tensor& weights, std::int64_t n, const char* what) {
  NNFIT_CHECK(weights.dtype() == DType::f32 && weights.numel() == n && weights.shape().rank() >= 1 &&
                  weights.shape()[0] == n,
              InvalidArgument, what, " must be float32 with one weight per sample (", n, "), got ",
              dtype_name(weights.dtype()), " ", weights.shape().to_string());
}

std::vector<Tensor> prepare_all_inputs(const std::vector<Tensor>& x_in, const std::vector<Shape>& input_shapes) {
  NNFIT_CHECK(x_in.size() == input_shapes.size(), InvalidArgument, "the model has ", input_shapes.size(),
              " input(s) but ", x_in.size(), " input tensor(s) were given");
  std::vector<Tensor> x;
  for (std::size_t i = 0; i < x_in.size(); ++i) {
    try {
      x.push_back(prepare_inputs(x_in[i], input_shapes[i]));
    } catch (const InvalidArgument& e) {
      if (x_in.size() == 1) throw;
      throw InvalidArgument("input " + std::to_string(i) + ": " + e.what(), e.hint());
    }
    NNFIT_CHECK(x[i].shape()[0] == x[0].shape()[0], InvalidArgument, "input ", i, " has ", x[i].shape()[0],
                " samples but input 0 has ", x[0].shape()[0]);
  }
  return x;
}

std::vector<Shape> samples_of(const std::vector<Tensor>& x) {
  std::vector<Shape> out;
  for (const Tensor& t : x) out.emplace_back(std::vector<std::int64_t>(t.shape().dims().begin() + 1, t.shape().dims().end()));
  return out;
}

PreparedData prepare_data(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in, const Model& model,
                          const CompileOptions& co, const char* empty_message) {
  PreparedData d;
  d.x = prepare_all_inputs(x_in, model.input_shapes());
  d.samples = samples_of(d.x);
  const std::vector<Shape> output_shapes = model.output_shapes_for(d.samples);
  d.n = d.x[0].shape()[0];
  NNFIT_CHECK(d.n > 0, InvalidArgument, empty_message);
  if (!co.takes_targets()) {  // a compute_loss that reads no y (Note [compute_loss in the step])
    NNFIT_CHECK(y_in.empty(), InvalidArgument, "the model's compute_loss reads no targets and no metric does, but ",
                y_in.size(), " target tensor(s) were given; give none");
    return d;
  }
  NNFIT_CHECK(y_in.size() == output_shapes.size(), InvalidArgument, "the model has ", output_shapes.size(),
              " output(s) but ", y_in.size(), " target tensor(s) were given");
  for (std::size_t i = 0; i < y_in.size(); ++i) {
    try {
      d.y.push_back(prepare_targets(y_in[i], co.loss_for(i).target_desc(one_prediction(output_shapes[i]), i), d.n));
    } catch (const InvalidArgument& e) {
      if (y_in.size() == 1) throw;
      throw InvalidArgument("targets " + std::to_string(i) + ": " + e.what(), e.hint());
    }
  }
  return d;
}

}  // namespace nnfit::fit_data
