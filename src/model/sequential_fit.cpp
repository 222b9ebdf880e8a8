// Sequential's loops: fit (from tensors or from a Dataset), evaluate and predict. Each
// step stages a batch into the inputs of the program planned for its size and runs it;
// the programs were planned before the first step where the batch sizes are known.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "model/sequential_impl.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"
#include "nnfit/data/in_memory_dataset.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/profile/chrome_trace.h"
#include "nnfit/profile/xplane.h"
#include "nnfit/profile/step_log.h"

namespace nnfit {

namespace {

// Writes n samples of targets y into dst in the dtype and shape the loss wants (`want`,
// whose first axis is the batch): class ids -> int32, else float32. With classes > 0,
// class ids must lie in [0, classes).
void convert_targets(const Tensor& y, const TensorDesc& want, std::int64_t n, void* dst, std::int64_t classes = 0) {
  NNFIT_CHECK(y.shape().rank() >= 1 && y.shape()[0] == n, InvalidArgument, "targets have shape ",
              y.shape().to_string(), " but the inputs have ", n, " samples");
  const std::int64_t per = want.shape.rank() > 0 && want.shape[0] > 0 ? want.shape.numel() / want.shape[0] : 1;
  NNFIT_CHECK(y.numel() == n * per, InvalidArgument, "targets of shape ", y.shape().to_string(),
              " do not match the model output ", Shape(want.shape).to_string(),
              want.dtype == DType::i32 ? " (sparse losses want one class id per sample)" : "");
  const std::int64_t total = n * per;
  auto convert = [&](auto read) {
    for (std::int64_t i = 0; i < total; ++i) {
      double v = read(i);
      if (want.dtype == DType::i32) {
        NNFIT_CHECK(v == std::floor(v), InvalidArgument, "class id ", v, " at row ", i, " is not an integer");
        NNFIT_CHECK(classes <= 0 || (v >= 0 && v < static_cast<double>(classes)), InvalidArgument, "class id ", v,
                    " at row ", i, " is outside [0, ", classes, "): the model's output has ", classes, " classes");
        static_cast<std::int32_t*>(dst)[i] = static_cast<std::int32_t>(v);
      } else {
        static_cast<float*>(dst)[i] = static_cast<float>(v);
      }
    }
  };
  switch (y.dtype()) {
    case DType::f32: convert([&](std::int64_t i) { return static_cast<double>(y.data<float>()[i]); }); break;
    case DType::i32: convert([&](std::int64_t i) { return static_cast<double>(y.data<std::int32_t>()[i]); }); break;
    case DType::i64: convert([&](std::int64_t i) { return static_cast<double>(y.data<std::int64_t>()[i]); }); break;
    case DType::u8: convert([&](std::int64_t i) { return static_cast<double>(y.data<std::uint8_t>()[i]); }); break;
    default: throw InvalidArgument("targets of dtype " + std::string(dtype_name(y.dtype())) + " are not supported");
  }
}

// Targets for all n samples in a fresh tensor (the in-memory path converts once).
Tensor prepare_targets(const Tensor& y, const TensorDesc& want, std::int64_t n) {
  std::vector<std::int64_t> dims{n};
  dims.insert(dims.end(), want.shape.dims().begin() + 1, want.shape.dims().end());
  Tensor out = Tensor::zeros(Shape(dims), want.dtype);
  convert_targets(y, TensorDesc{Shape(dims), want.dtype}, n, out.raw());
  return out;
}

Tensor prepare_inputs(const Tensor& x, const Shape& input_shape) {
  NNFIT_CHECK(x.dtype() == DType::f32, InvalidArgument, "inputs must be float32, got ", dtype_name(x.dtype()),
              "; convert them first (images: scale uint8 by 1/255)");
  NNFIT_CHECK(x.shape().rank() >= 1, InvalidArgument, "inputs need a batch axis");
  std::int64_t n = x.shape()[0];
  NNFIT_CHECK(x.numel() == n * input_shape.numel(), InvalidArgument, "inputs of shape ", x.shape().to_string(),
              " do not match the model's input shape ", input_shape.to_string());
  std::vector<std::int64_t> dims{n};
  dims.insert(dims.end(), input_shape.dims().begin(), input_shape.dims().end());
  return x.reshape(Shape(dims));
}

TensorDesc one_prediction(const Shape& output_shape) {
  std::vector<std::int64_t> od{1};
  od.insert(od.end(), output_shape.dims().begin(), output_shape.dims().end());
  return TensorDesc{Shape(od), DType::f32};
}

std::vector<Metric> make_metrics(const CompileOptions& co, const TensorDesc& pred1) {
  std::vector<Metric> metrics;
  for (const std::string& m : co.metrics) metrics.emplace_back(m, co.loss, pred1);
  return metrics;
}

// Inputs reshaped to the model's input and targets in the loss's dtype: what the
// in-memory fit and evaluate start from.
struct PreparedData {
  Tensor x, y;
  std::int64_t n = 0;
};

PreparedData prepare_data(const Tensor& x_in, const Tensor& y_in, const Shape& input_shape, const Shape& output_shape,
                          const CompileOptions& co, const char* empty_message) {
  PreparedData d;
  d.x = prepare_inputs(x_in, input_shape);
  d.n = d.x.shape()[0];
  NNFIT_CHECK(d.n > 0, InvalidArgument, empty_message);
  d.y = prepare_targets(y_in, co.loss.target_desc(one_prediction(output_shape)), d.n);
  return d;
}


// Note [Step breakdown]: with a log dir, fit times each step in parts that do not overlap:
// the wait in the feed's next() (input), the program's kernels split by phase (the
// Program reads the clock once per kernel; Note [Step phases] in program.cpp) and the
// callbacks. h2d is 0 on CPU (the program reads the batch where the pipeline made it)
// and allreduce 0 until dist/ lands. Lines are buffered and written at each epoch end,
// with ops.json (per-node kernel time and FLOPs, for the compute-bound evidence of
// `nnfit profile`) and pipeline.json (the pipeline's measure() points).
struct ProfileFiles {
  std::string steps, ops, pipeline;
  static ProfileFiles open(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
      throw DataError(dir, -1, "cannot create the log directory" + (ec ? ": " + ec.message() : std::string()));
    }
    return {dir + "/steps.jsonl", dir + "/ops.json", dir + "/pipeline.json"};
  }
};

struct TimedProgram {
  Program* program = nullptr;
  std::int64_t runs = 0;
  bool ours = false;  // fit turned its timing on (NNFIT_KERNEL_TIMES may have done it)
};

std::int64_t to_us(double seconds) { return static_cast<std::int64_t>(seconds * 1e6 + 0.5); }

// Multiply-adds x 2 of the ops whose cost is their arithmetic (matmul, convolution and
// their gradients), from the shapes; 0 for the others (bandwidth-bound elementwise ops).
double node_flops(const Graph& g, const Node& n) {
  auto desc = [&](int v) -> const Shape& { return g.desc(v).shape; };
  if ((n.op == "matmul" || n.op == "fused_matmul") && n.inputs.size() >= 2) {
    const Shape& a = desc(n.inputs[0]);
    if (a.rank() < 2) return 0;
    const std::int64_t k = n.attrs.i_or("transpose_a", 0) ? a.dim(-2) : a.dim(-1);
    return 2.0 * static_cast<double>(desc(n.outputs[0]).numel()) * static_cast<double>(k);
  }
  if ((n.op == "conv2d" || n.op == "fused_conv2d") && n.inputs.size() >= 2) {
    const Shape& w = desc(n.inputs[1]);  // HWIO
    if (w.rank() != 4) return 0;
    return 2.0 * static_cast<double>(desc(n.outputs[0]).numel()) * static_cast<double>(w[0] * w[1] * w[2]);
  }
  if (n.op == "conv2d_backprop_input" && n.inputs.size() >= 2) {  // (dy, kernel)
    const Shape& w = desc(n.inputs[1]);
    if (w.rank() != 4) return 0;
    return 2.0 * static_cast<double>(desc(n.inputs[0]).numel()) * static_cast<double>(w[0] * w[1] * w[2]);
  }
  if (n.op == "conv2d_backprop_filter" && n.inputs.size() >= 2) {  // (x, dy) -> dkernel HWIO
    const Shape& w = desc(n.outputs[0]);
    if (w.rank() != 4) return 0;
    return 2.0 * static_cast<double>(desc(n.inputs[1]).numel()) * static_cast<double>(w[0] * w[1] * w[2]);
  }
  return 0;
}

// Writes `text` to `path` through `path.tmp` and a rename (a reader never sees half a file).
void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw DataError(tmp, -1, "cannot open for writing");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw DataError(tmp, -1, "write failed");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw DataError(path, -1, "cannot rename " + tmp + " onto it");
}

const char* phase_name(StepPhase p) {
  return p == StepPhase::forward ? "forward" : p == StepPhase::backward ? "backward" : "update";
}

// LOG_DIR/ops.json: every node of the timed training programs, summed over programs by
// name (a partial last batch has its own program); docs/cli.md describes the keys.
void write_ops_json(const std::string& path, const std::vector<TimedProgram>& timed, int threads,
                    const std::string& device) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  std::map<std::string, std::size_t> index;
  std::int64_t steps = 0;
  for (const TimedProgram& tp : timed) {
    steps += tp.runs;
    const Program& prog = *tp.program;
    for (std::size_t i = 0; i < prog.steps().size(); ++i) {
      const PlannedStep& st = prog.steps()[i];
      const Node& node = prog.graph().node(st.node);
      auto [it, added] = index.emplace(node.name, ops.size());
      if (added) {
        ops.push_back({{"name", node.name}, {"op", node.op}, {"impl", st.impl},
                       {"phase", phase_name(prog.phase(i))}, {"calls", 0}, {"seconds", 0.0}, {"flops", 0.0}});
      }
      nlohmann::ordered_json& o = ops[it->second];
      o["calls"] = o["calls"].get<std::int64_t>() + tp.runs;
      o["seconds"] = o["seconds"].get<double>() + prog.step_seconds()[i];
      o["flops"] = o["flops"].get<double>() + node_flops(prog.graph(), node) * static_cast<double>(tp.runs);
    }
  }
  nlohmann::ordered_json doc = {{"threads", threads}, {"device", device}, {"steps", steps}, {"ops", ops}};
  write_file_atomically(path, doc.dump(1) + "\n");
}

// LOG_DIR/pipeline.json: the training pipeline's measure() points after `epoch`.
void write_pipeline_json(const std::string& path,
                         const std::vector<std::pair<std::string, std::shared_ptr<data::StageStats>>>& stages,
                         std::int64_t epoch) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [name, st] : stages) {
    if (!st) continue;
    list.push_back({{"name", name},
                    {"elements", st->elements.load()},
                    {"elements_per_s", st->elements_per_second()},
                    {"next_seconds", static_cast<double>(st->wait_ns.load()) * 1e-9}});
  }
  nlohmann::ordered_json doc = {{"epochs", epoch + 1}, {"stages", list}};
  write_file_atomically(path, doc.dump(1) + "\n");
}

}  // namespace

// How the epoch loop gets its batches: begin(epoch) starts a pass; next(rows) stages the
// next batch into its program's inputs and returns that entry and its rows (nullptr at
// the end of the pass). The loop counts the time next() takes as input wait.
struct Sequential::EpochFeed {
  std::function<void(std::int64_t epoch)> begin;
  std::function<Entry*(std::int64_t& rows)> next;
};

Sequential::Entry& Sequential::stage_element(const data::Element& element, bool training, std::int64_t index) {
  const char* what = training ? "training" : "validation";
  NNFIT_CHECK(element.size() >= 2, InvalidArgument, what, " batch ", index + 1, " has ", element.size(),
              " component(s); fit and evaluate need (x, y)");
  const Tensor& x = element[0];
  const Tensor& y = element[1];
  NNFIT_CHECK(x.dtype() == DType::f32, InvalidArgument, what, " batch ", index + 1, ": inputs are ",
              dtype_name(x.dtype()), ", the model takes float32; add a map that converts them (normalize, ",
              "convert_image_dtype or cast)");
  NNFIT_CHECK(x.shape() != input_shape_ && x.shape().rank() >= 1, InvalidArgument, what, " batch ", index + 1,
              ": inputs of shape ", x.shape().to_string(), " are single samples; batch the dataset first");
  // Like fit(x, y), any layout with the model's per-sample size is taken ([B, 28, 28] for
  // a [28, 28, 1] input).
  const std::int64_t rows = x.shape()[0];
  NNFIT_CHECK(rows > 0 && x.numel() == rows * input_shape_.numel(), InvalidArgument, what, " batch ", index + 1,
              ": inputs of shape ", x.shape().to_string(), " do not match the model's input shape ",
              input_shape_.to_string(), " per sample");
  Entry& e = training ? training_entry(rows) : entry(false, rows);
  // The batch is read where the pipeline made it; the caller keeps `element` alive
  // through the step.
  e.set_x(x.raw());
  if (e.y >= 0) {
    try {
      const Shape out = output_shape();
      convert_targets(y, e.program.graph().desc(e.y), rows, e.y_data(), out.rank() > 0 ? out.dim(-1) : 0);
    } catch (const InvalidArgument& err) {
      throw InvalidArgument(std::string(what) + " batch " + std::to_string(index + 1) + ": " + err.what());
    }
  }
  return e;
}

History Sequential::train_loop(const FitOptions& options, std::int64_t steps_per_epoch, EpochFeed& feed,
                               data::Autotuner* validation_tuner) {
  NNFIT_CHECK(!(options.validation_data && options.validation_dataset), InvalidArgument,
              "give validation_data or validation_dataset, not both");
  NNFIT_CHECK(options.profile_steps.empty() || !options.log_dir.empty(), InvalidArgument,
              "profile_steps \"", options.profile_steps, "\" needs a log_dir to write the trace to");
  std::vector<Metric> metrics = make_metrics(compile_options_, one_prediction(output_shape()));
  const bool kernel_times = env_flag_enabled("NNFIT_KERNEL_TIMES");
  const std::int64_t timed_batch = options.batch_size;
  if (kernel_times) entry(true, timed_batch).program.set_timing(true);
  std::int64_t timed_steps = 0;

  // Profiling (Note [Step breakdown]): with a log dir every step's parts go to steps.jsonl
  // and the training programs time their kernels; profile_steps brackets a trace session.
  const bool log_steps = !options.log_dir.empty();
  std::optional<profile::StepRange> trace_steps;
  if (!options.profile_steps.empty()) trace_steps = profile::parse_step_range(options.profile_steps);
  std::unique_ptr<profile::StepLogWriter> step_log;
  ProfileFiles files;
  if (log_steps) {
    files = ProfileFiles::open(options.log_dir);
    step_log = std::make_unique<profile::StepLogWriter>(files.steps, /*append=*/iterations_ > 0);
  }
  std::vector<TimedProgram> timed;  // the training programs whose kernels ops.json sums
  bool tracing = false;             // our trace session is running
  auto finish_trace = [&] {
    if (!tracing) return;
    tracing = false;
    trace::stop();
    // The Chrome trace (Perfetto, chrome://tracing, profile plugin <= 2.19) and beside it
    // the XSpace current profile plugins (XProf) read.
    const trace::Collected collected = trace::collect();
    const std::string chrome = profile::write_chrome_trace(collected, options.log_dir);
    profile::write_xplane(collected, std::filesystem::path(chrome).parent_path().string());
  };
  // When training throws (a NaN loss, bad data), the session and the kernel timers must
  // not outlive this fit: a later fit or evaluate would pay for them.
  struct ProfileCleanup {
    bool& tracing;
    std::vector<TimedProgram>& timed;
    ~ProfileCleanup() {
      if (tracing) trace::stop();
      for (const TimedProgram& tp : timed) {
        if (tp.ours) tp.program->set_timing(false);
      }
    }
  } cleanup{tracing, timed};

  History history;
  auto call_callbacks = [&](auto&& hook) {
    for (std::size_t i = 0; i < options.callbacks.size(); ++i) {
      TraceRange r("callback", "callback", static_cast<std::int64_t>(i));
      hook(options.callbacks[i]);
    }
  };
  call_callbacks([&](Callback* cb) { cb->on_train_begin(options.epochs, steps_per_epoch); });
  StepContext ctx;
  ctx.seed = seed_;
  ctx.training = true;
  for (std::int64_t epoch = 0; epoch < options.epochs; ++epoch) {
    call_callbacks([&](Callback* cb) { cb->on_epoch_begin(epoch); });
    for (Metric& m : metrics) m.reset();
    feed.begin(epoch);
    double loss_sum = 0, train_seconds = 0, wait_seconds = 0;
    std::int64_t seen = 0;
    Logs batch_logs;
    for (std::int64_t s = 0;; ++s) {
      const std::int64_t global_step = iterations_ + 1;
      if (trace_steps && global_step == trace_steps->first && !trace::running()) {
        trace::start();
        tracing = true;
      }
      profile::StepRecord rec;
      Entry* e = nullptr;
      std::int64_t rows = 0;
      {
        TraceRange step_range("train_step", "fit", global_step);
        const double t0 = now_s();
        {
          TraceRange wait_range("input_wait", "fit", global_step);
          e = feed.next(rows);
        }
        const double t1 = now_s();
        if (!e) break;
        wait_seconds += t1 - t0;
        if (log_steps && !e->acc &&
            std::none_of(timed.begin(), timed.end(), [&](const TimedProgram& tp) { return tp.program == &e->program; })) {
          const bool ours = !e->program.timing();
          if (ours) e->program.set_timing(true);
          timed.push_back({&e->program, 0, ours});
        }
        ctx.step = iterations_;
        ctx.learning_rate = static_cast<float>(optimizer_->learning_rate(iterations_));
        if (e->acc) {
          run_accumulated(*e, rows, ctx);
        } else {
          e->program.run(ctx);
        }
        ++iterations_;
        if (rows == timed_batch && !e->acc) ++timed_steps;
        train_seconds += now_s() - t0;
        float loss = e->loss_value();
        NNFIT_CHECK(std::isfinite(loss), InvalidArgument, "the loss became ", loss, " at epoch ", epoch + 1, ", step ",
                    s + 1, "; lower the learning rate or check the data for NaN/inf");
        loss_sum += static_cast<double>(loss) * static_cast<double>(rows);
        seen += rows;
        const float* pred = e->pred_data();
        for (Metric& m : metrics) m.update(pred, e->y_data(), rows, e->program.graph().desc(e->pred));
        const double t2 = now_s();
        if (!options.callbacks.empty()) {
          batch_logs.clear();
          for (const Metric& m : metrics) batch_logs.push_back({m.name(), m.result()});
          batch_logs.push_back({"loss", loss_sum / static_cast<double>(seen)});
          call_callbacks([&](Callback* cb) { cb->on_train_batch_end(s, batch_logs); });
        }
        if (log_steps) {
          rec.step = global_step;
          rec.input_wait_us = to_us(t1 - t0);
          if (!e->acc && e->program.timing()) {
            const auto phase_ns = e->program.take_phase_ns();
            rec.forward_us = (phase_ns[0] + 500) / 1000;
            rec.backward_us = (phase_ns[1] + 500) / 1000;
            rec.update_us = (phase_ns[2] + 500) / 1000;
          }
          rec.callbacks_us = options.callbacks.empty() ? 0 : to_us(now_s() - t2);
          rec.memory_in_use_bytes = memory_stats().in_use_bytes;
          for (TimedProgram& tp : timed) tp.runs += &e->program == tp.program;
        }
      }
      if (log_steps) step_log->add(rec);
      if (tracing && global_step >= trace_steps->last) finish_trace();
    }
    NNFIT_CHECK(seen > 0, InvalidArgument, "epoch ", epoch + 1, " had no training batches; the dataset is empty",
                " (a pipeline that is not repeated is consumed once per epoch)");
    Logs logs;
    for (const Metric& m : metrics) logs.push_back({m.name(), m.result()});
    logs.push_back({"loss", loss_sum / static_cast<double>(seen)});
    for (const auto& [k, val] : validate(options, validation_tuner)) logs.push_back({"val_" + k, val});
    logs.push_back({"train_seconds", train_seconds});
    logs.push_back({"samples_per_s", static_cast<double>(seen) / train_seconds});
    logs.push_back({"input_wait_fraction", train_seconds > 0 ? wait_seconds / train_seconds : 0.0});
    logs.push_back({"memory_peak_bytes", static_cast<double>(memory_stats().peak_bytes)});
    history.epochs.push_back(logs);
    if (log_steps) {
      step_log->flush();
      write_ops_json(files.ops, timed, num_threads(), device().to_string());
      if (!options.pipeline_stages.empty()) write_pipeline_json(files.pipeline, options.pipeline_stages, epoch);
    }
    call_callbacks([&](Callback* cb) { cb->on_epoch_end(epoch, logs); });
  }
  call_callbacks([&](Callback* cb) { cb->on_train_end(); });
  finish_trace();  // a range past the last step ends with training
  if (kernel_times) {
    Program& prog = entry(true, timed_batch).program;
    double total = 0;
    for (double t : prog.step_seconds()) total += t;
    std::fprintf(stderr, "nnfit: kernel times over %lld steps of batch %lld (%.3f ms/step):\n",
                 static_cast<long long>(timed_steps), static_cast<long long>(timed_batch),
                 total * 1e3 / static_cast<double>(std::max<std::int64_t>(1, timed_steps)));
    for (std::size_t i = 0; i < prog.steps().size(); ++i) {
      const PlannedStep& st = prog.steps()[i];
      std::fprintf(stderr, "  %6.1f%%  %-45s %s\n", 100.0 * prog.step_seconds()[i] / std::max(total, 1e-12),
                   prog.graph().node(st.node).name.c_str(), st.impl.c_str());
    }
    prog.set_timing(false);
  }
  return history;
}

Sequential::Entry& Sequential::training_entry(std::int64_t batch) {
  try {
    return entry(true, batch);
  } catch (const OutOfMemory& oom) {
    if (!reduce_on_oom_ || batch < 2) throw;
    Entry& e = entry(true, batch, /*bind=*/false);
    // The largest power-of-two fraction of the batch whose gradient program fits.
    std::int64_t micro = batch / 2;
    for (;; micro /= 2) {
      try {
        entry_mode(static_cast<int>(Mode::grads), micro);
        break;
      } catch (const OutOfMemory&) {
        if (micro == 1) {
          throw OutOfMemory(std::string(oom.what()) + "; reduce_batch: not even micro-batches of 1 fit", oom.hint());
        }
      }
    }
    entry_mode(static_cast<int>(Mode::apply), 0);
    auto a = std::make_unique<Accumulation>();
    a->batch = batch;
    a->micro = micro;
    a->x = Tensor::zeros(e.program.graph().desc(e.x).shape, DType::f32);
    a->y = Tensor::zeros(e.program.graph().desc(e.y).shape, e.program.graph().desc(e.y).dtype);
    a->pred = Tensor::zeros(e.program.graph().desc(e.pred).shape, DType::f32);
    for (Weight* w : programs_->trainable) a->grad_sums.push_back(Tensor::zeros(w->value.shape(), DType::f32));
    e.acc = std::move(a);
    bool differs = false;
    for (const auto& l : layers_) {
      const std::string kind = l->class_name();
      differs = differs || kind == "Dropout" || kind == "BatchNormalization";
    }
    if (notes_) {
      notes_->push_back("batch " + std::to_string(batch) + " does not fit (" + oom.what() + "); training on micro-batches of " +
                        std::to_string(micro) + " with gradient accumulation, so the effective batch stays " +
                        std::to_string(batch) +
                        (differs ? "; Dropout/BatchNormalization see micro-batches, so results differ from a full batch"
                                 : "; results match a full batch within float rounding"));
      if (on_note_) on_note_(notes_->back());
    }
    return e;
  }
}

void Sequential::run_accumulated(Entry& e, std::int64_t rows, const StepContext& ctx) {
  Accumulation& a = *e.acc;
  Programs& p = *programs_;
  const Graph& full = e.program.graph();
  const std::size_t x_row = full.desc(e.x).bytes() / static_cast<std::size_t>(a.batch);
  const std::size_t y_row = full.desc(e.y).bytes() / static_cast<std::size_t>(a.batch);
  const std::size_t pred_row = full.desc(e.pred).bytes() / static_cast<std::size_t>(a.batch);
  const char* x = static_cast<const char*>(a.x_ext ? a.x_ext : a.x.raw());
  a.x_ext = nullptr;
  for (Tensor& g : a.grad_sums) std::memset(g.raw(), 0, g.nbytes());
  double loss_sum = 0;
  std::int64_t index = 0;
  for (std::int64_t off = 0; off < rows; off += a.micro, ++index) {
    const std::int64_t r = std::min(a.micro, rows - off);
    Entry& m = entry_mode(static_cast<int>(Mode::grads), r);
    m.program.set_input(m.x, x + static_cast<std::size_t>(off) * x_row);
    std::memcpy(m.program.data(m.y), static_cast<const char*>(a.y.raw()) + static_cast<std::size_t>(off) * y_row,
                static_cast<std::size_t>(r) * y_row);
    StepContext mc = ctx;
    mc.step = ctx.step + (index << 40);  // a dropout stream of its own per micro-batch
    m.program.run(mc);
    loss_sum += static_cast<double>(*static_cast<const float*>(m.program.data(m.loss))) * static_cast<double>(r);
    std::memcpy(static_cast<char*>(a.pred.raw()) + static_cast<std::size_t>(off) * pred_row, m.program.data(m.pred),
                static_cast<std::size_t>(r) * pred_row);
    // Each micro-batch's gradient is of its mean loss: weight it by its rows.
    for (std::size_t k = 0; k < m.gradient_values.size(); ++k) {
      float* sum = a.grad_sums[m.gradient_weights[k]].data<float>();
      const float* g = static_cast<const float*>(m.program.data(m.gradient_values[k]));
      const std::int64_t n = a.grad_sums[m.gradient_weights[k]].numel();
      const float w = static_cast<float>(r);
      for (std::int64_t i = 0; i < n; ++i) sum[i] += w * g[i];
    }
    m.program.set_input(m.x, nullptr);
  }
  Entry& apply = entry_mode(static_cast<int>(Mode::apply), 0);
  const float inv = 1.0f / static_cast<float>(rows);
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    float* dst = static_cast<float*>(apply.program.data(apply.gradient_inputs[k]));
    const float* sum = a.grad_sums[k].data<float>();
    for (std::int64_t i = 0; i < a.grad_sums[k].numel(); ++i) dst[i] = sum[i] * inv;
  }
  apply.program.run(ctx);
  a.loss = static_cast<float>(loss_sum / static_cast<double>(rows));
}

Logs Sequential::validate(const FitOptions& options, data::Autotuner* tuner) {
  if (options.validation_dataset) return evaluate_dataset(*options.validation_dataset, tuner);
  if (options.validation_data) {
    return evaluate(options.validation_data->first, options.validation_data->second, options.batch_size);
  }
  return {};
}

History Sequential::fit(const Tensor& x_in, const Tensor& y_in, const FitOptions& options) {
  check_built();
  NNFIT_CHECK(options.batch_size > 0, InvalidArgument, "batch_size must be positive, got ", options.batch_size);
  NNFIT_CHECK(options.epochs >= 0, InvalidArgument, "epochs must be >= 0, got ", options.epochs);
  PreparedData d = prepare_data(x_in, y_in, input_shape_, output_shape(), compile_options_, "no training samples");
  const std::int64_t n = d.n;
  data::InMemoryDataset ds(d.x, d.y);

  const std::int64_t bs = std::min(options.batch_size, n);
  const std::int64_t steps = (n + bs - 1) / bs;
  const std::int64_t last = n - (steps - 1) * bs;
  std::vector<std::string> notes;
  NNFIT_CHECK(options.on_oom == "fail" || options.on_oom == "reduce_batch", InvalidArgument, "on_oom must be ",
              "\"fail\" or \"reduce_batch\", got \"", options.on_oom, "\"");
  reduce_on_oom_ = options.on_oom == "reduce_batch";
  notes_ = &notes;
  on_note_ = options.on_note;
  struct OomReset {
    Sequential* m;
    ~OomReset() {
      m->reduce_on_oom_ = false;
      m->notes_ = nullptr;
      m->on_note_ = nullptr;
    }
  } oom_reset{this};
  // Plan everything before the first step: the full batch, then the remainder.
  training_entry(bs);
  if (last != bs) training_entry(last);
  if (options.validation_data) {
    std::int64_t vn = options.validation_data->first.shape()[0];
    if (vn > 0) {
      std::int64_t vb = std::min(bs, vn);
      entry(false, vb);
      if (vn % vb) entry(false, vn % vb);
    }
  }
  FitOptions o = options;
  o.batch_size = bs;
  std::optional<data::InMemoryDataset::BatchIterator> it;
  std::int64_t step = 0;
  EpochFeed feed;
  feed.begin = [&](std::int64_t epoch) {
    it.emplace(ds.batches(bs, options.shuffle, options.seed, epoch));
    step = 0;
  };
  feed.next = [&](std::int64_t& rows) -> Entry* {
    if (step == steps) return nullptr;
    Entry& e = training_entry(++step < steps ? bs : last);
    rows = it->next(e.x_data(), e.y_data());  // rows are gathered into the input slot
    NNFIT_CHECK(rows == (step < steps ? bs : last), InvalidArgument, "internal: batch of ", rows, " rows at step ", step);
    return &e;
  };
  History h = train_loop(o, steps, feed, nullptr);
  h.notes = std::move(notes);
  return h;
}

History Sequential::fit(const data::Dataset& train, const FitOptions& options) {
  check_built();
  NNFIT_CHECK(options.batch_size > 0, InvalidArgument, "batch_size must be positive, got ", options.batch_size);
  NNFIT_CHECK(options.epochs >= 0, InvalidArgument, "epochs must be >= 0, got ", options.epochs);
  NNFIT_CHECK(train.cardinality() != data::kInfiniteCardinality, InvalidArgument,
              "the training dataset is infinite (repeat() without a count); one pass is one epoch, so drop the "
              "repeat or follow it with take(steps_per_epoch)");
  std::vector<std::string> notes;
  NNFIT_CHECK(options.on_oom == "fail" || options.on_oom == "reduce_batch", InvalidArgument, "on_oom must be ",
              "\"fail\" or \"reduce_batch\", got \"", options.on_oom, "\"");
  reduce_on_oom_ = options.on_oom == "reduce_batch";
  notes_ = &notes;
  on_note_ = options.on_note;
  struct OomReset {
    Sequential* m;
    ~OomReset() {
      m->reduce_on_oom_ = false;
      m->notes_ = nullptr;
      m->on_note_ = nullptr;
    }
  } oom_reset{this};
  // Plan the expected batch size now, so the memory footprint is known before the first
  // step; a partial last batch is planned when it first arrives.
  training_entry(options.batch_size);
  if (options.validation_dataset) entry(false, options.batch_size);
  data::AutotuneOptions ao = options.autotune;
  if (ao.compute_threads == 0) ao.compute_threads = num_threads();
  data::Autotuner tuner(ao);
  std::unique_ptr<data::Iterator> it;
  std::optional<data::Element> current;  // the batch being trained on (the program reads it)
  std::int64_t index = 0;
  EpochFeed feed;
  feed.begin = [&](std::int64_t) {
    current.reset();
    it.reset();  // join the previous pass's threads before starting the next
    it = tuner.make_iterator(train);
    index = 0;
  };
  feed.next = [&](std::int64_t& rows) -> Entry* {
    current = it->next();
    if (!current) return nullptr;
    Entry& e = stage_element(*current, /*training=*/true, index++);
    rows = (*current)[0].shape()[0];
    return &e;
  };
  const std::int64_t steps = train.cardinality() >= 0 ? train.cardinality() : 0;
  // The validation pipeline gets its own tuner: its waits are not the training loop's.
  std::optional<data::Autotuner> val_tuner;
  if (options.validation_dataset) {
    data::AutotuneOptions vao = ao;
    if (ao.log) vao.log = [log = ao.log](const std::string& line) { log("validation: " + line); };
    val_tuner.emplace(vao);
  }
  History h = train_loop(options, steps, feed, val_tuner ? &*val_tuner : nullptr);
  current.reset();
  it.reset();
  h.autotune_summary = tuner.summary();
  h.autotune_decisions = tuner.decisions();
  h.notes = std::move(notes);
  if (val_tuner && !val_tuner->summary().empty()) {
    h.autotune_summary += (h.autotune_summary.empty() ? "" : "; ") + std::string("validation: ") + val_tuner->summary();
    for (const std::string& d : val_tuner->decisions()) h.autotune_decisions.push_back("validation: " + d);
  }
  return h;
}

Logs Sequential::evaluate(const Tensor& x_in, const Tensor& y_in, std::int64_t batch_size) {
  check_built();
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  PreparedData d = prepare_data(x_in, y_in, input_shape_, output_shape(), compile_options_, "no samples to evaluate");
  const std::int64_t n = d.n;
  data::InMemoryDataset ds(d.x, d.y);
  std::vector<Metric> metrics = make_metrics(compile_options_, one_prediction(output_shape()));
  const std::int64_t bs = std::min(batch_size, n);
  auto it = ds.batches(bs, false, 0, 0);
  StepContext ctx;
  ctx.training = false;
  double loss_sum = 0;
  std::int64_t seen = 0;
  while (seen < n) {
    std::int64_t rows = std::min(bs, n - seen);
    Entry& e = entry(false, rows);
    e.program.set_input(e.x, nullptr);
    std::int64_t got = it.next(e.program.data(e.x), e.program.data(e.y));
    NNFIT_CHECK(got == rows, InvalidArgument, "internal: evaluation batch of ", got, " rows, expected ", rows);
    e.program.run(ctx);
    loss_sum += static_cast<double>(*static_cast<const float*>(e.program.data(e.loss))) * static_cast<double>(rows);
    const float* pred = static_cast<const float*>(e.program.data(e.pred));
    for (Metric& m : metrics) m.update(pred, e.program.data(e.y), rows, e.program.graph().desc(e.pred));
    seen += rows;
  }
  Logs logs;
  for (const Metric& m : metrics) logs.push_back({m.name(), m.result()});
  logs.push_back({"loss", loss_sum / static_cast<double>(n)});
  return logs;
}

Logs Sequential::evaluate(const data::Dataset& data) { return evaluate_dataset(data, nullptr); }

Logs Sequential::evaluate_dataset(const data::Dataset& data, data::Autotuner* tuner) {
  check_built();
  std::vector<Metric> metrics = make_metrics(compile_options_, one_prediction(output_shape()));
  StepContext ctx;
  ctx.training = false;
  double loss_sum = 0;
  std::int64_t seen = 0, index = 0;
  std::unique_ptr<data::Iterator> it;
  std::optional<data::Autotuner> own;
  if (!tuner) tuner = &own.emplace();
  it = tuner->make_iterator(data);
  while (std::optional<data::Element> el = it->next()) {
    Entry& e = stage_element(*el, /*training=*/false, index++);
    const std::int64_t rows = (*el)[0].shape()[0];
    e.program.run(ctx);
    loss_sum += static_cast<double>(*static_cast<const float*>(e.program.data(e.loss))) * static_cast<double>(rows);
    const float* pred = static_cast<const float*>(e.program.data(e.pred));
    for (Metric& m : metrics) m.update(pred, e.program.data(e.y), rows, e.program.graph().desc(e.pred));
    seen += rows;
  }
  NNFIT_CHECK(seen > 0, InvalidArgument, "no samples to evaluate: the dataset is empty");
  Logs logs;
  for (const Metric& m : metrics) logs.push_back({m.name(), m.result()});
  logs.push_back({"loss", loss_sum / static_cast<double>(seen)});
  return logs;
}

Tensor Sequential::predict(const Tensor& x_in, std::int64_t batch_size) {
  check_built();
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
  Tensor x = prepare_inputs(x_in, input_shape_);
  const std::int64_t n = x.shape()[0];
  Shape out = output_shape();
  std::vector<std::int64_t> od{n};
  od.insert(od.end(), out.dims().begin(), out.dims().end());
  Tensor result = Tensor::zeros(Shape(od), DType::f32);
  const std::size_t x_row = n ? x.nbytes() / static_cast<std::size_t>(n) : 0;
  const std::size_t o_row = static_cast<std::size_t>(out.numel()) * sizeof(float);
  StepContext ctx;
  ctx.training = false;
  for (std::int64_t start = 0; start < n; start += batch_size) {
    std::int64_t rows = std::min(batch_size, n - start);
    Entry& e = entry(false, rows);
    e.program.set_input(e.x, nullptr);
    std::memcpy(e.program.data(e.x), static_cast<const char*>(x.raw()) + static_cast<std::size_t>(start) * x_row,
                static_cast<std::size_t>(rows) * x_row);
    if (e.y >= 0) std::memset(e.program.data(e.y), 0, e.program.graph().desc(e.y).bytes());
    e.program.run(ctx);
    std::memcpy(static_cast<char*>(result.raw()) + static_cast<std::size_t>(start) * o_row, e.program.data(e.pred),
                static_cast<std::size_t>(rows) * o_row);
  }
  return result;
}

}  // namespace nnfit
