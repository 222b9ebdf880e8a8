// How fit, evaluate and predict turn user tensors into what the programs take: inputs
// viewed with the model's input shape, targets in the loss's dtype, fresh metrics.
// Internal to the model module.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/model/model.h"
#include "nnfit/model/targets.h"
#include "nnfit/nn/metrics.h"

namespace nnfit::fit_data {

// convert_targets: nnfit/model/targets.h (the CLI converts its label files with it too).
using ::nnfit::convert_targets;
// Writes x's values into dst as float32, as Keras casts a model input (uint8, int32,
// int64 and bool exactly; int64 beyond 2^24 rounds). requires: dst holds x.numel() floats.
// throws: InvalidArgument for a dtype that has no such cast (f16, bf16 for now).
void cast_inputs_to_f32(const Tensor& x, float* dst);
// Targets for all n samples in a fresh tensor (the in-memory path converts once).
Tensor prepare_targets(const Tensor& y, const TensorDesc& want, std::int64_t n);
// Whether Keras feeds a sample of shape `given` to an input of shape `want` (its
// Functional._adjust_input_rank): the same shape, or it with a trailing axis of 1 added or
// removed. Another layout of the same size ((784,) for (28, 28, 1)) Keras refuses.
bool keras_takes_sample_shape(const Shape& given, const Shape& want);
// The per-sample shape a program takes for data samples of shape `given` fed to a model
// input of shape `want` (which may have unknown dimensions: Note [Shapes known per
// batch]): `want` with its unknown dimensions taken from `given`, where Keras takes
// `given` (the same shape, or it with a trailing axis of 1 added or removed); none where
// it would refuse them.
std::optional<Shape> program_sample_shape(const Shape& given, const Shape& want);
// x viewed as [N, input_shape...]; throws InvalidArgument for a dtype or shape mismatch.
Tensor prepare_inputs(const Tensor& x, const Shape& input_shape);
// One sample's prediction, with a batch axis of 1 (and 1 for a dimension known per batch).
TensorDesc one_prediction(const Shape& output_shape);
std::vector<Metric> make_metrics(const CompileOptions& co, const TensorDesc& pred1);

// A metric of one output, under the key Keras logs it by: "accuracy" for a single
// output, "<output layer>_accuracy" for several; `weighted`: one of weighted_metrics.
struct OutputMetric {
  std::size_t output = 0;
  std::string key;
  Metric metric;
  bool weighted = false;
};
// The compiled metrics for every output (output_names: Model::output_names()), then the
// weighted metrics for every output, in Keras's order and under Keras's keys.
std::vector<OutputMetric> make_output_metrics(const CompileOptions& co, const std::vector<Shape>& output_shapes,
                                              const std::vector<std::string>& output_names);

// Inputs reshaped to the model's inputs and targets in the losses' dtypes: what the
// in-memory fit and evaluate start from. One tensor per input and per output.
struct PreparedData {
  std::vector<Tensor> x, y;
  std::int64_t n = 0;
  std::vector<Shape> samples;  // x's per-sample shapes (the programs' inputs: Note [Shapes known per batch])
};

// x viewed as the model's inputs, y converted to its losses' targets at the outputs' shapes
// for those inputs. throws: InvalidArgument when the counts differ from the model's inputs
// and outputs, when the tensors disagree on the number of samples, or (empty_message)
// there are none.
PreparedData prepare_data(const std::vector<Tensor>& x_in, const std::vector<Tensor>& y_in, const Model& model,
                          const CompileOptions& co, const char* empty_message);
// The per-sample shapes of prepared inputs x ([N, ...] each).
std::vector<Shape> samples_of(const std::vector<Tensor>& x);
// Copies rows idx[0..rows) of src ([N, ...]) to dst, one after another.
void gather_rows(const Tensor& src, const std::int64_t* idx, std::int64_t rows, void* dst);
// The batch size of validation_data tensors (Keras's validation_batch_size or batch_size).
std::int64_t validation_batch_size(const FitOptions& o);
// FitOptions' validation keys, before anything is planned. throws: InvalidArgument.
void check_validation_options(const FitOptions& o);
// requires: `weights` ("sample_weight", "validation sample weights") is float32 with n
// elements. throws: InvalidArgument naming `what`.
void check_sample_weights(const Tensor& weights, std::int64_t n, const char* what);
// Inputs only (predict). throws: as prepare_data.
std::vector<Tensor> prepare_all_inputs(const std::vector<Tensor>& x_in, const std::vector<Shape>& input_shapes);

}  // namespace nnfit::fit_data
