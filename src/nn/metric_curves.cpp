// The results of Keras's AUC (ROC, PR and PRGAIN curves; interpolation, minoring and
// majoring sums; Davis & Goadrich's interpolation for PR, as keras/src/metrics/
// confusion_metrics.py) and of FBetaScore / F1Score (f_score_metrics.py), from the sums
// metrics.cpp accumulates. Keras's divide_no_nan is no_nan here; its epsilon 1e-7.
#include <algorithm>
#include <cmath>

#include "nnfit/nn/metrics.h"
#include "nnfit/nn/traced_metric.h"

namespace nnfit {

namespace {

double no_nan(double a, double b) { return b == 0.0 ? 0.0 : a / b; }
constexpr double kEpsilon = 1e-7;  // keras.backend.epsilon()

}  // namespace

std::vector<double> Metric::results() const {
  if (traced_) return {traced_->result(sums_)};
  if (resolved_ == "precision" || resolved_ == "recall") return {no_nan(sums_[0], sums_[0] + sums_[1])};
  if (resolved_ == "root_mean_squared_error") return {std::sqrt(no_nan(sums_[0], sums_[1]))};
  if (resolved_ == "auc") return {auc()};
  if (resolved_ == "f1_score" || resolved_ == "fbeta_score") return fbeta();
  return {no_nan(sums_[0], sums_[1])};
}

double Metric::auc() const {
  const std::size_t n = thresholds_.size();
  const auto tp = [&](std::size_t k) { return sums_[k]; };
  const auto fp = [&](std::size_t k) { return sums_[n + k]; };
  const auto tn = [&](std::size_t k) { return sums_[2 * n + k]; };
  const auto fn = [&](std::size_t k) { return sums_[3 * n + k]; };
  double area = 0.0;
  if (spec_.curve == "PR" && spec_.summation_method == "interpolation") {
    // interpolate_pr_auc: precision linear in the predicted positives P between thresholds.
    for (std::size_t k = 0; k + 1 < n; ++k) {
      const double p0 = tp(k) + fp(k), p1 = tp(k + 1) + fp(k + 1);
      const double dtp = tp(k) - tp(k + 1), dp = p0 - p1;
      const double slope = no_nan(dtp, std::max(dp, 0.0));
      const double intercept = tp(k + 1) - slope * p1;
      const double ratio = p0 > 0 && p1 > 0 ? no_nan(p0, std::max(p1, 0.0)) : 1.0;
      area += no_nan(slope * (dtp + intercept * std::log(ratio)), std::max(tp(k + 1) + fn(k + 1), 0.0));
    }
    return area;
  }
  std::vector<double> x(n), y(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double recall = no_nan(tp(k), tp(k) + fn(k));
    if (spec_.curve == "ROC") {
      x[k] = no_nan(fp(k), fp(k) + tn(k));
      y[k] = recall;
    } else if (spec_.curve == "PR") {
      x[k] = recall;
      y[k] = no_nan(tp(k), tp(k) + fp(k));
    } else {  // PRGAIN
      const double scale = no_nan(tp(k) + fn(k), tn(k) + fp(k));
      const double recall_gain = tp(k) == 0.0 ? 0.0 : 1.0 - scale * no_nan(fn(k), tp(k));
      const double precision_gain = tp(k) == 0.0 ? 1.0 : 1.0 - scale * no_nan(fp(k), tp(k));
      x[k] = std::max(recall_gain, 0.0);
      y[k] = precision_gain;
    }
  }
  for (std::size_t k = 0; k + 1 < n; ++k) {
    double height = (y[k] + y[k + 1]) / 2.0;
    if (spec_.summation_method == "minoring") height = std::min(y[k], y[k + 1]);
    if (spec_.summation_method == "majoring") height = std::max(y[k], y[k + 1]);
    area += (x[k] - x[k + 1]) * height;
  }
  return area;
}

std::vector<double> Metric::fbeta() const {
  const auto c = static_cast<std::size_t>(classes_);
  const double b2 = spec_.beta * spec_.beta;
  const auto score = [&](double tp, double fp, double fn) {
    const double precision = tp / (tp + fp + kEpsilon), recall = tp / (tp + fn + kEpsilon);
    return precision * recall / (b2 * precision + recall + kEpsilon) * (1.0 + b2);
  };
  if (spec_.average == "micro") {
    double tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < c; ++i) {
      tp += sums_[i];
      fp += sums_[c + i];
      fn += sums_[2 * c + i];
    }
    return {score(tp, fp, fn)};
  }
  std::vector<double> per(c);
  double positives = 0;
  for (std::size_t i = 0; i < c; ++i) {
    per[i] = score(sums_[i], sums_[c + i], sums_[2 * c + i]);
    positives += sums_[3 * c + i];
  }
  if (spec_.average.empty()) return per;
  double out = 0;
  for (std::size_t i = 0; i < c; ++i) {
    out += spec_.average == "weighted" ? per[i] * sums_[3 * c + i] / (positives + kEpsilon) : per[i] / static_cast<double>(c);
  }
  return {out};
}

}  // namespace nnfit
