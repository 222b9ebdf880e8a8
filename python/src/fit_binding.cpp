// fit, evaluate and predict: NumPy arrays read in place, the GIL released while the engine
// runs, Python callbacks called under it, and Ctrl-C as a clean stop.
#include <csignal>
#include <cstring>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <functional>

#include <pybind11/stl.h>

#include "arrays.h"
#include "binding.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/tensorboard_callback.h"

namespace nnfit::python {
namespace {

py::list logs_list(const Logs& logs) {
  py::list out;
  for (const auto& [k, v] : logs) out.append(py::make_tuple(k, v));
  return out;
}

// Calls the hooks of nnfit.keras's callback bridge (a Python object) under the GIL. A
// Python exception is kept and stops training at the next step boundary (through
// `interrupt`); fit raises it once the engine has returned, so it never unwinds the
// engine's frames.
class PythonCallbacks final : public Callback {
 public:
  // The per-batch hooks run only where the bridge asks for them in bridge.batch_hooks (a
  // Python callback overrides one, or a progress bar is redrawn per batch): each costs a
  // call into Python per batch.
  PythonCallbacks(py::object bridge, std::atomic<int>* interrupt) : bridge_(std::move(bridge)), interrupt_(interrupt) {
    const py::object wanted = py::getattr(bridge_, "batch_hooks", py::set());
    const auto wants = [&](const char* hook) { return wanted.contains(hook); };
    train_begin_ = wants("on_train_batch_begin");
    train_end_ = wants("on_train_batch_end");
    test_begin_ = wants("on_test_batch_begin");
    test_end_ = wants("on_test_batch_end");
    predict_begin_ = wants("on_predict_batch_begin");
    predict_end_ = wants("on_predict_batch_end");
  }
  ~PythonCallbacks() override {
    py::gil_scoped_acquire gil;
    bridge_ = py::object();
  }
  void on_train_begin(std::int64_t epochs, std::int64_t steps) override { call("on_train_begin", epochs, steps); }
  void on_epoch_begin(std::int64_t epoch) override { call("on_epoch_begin", epoch); }
  void on_train_batch_begin(std::int64_t batch) override {
    if (train_begin_) call("on_train_batch_begin", batch);
  }
  void on_train_batch_end(std::int64_t batch, const Logs& logs) override {
    if (train_end_) call("on_train_batch_end", batch, logs);
  }
  void on_epoch_end(std::int64_t epoch, const Logs& logs) override { call("on_epoch_end", epoch, logs); }
  void on_train_end() override { call("on_train_end"); }
  void on_test_begin() override { call("on_test_begin"); }
  void on_test_batch_begin(std::int64_t batch) override {
    if (test_begin_) call("on_test_batch_begin", batch);
  }
  void on_test_batch_end(std::int64_t batch, const Logs& logs) override {
    if (test_end_) call("on_test_batch_end", batch, logs);
  }
  void on_test_end(const Logs& logs) override { call("on_test_end", logs); }
  void on_predict_begin() override { call("on_predict_begin"); }
  void on_predict_batch_begin(std::int64_t batch) override {
    if (predict_begin_) call("on_predict_batch_begin", batch);
  }
  void on_predict_batch_end(std::int64_t batch, const std::vector<Tensor>& outputs) override {
    if (predict_end_) call("on_predict_batch_end", batch, outputs);
  }
  void on_predict_end() override { call("on_predict_end"); }
  // The first exception a hook raised, if any.
  std::exception_ptr error() const { return error_; }
  // Thrown through the engine when a hook of evaluate or predict raised (error() has it).
  struct HookFailed : std::exception {};

 private:
  template <typename... Args>
  void call(const char* hook, const Args&... args) {
    if (error_) return;
    py::gil_scoped_acquire gil;
    try {
      bridge_.attr(hook)(convert(args)...);
    } catch (py::error_already_set&) {
      error_ = std::current_exception();
      // fit stops at the next step boundary; evaluate and predict (no interrupt) unwind at
      // once: no training state is mid-way there.
      if (!interrupt_) throw HookFailed{};
      interrupt_->store(-1);
    }
  }
  static py::object convert(std::int64_t v) { return py::int_(v); }
  static py::object convert(const Logs& logs) { return logs_list(logs); }
  static py::object convert(const std::vector<Tensor>& outputs) {  // copies: the views end with the call
    py::list arrays;
    for (const Tensor& t : outputs) arrays.append(to_array(t.clone()));
    return arrays;
  }
  py::object bridge_;
  bool train_begin_ = false, train_end_ = false, test_begin_ = false, test_end_ = false;
  bool predict_begin_ = false, predict_end_ = false;
  std::atomic<int>* interrupt_;
  std::exception_ptr error_;
};

// SIGINT during fit (from the main thread, while Python's default handler is installed): the
// first stops training at the next step (fit then raises KeyboardInterrupt, the model
// usable), a second exits at once, as the CLI does. Python's handler is back when fit returns.
std::atomic<int>* g_interrupt = nullptr;

extern "C" void on_sigint(int sig) {
  if (g_interrupt && g_interrupt->load() == 0) {
    g_interrupt->store(sig);
    return;
  }
  static const char msg[] = "\nnnfit: second interrupt, exiting at once\n";
  [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
  ::_exit(130);
}

class SigintScope {
 public:
  explicit SigintScope(std::atomic<int>* interrupt) {
    py::object threading = py::module_::import("threading");
    if (!threading.attr("current_thread")().is(threading.attr("main_thread")())) return;
    // Only where Python would raise KeyboardInterrupt: a process that ignores SIGINT (started
    // with nohup or in the background) or has its own handler keeps it during fit too.
    py::object signal = py::module_::import("signal");
    if (!signal.attr("getsignal")(SIGINT).is(signal.attr("default_int_handler"))) return;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    g_interrupt = interrupt;
    installed_ = sigaction(SIGINT, &sa, &previous_) == 0;
  }
  ~SigintScope() {
    if (!installed_) return;
    sigaction(SIGINT, &previous_, nullptr);
    g_interrupt = nullptr;
  }
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  bool installed_ = false;
  struct sigaction previous_ {};
};

// Runs `train` (one of Model's fit overloads) with the callbacks, the SIGINT scope and the
// GIL released, and returns History as a dict.
py::dict run_fit(Model& model, FitOptions& o, const py::object& bridge,
                 const std::string& keras_callbacks, const py::object& tensorboard,
                 const std::function<History(const FitOptions&)>& train) {
  std::vector<std::unique_ptr<Callback>> owned;
  if (!keras_callbacks.empty()) owned = callbacks_from_keras_json(keras_callbacks, "callbacks");
  if (!tensorboard.is_none()) {
    // keras.callbacks.TensorBoard: epoch scalars (and the learning rate) to LOG_DIR/train and
    // LOG_DIR/validation, and the profiler's per-step breakdown beside them, as `nnfit
    // train --logdir` writes them (docs/design/profile.md).
    auto tb = tensorboard.cast<py::dict>();
    TensorBoardOptions to;
    to.learning_rate = model.compile_options().optimizer.learning_rate;
    to.initial_iteration = model.iterations();
    to.histogram_freq = tb.contains("histogram_freq") ? tb["histogram_freq"].cast<std::int64_t>() : 0;
    o.log_dir = tb["log_dir"].cast<std::string>();
    o.profile_steps = tb["profile_steps"].cast<std::string>();
    owned.push_back(std::make_unique<TensorBoard>(o.log_dir, to));
  }
  std::atomic<int> interrupt{0};
  o.interrupt = &interrupt;
  std::unique_ptr<PythonCallbacks> python;
  if (!bridge.is_none()) python = std::make_unique<PythonCallbacks>(bridge, &interrupt);
  for (auto& c : owned) o.callbacks.push_back(c.get());
  if (python) o.callbacks.push_back(python.get());
  History history;
  {
    SigintScope sigint(&interrupt);
    py::gil_scoped_release nogil;
    history = train(o);
  }
  if (python && python->error()) std::rethrow_exception(python->error());
  py::list epochs_out;
  for (const Logs& logs : history.epochs) epochs_out.append(logs_list(logs));
  py::dict out;
  out["epochs"] = epochs_out;
  out["notes"] = history.notes;
  out["interrupted"] = history.interrupted;
  out["initial_epoch"] = history.initial_epoch;
  out["autotune"] = history.autotune_summary;
  return out;
}

// Keras's validation_freq (an int, or a list of epochs from 1) and validation_steps.
void set_validation_schedule(FitOptions& o, const py::object& freq, std::int64_t steps) {
  if (py::isinstance<py::int_>(freq)) {
    o.validation_freq = freq.cast<std::int64_t>();
  } else {
    o.validation_epochs = freq.cast<std::vector<std::int64_t>>();
    NNFIT_CHECK(!o.validation_epochs.empty(), InvalidArgument, "validation_freq: an empty list never validates");
  }
  o.validation_steps = steps;
}

// Runs evaluate or predict (`body`, given the options) with the bridge's hooks (none when it
// is None) and keras.callbacks.TensorBoard's settings (evaluate: the evaluation's scalars in
// LOG_DIR/validation, as Keras writes them), the GIL released; a hook's Python exception is
// raised here.
template <typename Body>
auto run_inference(InferenceOptions& o, const py::object& bridge, const py::object& tensorboard, Body&& body) {
  std::unique_ptr<TensorBoard> tb;
  if (!tensorboard.is_none()) {
    tb = std::make_unique<TensorBoard>(tensorboard.cast<py::dict>()["log_dir"].cast<std::string>());
    o.callbacks.push_back(tb.get());
  }
  std::unique_ptr<PythonCallbacks> python;
  if (!bridge.is_none()) {
    python = std::make_unique<PythonCallbacks>(bridge, nullptr);
    o.callbacks.push_back(python.get());
  }
  try {
    py::gil_scoped_release nogil;
    return body(o);
  } catch (const PythonCallbacks::HookFailed&) {
    std::rethrow_exception(python->error());
  }
}

py::dict fit(ModelHandle& h, const py::sequence& x, const py::sequence& y, std::int64_t batch_size, std::int64_t epochs,
             bool shuffle, std::uint64_t seed, const py::object& validation, const py::object& bridge,
             const std::string& keras_callbacks, const py::object& tensorboard,
             const std::map<std::int64_t, double>& class_weight,
             const py::object& sample_weight, std::int64_t initial_epoch, std::int64_t steps_per_epoch,
             std::int64_t validation_batch_size, std::int64_t validation_steps, const py::object& validation_freq) {
  FitOptions o;
  o.validation_batch_size = validation_batch_size;
  set_validation_schedule(o, validation_freq, validation_steps);
  o.epochs = epochs;
  o.steps_per_epoch = steps_per_epoch;
  o.batch_size = batch_size;
  o.shuffle = shuffle;
  o.seed = seed;
  o.class_weight = class_weight;
  o.initial_epoch = initial_epoch;
  if (!sample_weight.is_none()) o.sample_weight = tensor_view(sample_weight, "sample_weight");
  if (py::isinstance<DatasetHandle>(validation)) {
    o.validation_dataset = validation.cast<const DatasetHandle&>().dataset;  // several inputs or outputs
  } else if (!validation.is_none()) {
    auto v = validation.cast<py::tuple>();
    o.validation_data = std::make_pair(tensor_view(v[0], "validation_data x"), tensor_view(v[1], "validation_data y"));
    if (v.size() > 2 && !v[2].is_none()) o.validation_sample_weight = tensor_view(v[2], "validation sample_weight");
  }
  std::vector<Tensor> xs = tensor_views(x, "x"), ys = tensor_views(y, "y");
  return run_fit(h.get(), o, bridge, keras_callbacks, tensorboard, [&](const FitOptions& fo) {
    return xs.size() == 1 && ys.size() == 1 ? h.get().fit(xs[0], ys[0], fo) : h.get().fit(xs, ys, fo);
  });
}

py::dict fit_dataset(ModelHandle& h, const DatasetHandle& train, std::int64_t epochs, std::uint64_t seed,
                     const py::object& validation, const py::object& bridge,
                     const std::string& keras_callbacks, const py::object& tensorboard,
                     const std::map<std::int64_t, double>& class_weight,
                     std::int64_t initial_epoch, std::int64_t steps_per_epoch, std::int64_t validation_steps,
                     const py::object& validation_freq) {
  FitOptions o;
  set_validation_schedule(o, validation_freq, validation_steps);
  o.epochs = epochs;
  o.steps_per_epoch = steps_per_epoch;
  o.seed = seed;
  o.class_weight = class_weight;
  o.initial_epoch = initial_epoch;
  if (!validation.is_none()) o.validation_dataset = validation.cast<const DatasetHandle&>().dataset;
  return run_fit(h.get(), o, bridge, keras_callbacks, tensorboard,
                 [&](const FitOptions& fo) { return h.get().fit(train.dataset, fo); });
}

}  // namespace

void define_fit(py::class_<ModelHandle>& cls) {
  cls.def("fit_dataset", &fit_dataset, py::arg("dataset"), py::arg("epochs"), py::arg("seed"), py::arg("validation"),
          py::arg("bridge"), py::arg("keras_callbacks"), py::arg("tensorboard"),
          py::arg("class_weight"), py::arg("initial_epoch"), py::arg("steps_per_epoch") = 0,
          py::arg("validation_steps") = 0, py::arg("validation_freq") = 1)
      .def(
          "evaluate_dataset",
          [](ModelHandle& h, const DatasetHandle& d, std::int64_t steps, const py::object& bridge,
             const py::object& tensorboard) {
            InferenceOptions o;
            o.steps = steps;
            return logs_list(run_inference(o, bridge, tensorboard, [&](const InferenceOptions& io) {
              return h.get().evaluate(d.dataset, io);
            }));
          },
          py::arg("dataset"), py::arg("steps") = 0, py::arg("bridge") = py::none(),
          py::arg("tensorboard") = py::none())
      .def("fit", &fit, py::arg("x"), py::arg("y"), py::arg("batch_size"), py::arg("epochs"), py::arg("shuffle"),
          py::arg("seed"), py::arg("validation"), py::arg("bridge"), py::arg("keras_callbacks"),
          py::arg("tensorboard"), py::arg("class_weight"), py::arg("sample_weight"), py::arg("initial_epoch"),
          py::arg("steps_per_epoch") = 0, py::arg("validation_batch_size") = 0, py::arg("validation_steps") = 0,
          py::arg("validation_freq") = 1)
      .def(
          "evaluate",
          [](ModelHandle& h, const py::sequence& x, const py::sequence& y, std::int64_t batch_size,
             const py::object& sample_weight, std::int64_t steps, const py::object& bridge,
             const py::object& tensorboard) {
            std::vector<Tensor> xs = tensor_views(x, "x"), ys = tensor_views(y, "y");
            InferenceOptions o;
            o.batch_size = batch_size;
            o.steps = steps;
            if (!sample_weight.is_none()) o.sample_weight = tensor_view(sample_weight, "sample_weight");
            return logs_list(run_inference(o, bridge, tensorboard, [&](const InferenceOptions& io) {
              return h.get().evaluate(xs, ys, io);
            }));
          },
          py::arg("x"), py::arg("y"), py::arg("batch_size"), py::arg("sample_weight") = py::none(),
          py::arg("steps") = 0, py::arg("bridge") = py::none(), py::arg("tensorboard") = py::none())
      .def(
          "predict",
          [](ModelHandle& h, const py::sequence& x, std::int64_t batch_size, std::int64_t steps,
             const py::object& bridge, bool training) {
            std::vector<Tensor> xs = tensor_views(x, "x");
            InferenceOptions o;
            o.batch_size = batch_size;
            o.steps = steps;
            o.training = training;
            const std::vector<Tensor> out =
                run_inference(o, bridge, py::none(), [&](const InferenceOptions& io) { return h.get().predict(xs, io); });
            py::list arrays;
            for (const Tensor& t : out) arrays.append(to_array(t));
            return arrays;
          },
          py::arg("x"), py::arg("batch_size"), py::arg("steps") = 0, py::arg("bridge") = py::none(),
          py::arg("training") = false);
}

}  // namespace nnfit::python
