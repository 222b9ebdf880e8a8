// EarlyStopping with Keras 3's rules: improvement is `value - min_delta` beyond the best
// (min_delta's sign follows the mode), the first epoch past start_from_epoch sets the
// best, a baseline must be beaten to reset the wait, and the best weights are restored
// at the end of training when asked (also when training ran to its last epoch). A backup
// carries the best weights too, so a resumed run restores the same ones.
#include <cmath>
#include <nlohmann/json.hpp>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/model/training_callbacks.h"

namespace nnfit {

bool monitor_maximizes(const std::string& monitor, const std::string& mode, const char* callback) {
  if (mode == "min") return false;
  if (mode == "max") return true;
  NNFIT_CHECK(mode == "auto", InvalidArgument, callback, ": mode must be \"auto\", \"min\" or \"max\", got \"", mode, "\"");
  const std::string name = monitor.rfind("val_", 0) == 0 ? monitor.substr(4) : monitor;
  if (name.find("loss") != std::string::npos) return false;
  for (const char* up : {"acc", "accuracy", "auc"}) {
    if (name.find(up) != std::string::npos) return true;
  }
  throw InvalidArgument(std::string(callback) + ": cannot tell whether \"" + monitor +
                        "\" should go up or down; give mode \"min\" or \"max\"");
}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options, std::FILE* out)
    : options_(std::move(options)), out_(out), maximize_(monitor_maximizes(options_.monitor, options_.mode, "EarlyStopping")) {
  NNFIT_CHECK(options_.patience >= 0, InvalidArgument, "EarlyStopping: patience must be >= 0, got ", options_.patience);
  options_.min_delta = std::fabs(options_.min_delta);
}

bool EarlyStopping::improves(double value, double reference) const {
  return maximize_ ? value - options_.min_delta > reference : value + options_.min_delta < reference;
}

void EarlyStopping::on_train_begin(std::int64_t, std::int64_t) {
  if (restored_) {  // a resumed run continues the count
    restored_ = false;
    return;
  }
  wait_ = stopped_epoch_ = best_epoch_ = 0;
  best_.reset();
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(std::int64_t epoch, const Logs& logs) {
  const std::optional<double> current = find_log(logs, options_.monitor);
  if (!current) {
    if (options_.verbose > 0) {
      std::fprintf(out_, "Early stopping conditioned on metric `%s` which is not available.\n", options_.monitor.c_str());
    }
    return;
  }
  if (epoch < options_.start_from_epoch) return;
  if (options_.restore_best_weights && best_weights_.empty()) {
    best_weights_ = model_->get_weights();
    best_epoch_ = epoch;
  }
  ++wait_;
  if (!best_ || improves(*current, *best_)) {
    best_ = *current;
    best_epoch_ = epoch;
    if (options_.restore_best_weights) best_weights_ = model_->get_weights();
    if (!options_.baseline || improves(*current, *options_.baseline)) wait_ = 0;
    return;
  }
  if (wait_ >= options_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    model_->set_stop_training(true);
  }
}

void EarlyStopping::on_train_end() {
  restored_ = false;
  if (stopped_epoch_ > 0 && options_.verbose > 0) {
    std::fprintf(out_, "Epoch %lld: early stopping\n", static_cast<long long>(stopped_epoch_ + 1));
  }
  if (options_.restore_best_weights && !best_weights_.empty()) {
    if (options_.verbose > 0) {
      std::fprintf(out_, "Restoring model weights from the end of the best epoch: %lld.\n",
                   static_cast<long long>(best_epoch_ + 1));
    }
    model_->set_weights(best_weights_);
  }
}

CallbackState EarlyStopping::state() const {
  nlohmann::json j = {{"wait", wait_}, {"stopped_epoch", stopped_epoch_}, {"best_epoch", best_epoch_}};
  j["best"] = best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr);
  return {j.dump(), best_weights_};
}

void EarlyStopping::restore_state(CallbackState state) {
  const nlohmann::json j = nlohmann::json::parse(state.json);
  wait_ = j.at("wait").get<std::int64_t>();
  stopped_epoch_ = j.at("stopped_epoch").get<std::int64_t>();
  best_epoch_ = j.at("best_epoch").get<std::int64_t>();
  best_ = j.at("best").is_null() ? std::nullopt : std::optional<double>(j.at("best").get<double>());
  best_weights_ = std::move(state.tensors);
  restored_ = true;
}

}  // namespace nnfit
