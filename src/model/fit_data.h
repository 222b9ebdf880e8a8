// How fit, evaluate and predict turn user tensors into what the programs take: inputs
// viewed with the model's input shape, targets in the loss's dtype, fresh metrics.
// Internal to the model module.
#pragma once
#include <cstdint>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/model/sequential.h"
#include "nnfit/nn/metrics.h"

namespace nnfit::fit_data {

// Writes n samples of targets y into dst in the dtype and shape the loss wants (`want`,
// whose first axis is the batch): class ids -> int32, else float32. With classes > 0,
// class ids must lie in [0, classes). throws: InvalidArgument naming the row.
void convert_targets(const Tensor& y, const TensorDesc& want, std::int64_t n, void* dst, std::int64_t classes = 0);
// Targets for all n samples in a fresh tensor (the in-memory path converts once).
Tensor prepare_targets(const Tensor& y, const TensorDesc& want, std::int64_t n);
// x viewed as [N, input_shape...]; throws InvalidArgument for a dtype or size mismatch.
Tensor prepare_inputs(const Tensor& x, const Shape& input_shape);
// One sample's prediction, with a batch axis of 1.
TensorDesc one_prediction(const Shape& output_shape);
std::vector<Metric> make_metrics(const CompileOptions& co, const TensorDesc& pred1);

// Inputs reshaped to the model's input and targets in the loss's dtype: what the
// in-memory fit and evaluate start from.
struct PreparedData {
  Tensor x, y;
  std::int64_t n = 0;
};

PreparedData prepare_data(const Tensor& x_in, const Tensor& y_in, const Shape& input_shape, const Shape& output_shape,
                          const CompileOptions& co, const char* empty_message);

}  // namespace nnfit::fit_data
