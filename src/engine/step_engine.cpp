// StepEngine: the backend and memory policy, build (weights on the model's memory) and
// compile (optimizer and its slots), and the entries: Programs per (mode, batch size)
// planned on demand, all over one shared arena (Note [One arena per program]); the
// loops that run them are in fit_loop.cpp and inference_loop.cpp, the planning in plan.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "engine/engine_types.h"
#include "engine/step.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/fusion.h"
#include "nnfit/graph/program.h"
#include "nnfit/nn/lr_schedule.h"
#include "nnfit/nn/metrics.h"

namespace nnfit {

StepEngine::StepEngine(Model& model)
    : memory_policy_(resolve_memory_policy(memory_settings_from_env())),
      backend_(make_cpu_backend(memory_policy_)),
      model_(model) {
  plain_step_ = std::make_unique<PlainStep>(*this);
  captured_step_ = std::make_unique<CapturedStep>(*this);
  micro_batched_step_ = std::make_unique<MicroBatchedStep>(*this);
  loss_scaled_step_ = std::make_unique<LossScaledStep>(*this);
  replicated_step_ = std::make_unique<ReplicatedStep>(*this);
}

StepEngine::~StepEngine() { release(); }

void StepEngine::release() {
  // Work still queued on the device (a step's update) runs before its memory goes.
  try {
    sync_device();
  } catch (const std::exception&) {  // a failed kernel's error was the step's to report
  }
  // Programs (and their arena) go before the layers' weights; all return to the allocator.
  programs_.reset();
}

void StepEngine::set_memory_policy(const MemoryPolicy& policy) {
  NNFIT_CHECK(!model_.compiled_ && backend_->allocator().stats().in_use_bytes == 0, InvalidArgument, "model '", model_.name_,
              "': set_memory_policy() must come before compile(), while nothing is allocated");
  if (policy == memory_policy_) return;
  const int threads = backend_->num_threads();
  const Device device = backend_->device();
  // Drop the old allocator first, so two preallocations never coexist.
  backend_.reset();
  try {
    backend_ = make_backend(device, policy);
  } catch (const Error&) {
    memory_policy_ = MemoryPolicy{};
    backend_ = make_backend(device, memory_policy_);  // the model stays usable with the default
    backend_->set_num_threads(threads);
    throw;
  }
  backend_->set_num_threads(threads);
  memory_policy_ = policy;
}

void StepEngine::set_device(Device device) {
  NNFIT_CHECK(!model_.compiled_ && backend_->allocator().stats().in_use_bytes == 0, InvalidArgument, "model '", model_.name_,
              "': set_device() must come before compile(), while nothing is allocated");
  if (device == backend_->device()) return;
  // Its backend under the same policy, made before the old one goes (another device's
  // memory, so no two preallocations of one device coexist): a device that cannot be used
  // throws and leaves the model where it was.
  std::unique_ptr<Backend> backend = make_backend(device, memory_policy_);
  backend->set_num_threads(backend_->num_threads());
  backend_ = std::move(backend);
}

void StepEngine::set_backend(std::unique_ptr<Backend> backend) {
  NNFIT_CHECK(backend, InvalidArgument, "model '", model_.name_, "': set_backend() needs a backend");
  NNFIT_CHECK(!programs_ && backend_->allocator().stats().in_use_bytes == 0, InvalidArgument, "model '", model_.name_,
              "': set_backend() must come before build() and compile(), while nothing is allocated");
  const int threads = backend_->num_threads();
  backend_ = std::move(backend);
  backend_->set_num_threads(threads);
}

void StepEngine::set_num_threads(int threads) { backend_->set_num_threads(threads); }
int StepEngine::num_threads() const { return backend_->num_threads(); }

void StepEngine::check_built() const {
  NNFIT_CHECK(programs_, InvalidArgument, "model '", model_.name_, "' is not built; call compile() (or build()) first");
}

void StepEngine::check_compiled() const {
  NNFIT_CHECK(model_.compiled_, InvalidArgument, "model '", model_.name_, "' is not compiled; call compile() first");
}

void StepEngine::build() {
  if (programs_) return;
  NNFIT_CHECK(!model_.graph_.layers().empty(), InvalidArgument, "model '", model_.name_, "' has no layers");
  NNFIT_CHECK(!model_.graph_.inputs().empty() && model_.graph_.inputs()[0].shape.rank() > 0, InvalidArgument, "model '", model_.name_,
              "' has no input shape; give an Input layer or batch_shape on the first layer");
  // Note [The model's device path]: layers fill their weights on the host; off the CPU
  // they are made in host memory and then copied once into the device's.
  const bool host = backend_->host_addressable();
  WeightFactory wf = host ? WeightFactory(backend_->allocator(), model_.seed_) : WeightFactory(model_.seed_);
  if (model_.weight_budget_elements_ > 0) wf.limit_elements(model_.weight_budget_elements_, model_.weight_budget_source_);
  model_.graph_.build(wf);
  wf.limit_elements(0, {});
  model_.weight_budget_elements_ = 0;  // one load's bound, not the model's
  if (!host) {
    std::map<const void*, Tensor> moved;  // weights that share a buffer stay shared
    for (Weight* w : model_.graph_.weights()) {
      auto [it, fresh] = moved.try_emplace(w->value.raw());
      if (fresh) it->second = on_backend(w->value);
      w->value = it->second;
    }
  }
  programs_ = std::make_unique<Programs>();
  programs_->one = on_backend(wf.make("autodiff/one", Shape{}, "ones", 1, 1));
}

void StepEngine::compile(CompileOptions options) {
  NNFIT_CHECK(options.losses.empty() || options.losses.size() == model_.num_outputs(), InvalidArgument, "model '", model_.name_,
              "' has ", model_.num_outputs(), " outputs but ", options.losses.size(), " losses were given");
  for (const bool weighted : {false, true}) {
    const char* key = weighted ? "weighted_metrics" : "metrics";
    const auto& per = weighted ? options.output_weighted_metrics : options.output_metrics;
    NNFIT_CHECK(per.empty() || per.size() == model_.num_outputs(), InvalidArgument, "model '", model_.name_, "' has ",
                model_.num_outputs(), " outputs but ", key, " has ", per.size(), " per-output lists");
    NNFIT_CHECK(per.empty() || (weighted ? options.weighted_metrics : options.metrics).empty(), InvalidArgument,
                key, ": give one list for every output or one list per output, not both");
  }
  NNFIT_CHECK(options.loss_weights.empty() || options.loss_weights.size() == model_.num_outputs(), InvalidArgument,
              "model '", model_.name_, "' has ", model_.num_outputs(), " outputs but ", options.loss_weights.size(),
              " loss_weights were given");
  build();
  if (options.dtype_policy) model_.dtype_policy_ = *options.dtype_policy;
  // Keras's compile wraps the optimizer in a LossScaleOptimizer under mixed_float16: float16
  // compute with float32 variables, whose small gradients would flush to zero unscaled
  // (the pure "float16" policy keeps float16 variables and, as in Keras, is not scaled).
  const DTypePolicy& policy = model_.dtype_policy_;
  if (policy.mixed() && policy.compute == DType::f16) options.optimizer.loss_scale.enabled = true;
  loss_scale_ = options.optimizer.loss_scale.enabled ? options.optimizer.loss_scale.initial_scale : 1.0;
  loss_scale_good_steps_ = skipped_steps_ = 0;
  auto optimizer = std::make_unique<Optimizer>(options.optimizer);
  // A recompiled model plans afresh with new optimizer slots; its weights stay.
  drop_lookahead();  // a batch staged ahead belongs to an entry about to go
  programs_->entries.clear();
  // The autodiff seed is 1 outside a loss-scaled step; a loss-scaled device step leaves
  // the scale in it (Note [Loss scaling on the device]), which a program compiled without
  // loss scaling must not read. (The copy waits for the device's queues first.)
  const float unit = 1.0f;
  write_buffer(programs_->one.raw(), &unit, sizeof unit);
  programs_->arena = Tensor();
  programs_->arena_bytes = 0;
  programs_->update_arena = Tensor();
  programs_->zero_gradient = Tensor();
  programs_->device_grad_sums.clear();
  programs_->trainable.clear();
  programs_->slots.clear();
  optimizer_ = std::move(optimizer);
  model_.compile_options_ = std::move(options);
  model_.compile_options_.optimizer = optimizer_->options();
  // Validate the losses and metrics against the outputs now, not at the first step.
  const std::vector<Shape> outs = model_.output_shapes();
  const CompileOptions& co = model_.compile_options_;
  if (co.computes_loss()) {  // its graph over the model's inputs, targets and outputs
    Graph probe;
    std::vector<int> xs, ys, preds;
    const std::vector<Shape> ins = model_.input_shapes();
    for (std::size_t i = 0; i < ins.size(); ++i) {
      xs.push_back(probe.add_input("x" + std::to_string(i), {fit_data::one_prediction(ins[i]).shape, DType::f32}));
    }
    for (std::size_t i = 0; i < outs.size(); ++i) {
      preds.push_back(probe.add_input("pred" + std::to_string(i), fit_data::one_prediction(outs[i])));
      if (model_.num_targets()) {
        ys.push_back(probe.add_input("y" + std::to_string(i), co.loss.target_desc(probe.desc(preds.back()), i)));
      }
    }
    co.loss.emit_compute_loss(probe, xs, ys, preds);
  }
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const TensorDesc pred = fit_data::one_prediction(outs[i]);
    const Loss& loss = co.loss_for(i);
    Graph probe;
    if (!co.computes_loss()) loss.emit(probe, probe.add_input("pred", pred), probe.add_input("y", loss.target_desc(pred)));
    for (const bool weighted : {false, true}) {
      // Named by its place in the compile options: "metrics[k]", or "metrics[i][k]" per output.
      const auto& per = weighted ? model_.compile_options_.output_weighted_metrics : model_.compile_options_.output_metrics;
      const std::string key = std::string(weighted ? "weighted_metrics" : "metrics") +
                              (per.empty() ? "" : "[" + std::to_string(i) + "]");
      const auto& specs = model_.compile_options_.metrics_for(i, weighted);
      for (std::size_t k = 0; k < specs.size(); ++k) {
        try {
          Metric(specs[k], loss.for_output(i), pred);
        } catch (const InvalidArgument& e) {
          throw InvalidArgument(key + "[" + std::to_string(k) + "]: " + e.what(), e.hint());
        }
      }
    }
  }

  for (Weight* w : model_.graph_.weights()) {
    if (!w->trains()) continue;
    programs_->trainable.push_back(w);
    std::vector<Tensor> sl;
    for (int i = 0; i < optimizer_->num_kept_slots(); ++i) {
      Tensor slot = Tensor::zeros(optimizer_->slot_shape(i, w->value.shape()));
      const float init = static_cast<float>(optimizer_->slot_initial_value(i));
      if (init != 0.0f) std::fill_n(slot.data<float>(), slot.numel(), init);
      if (backend_->host_addressable()) {  // in the model's allocator, as everything it keeps
        Tensor kept = allocate_tensor(backend_->allocator(), slot.shape(), DType::f32);
        std::memcpy(kept.raw(), slot.raw(), slot.nbytes());
        sl.push_back(std::move(kept));
      } else {
        sl.push_back(on_backend(slot));
      }
    }
    programs_->slots.push_back(std::move(sl));
  }
  model_.compiled_ = true;
}

std::vector<Tensor> StepEngine::get_weights() const {
  std::vector<Tensor> out;
  for (const Weight* w : model_.graph_.weights()) {
    Tensor t = Tensor::uninitialized(w->value.shape(), w->value.dtype());
    read_buffer(t.raw(), w->value.raw(), t.nbytes());
    out.push_back(std::move(t));
  }
  return out;
}

void StepEngine::set_weights(const std::vector<Tensor>& values) {
  const std::vector<Weight*> ws = model_.graph_.weights();
  NNFIT_CHECK(values.size() == ws.size(), InvalidArgument, "model '", model_.name_, "' has ", ws.size(), " weights, got ",
              values.size(), " values");
  for (std::size_t i = 0; i < ws.size(); ++i) {
    NNFIT_CHECK(values[i].shape() == ws[i]->value.shape() && values[i].dtype() == ws[i]->value.dtype(), InvalidArgument,
                ws[i]->name, ": a value of shape ", values[i].shape().to_string(), " (", dtype_name(values[i].dtype()),
                ") for a weight of shape ", ws[i]->value.shape().to_string(), " (", dtype_name(ws[i]->value.dtype()), ")");
  }
  for (std::size_t i = 0; i < ws.size(); ++i) write_buffer(ws[i]->value.raw(), values[i].raw(), values[i].nbytes());
}

void StepEngine::set_iterations(std::int64_t iterations) {
  NNFIT_CHECK(iterations >= 0, InvalidArgument, "iterations must be >= 0, got ", iterations);
  iterations_ = iterations;
}

void StepEngine::set_loss_scale_state(double scale, std::int64_t good_steps) {
  NNFIT_CHECK(std::isfinite(scale) && scale > 0, InvalidArgument, "the loss scale must be finite and > 0, got ", scale);
  NNFIT_CHECK(good_steps >= 0, InvalidArgument, "the loss scale's step counter must be >= 0, got ", good_steps);
  loss_scale_ = scale;
  loss_scale_good_steps_ = good_steps;
}

std::vector<Tensor> StepEngine::optimizer_slots() const {
  check_compiled();
  std::vector<Tensor> out;
  const auto& slots = programs_->slots;
  const std::size_t kinds = static_cast<std::size_t>(optimizer_->num_slots());
  // Keras lists the EMA averages (every variable's) before the optimizer's own slots.
  if (optimizer_->options().use_ema) {
    for (const auto& per_weight : slots) out.push_back(per_weight[kinds]);
  }
  // Keras's creation order: each add_optimizer_variables call makes its kinds for every
  // variable in turn. RMSprop makes velocity, momentum and average gradient in three calls;
  // Adam makes momentum and velocity in one, then AMSGrad's velocity_hat in another; the
  // others make all their kinds in one.
  std::vector<std::size_t> call_ends;
  if (optimizer_->name() == "rmsprop") {
    for (std::size_t k = 1; k <= kinds; ++k) call_ends.push_back(k);
  } else if (kinds == 3 && optimizer_->options().amsgrad) {
    call_ends = {2, 3};
  } else {
    call_ends = {kinds};
  }
  std::size_t begin = 0;
  for (std::size_t end : call_ends) {
    for (const auto& per_weight : slots) out.insert(out.end(), per_weight.begin() + begin, per_weight.begin() + end);
    begin = end;
  }
  return out;
}

double StepEngine::learning_rate() const {
  check_compiled();
  return optimizer_->learning_rate(iterations_);
}

void StepEngine::set_learning_rate(double learning_rate) {
  check_compiled();
  NNFIT_CHECK(dynamic_cast<const ConstantLearningRate*>(optimizer_->options().learning_rate.get()), InvalidArgument,
              "model '", model_.name_, "': the learning rate follows a schedule (",
              optimizer_->options().learning_rate->describe(), ") and cannot be set; use a constant learning rate");
  auto lr = std::make_shared<ConstantLearningRate>(learning_rate);  // throws unless positive
  optimizer_->set_learning_rate(lr);
  model_.compile_options_.optimizer.learning_rate = std::move(lr);
}

MemoryStats StepEngine::memory_stats() const { return backend_->allocator().stats(); }

std::int64_t StepEngine::persistent_bytes() const {
  std::int64_t n = 0;
  for (const Weight* w : model_.graph_.weights()) n += round64(static_cast<std::int64_t>(w->value.nbytes()));
  if (programs_) {
    for (const auto& sl : programs_->slots) {
      for (const Tensor& t : sl) n += round64(static_cast<std::int64_t>(t.nbytes()));
    }
    for (const Tensor* t : {&programs_->one, &programs_->scale}) {
      if (t->defined()) n += round64(static_cast<std::int64_t>(t->nbytes()));
    }
  }
  return n;
}

StepEngine::Entry& StepEngine::entry(bool training, std::int64_t batch, bool bind, const SampleShapes& samples) {
  return entry_mode(static_cast<int>(training ? Mode::train : Mode::infer), batch, bind, samples);
}

SampleShapes StepEngine::samples_or_model(const SampleShapes& samples) const {
  const auto& inputs = model_.graph_.inputs();
  if (samples.empty()) {
    SampleShapes out;
    for (const InputSpec& in : inputs) {
      NNFIT_CHECK(in.shape.is_static(), InvalidArgument, "model '", model_.name_, "': input '", in.name, "' has shape ",
                  in.shape.to_string(), ", known only per batch; this needs the inputs' shapes of a batch (give ",
                  "`--input-shape` to nnfit plan, or data)");
      out.push_back(in.shape);
    }
    return out;
  }
  NNFIT_CHECK(samples.size() == inputs.size(), InvalidArgument, "internal: ", samples.size(), " input shapes for ",
              inputs.size(), " inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    NNFIT_CHECK(inputs[i].shape.admits(samples[i]), InvalidArgument, "model '", model_.name_, "': input '",
                inputs[i].name, "' of shape ", inputs[i].shape.to_string(), " cannot take samples of shape ",
                samples[i].to_string());
  }
  return samples;
}

std::optional<SampleShapes> StepEngine::fixed_samples(const data::Dataset& data) const {
  if (!model_.graph_.has_unknown_dims()) return SampleShapes{};
  const data::ElementSpec& spec = data.element_spec();
  const auto& inputs = model_.graph_.inputs();
  if (spec.size() < inputs.size()) return std::nullopt;  // stage_element says what is wrong
  SampleShapes out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = spec[i].shape;
    if (s.rank() < 1) return std::nullopt;
    const Shape sample(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end()));
    if (!sample.is_static()) return std::nullopt;
    const std::optional<Shape> c = fit_data::program_sample_shape(sample, inputs[i].shape);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

ProgramCacheStats StepEngine::program_cache_stats() const {
  ProgramCacheStats st;
  if (!programs_) return st;
  std::set<std::vector<std::vector<std::int64_t>>> shapes;
  for (const auto& [key, e] : programs_->entries) {
    ++st.programs;
    if (std::get<0>(key) != Mode::apply) shapes.insert(std::get<2>(key));
  }
  st.input_shapes = static_cast<std::int64_t>(shapes.size());
  st.hits = programs_->hits;
  st.misses = programs_->misses;
  st.arena_bytes = static_cast<std::int64_t>(programs_->arena_bytes);
  st.evicted = programs_->evicted;
  return st;
}

// Note [A bounded program cache]: a model with None dimensions plans a program per input
// shape it meets; a text dataset not bucketed by length can bring hundreds, each holding
// its plan and kernels. Past kMaxCachedPrograms the least recently used are dropped, as a
// tf.function's traces would pile up otherwise. Dropping happens only where a batch's
// program is fetched (entry_or_split, the clock's tick), never for the update program, and
// never for one used in the last kRecentPrograms batches' fetches: the step running, the
// batch staged ahead of it and a split batch with its micro-batch programs are all among
// those, so no Entry a caller holds goes away. The device's queues finish first (a dropped program's staging buffers
// and captured graph may be in use). The shared arena keeps its size.
namespace {
constexpr std::int64_t kRecentPrograms = 16;
}  // namespace

void StepEngine::trim_programs(bool planning) {
  const std::int64_t bound = kMaxCachedPrograms - (planning ? 1 : 0);
  Programs& p = *programs_;
  std::vector<std::pair<std::int64_t, Programs::Key>> candidates;
  std::int64_t kept = 0;
  for (const auto& [key, e] : p.entries) {
    if (std::get<0>(key) == Mode::apply) continue;
    ++kept;
    if (e->last_use <= p.uses - kRecentPrograms) candidates.emplace_back(e->last_use, key);
  }
  if (kept <= bound || candidates.empty()) return;
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  sync_device();
  for (const auto& candidate : candidates) {
    if (kept <= bound) break;
    p.entries.erase(candidate.second);
    --kept;
    ++p.evicted;
  }
}

StepEngine::Entry& StepEngine::entry_mode(int mode_value, std::int64_t batch, bool bind, const SampleShapes& samples) {
  if (static_cast<Mode>(mode_value) == Mode::infer || static_cast<Mode>(mode_value) == Mode::infer_training) check_built();
  else check_compiled();
  Programs& p = *programs_;
  const Mode mode = static_cast<Mode>(mode_value);
  const bool training = !is_inference(mode);
  SampleShapes shapes = mode == Mode::apply ? SampleShapes{} : samples_or_model(samples);
  const Programs::Key key = Programs::key(mode, batch, shapes);
  auto it = p.entries.find(key);
  if (it == p.entries.end()) {
    it = p.entries.emplace(key, mode == Mode::apply ? plan_apply() : plan_entry(mode_value, batch, shapes)).first;
    it->second->mode = mode;
    it->second->samples = std::move(shapes);
    if (!backend_->host_addressable() && mode != Mode::apply) {
      Entry& made = *it->second;
      made.make_staging(backend_->pinned_allocator());
      made.staged->ring = input_ring(made.staged->bytes);
    }
  }
  Entry& e = *it->second;
  e.last_use = p.uses;
  if (!bind || e.bound || e.split) return e;
  if (e.program.arena_bytes() > p.arena_bytes) {
    // Free the old arena before taking the larger one, so the peak is the larger alone
    // (after the device's queues are done with it: a step may be running ahead).
    sync_device();
    p.arena = Tensor();
    for (auto& [k, other] : p.entries) other->bound = false;
    try {
      p.arena = allocate_tensor(backend_->allocator(), Shape{static_cast<std::int64_t>(e.program.arena_bytes())}, DType::u8);
    } catch (const OutOfMemory& oom) {
      p.arena_bytes = 0;
      std::string hint = oom.hint();
      const std::int64_t limit = memory_policy_.limit_bytes;
      if (training && limit > 0 && batch > 1) {
        const std::int64_t fits = largest_batch_size_within(limit, batch - 1, e.samples);
        hint = fits > 0 ? "batch size " + std::to_string(fits) + " is the largest that fits the memory limit of " +
                              format_bytes(limit) + "; use it or raise the limit"
                        : "not even batch size 1 fits the memory limit of " + format_bytes(limit) + "; raise it";
      }
      throw OutOfMemory(std::string(oom.what()) + " for the " + (training ? "training" : "inference") +
                            " arena of model '" + model_.name_ + "' at batch size " + std::to_string(batch),
                        hint, oom.shared_details());
    }
    p.arena_bytes = e.program.arena_bytes();
  }
  for (auto& [k, other] : p.entries) {
    if (!other->bound && other->program.arena_bytes() <= p.arena_bytes) {
      other->program.bind(p.arena.raw());
      other->graph.drop();  // captured with the old arena's addresses
      other->bound = true;
    }
  }
  return e;
}

Step& StepEngine::step(StepKind kind) {
  switch (kind) {
    case StepKind::plain: return *plain_step_;
    case StepKind::captured: return *captured_step_;
    case StepKind::micro_batched: return *micro_batched_step_;
    case StepKind::loss_scaled: return *loss_scaled_step_;
    case StepKind::replicated: return *replicated_step_;
  }
  NNFIT_CHECK(false, InvalidArgument, "internal: unknown step kind");
  return *plain_step_;
}

bool StepEngine::run_entry(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) {
  const StepKind kind = choose_step(e.mode, e.split != nullptr, replicated(), backend_->queues() != nullptr);
  return step(kind).run(e, rows, ctx, before_run);
}

void StepEngine::run_program(Entry& e, const StepContext& ctx) {
  if (backend_->queues()) captured_step_->run_program(e, ctx);
  else plain_step_->run_program(e, ctx);
}

}  // namespace nnfit
