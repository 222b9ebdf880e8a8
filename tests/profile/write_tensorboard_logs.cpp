// Writes TensorBoard logs the way a user's training would, for tensorboard_reads_test.sh:
// trains a tiny MLP for 3 epochs with validation and the TensorBoard callback (weight
// histograms every epoch) into LOG_DIR,
// exports a Chrome trace of ranges placed around the epochs, and prints what TensorBoard
// should find (History, learning rates, file paths) as JSON on stdout.
//
// usage: nnfit_write_tensorboard_logs LOG_DIR
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "nnfit/core/trace.h"
#include "nnfit/model/model.h"
#include "nnfit/model/tensorboard_callback.h"
#include "nnfit/nn/layers.h"
#include "nnfit/profile/chrome_trace.h"

namespace {

// Ranges of its own inside the callbacks. Each stays within its hook: fit wraps every
// callback call in a "callback" range, so a range opened in one hook and closed in a later
// one would cross it and break the nesting the trace must keep.
class EpochRanges final : public nnfit::Callback {
 public:
  void on_train_batch_end(std::int64_t batch, const nnfit::Logs&) override { nnfit::TraceRange r("batch_end", "callback", batch); }
  void on_epoch_end(std::int64_t epoch, const nnfit::Logs&) override { nnfit::TraceRange r("epoch", "fit", epoch); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LOG_DIR\n", argv[0]);
    return 2;
  }
  using namespace nnfit;
  try {
    Sequential model("tb_demo");
    model.set_input_shape(Shape{4});
    model.add(std::make_unique<Dense>("dense", DenseOptions{8, "relu"}));
    model.add(std::make_unique<Dense>("dense_1", DenseOptions{2}));
    CompileOptions co;
    co.optimizer.name = "sgd";
    co.optimizer.learning_rate = std::make_shared<ExponentialDecay>(0.1, 4, 0.5, false);
    co.loss = Loss::from_name("sparse_categorical_crossentropy", true);
    co.metrics = {"accuracy"};
    model.compile(co);
    const std::int64_t n = 64;
    Tensor x = Tensor::zeros(Shape{n, 4}, DType::f32);
    Tensor y = Tensor::zeros(Shape{n}, DType::i32);
    std::mt19937 rng(7);
    for (std::int64_t i = 0; i < n * 4; ++i) x.data<float>()[i] = static_cast<float>(rng() % 100) / 100.0f;
    for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = x.data<float>()[i * 4] > 0.5f;

    TensorBoard tb(argv[1], {.learning_rate = model.compile_options().optimizer.learning_rate, .histogram_freq = 1});
    EpochRanges ranges;
    FitOptions fo;
    fo.epochs = 3;
    fo.batch_size = 16;
    fo.validation_data = std::make_pair(x, y);
    fo.callbacks = {&ranges, &tb};
    trace::start();
    History h = model.fit(x, y, fo);
    trace::stop();
    const std::string trace_path = profile::write_chrome_trace(trace::collect(), argv[1]);

    nlohmann::json out;
    out["event_files"] = tb.event_files();
    out["trace_file"] = trace_path;
    for (std::size_t e = 0; e < h.epochs.size(); ++e) {
      nlohmann::json logs = nlohmann::json::object();
      for (const auto& [k, v] : h.epochs[e]) logs[k] = v;
      out["epochs"].push_back(logs);
      const auto iterations = static_cast<std::int64_t>((e + 1) * 4);  // 64 rows / batch 16
      out["learning_rate"].push_back((*co.optimizer.learning_rate)(iterations));
      out["iterations"].push_back(iterations);  // the steps of the validation's evaluation_* scalars
    }
    // The weights after the last epoch: its histograms' data.
    for (const auto& layer : model.graph().layers()) {
      for (Weight* w : keras_variables(*layer)) {
        const Tensor host = model.host_view(w->value);
        out["weights"][w->name] = std::vector<float>(host.data<float>(), host.data<float>() + host.numel());
      }
    }
    std::printf("%s\n", out.dump(2).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnfit_write_tensorboard_logs: %s\n", e.what());
    return 1;
  }
  return 0;
}
