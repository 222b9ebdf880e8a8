// Metrics, computed on the host from a batch's predictions and targets and accumulated
// over an epoch, with Keras's names and its rule for resolving "accuracy".
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/core/tensor.h"
#include "nnfit/nn/loss.h"

namespace nnfit {

class Metric {
 public:
  // `name` is the compiled name as the user wrote it ("accuracy", "acc",
  // "sparse_categorical_accuracy", ...). Keras's rule for "accuracy"/"acc": binary
  // accuracy when predictions have one unit (or the loss is binary crossentropy),
  // sparse categorical accuracy when targets are class ids, else categorical accuracy.
  // Throws InvalidArgument for an unknown name.
  Metric(const std::string& name, const Loss& loss, const TensorDesc& pred);

  const std::string& name() const { return name_; }  // the key in history/logs
  const std::string& resolved() const { return resolved_; }
  void reset() { correct_ = 0; count_ = 0; }
  // Accumulates `rows` rows of predictions (f32) and targets.
  void update(const float* pred, const void* target, std::int64_t rows, const TensorDesc& pred_desc);
  double result() const { return count_ ? correct_ / static_cast<double>(count_) : 0.0; }
  // The running sums, to carry a partly done epoch across a resumed run.
  double correct() const { return correct_; }
  std::int64_t count() const { return count_; }
  void set_sums(double correct, std::int64_t count) {
    correct_ = correct;
    count_ = count;
  }

 private:
  std::string name_, resolved_;
  double correct_ = 0;
  std::int64_t count_ = 0;
  bool from_logits_ = false;
};

}  // namespace nnfit
