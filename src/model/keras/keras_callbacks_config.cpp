// Keras's serialized callbacks ([{"class_name": "EarlyStopping", "config": {...}}]) →
// nnfit's callbacks, each read against the arguments Keras's constructor takes, so a
// typo or an argument nnfit cannot honour is an error naming the entry and key. Paths
// (filepath, backup_dir, filename) are used as given, relative to the working folder, as
// Keras uses them.
#include "model/keras/keras_json.h"
#include "nnfit/core/error.h"
#include "nnfit/model/checkpoint_callbacks.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/training_callbacks.h"

namespace nnfit {

namespace {

using namespace keras_json;

// save_freq: "epoch" (0) or a positive number of batches.
std::int64_t read_save_freq(const Reader& r, const std::string& p, const json& c) {
  const json* v = value(c, "save_freq");
  if (!v || (v->is_string() && v->get<std::string>() == "epoch")) return 0;
  if (v->is_number_integer() && v->get<std::int64_t>() > 0) return v->get<std::int64_t>();
  r.invalid(p, "\"save_freq\" must be \"epoch\" or a positive number of batches, got " + show(*v));
}

std::optional<double> optional_number(const Reader& r, const std::string& p, const json& c, const char* key) {
  const json* v = value(c, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) r.invalid(p, std::string("\"") + key + "\" must be a number or null, got " + show(*v));
  return v->get<double>();
}

std::unique_ptr<Callback> read_callback(const Reader& r, const std::string& p, const std::string& cls, const json& c) {
  if (cls == "ModelCheckpoint") {
    check_keys(r, p, c, {"filepath", "monitor", "verbose", "save_best_only", "save_weights_only", "mode", "save_freq",
                         "initial_value_threshold", "options"});
    require_null(r, p, c, {"options"});
    ModelCheckpointOptions o;
    o.filepath = get_string(r, p, c, "filepath", std::nullopt);
    o.monitor = get_string(r, p, c, "monitor", o.monitor);
    o.verbose = static_cast<int>(get_int(r, p, c, "verbose", 0));
    o.save_best_only = get_bool(r, p, c, "save_best_only", false);
    o.save_weights_only = get_bool(r, p, c, "save_weights_only", false);
    o.mode = get_string(r, p, c, "mode", o.mode);
    o.save_freq = read_save_freq(r, p, c);
    o.initial_value_threshold = optional_number(r, p, c, "initial_value_threshold");
    return std::make_unique<ModelCheckpoint>(o);
  }
  if (cls == "EarlyStopping") {
    check_keys(r, p, c, {"monitor", "min_delta", "patience", "verbose", "mode", "baseline", "restore_best_weights",
                         "start_from_epoch"});
    EarlyStoppingOptions o;
    o.monitor = get_string(r, p, c, "monitor", o.monitor);
    o.min_delta = get_number(r, p, c, "min_delta", o.min_delta);
    o.patience = get_int(r, p, c, "patience", o.patience);
    o.verbose = static_cast<int>(get_int(r, p, c, "verbose", 0));
    o.mode = get_string(r, p, c, "mode", o.mode);
    o.baseline = optional_number(r, p, c, "baseline");
    o.restore_best_weights = get_bool(r, p, c, "restore_best_weights", false);
    o.start_from_epoch = get_int(r, p, c, "start_from_epoch", 0);
    return std::make_unique<EarlyStopping>(o);
  }
  if (cls == "BackupAndRestore") {
    check_keys(r, p, c, {"backup_dir", "save_freq", "delete_checkpoint", "double_checkpoint", "save_before_preemption"});
    require_value(r, p, c, "double_checkpoint", false);
    require_value(r, p, c, "save_before_preemption", false);
    BackupAndRestoreOptions o;
    o.backup_dir = get_string(r, p, c, "backup_dir", std::nullopt);
    o.save_freq = read_save_freq(r, p, c);
    o.delete_checkpoint = get_bool(r, p, c, "delete_checkpoint", true);
    return std::make_unique<BackupAndRestore>(o);
  }
  if (cls == "ReduceLROnPlateau") {
    check_keys(r, p, c, {"monitor", "factor", "patience", "verbose", "mode", "min_delta", "epsilon", "cooldown", "min_lr"});
    ReduceLROnPlateauOptions o;
    o.monitor = get_string(r, p, c, "monitor", o.monitor);
    o.factor = get_number(r, p, c, "factor", o.factor);
    o.patience = get_int(r, p, c, "patience", o.patience);
    o.verbose = static_cast<int>(get_int(r, p, c, "verbose", 0));
    o.mode = get_string(r, p, c, "mode", o.mode);
    o.min_delta = get_number(r, p, c, "epsilon", get_number(r, p, c, "min_delta", o.min_delta));  // Keras 1's name
    o.cooldown = get_int(r, p, c, "cooldown", o.cooldown);
    o.min_lr = get_number(r, p, c, "min_lr", o.min_lr);
    return std::make_unique<ReduceLROnPlateau>(o);
  }
  if (cls == "CSVLogger") {
    check_keys(r, p, c, {"filename", "separator", "append"});
    return std::make_unique<CSVLogger>(get_string(r, p, c, "filename", std::nullopt), get_string(r, p, c, "separator", ","),
                                       get_bool(r, p, c, "append", false));
  }
  if (cls == "TerminateOnNaN") {
    check_keys(r, p, c, {});
    return std::make_unique<TerminateOnNaN>();
  }
  r.invalid(p, "unknown callback \"" + cls + "\"",
            "supported: ModelCheckpoint, EarlyStopping, BackupAndRestore, ReduceLROnPlateau, CSVLogger, TerminateOnNaN "
            "(progress and TensorBoard are the CLI's own --quiet and --logdir)");
}

}  // namespace

std::vector<std::unique_ptr<Callback>> callbacks_from_keras_json(const std::string& json_text, const std::string& where) {
  const Reader r{where};
  const json list = parse(r, json_text);
  if (!list.is_array()) r.invalid("", "callbacks must be a list, got " + show(list));
  std::vector<std::unique_ptr<Callback>> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = "callbacks[" + std::to_string(i) + "]";
    const json& e = list[i];
    expect_object(r, p, e);
    check_keys(r, p, e, {"module", "class_name", "config", "registered_name"});
    const std::string cls = get_string(r, p, e, "class_name", std::nullopt);
    const json empty = json::object();
    const json* c = value(e, "config");
    if (c) expect_object(r, p + ".config", *c);
    out.push_back(with_path(r, p + " (" + cls + ")", "", [&] { return read_callback(r, p + ".config", cls, c ? *c : empty); }));
  }
  return out;
}

}  // namespace nnfit
