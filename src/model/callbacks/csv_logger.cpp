// CSVLogger and TerminateOnNaN, as Keras writes and stops. Rows are flushed per epoch so
// a killed run keeps every finished epoch.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/model/training_callbacks.h"

namespace nnfit {

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  // Python writes 1.0 (not 1) and 1e-05 (two exponent digits, a sign).
  const auto e = s.find('e');
  if (e == std::string::npos) {
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  std::string mant = s.substr(0, e), exp = s.substr(e + 1);
  const char sign = exp[0] == '-' ? '-' : '+';
  if (exp[0] == '-' || exp[0] == '+') exp = exp.substr(1);
  if (exp.size() < 2) exp = "0" + exp;
  return mant + "e" + sign + exp;
}

CSVLogger::CSVLogger(std::string filename, std::string separator, bool append)
    : filename_(std::move(filename)), separator_(std::move(separator)), append_(append) {}

CSVLogger::~CSVLogger() {
  if (file_) std::fclose(file_);
}

void CSVLogger::on_train_begin(std::int64_t, std::int64_t) {
  keys_.clear();
  std::error_code ec;
  const bool continuing = append_ && std::filesystem::file_size(filename_, ec) > 0 && !ec;
  file_ = std::fopen(filename_.c_str(), append_ ? "a" : "w");
  NNFIT_CHECK(file_, InvalidArgument, "CSVLogger: cannot open ", filename_, ": ", std::strerror(errno));
  if (continuing) keys_.push_back("");  // the header exists: the keys follow from the first row
}

void CSVLogger::on_epoch_end(std::int64_t epoch, const Logs& logs) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : logs) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  if (keys_.empty()) {
    std::string header = "epoch";
    for (const std::string& k : keys) header += separator_ + k;
    std::fprintf(file_, "%s\n", header.c_str());
  }
  keys_ = keys;
  std::string row = std::to_string(epoch);
  for (const std::string& k : keys) row += separator_ + python_float(log_value(logs, k));
  std::fprintf(file_, "%s\n", row.c_str());
  std::fflush(file_);
}

void CSVLogger::on_train_end() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

void TerminateOnNaN::on_train_batch_end(std::int64_t batch, const Logs& logs) {
  const std::optional<double> loss = find_log(logs, "loss");
  if (loss && !std::isfinite(*loss)) {
    std::fprintf(out_, "Batch %lld: Invalid loss, terminating training\n", static_cast<long long>(batch));
    model_->set_stop_training(true);
  }
}

}  // namespace nnfit
