// Metrics, computed on the host from a batch's predictions and targets and accumulated
// over an epoch, with Keras's names, arguments, formulas and its rule for resolving
// "accuracy".
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/nn/loss.h"

namespace nnfit {

struct TracedMetric;
class TracedMetricRunner;

// A compiled metric as Keras's compile takes it: a name ("accuracy", "auc", "AUC", ...),
// or a metric object's class and arguments (`keras.metrics.AUC(num_thresholds=50,
// curve="PR", name="pr_auc")`). The arguments are Keras's, with Keras 3's defaults; each
// applies to the metrics that have it (metric_from_keras_json checks which).
struct MetricSpec {
  std::string name;  // the key in history and logs (a metric object's config "name")
  // A metric object's class name ("AUC", "F1Score"); empty: resolved from `name` (and
  // written back as Keras's string form).
  std::string class_name;
  // BinaryAccuracy's threshold and Precision's / Recall's thresholds: a prediction above
  // it counts as positive. F1Score / FBetaScore: unset means each row's largest value.
  std::optional<double> threshold;
  // Precision / Recall: only the row's top_k predictions count (others are negative);
  // class_id: only that column of predictions and targets.
  std::optional<std::int64_t> top_k, class_id;
  std::int64_t k = 5;  // TopKCategoricalAccuracy / SparseTopKCategoricalAccuracy
  // AUC: num_thresholds evenly spaced (or the given thresholds, with -epsilon and
  // 1+epsilon added), curve "ROC" or "PR", summation_method "interpolation", "minoring"
  // or "majoring"; from_logits applies a sigmoid to the predictions first.
  std::int64_t num_thresholds = 200;
  std::vector<double> thresholds;
  std::string curve = "ROC";
  std::string summation_method = "interpolation";
  bool from_logits = false;
  // F1Score / FBetaScore: average "" (Keras's None: one value per class, logged as
  // "<name>_<class>"), "micro", "macro" or "weighted"; beta (F1Score: 1).
  std::string average;
  double beta = 1.0;
  // A metric written in Python with keras.ops and traced by nnfit.keras (a Metric subclass
  // or a metric function; include/nnfit/nn/traced_metric.h): its graphs; null otherwise.
  std::shared_ptr<const TracedMetric> traced;
  // Given as Keras's function (keras.metrics.categorical_accuracy): written back in Keras's
  // form of it, {"module": "builtins", "class_name": "function", "config": name}.
  bool keras_function = false;

  MetricSpec() = default;
  MetricSpec(std::string metric_name) : name(std::move(metric_name)) {}  // NOLINT: a name is a spec
  MetricSpec(const char* metric_name) : name(metric_name) {}              // NOLINT
  friend bool operator==(const MetricSpec& a, const MetricSpec& b);
};

class Metric {
 public:
  // `spec.name` (or its class_name) is a Keras metric name or class name ("accuracy",
  // "acc", "sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy", "mae",
  // "mse", "root_mean_squared_error", "precision", "recall", "auc",
  // "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "f1_score",
  // "fbeta_score", ...). Keras's rule for "accuracy"/"acc": binary accuracy when
  // predictions have one unit (or the loss is binary crossentropy), sparse categorical
  // accuracy when targets are class ids, else categorical accuracy.
  // Throws InvalidArgument for an unknown name (naming the known ones) or an argument the
  // predictions' shape cannot take (class_id, F1Score on other than [N, classes]).
  Metric(const MetricSpec& spec, const Loss& loss, const TensorDesc& pred);

  const std::string& name() const { return spec_.name; }  // the key in history/logs
  const std::string& resolved() const { return resolved_; }
  void reset();
  // Accumulates `rows` rows of predictions (f32) and targets; with `weights` (one per
  // row, Keras's sample_weight of a weighted metric) each row counts by its weight: a mean
  // is sum(w * value) / sum(w), a confusion count adds w.
  void update(const float* pred, const void* target, std::int64_t rows, const TensorDesc& pred_desc,
              const float* weights = nullptr);
  // The value: one number, or one per class (F1Score / FBetaScore with average None).
  std::vector<double> results() const;
  double result() const { return results().at(0); }
  // The log keys of results(): the name, or "<name>_<class>" for each class.
  std::vector<std::string> keys(const std::string& key) const;
  // The running sums (counts, totals, a confusion matrix per threshold), to carry a partly
  // done epoch across a resumed run. set_sums throws InvalidArgument on a size that is not
  // this metric's.
  const std::vector<double>& sums() const { return sums_; }
  void set_sums(const std::vector<double>& sums);

 private:
  void update_auc(const float* pred, const float* target, std::int64_t n, std::int64_t per_row, const float* weights);
  void update_confusion(const float* pred, const float* target, std::int64_t rows, std::int64_t per_row,
                        const float* weights);
  void update_fbeta(const float* pred, const float* target, std::int64_t rows, std::int64_t classes,
                    const float* weights);
  double auc() const;
  std::vector<double> fbeta() const;

  MetricSpec spec_;
  std::string resolved_;
  std::vector<double> thresholds_;  // AUC's, with the two ends
  std::int64_t classes_ = 0;        // F-scores
  std::vector<double> sums_;  // a traced metric's: its variables' values, flat
  std::shared_ptr<TracedMetricRunner> traced_;
};

}  // namespace nnfit
