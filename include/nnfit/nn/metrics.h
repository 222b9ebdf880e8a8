// Metrics, computed on the host from a batch's predictions and targets and accumulated
// over an epoch, with Keras's names, formulas and its rule for resolving "accuracy".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/nn/loss.h"

namespace nnfit {

class Metric {
 public:
  // `name` is the compiled name as the user wrote it: a Keras metric name or class name
  // ("accuracy", "acc", "sparse_categorical_accuracy", "categorical_accuracy",
  // "binary_accuracy", "mae", "mse", "root_mean_squared_error", "precision", "recall",
  // "auc", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", ...), with
  // Keras's default arguments. Keras's rule for "accuracy"/"acc": binary accuracy when
  // predictions have one unit (or the loss is binary crossentropy), sparse categorical
  // accuracy when targets are class ids, else categorical accuracy.
  // Throws InvalidArgument for an unknown name, naming the known ones.
  Metric(const std::string& name, const Loss& loss, const TensorDesc& pred);

  const std::string& name() const { return name_; }  // the key in history/logs
  const std::string& resolved() const { return resolved_; }
  void reset() { sums_.assign(sums_.size(), 0.0); }
  // Accumulates `rows` rows of predictions (f32) and targets.
  void update(const float* pred, const void* target, std::int64_t rows, const TensorDesc& pred_desc);
  double result() const;
  // The running sums (counts, totals, a confusion matrix per threshold), to carry a partly
  // done epoch across a resumed run. set_sums throws InvalidArgument on a size that is not
  // this metric's.
  const std::vector<double>& sums() const { return sums_; }
  void set_sums(const std::vector<double>& sums);

 private:
  std::string name_, resolved_;
  std::vector<double> sums_;
};

}  // namespace nnfit
