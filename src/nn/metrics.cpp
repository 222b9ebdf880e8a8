// Host-side metrics with Keras 3's formulas (keras/src/metrics). Keras's resolution of
// "accuracy" (compile_utils.get_metric): one output unit -> binary_accuracy; class-id
// targets -> sparse_categorical_accuracy; otherwise categorical_accuracy. Each metric keeps
// sums that add over batches (so an epoch's result is exact, and resumes exactly):
// accuracies [correct, rows]; mae, mse, rmse, mape [sum of row means, rows]; precision [tp, fp];
// recall [tp, fn]; auc tp, fp, tn, fn at each threshold; the F-scores tp, fp, fn and the
// count of positive targets per class. AUC's and the F-scores' results: metric_curves.cpp.
#include "nnfit/nn/metrics.h"

#include "nnfit/nn/traced_metric.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// "RootMeanSquaredError" -> "root_mean_squared_error"; Keras's short names.
std::string canonical_metric(const std::string& name) {
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
      {"acc", "accuracy"},
      {"mae", "mean_absolute_error"},
      {"mape", "mean_absolute_percentage_error"},
      {"mse", "mean_squared_error"},
      {"rmse", "root_mean_squared_error"},
      {"a_u_c", "auc"},
      {"top_kcategorical_accuracy", "top_k_categorical_accuracy"},
      {"sparse_top_kcategorical_accuracy", "sparse_top_k_categorical_accuracy"},
      {"f1score", "f1_score"},
      {"f_beta_score", "fbeta_score"}};
  for (const auto& [alias, to] : kAliases) {
    if (out == alias) return to;
  }
  return out;
}

constexpr const char* kKnown[] = {"accuracy", "sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy",
                                  "mean_absolute_error", "mean_squared_error", "root_mean_squared_error", "mean_absolute_percentage_error", "precision",
                                  "recall", "auc", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
                                  "f1_score", "fbeta_score"};

bool known(const std::string& k) {
  return std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* n) { return k == n; }) != std::end(kKnown);
}

// Whether the target's class is among the k largest predictions (TensorFlow's in_top_k:
// classes tied with it at the boundary count as in).
bool in_top_k(const float* p, std::int64_t classes, std::int64_t label, std::int64_t k) {
  if (label < 0 || label >= classes) return false;
  std::int64_t above = 0;
  for (std::int64_t c = 0; c < classes; ++c) above += p[c] > p[label] ? 1 : 0;
  return above < k;
}

std::string kind_of(const MetricSpec& s) { return canonical_metric(s.class_name.empty() ? s.name : s.class_name); }

}  // namespace

bool operator==(const MetricSpec& a, const MetricSpec& b) {
  return a.name == b.name && kind_of(a) == kind_of(b) && a.threshold == b.threshold && a.top_k == b.top_k &&
         a.class_id == b.class_id && a.k == b.k && a.num_thresholds == b.num_thresholds &&
         a.thresholds == b.thresholds && a.curve == b.curve && a.summation_method == b.summation_method &&
         a.from_logits == b.from_logits && a.average == b.average && a.beta == b.beta && a.traced == b.traced &&
         a.keras_function == b.keras_function;
}

void Metric::reset() {
  if (traced_) {
    sums_ = traced_->initial_state();
    return;
  }
  sums_.assign(sums_.size(), 0.0);
}

Metric::Metric(const MetricSpec& spec, const Loss& loss, const TensorDesc& pred) : spec_(spec) {
  if (spec.traced) {  // Note [Traced losses and metrics]
    resolved_ = "traced";
    traced_ = std::make_shared<TracedMetricRunner>(spec.traced, loss.target_desc(pred), pred);
    sums_ = traced_->initial_state();
    return;
  }
  const std::string k = kind_of(spec);
  const std::string& name = spec.name;
  // Logged under the name as written ("AUC" stays "AUC"), as Keras 3 logs a metric string.
  const bool sparse = loss.kind == "sparse_categorical_crossentropy";
  if (k == "accuracy") {
    if (pred.shape.dim(-1) == 1 || loss.kind == "binary_crossentropy") resolved_ = "binary_accuracy";
    else if (sparse) resolved_ = "sparse_categorical_accuracy";
    else resolved_ = "categorical_accuracy";
  } else if (known(k)) {
    resolved_ = k;
  } else {
    std::string list;
    for (const char* n : kKnown) list += std::string(list.empty() ? "" : ", ") + n;
    throw InvalidArgument("unknown metric '" + name + "'; supported: " + list +
                              ", acc, mae, mse, rmse, or their Keras class names (the loss is always reported as 'loss')",
                          "Keras's other metrics (KLDivergence, R2Score, the IoU family, ...) are computed by nnfit.keras "
                          "in Python, which traces them into the engine: load the model there (keras.models.load_model) "
                          "to train or evaluate it with them");
  }
  const bool wants_ids = resolved_ == "sparse_categorical_accuracy" || resolved_ == "sparse_top_k_categorical_accuracy";
  if (wants_ids) {
    NNFIT_CHECK(sparse, InvalidArgument, "metric '", name, "' needs class-id targets (sparse_categorical_crossentropy)");
  } else {
    NNFIT_CHECK(!sparse, InvalidArgument, "metric '", name, "' compares predictions with targets of their shape; the ",
                "loss's class-id targets have another (use sparse_categorical_accuracy or ",
                "sparse_top_k_categorical_accuracy)");
  }
  const std::int64_t last = pred.shape.rank() ? pred.shape.dim(-1) : 1;
  if (spec.class_id) {
    NNFIT_CHECK(*spec.class_id >= 0 && *spec.class_id < last, InvalidArgument, "metric '", name, "': class_id ",
                *spec.class_id, " is not a class of predictions with ", last, " on the last axis");
  }
  if (resolved_ == "auc") {
    // Keras's thresholds: -epsilon, the given ones or i/(n-1) for i in 1..n-2, 1+epsilon.
    constexpr double kEps = 1e-7;
    thresholds_.push_back(-kEps);
    if (!spec.thresholds.empty()) {
      thresholds_.insert(thresholds_.end(), spec.thresholds.begin(), spec.thresholds.end());
    } else {
      const std::int64_t n = spec.num_thresholds;
      NNFIT_CHECK(n > 1, InvalidArgument, "metric '", name, "': num_thresholds must be > 1, got ", n);
      for (std::int64_t i = 1; i + 1 < n; ++i) thresholds_.push_back(static_cast<double>(i) / static_cast<double>(n - 1));
    }
    thresholds_.push_back(1.0 + kEps);
    sums_.assign(4 * thresholds_.size(), 0.0);
  } else if (resolved_ == "f1_score" || resolved_ == "fbeta_score") {
    NNFIT_CHECK(pred.shape.rank() == 2, InvalidArgument, "metric '", name,
                "' (Keras's FBetaScore) takes predictions of shape [batch, classes]; this output's are ",
                pred.shape.to_string());
    classes_ = last;
    sums_.assign(4 * static_cast<std::size_t>(classes_), 0.0);
  } else {
    sums_.assign(2, 0.0);
  }
}

void Metric::set_sums(const std::vector<double>& sums) {
  NNFIT_CHECK(sums.size() == sums_.size(), InvalidArgument, "metric '", name(), "' keeps ", sums_.size(),
              " sums, the saved progress has ", sums.size());
  sums_ = sums;
}

std::vector<std::string> Metric::keys(const std::string& key) const {
  const std::size_t n = results().size();
  if (n == 1) return {key};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(key + "_" + std::to_string(i));
  return out;
}

void Metric::update_confusion(const float* pred, const float* t, std::int64_t rows, std::int64_t per_row,
                              const float* weights) {
  // Keras's update_confusion_matrix_variables: top_k keeps each row's k largest (ties to the
  // lower index) and makes the rest negative; class_id then keeps one column; a prediction
  // above the threshold (default 0.5) is positive, a nonzero target is positive.
  // With top_k and no threshold, Keras's default is NEG_INF: every kept prediction is positive.
  const double threshold = spec_.threshold.value_or(spec_.top_k ? -1e10 : 0.5);
  const bool precision = resolved_ == "precision";
  std::vector<char> kept(static_cast<std::size_t>(per_row), 1);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* p = pred + r * per_row;
    const float* tr = t + r * per_row;
    const double w = weights ? weights[r] : 1.0;
    if (spec_.top_k) {
      std::vector<std::int64_t> order(static_cast<std::size_t>(per_row));
      for (std::int64_t c = 0; c < per_row; ++c) order[static_cast<std::size_t>(c)] = c;
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return p[a] > p[b]; });
      std::fill(kept.begin(), kept.end(), 0);
      for (std::int64_t i = 0; i < std::min(*spec_.top_k, per_row); ++i) kept[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = 1;
    }
    for (std::int64_t c = 0; c < per_row; ++c) {
      if (spec_.class_id && c != *spec_.class_id) continue;
      // Keras sets the dropped predictions to NEG_INF (-1e10), below any threshold it takes.
      const double value = kept[static_cast<std::size_t>(c)] ? p[c] : -1e10;
      const bool predicted = value > threshold, actual = tr[c] != 0.0f;
      if (predicted && actual) sums_[0] += w;
      if (precision ? predicted && !actual : !predicted && actual) sums_[1] += w;
    }
  }
}

void Metric::update_auc(const float* pred, const float* t, std::int64_t n, std::int64_t per_row,
                        const float* weights) {
  // Keras's AUC (multi_label false): every prediction against every threshold; a nonzero
  // target is positive. Sums: tp, fp, tn, fn, each over the thresholds.
  const std::size_t count = thresholds_.size();
  for (std::int64_t i = 0; i < n; ++i) {
    double p = pred[i];
    if (spec_.from_logits) p = 1.0 / (1.0 + std::exp(-p));
    const bool actual = t[i] != 0.0f;
    const double w = weights ? weights[i / per_row] : 1.0;  // a row's weight for each of its values
    for (std::size_t k = 0; k < count; ++k) {
      const bool predicted = p > thresholds_[k];
      sums_[(predicted ? (actual ? 0 : 1) : (actual ? 3 : 2)) * count + k] += w;
    }
  }
}

void Metric::update_fbeta(const float* pred, const float* t, std::int64_t rows, std::int64_t classes,
                          const float* weights) {
  // Keras's FBetaScore.update_state: without a threshold a row's largest values (ties all
  // count, an all-zero row none) are its predicted classes; with one, those above it.
  const auto at = [&](int what, std::int64_t c) -> double& {
    return sums_[static_cast<std::size_t>(what * classes + c)];
  };
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* p = pred + r * classes;
    const float* tr = t + r * classes;
    const float top = *std::max_element(p, p + classes);
    const double w = weights ? weights[r] : 1.0;
    for (std::int64_t c = 0; c < classes; ++c) {
      const double y = spec_.threshold ? (p[c] > *spec_.threshold ? 1.0 : 0.0)
                                       : (p[c] >= top && std::fabs(p[c]) > 1e-9f ? 1.0 : 0.0);
      const double truth = tr[c];
      at(0, c) += y * truth * w;
      at(1, c) += y * (1.0 - truth) * w;
      at(2, c) += (1.0 - y) * truth * w;
      at(3, c) += truth * w;
    }
  }
}

void Metric::update(const float* pred, const void* target, std::int64_t rows, const TensorDesc& pred_desc,
                    const float* weights) {
  if (traced_) {
    traced_->update(sums_, pred, target, rows, weights);
    return;
  }
  const std::int64_t per_row = pred_desc.shape.numel() / std::max<std::int64_t>(pred_desc.shape[0], 1);
  const std::int64_t n = rows * per_row;
  const float* t = static_cast<const float*>(target);
  const auto weight = [&](std::int64_t r) { return weights ? static_cast<double>(weights[r]) : 1.0; };
  // The rows' weights summed: the count a mean divides by.
  double count = static_cast<double>(rows);
  if (weights) {
    count = 0;
    for (std::int64_t r = 0; r < rows; ++r) count += weights[r];
  }
  if (resolved_ == "binary_accuracy") {
    // Keras's binary_accuracy: the prediction thresholded (whatever from_logits says) must
    // equal the target; the mean over the last axis, averaged over samples.
    const double threshold = spec_.threshold.value_or(0.5);
    for (std::int64_t i = 0; i < n; ++i) {
      sums_[0] += (pred[i] > threshold ? 1.0f : 0.0f) == t[i] ? weight(i / per_row) / static_cast<double>(per_row) : 0.0;
    }
    sums_[1] += count;
  } else if (resolved_ == "mean_absolute_error" || resolved_ == "mean_squared_error" ||
             resolved_ == "root_mean_squared_error" || resolved_ == "mean_absolute_percentage_error") {
    // Keras's per-sample mean over the last axis, averaged over samples; the percentage
    // error is 100 |t - p| / max(|t|, 1e-7).
    const bool abs = resolved_ == "mean_absolute_error";
    const bool percent = resolved_ == "mean_absolute_percentage_error";
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = static_cast<double>(pred[i]) - t[i];
      const double v = percent ? 100.0 * std::fabs(e) / std::max(std::fabs(static_cast<double>(t[i])), 1e-7)
                               : abs ? std::fabs(e) : e * e;
      sums_[0] += v * weight(i / per_row) / static_cast<double>(per_row);
    }
    sums_[1] += count;
  } else if (resolved_ == "precision" || resolved_ == "recall") {
    update_confusion(pred, t, rows, per_row, weights);
  } else if (resolved_ == "auc") {
    update_auc(pred, t, n, per_row, weights);
  } else if (resolved_ == "f1_score" || resolved_ == "fbeta_score") {
    update_fbeta(pred, t, rows, classes_, weights);
  } else {
    // Categorical kinds: argmax (or top k) of each row against the target class.
    // Predictions with more axes than (batch, classes) (a sequence's steps, an image's
    // pixels) are scored at each position, each a 1/positions share of its sample, as Keras
    // averages the values of every position with the sample's weight broadcast over them.
    const bool top_k = resolved_ == "top_k_categorical_accuracy" || resolved_ == "sparse_top_k_categorical_accuracy";
    const bool ids = resolved_ == "sparse_categorical_accuracy" || resolved_ == "sparse_top_k_categorical_accuracy";
    const std::int64_t classes = pred_desc.shape.dim(-1), positions = per_row / std::max<std::int64_t>(classes, 1);
    for (std::int64_t r = 0; r < rows * positions; ++r) {
      const float* p = pred + r * classes;
      std::int64_t label = 0;
      if (ids) {
        label = static_cast<const std::int32_t*>(target)[r];
      } else {
        const float* tr = t + r * classes;
        for (std::int64_t c = 1; c < classes; ++c) label = tr[c] > tr[label] ? c : label;
      }
      const double share = weight(r / positions) / static_cast<double>(positions);
      if (top_k) {
        sums_[0] += in_top_k(p, classes, label, spec_.k) ? share : 0.0;
      } else {
        std::int64_t arg = 0;
        for (std::int64_t c = 1; c < classes; ++c) arg = p[c] > p[arg] ? c : arg;
        sums_[0] += arg == label ? share : 0.0;
      }
    }
    sums_[1] += count;
  }
}

}  // namespace nnfit
