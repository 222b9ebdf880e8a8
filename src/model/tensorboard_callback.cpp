// TensorBoard callback: epoch logs -> tfevents scalars through profile's EventFileWriter,
// with the run split and tag names of Keras 3 (keras/src/callbacks/tensorboard.py).
#include "nnfit/model/tensorboard_callback.h"

#include <cmath>
#include <filesystem>

#include "nnfit/model/model.h"
#include "nnfit/profile/event_file_writer.h"
#include "nnfit/profile/monitor.h"

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

void TensorBoard::on_train_begin(std::int64_t /*epochs*/, std::int64_t /*steps_per_epoch*/) {
  in_fit_ = true;
  if (options_.monitor && !monitor_) monitor_ = std::make_unique<profile::Monitor>();
  if (monitor_) monitor_->sample();  // the epoch's CPU figure counts from here
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
  if (monitor_) {
    const profile::MonitorSample m = monitor_->sample();
    profile::EventFileWriter& w = writer(train_, train_dir());
    w.add_scalar("epoch_host_cpu_percent", m.host.cpu_percent, epoch);
    w.add_scalar("epoch_host_ram_used_bytes", static_cast<double>(m.host.ram_used_bytes), epoch);
    for (const profile::GpuSample& g : m.gpus) {
      const std::string gpu = "epoch_gpu" + std::to_string(g.index);
      if (g.utilization_percent >= 0) w.add_scalar(gpu + "_utilization_percent", g.utilization_percent, epoch);
      w.add_scalar(gpu + "_memory_used_bytes", static_cast<double>(g.memory_used_bytes), epoch);
    }
  }
  if (!has_learning_rate && options_.learning_rate != nullptr) {
    const double lr = (*options_.learning_rate)(options_.initial_iteration + iterations_);
    if (!std::isnan(lr)) writer(train_, train_dir()).add_scalar("epoch_learning_rate", lr, epoch);
  }
}

void TensorBoard::on_test_end(const Logs& logs) {
  if (model_ == nullptr || !model_->compiled()) return;  // Keras: only with an optimizer's iterations
  profile::EventFileWriter& w = writer(validation_, validation_dir());
  for (const auto& [key, value] : logs) {
    if (!std::isnan(value)) w.add_scalar("evaluation_" + key + "_vs_iterations", value, model_->iterations());
  }
  if (!in_fit_) {  // a standalone evaluate: no on_train_end will close it
    std::unique_ptr<profile::EventFileWriter> done = std::move(validation_);
    done->close();
  }
}

void TensorBoard::on_train_end() {
  in_fit_ = false;
  // close() reports errors; dropping the writers then lets the next fit() open new files.
  std::unique_ptr<profile::EventFileWriter> train = std::move(train_), validation = std::move(validation_);
  if (train != nullptr) train->close();
  if (validation != nullptr) validation->close();
}

}  // namespace nnfit
