// TensorBoard callback: epoch logs -> tfevents scalars through profile's EventFileWriter,
// with the run split and tag names of Keras 3 (keras/src/callbacks/tensorboard.py).
#include "nnfit/model/tensorboard_callback.h"

#include <cmath>
#include <filesystem>

#include "nnfit/profile/event_file_writer.h"

namespace nnfit {

namespace {
constexpr std::string_view kValPrefix = "val_";
}

TensorBoard::TensorBoard(std::string log_dir, TensorBoardOptions options)
    : log_dir_(std::move(log_dir)), options_(std::move(options)) {}

TensorBoard::~TensorBoard() = default;

std::string TensorBoard::train_dir() const { return (std::filesystem::path(log_dir_) / "train").string(); }
std::string TensorBoard::validation_dir() const { return (std::filesystem::path(log_dir_) / "validation").string(); }

profile::EventFileWriter& TensorBoard::writer(std::unique_ptr<profile::EventFileWriter>& w, const std::string& dir) {
  if (w == nullptr) {
    w = std::make_unique<profile::EventFileWriter>(dir);
    event_files_.push_back(w->path());
  }
  return *w;
}

void TensorBoard::on_train_batch_end(std::int64_t /*batch*/, const Logs& /*logs*/) { ++iterations_; }

void TensorBoard::on_epoch_end(std::int64_t epoch, const Logs& logs) {
  bool has_learning_rate = false;
  for (const auto& [key, value] : logs) {
    if (key == "learning_rate") has_learning_rate = true;
    if (std::isnan(value)) continue;
    if (key.starts_with(kValPrefix)) {
      writer(validation_, validation_dir()).add_scalar("epoch_" + key.substr(kValPrefix.size()), value, epoch);
    } else {
      writer(train_, train_dir()).add_scalar("epoch_" + key, value, epoch);
    }
  }
  if (!has_learning_rate && options_.learning_rate != nullptr) {
    const double lr = (*options_.learning_rate)(options_.initial_iteration + iterations_);
    if (!std::isnan(lr)) writer(train_, train_dir()).add_scalar("epoch_learning_rate", lr, epoch);
  }
}

void TensorBoard::on_train_end() {
  // close() reports errors; dropping the writers then lets the next fit() open new files.
  std::unique_ptr<profile::EventFileWriter> train = std::move(train_), validation = std::move(validation_);
  if (train != nullptr) train->close();
  if (validation != nullptr) validation->close();
}

}  // namespace nnfit
