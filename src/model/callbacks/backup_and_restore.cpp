// BackupAndRestore. Note [One-file backups]: the weights, optimizer state and the resume
// metadata (epoch, batch, the partly done epoch's sums, other callbacks' state) live in one
// file, BACKUP_DIR/latest.weights.h5 (Keras 3's layout plus a root attribute), replaced
// atomically; so no kill can pair new weights with old metadata. training_metadata.json
// beside it says the same for people and for Keras. A backup is taken once every callback
// has seen the epoch's end (at the next epoch's begin, or at the end of training when the
// backup is kept), so EarlyStopping's update of that epoch is part of it. A callback's
// tensors (EarlyStopping's best weights) are datasets under /nnfit_callbacks/<index>.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <typeinfo>

#include "model/keras/keras_weights.h"
#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"
#include "nnfit/io/hdf5_file.h"
#include "nnfit/model/checkpoint_callbacks.h"
#include "nnfit/model/model.h"

namespace nnfit {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMetadataAttr = "nnfit_training_metadata";
// A callback's tensors: datasets 0, 1, ... in the group of its index.
std::string state_group(std::size_t index) { return "/nnfit_callbacks/" + std::to_string(index); }

std::string callback_key(std::size_t index, const Callback& cb) {
  return std::to_string(index) + ":" + typeid(cb).name();
}

}  // namespace

BackupAndRestore::BackupAndRestore(BackupAndRestoreOptions options) : options_(std::move(options)) {
  NNFIT_CHECK(!options_.backup_dir.empty(), InvalidArgument, "BackupAndRestore needs a backup_dir");
  NNFIT_CHECK(options_.save_freq >= 0, InvalidArgument, "BackupAndRestore: save_freq must be \"epoch\" or a ",
              "positive number of batches, got ", options_.save_freq);
}

void BackupAndRestore::on_train_begin(std::int64_t, std::int64_t) {
  restored_epoch_ = restored_step_ = 0;
  pending_epoch_.reset();
  // A kill during a write leaves a temporary file (never the backup itself half-written).
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.backup_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(".latest.weights.h5.tmp", 0) == 0 || name.rfind(".training_metadata.json.tmp", 0) == 0) {
      fs::remove(entry.path(), ec);
    }
  }
  const std::string weights = (fs::path(options_.backup_dir) / "latest.weights.h5").string();
  std::error_code exists_ec;  // a name too long for the system is "no backup", not a throw
  if (!fs::exists(weights, exists_ec)) return;
  const io::H5File f = io::H5File::open(weights);
  const std::optional<std::string> text = f.string_attr("/", kMetadataAttr);
  if (!text) throw DataError(weights, -1, "a backup without nnfit's training metadata", "remove the backup dir to start afresh");
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(weights, -1, std::string("unreadable training metadata: ") + e.what());
  }
  // Counts are whole and >= 0: a float (1e308) or a negative count is a damaged backup,
  // never converted (a double past int64 is undefined behaviour to cast).
  const auto count = [&](const char* key, bool required) -> std::int64_t {
    const auto it = meta.is_object() ? meta.find(key) : meta.end();
    if (it == meta.end() && !required) return 0;
    const bool ok = it != meta.end() && it->is_number_integer() &&
                    (it->is_number_unsigned() ? it->get<std::uint64_t>() <= (std::uint64_t{1} << 53)
                                              : it->get<std::int64_t>() >= 0);
    if (!ok) {
      throw DataError(weights, -1,
                      std::string("training metadata \"") + key + "\" is " +
                          (it == meta.end() ? std::string("missing") : it->dump().substr(0, 40)) +
                          ", not a count >= 0",
                      "the backup is damaged; remove the backup dir to start afresh");
    }
    return it->get<std::int64_t>();
  };
  restored_epoch_ = count("epoch", true);
  restored_step_ = count("batch", true);
  (void)count("iterations", false);
  keras_files::read_keras3_weights(f, *model_, weights, true);
  model_->set_resume_point(restored_epoch_, restored_step_, meta.value("progress", std::string()));
  const auto& callbacks = model_->fit_callbacks();
  const nlohmann::json states = meta.value("callbacks", nlohmann::json::object());
  for (std::size_t i = 0; i < callbacks.size(); ++i) {
    const std::string key = callback_key(i, *callbacks[i]);
    if (callbacks[i] == this || !states.contains(key)) continue;
    CallbackState state{states[key].get<std::string>(), {}};
    for (std::size_t j = 0; f.is_dataset(state_group(i) + "/" + std::to_string(j)); ++j) {
      state.tensors.push_back(f.read(state_group(i) + "/" + std::to_string(j)));
    }
    callbacks[i]->restore_state(std::move(state));
  }
}

void BackupAndRestore::on_epoch_begin(std::int64_t epoch) {
  if (pending_epoch_) backup(*pending_epoch_, 0, false);
  pending_epoch_.reset();
  epoch_ = epoch;
  batches_since_ = 0;
}

void BackupAndRestore::on_train_batch_end(std::int64_t batch, const Logs&) {
  if (options_.save_freq <= 0) return;
  if (++batches_since_ >= options_.save_freq) {
    batches_since_ = 0;
    backup(epoch_, batch + 1, true);
  }
}

void BackupAndRestore::on_epoch_end(std::int64_t epoch, const Logs&) { pending_epoch_ = epoch + 1; }

void BackupAndRestore::on_train_end() {
  if (model_->interrupted()) {
    // Stopped by FitOptions::interrupt (a signal): keep a backup of exactly this step, so
    // the restarted run goes on from it, whatever delete_checkpoint says.
    const std::int64_t epoch = model_->interrupted_epoch(), step = model_->interrupted_step();
    backup(epoch, step, step > 0);
    pending_epoch_.reset();
    return;
  }
  if (options_.delete_checkpoint) {
    std::error_code ec;
    fs::remove_all(options_.backup_dir, ec);
  } else if (pending_epoch_) {
    backup(*pending_epoch_, 0, false);
  }
  pending_epoch_.reset();
}

void BackupAndRestore::backup(std::int64_t epoch, std::int64_t batch, bool mid_epoch) {
  std::error_code made;
  fs::create_directories(options_.backup_dir, made);
  if (made) {
    throw DataError(options_.backup_dir, -1, "cannot create the backup dir: " + made.message(),
                    "give BackupAndRestore a backup_dir that can be created and written");
  }
  nlohmann::json meta = {{"epoch", epoch}, {"batch", batch}, {"iterations", model_->iterations()}};
  if (mid_epoch) meta["progress"] = model_->training_progress();
  nlohmann::json states = nlohmann::json::object();
  const auto& callbacks = model_->fit_callbacks();
  std::vector<std::pair<std::size_t, std::vector<Tensor>>> tensors;
  for (std::size_t i = 0; i < callbacks.size(); ++i) {
    if (callbacks[i] == this) continue;
    CallbackState s = callbacks[i]->state();
    if (!s.json.empty()) states[callback_key(i, *callbacks[i])] = s.json;
    if (!s.tensors.empty()) tensors.emplace_back(i, std::move(s.tensors));
  }
  meta["callbacks"] = states;
  const fs::path dir(options_.backup_dir);
  io::write_file_atomically((dir / "latest.weights.h5").string(), [&](const std::string& tmp) {
    io::H5File f = io::H5File::create(tmp);
    keras_files::write_keras3_weights(f, *model_);
    for (const auto& [index, list] : tensors) {
      f.create_group(state_group(index));
      for (std::size_t j = 0; j < list.size(); ++j) f.write(state_group(index) + "/" + std::to_string(j), list[j]);
    }
    f.set_string_attr("/", kMetadataAttr, meta.dump());
    f.close();
  });
  io::write_bytes_atomically((dir / "training_metadata.json").string(),
                             nlohmann::json{{"epoch", epoch}, {"batch", batch}}.dump() + "\n");
}

}  // namespace nnfit
