// TensorBoard callback: epoch logs -> tfevents scalars through profile's EventFileWriter,
// with the run split and tag names of Keras 3 (keras/src/callbacks/tensorboard.py).
#include "nnfit/model/tensorboard_callback.h"

#include <algorithm>
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
  if (options_.histogram_freq > 0 && epoch % options_.histogram_freq == 0 && model_ != nullptr) {
    profile::EventFileWriter& w = writer(train_, train_dir());
    for (const auto& layer : model_->graph().layers()) {
      for (Weight* weight : keras_variables(*layer)) {
        const Tensor host = model_->host_view(weight->value);
        std::vector<double> values(static_cast<std::size_t>(host.numel()));
        for (std::size_t i = 0; i < values.size(); ++i) {  // variables are float32; a count may be an integer
          switch (host.dtype()) {
            case DType::f32: values[i] = host.data<float>()[i]; break;
            case DType::f16: values[i] = f16_to_float(host.data<std::uint16_t>()[i]); break;
            case DType::bf16: values[i] = bf16_to_float(host.data<std::uint16_t>()[i]); break;
            case DType::i32: values[i] = host.data<std::int32_t>()[i]; break;
            case DType::i64: values[i] = static_cast<double>(host.data<std::int64_t>()[i]); break;
            case DType::u8:
            case DType::boolean: values[i] = host.data<std::uint8_t>()[i]; break;
          }
        }
        std::string tag = weight->name;
        std::replace(tag.begin(), tag.end(), ':', '_');
        w.add_histogram(tag + "/histogram", values, epoch);
      }
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
