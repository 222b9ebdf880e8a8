// ReduceLROnPlateau with Keras 3's rules: improvement beyond min_delta resets the wait;
// after `patience` epochs without one (outside the cooldown) the rate is multiplied by
// factor, never below min_lr.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/model/training_callbacks.h"

namespace nnfit {

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options, std::FILE* out)
    : options_(std::move(options)),
      out_(out),
      maximize_(options_.mode == "max" ||
                (options_.mode == "auto" && options_.monitor.find("acc") != std::string::npos)) {
  NNFIT_CHECK(options_.factor < 1.0, InvalidArgument, "ReduceLROnPlateau does not support a factor >= 1.0, got ",
              options_.factor);
  NNFIT_CHECK(options_.mode == "auto" || options_.mode == "min" || options_.mode == "max", InvalidArgument,
              "ReduceLROnPlateau: mode must be \"auto\", \"min\" or \"max\", got \"", options_.mode, "\"");
  best_ = maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

void ReduceLROnPlateau::on_train_begin(std::int64_t, std::int64_t) {
  if (restored_) {
    restored_ = false;
    return;
  }
  best_ = maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  wait_ = cooldown_counter_ = 0;
}

void ReduceLROnPlateau::add_to_epoch_logs(Logs& logs) const {
  if (model_) logs.push_back({"learning_rate", static_cast<double>(static_cast<float>(model_->learning_rate()))});
}

void ReduceLROnPlateau::on_epoch_end(std::int64_t epoch, const Logs& logs) {
  const std::optional<double> current = find_log(logs, options_.monitor);
  if (!current) {
    std::fprintf(out_, "Learning rate reduction is conditioned on metric `%s` which is not available.\n",
                 options_.monitor.c_str());
    return;
  }
  const bool in_cooldown = cooldown_counter_ > 0;
  if (in_cooldown) {
    --cooldown_counter_;
    wait_ = 0;
  }
  const bool better = maximize_ ? *current > best_ + options_.min_delta : *current < best_ - options_.min_delta;
  if (better) {
    best_ = *current;
    wait_ = 0;
  } else if (cooldown_counter_ <= 0) {
    if (++wait_ >= options_.patience) {
      const double old_lr = model_->learning_rate();
      if (old_lr > static_cast<double>(static_cast<float>(options_.min_lr))) {
        const double new_lr = std::max(old_lr * options_.factor, options_.min_lr);
        model_->set_learning_rate(new_lr);
        if (options_.verbose > 0) {
          std::fprintf(out_, "\nEpoch %lld: ReduceLROnPlateau reducing learning rate to %s.\n",
                       static_cast<long long>(epoch + 1), python_float(new_lr).c_str());
        }
        cooldown_counter_ = options_.cooldown;
        wait_ = 0;
      }
    }
  }
}

CallbackState ReduceLROnPlateau::state() const {
  return {nlohmann::json{{"best", best_}, {"wait", wait_}, {"cooldown_counter", cooldown_counter_}}.dump(), {}};
}

void ReduceLROnPlateau::restore_state(CallbackState state) {
  const nlohmann::json j = nlohmann::json::parse(state.json);
  best_ = j.at("best").is_null() ? (maximize_ ? -1.0 : 1.0) * std::numeric_limits<double>::infinity()
                                 : j.at("best").get<double>();
  wait_ = j.at("wait").get<std::int64_t>();
  cooldown_counter_ = j.at("cooldown_counter").get<std::int64_t>();
  restored_ = true;
}

}  // namespace nnfit
