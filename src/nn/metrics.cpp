// Host-side metrics with Keras 3's formulas (keras/src/metrics). Keras's resolution of
// "accuracy" (compile_utils.get_metric): one output unit -> binary_accuracy; class-id
// targets -> sparse_categorical_accuracy; otherwise categorical_accuracy. Each metric keeps
// sums that add over batches (so an epoch's result is exact, and resumes exactly):
// accuracies [correct, rows]; mae, mse, rmse [sum of row means, rows]; precision [tp, fp];
// recall [tp, fn]; auc tp, fp, tn, fn at each of Keras's 200 thresholds.
#include "nnfit/nn/metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "nnfit/core/error.h"

namespace nnfit {

namespace {

constexpr int kAucThresholds = 200;  // Keras's num_thresholds
constexpr int kTopK = 5;             // Keras's k

// "RootMeanSquaredError" -> "root_mean_squared_error"; Keras's short names.
std::string canonical(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i && !std::isupper(static_cast<unsigned char>(name[i - 1]))) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  static const std::pair<const char*, const char*> kAliases[] = {
      {"acc", "accuracy"}, {"mae", "mean_absolute_error"}, {"mse", "mean_squared_error"},
      {"rmse", "root_mean_squared_error"}, {"a_u_c", "auc"}, {"top_kcategorical_accuracy", "top_k_categorical_accuracy"},
      {"sparse_top_kcategorical_accuracy", "sparse_top_k_categorical_accuracy"}};
  for (const auto& [alias, to] : kAliases) {
    if (out == alias) return to;
  }
  return out;
}

std::size_t sum_count(const std::string& resolved) {
  if (resolved == "auc") return 4 * kAucThresholds;
  return 2;
}

// Keras's AUC thresholds: -epsilon, i/(n-1) for i in 1..n-2, 1+epsilon.
double auc_threshold(int i) {
  if (i == 0) return -1e-7;
  if (i == kAucThresholds - 1) return 1.0 + 1e-7;
  return static_cast<double>(i) / (kAucThresholds - 1);
}

double no_nan(double a, double b) { return b == 0.0 ? 0.0 : a / b; }

// Whether the target's class is among the k largest predictions (TensorFlow's in_top_k:
// classes tied with it at the boundary count as in).
bool in_top_k(const float* p, std::int64_t classes, std::int64_t label, int k) {
  if (label < 0 || label >= classes) return false;
  std::int64_t above = 0;
  for (std::int64_t c = 0; c < classes; ++c) above += p[c] > p[label] ? 1 : 0;
  return above < k;
}

}  // namespace

Metric::Metric(const std::string& name, const Loss& loss, const TensorDesc& pred) : name_(name) {
  const std::string k = canonical(name);
  // Logged under the name as written ("AUC" stays "AUC"), as Keras 3 logs a metric string.
  const bool sparse = loss.kind == "sparse_categorical_crossentropy";
  if (k == "accuracy") {
    if (pred.shape.dim(-1) == 1 || loss.kind == "binary_crossentropy") resolved_ = "binary_accuracy";
    else if (sparse) resolved_ = "sparse_categorical_accuracy";
    else resolved_ = "categorical_accuracy";
  } else if (k == "sparse_categorical_accuracy" || k == "categorical_accuracy" || k == "binary_accuracy" ||
             k == "mean_absolute_error" || k == "mean_squared_error" || k == "root_mean_squared_error" ||
             k == "precision" || k == "recall" || k == "auc" || k == "top_k_categorical_accuracy" ||
             k == "sparse_top_k_categorical_accuracy") {
    resolved_ = k;
  } else if (k == "f1_score" || k == "f_beta_score") {
    throw Unsupported("metric '" + name + "': Keras's F1Score gives one value per class by default (average=None), "
                      "which nnfit's scalar logs cannot hold",
                      "use precision and recall");
  } else {
    throw InvalidArgument("unknown metric '" + name +
                          "'; supported: accuracy, acc, sparse_categorical_accuracy, categorical_accuracy, "
                          "binary_accuracy, mae (mean_absolute_error), mse (mean_squared_error), "
                          "root_mean_squared_error, precision, recall, auc, top_k_categorical_accuracy, "
                          "sparse_top_k_categorical_accuracy, or their Keras class names (the loss is always "
                          "reported as 'loss')");
  }
  const bool wants_ids = resolved_ == "sparse_categorical_accuracy" || resolved_ == "sparse_top_k_categorical_accuracy";
  if (wants_ids) {
    NNFIT_CHECK(sparse, InvalidArgument, "metric '", name, "' needs class-id targets (sparse_categorical_crossentropy)");
  } else {
    NNFIT_CHECK(!sparse, InvalidArgument, "metric '", name, "' compares predictions with targets of their shape; the ",
                "loss's class-id targets have another (use sparse_categorical_accuracy or ",
                "sparse_top_k_categorical_accuracy)");
  }
  sums_.assign(sum_count(resolved_), 0.0);
}

void Metric::set_sums(const std::vector<double>& sums) {
  NNFIT_CHECK(sums.size() == sums_.size(), InvalidArgument, "metric '", name_, "' keeps ", sums_.size(),
              " sums, the saved progress has ", sums.size());
  sums_ = sums;
}

void Metric::update(const float* pred, const void* target, std::int64_t rows, const TensorDesc& pred_desc) {
  const std::int64_t per_row = pred_desc.shape.numel() / std::max<std::int64_t>(pred_desc.shape[0], 1);
  const std::int64_t n = rows * per_row;
  const float* t = static_cast<const float*>(target);
  if (resolved_ == "binary_accuracy") {
    // Keras thresholds the raw output at 0.5, whatever from_logits says.
    for (std::int64_t i = 0; i < n; ++i) sums_[0] += ((pred[i] > 0.5f) == (t[i] > 0.5f)) ? 1.0 / per_row : 0.0;
    sums_[1] += static_cast<double>(rows);
  } else if (resolved_ == "mean_absolute_error" || resolved_ == "mean_squared_error" ||
             resolved_ == "root_mean_squared_error") {
    // Keras's per-sample mean over the last axis, averaged over samples.
    const bool abs = resolved_ == "mean_absolute_error";
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = static_cast<double>(pred[i]) - t[i];
      sums_[0] += (abs ? std::fabs(e) : e * e) / static_cast<double>(per_row);
    }
    sums_[1] += static_cast<double>(rows);
  } else if (resolved_ == "precision" || resolved_ == "recall") {
    // Keras's default threshold 0.5 on the predictions; a nonzero target is positive.
    for (std::int64_t i = 0; i < n; ++i) {
      const bool predicted = pred[i] > 0.5f, actual = t[i] != 0.0f;
      if (predicted && actual) sums_[0] += 1.0;
      if (resolved_ == "precision" ? predicted && !actual : !predicted && actual) sums_[1] += 1.0;
    }
  } else if (resolved_ == "auc") {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool actual = t[i] != 0.0f;
      for (int k = 0; k < kAucThresholds; ++k) {
        const bool predicted = pred[i] > auc_threshold(k);
        sums_[static_cast<std::size_t>((predicted ? (actual ? 0 : 1) : (actual ? 3 : 2)) * kAucThresholds + k)] += 1.0;
      }
    }
  } else {
    // Categorical kinds: argmax (or top 5) of each row against the target class.
    const bool top_k = resolved_ == "top_k_categorical_accuracy" || resolved_ == "sparse_top_k_categorical_accuracy";
    const bool ids = resolved_ == "sparse_categorical_accuracy" || resolved_ == "sparse_top_k_categorical_accuracy";
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* p = pred + r * per_row;
      std::int64_t label = 0;
      if (ids) {
        label = static_cast<const std::int32_t*>(target)[r];
      } else {
        const float* tr = t + r * per_row;
        for (std::int64_t c = 1; c < per_row; ++c) label = tr[c] > tr[label] ? c : label;
      }
      if (top_k) {
        sums_[0] += in_top_k(p, per_row, label, kTopK) ? 1.0 : 0.0;
      } else {
        std::int64_t arg = 0;
        for (std::int64_t c = 1; c < per_row; ++c) arg = p[c] > p[arg] ? c : arg;
        sums_[0] += arg == label ? 1.0 : 0.0;
      }
    }
    sums_[1] += static_cast<double>(rows);
  }
}

double Metric::result() const {
  if (resolved_ == "precision" || resolved_ == "recall") return no_nan(sums_[0], sums_[0] + sums_[1]);
  if (resolved_ == "root_mean_squared_error") return std::sqrt(no_nan(sums_[0], sums_[1]));
  if (resolved_ == "auc") {
    // Keras's ROC curve with interpolation: the trapezoids between consecutive thresholds.
    const auto at = [&](int what, int k) { return sums_[static_cast<std::size_t>(what * kAucThresholds + k)]; };
    double area = 0.0;
    for (int k = 0; k + 1 < kAucThresholds; ++k) {
      const double x0 = no_nan(at(1, k), at(1, k) + at(2, k)), x1 = no_nan(at(1, k + 1), at(1, k + 1) + at(2, k + 1));
      const double y0 = no_nan(at(0, k), at(0, k) + at(3, k)), y1 = no_nan(at(0, k + 1), at(0, k + 1) + at(3, k + 1));
      area += (x0 - x1) * (y0 + y1) / 2.0;
    }
    return area;
  }
  return no_nan(sums_[0], sums_[1]);
}

}  // namespace nnfit
