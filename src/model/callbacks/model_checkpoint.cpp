// ModelCheckpoint with Keras 3's rules: save every epoch or every save_freq batches; with
// save_best_only, only when the monitored value improves on the best (initial_value_threshold
// starts it); the filepath is a Python format template of epoch, batch and the logs.
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "nnfit/core/error.h"
#include "nnfit/model/checkpoint_callbacks.h"
#include "nnfit/model/saving.h"
#include "nnfit/model/training_callbacks.h"

namespace nnfit {

namespace {

// One Python format field: value with spec "[0][width][.precision][type]".
std::string format_field(const std::string& field, const std::string& spec, double value, bool integral) {
  std::size_t i = 0;
  std::string flags;
  if (i < spec.size() && spec[i] == '0') flags = "0", ++i;
  std::string width;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) width += spec[i++];
  std::string precision;
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) precision += spec[i++];
    if (precision.empty()) throw InvalidArgument("checkpoint filepath: bad format spec \"" + spec + "\" for {" + field + "}");
  }
  char type = i < spec.size() ? spec[i++] : (integral ? 'd' : 'g');
  if (i != spec.size() || std::string("dfeg").find(type) == std::string::npos) {
    throw InvalidArgument("checkpoint filepath: unsupported format spec \"" + spec + "\" for {" + field + "}",
                          "use specs such as 02d, .2f, .4e");
  }
  char buf[128];
  if (type == 'd') {
    std::snprintf(buf, sizeof buf, ("%" + flags + width + "lld").c_str(), static_cast<long long>(std::llround(value)));
  } else {
    const std::string f = "%" + flags + width + (precision.empty() ? "" : "." + precision) + std::string(1, type);
    std::snprintf(buf, sizeof buf, f.c_str(), value);
  }
  return buf;
}

}  // namespace

std::string format_checkpoint_path(const std::string& pattern, std::int64_t epoch, std::optional<std::int64_t> batch,
                                   const Logs& logs) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    if (c == '}' && i + 1 < pattern.size() && pattern[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    const std::size_t close = pattern.find('}', i);
    if (close == std::string::npos) throw InvalidArgument("checkpoint filepath \"" + pattern + "\": a '{' is not closed");
    const std::string body = pattern.substr(i + 1, close - i - 1);
    const std::size_t colon = body.find(':');
    const std::string field = body.substr(0, colon), spec = colon == std::string::npos ? "" : body.substr(colon + 1);
    if (field == "epoch") {
      out += format_field(field, spec, static_cast<double>(epoch + 1), true);
    } else if (field == "batch" && batch) {
      out += format_field(field, spec, static_cast<double>(*batch + 1), true);
    } else if (const std::optional<double> v = find_log(logs, field)) {
      out += format_field(field, spec, *v, false);
    } else {
      throw InvalidArgument("checkpoint filepath \"" + pattern + "\": no value for {" + field + "} in the logs",
                            "fields: epoch, batch (with save_freq), and the logged metrics such as loss, val_loss");
    }
    i = close;
  }
  return out;
}

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options, std::FILE* out)
    : options_(std::move(options)),
      out_(out),
      maximize_(options_.mode == "max" ||
                (options_.mode == "auto" && options_.monitor.find("acc") != std::string::npos) ||
                (options_.mode == "auto" && options_.monitor.rfind("fmeasure", 0) == 0)) {
  NNFIT_CHECK(!options_.filepath.empty(), InvalidArgument, "ModelCheckpoint needs a filepath");
  NNFIT_CHECK(options_.mode == "auto" || options_.mode == "min" || options_.mode == "max", InvalidArgument,
              "ModelCheckpoint: mode must be \"auto\", \"min\" or \"max\", got \"", options_.mode, "\"");
  NNFIT_CHECK(options_.save_freq >= 0, InvalidArgument, "ModelCheckpoint: save_freq must be \"epoch\" or a positive ",
              "number of batches, got ", options_.save_freq);
  if (options_.save_weights_only) {
    NNFIT_CHECK(options_.filepath.ends_with(".weights.h5"), InvalidArgument, "ModelCheckpoint: with ",
                "save_weights_only the filepath must end in .weights.h5, got \"", options_.filepath, "\"");
  } else {
    NNFIT_CHECK(options_.filepath.ends_with(".keras") || options_.filepath.ends_with(".h5"), InvalidArgument,
                "ModelCheckpoint: the filepath must end in .keras (or .h5), got \"", options_.filepath, "\"");
  }
  best_ = options_.initial_value_threshold;
}

void ModelCheckpoint::on_train_begin(std::int64_t, std::int64_t) { batches_since_save_ = 0; }

void ModelCheckpoint::on_epoch_begin(std::int64_t epoch) { epoch_ = epoch; }

void ModelCheckpoint::on_train_batch_end(std::int64_t batch, const Logs& logs) {
  if (options_.save_freq <= 0) return;
  if (++batches_since_save_ >= options_.save_freq) {
    batches_since_save_ = 0;
    save(epoch_, batch, logs);
  }
}

void ModelCheckpoint::on_epoch_end(std::int64_t epoch, const Logs& logs) {
  if (options_.save_freq == 0) save(epoch, std::nullopt, logs);
}

void ModelCheckpoint::save(std::int64_t epoch, std::optional<std::int64_t> batch, const Logs& logs) {
  const std::string path = format_checkpoint_path(options_.filepath, epoch, batch, logs);
  if (options_.save_best_only) {
    const std::optional<double> current = find_log(logs, options_.monitor);
    if (!current) {
      std::fprintf(out_, "Can save best model only with %s available, skipping.\n", options_.monitor.c_str());
      return;
    }
    const bool better = !best_ || (maximize_ ? *current > *best_ : *current < *best_);
    if (!better) {
      if (options_.verbose > 0) {
        std::fprintf(out_, "\nEpoch %lld: %s did not improve from %.5f\n", static_cast<long long>(epoch + 1),
                     options_.monitor.c_str(), *best_);
      }
      return;
    }
    if (options_.verbose > 0) {
      std::fprintf(out_, "\nEpoch %lld: %s improved from %.5f to %.5f, saving model to %s\n",
                   static_cast<long long>(epoch + 1), options_.monitor.c_str(),
                   best_ ? *best_ : (maximize_ ? -INFINITY : INFINITY), *current, path.c_str());
    }
    best_ = *current;
  } else if (options_.verbose > 0) {
    std::fprintf(out_, "\nEpoch %lld: saving model to %s\n", static_cast<long long>(epoch + 1), path.c_str());
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  if (options_.save_weights_only) {
    save_weights(*model_, path);
  } else {
    save_model(*model_, path);
  }
}

CallbackState ModelCheckpoint::state() const {
  return {nlohmann::json{{"best", best_ ? nlohmann::json(*best_) : nlohmann::json(nullptr)}}.dump(), {}};
}

void ModelCheckpoint::restore_state(CallbackState state) {
  const nlohmann::json j = nlohmann::json::parse(state.json);
  best_ = j.at("best").is_null() ? std::nullopt : std::optional<double>(j.at("best").get<double>());
}

}  // namespace nnfit
