// The Keras-style progress bar.
#include "nnfit/model/callbacks.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace nnfit {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 1.0) std::snprintf(buf, sizeof buf, "%.0fms", s * 1e3);
  else if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else std::snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  return buf;
}
}  // namespace

double log_value(const Logs& logs, const std::string& key, double fallback) {
  for (const auto& [k, v] : logs) {
    if (k == key) return v;
  }
  return fallback;
}

std::optional<double> find_log(const Logs& logs, const std::string& key) {
  for (const auto& [k, v] : logs) {
    if (k == key) return v;
  }
  return std::nullopt;
}

ProgressBar::ProgressBar(std::FILE* out, bool force_terminal)
    : out_(out), terminal_(force_terminal || isatty(fileno(out))) {}

void ProgressBar::on_train_begin(std::int64_t epochs, std::int64_t steps) {
  epochs_ = epochs;
  steps_ = steps;
}

void ProgressBar::on_epoch_begin(std::int64_t epoch) {
  std::fprintf(out_, "Epoch %lld/%lld\n", static_cast<long long>(epoch + 1), static_cast<long long>(epochs_));
  std::fflush(out_);
  epoch_start_ = now_s();
  last_draw_ = 0;
}

std::string ProgressBar::line(std::int64_t done, const Logs& logs, bool final) const {
  const int width = 20;
  std::string bar;
  int filled = steps_ ? static_cast<int>(width * done / steps_) : width;
  for (int i = 0; i < width; ++i) bar += i < filled ? "\u2501" : "\u2500";
  double elapsed = now_s() - epoch_start_;
  char head[96];
  int digits = static_cast<int>(std::to_string(steps_).size());
  std::snprintf(head, sizeof head, "%*lld/%lld ", digits, static_cast<long long>(done), static_cast<long long>(steps_));
  std::string s = head + bar + " ";
  if (final) {
    double per_step = done ? elapsed / static_cast<double>(done) : 0;
    s += format_duration(elapsed) + " " + format_duration(per_step) + "/step";
  } else {
    double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(steps_ - done) : 0;
    s += format_duration(eta);
  }
  for (const auto& [k, v] : logs) {
    if (k == "train_seconds" || k == "samples_per_s" || k == "input_wait_fraction" || k == "memory_peak_bytes") continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, " - %s: %.4f", k.c_str(), v);
    s += buf;
  }
  return s;
}

void ProgressBar::on_train_batch_end(std::int64_t batch, const Logs& logs) {
  if (!terminal_) return;
  double t = now_s();
  if (t - last_draw_ < 0.1 && batch + 1 < steps_) return;
  last_draw_ = t;
  std::fprintf(out_, "\r%s\x1b[K", line(batch + 1, logs, false).c_str());
  std::fflush(out_);
}

void ProgressBar::on_epoch_end(std::int64_t, const Logs& logs) {
  if (terminal_) std::fprintf(out_, "\r%s\x1b[K\n", line(steps_, logs, true).c_str());
  else std::fprintf(out_, "%s\n", line(steps_, logs, true).c_str());
  std::fflush(out_);
}

}  // namespace nnfit
