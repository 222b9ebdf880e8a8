// on_oom="reduce_batch": a batch that does not fit runs as micro-batches (MicroBatches in
// engine_types.h; docs/design/memory.md). Training accumulates their gradients into one
// update; inference (validation, evaluate, predict) concatenates their outputs. Also the
// staging of class and sample weights, into a program or a split step.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/engine_types.h"
#include "nnfit/core/error.h"

namespace nnfit {

StepEngine::OomScope::OomScope(StepEngine& m, const std::string& on_oom, std::vector<std::string>* n,
                               std::function<void(const std::string&)> note)
    : model(m), reduce_on_oom(m.reduce_on_oom_), notes(m.notes_), on_note(m.on_note_), scope(m.oom_scope_) {
  NNFIT_CHECK(on_oom == "fail" || on_oom == "reduce_batch", InvalidArgument, "on_oom must be ",
              "\"fail\" or \"reduce_batch\", got \"", on_oom, "\"");
  model.reduce_on_oom_ = on_oom == "reduce_batch";
  model.notes_ = n;
  model.on_note_ = std::move(note);
  model.oom_scope_ = ++model.oom_scopes_made_;
}

StepEngine::OomScope::~OomScope() {
  model.reduce_on_oom_ = reduce_on_oom;
  model.notes_ = notes;
  model.on_note_ = std::move(on_note);
  model.oom_scope_ = scope;
}

namespace {

bool micro_batches_differ(const std::vector<std::unique_ptr<Layer>>& layers) {
  return std::any_of(layers.begin(), layers.end(), [](const auto& l) {
    const std::string kind = l->class_name();
    return kind == "Dropout" || kind == "BatchNormalization";
  });
}

}  // namespace

StepEngine::Entry& StepEngine::entry_or_split(bool training, std::int64_t batch, const char* what,
                                              const SampleShapes& sample_shapes) {
  // Replicated training runs each rank's slice as gradients, summed across ranks, then
  // the update (ReplicatedStep), which does the loss scaling too; a rank left without
  // rows plans a slice of one. A slice that does not fit runs as micro-batches below.
  const Mode mode = static_cast<Mode>(training ? training_mode() : inference_mode());
  const bool replica = training && replicated();
  if (replica) {
    batch = std::max<std::int64_t>(batch, 1);
    replica_state();  // the gradient buckets: taken before any arena, as whole or split steps need them
  }
  // Loss scaling on a device with queues: the unscaled gradients and their finite check
  // on the device, then the update program (Note [Loss scaling on the device]); both
  // planned and their memory taken here, or (reduce_batch) the micro-batches below.
  const bool device_scaled = mode == Mode::scaled && !replica;
  const SampleShapes samples = samples_or_model(sample_shapes);
  const bool planned = programs_->entries.count(Programs::key(mode, batch, samples)) > 0;
  trim_programs(!planned);
  ++programs_->uses;
  ++(planned ? programs_->hits : programs_->misses);
  Entry& e = entry_mode(static_cast<int>(mode), batch, /*bind=*/false, samples);
  // Elsewhere loss scaling runs every training batch as gradients, then an update (one
  // micro-batch of the whole batch, unless memory asks for smaller ones).
  const bool scaled_split = training && !replica && !device_scaled && loss_scaling();
  if (scaled_split && !e.split) {
    try {
      entry_mode(static_cast<int>(Mode::grads), batch, true, samples);
      make_split(e, true, batch, batch, "");
    } catch (const OutOfMemory&) {
      if (!reduce_on_oom_) throw;  // the OOM split below, with its note
    }
  }
  // Under "fail" the full batch must fit, even if an earlier call split it.
  if (e.split && !reduce_on_oom_ && !(scaled_split && e.split->micro == batch)) e.split.reset();
  if (!e.split) {
    try {
      Entry& whole = entry_mode(static_cast<int>(mode), batch, true, samples);
      if (replica) reserve_replica_update();  // the update's arena fits too, or the slice splits
      if (device_scaled) reserve_scaled_update(whole);  // likewise
      return whole;
    } catch (const OutOfMemory& oom) {
      if (!reduce_on_oom_ || batch < 2) throw;
      // The largest power-of-two fraction of the batch whose program fits (beside the
      // gradient sums, on a device: taken first).
      const Mode micro_mode = static_cast<Mode>(training ? split_training_mode() : inference_mode());
      if (micro_mode == Mode::accumulate) reserve_device_grad_sums();
      std::int64_t micro = batch / 2;
      for (;; micro /= 2) {
        try {
          Entry& m = entry_mode(static_cast<int>(micro_mode), micro, true, samples);
          if (!m.split) break;  // a split left over (inference): that size does not fit either
        } catch (const OutOfMemory&) {
        }
        if (micro == 1) {
          throw OutOfMemory(std::string(oom.what()) + "; reduce_batch: not even micro-batches of 1 fit", oom.hint(),
                            oom.shared_details());
        }
      }
      make_split(e, training, batch, micro, oom.what());
    }
  }
  MicroBatches& s = *e.split;
  if (s.noted_scope != oom_scope_ && notes_ && s.micro < s.batch) {
    s.noted_scope = oom_scope_;
    const std::string head =
        std::string(what) + " batch " + std::to_string(batch) +
        (replica ? " (each rank's slice of the global batch " + std::to_string(batch * replica_count()) + ")" : "") +
        " does not fit (" + s.cause + "); ";
    if (training) {
      notes_->push_back(head + "training on micro-batches of " + std::to_string(s.micro) +
                        (replica ? " on every rank" : "") +
                        " with gradient accumulation, so the effective batch stays " +
                        std::to_string(replica ? batch * replica_count() : batch) +
                        (micro_batches_differ(model_.graph_.layers())
                             ? "; Dropout/BatchNormalization see micro-batches, so results differ from a full batch"
                             : "; results match a full batch within float rounding"));
    } else {
      // Inference: Dropout is off and BatchNormalization uses its moving statistics, so
      // every row's output is its own whatever the batch.
      notes_->push_back(head + "running it as micro-batches of " + std::to_string(s.micro) +
                        " with the outputs concatenated; results match a full batch within float rounding");
    }
    if (on_note_) on_note_(notes_->back());
  }
  return e;
}

int StepEngine::inference_mode() const {
  if (training_forward_) return static_cast<int>(Mode::infer_training);
  return static_cast<int>(weighted_evaluation_ ? Mode::infer_weighted : Mode::infer);
}

int StepEngine::training_mode() const {
  // A replica's too: it unscales before the sums (Note [Loss scale across ranks]).
  if (loss_scaling() && queued_device()) return static_cast<int>(Mode::scaled);
  return static_cast<int>(replicated() ? Mode::grads : Mode::train);
}

int StepEngine::split_training_mode() const {
  return static_cast<int>(queued_device() ? Mode::accumulate : Mode::grads);
}

// Note [Micro-batches on the device]: on a device with queues a split training step sums
// its micro-batches' gradients where they are made. Each micro-batch of r rows runs a
// Mode::accumulate program: its gradients, each added into the step's sum for its weight
// (Programs::device_grad_sums, device memory taken before the micro-batch size is chosen,
// so the choice counts it) by accumulate_gradient, sum += g · (r / d), d = rows · scale
// (Programs::scale, copied in before the micro-batches), and the count of sums holding a
// non-finite element, read back with the loss. The sums are zeroed first by copies from
// a zero buffer; after the last micro-batch each is copied device to device into the
// update program's inputs, and the update is launched as a graph like the micro-batches'
// programs. So no gradient crosses PCIe, at the cost of the sums' device memory (the
// trainable weights' size again, as the accumulators of PyTorch's or Keras's gradient
// accumulation). The result is the host path's sum · 1/(rows · scale) within rounding.
// A data-parallel slice that does not fit does the same with the loss scale alone as the
// divisor (its seed carries 1/B, Note [Replica gradient seed]), and its sums are copied
// into the bucket buffer, so they reach the buckets unscaled, as a whole slice's do (Note
// [Loss scale across ranks]). The CPU keeps the host's sum, which costs it no copy.
void StepEngine::reserve_device_grad_sums() {
  Programs& p = *programs_;
  std::size_t largest = 0;
  for (Weight* w : p.trainable) largest = std::max(largest, static_cast<std::size_t>(w->value.numel()) * sizeof(float));
  if (p.device_grad_sums.size() != p.trainable.size()) {
    p.device_grad_sums.assign(p.trainable.size(), Tensor());
    for (std::size_t k = 0; k < p.trainable.size(); ++k) {
      const Shape& shape = p.trainable[k]->value.shape();
      reserve_buffer(p.device_grad_sums[k], static_cast<std::size_t>(shape.numel()) * sizeof(float), "gradient sums",
                     "micro-batches on the device", DType::f32);
      p.device_grad_sums[k] = p.device_grad_sums[k].reshape(shape);  // the weight's shape, for the programs
    }
  }
  reserve_zero_gradient(largest, "micro-batches on the device");
}

void StepEngine::make_split(Entry& e, bool training, std::int64_t batch, std::int64_t micro, std::string cause) {
  if (training) entry_mode(static_cast<int>(Mode::apply), 0);
  const Graph& g = e.program.graph();
  auto s = std::make_unique<MicroBatches>();
  s->mode = static_cast<Mode>(training ? split_training_mode() : inference_mode());
  s->batch = batch;
  s->micro = micro;
  // Staged as the feeds write them: inputs as float32, targets in their program type.
  for (int x : e.xs) s->xs.push_back(Tensor::zeros(g.desc(x).shape, DType::f32));
  s->x_ext.assign(e.xs.size(), nullptr);
  for (int y : e.ys) s->ys.push_back(Tensor::zeros(g.desc(y).shape, g.desc(y).dtype));
  for (int pr : e.preds) s->preds.push_back(Tensor::zeros(g.desc(pr).shape, DType::f32));
  if (e.sample_weight >= 0) s->sample_weight = Tensor::zeros(g.desc(e.sample_weight).shape, DType::f32);
  s->output_losses.assign(e.output_losses.size(), 0.0f);
  if (s->mode == Mode::grads) {
    for (Weight* w : programs_->trainable) s->grad_sums.push_back(Tensor::zeros(w->value.shape(), DType::f32));
  }
  if (s->mode == Mode::accumulate) reserve_device_grad_sums();
  s->cause = std::move(cause);
  e.split = std::move(s);
}

void StepEngine::run_micro_batch_programs(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) {
  MicroBatches& a = *e.split;
  const bool training = !is_inference(a.mode);
  const Graph& full = e.program.graph();
  // Bytes per row of a tensor of the whole batch.
  const auto row_bytes = [&](int value) { return full.desc(value).bytes() / static_cast<std::size_t>(a.batch); };
  std::vector<const char*> xs;
  for (std::size_t i = 0; i < e.xs.size(); ++i) {
    xs.push_back(static_cast<const char*>(a.x_ext[i] ? a.x_ext[i] : a.xs[i].raw()));
    a.x_ext[i] = nullptr;
  }
  // Copies rows [off, off + r) of a staged tensor into (or out of) a micro-batch's program.
  const auto rows_in = [](void* dst, const Tensor& whole, std::size_t row, std::int64_t off, std::int64_t r) {
    std::memcpy(dst, static_cast<const char*>(whole.raw()) + static_cast<std::size_t>(off) * row,
                static_cast<std::size_t>(r) * row);
  };
  for (Tensor& g : a.grad_sums) std::memset(g.raw(), 0, g.nbytes());
  if (a.mode == Mode::accumulate) {  // the device's sums zeroed on the compute queue, before the first micro-batch
    Programs& p = *programs_;
    DeviceQueues& q = *backend_->queues();
    for (const Tensor& sum : p.device_grad_sums) q.copy_on_device(Queue::compute, sum.raw(), p.zero_gradient.raw(), sum.nbytes());
    a.nonfinite = 0;
  }
  double loss_sum = 0;
  std::vector<double> output_loss_sums(a.output_losses.size(), 0.0);
  std::int64_t index = 0;
  for (std::int64_t off = 0; off < rows; off += a.micro, ++index) {
    const std::int64_t r = std::min(a.micro, rows - off);
    Entry* mp = &entry_mode(static_cast<int>(a.mode), r, true, e.samples);
    if (mp->split) {  // a split left by an earlier call; a piece no larger than micro fits
      mp->split.reset();
      mp = &entry_mode(static_cast<int>(a.mode), r, true, e.samples);
    }
    Entry& m = *mp;
    for (std::size_t i = 0; i < m.xs.size(); ++i) m.set_x(xs[i] + static_cast<std::size_t>(off) * row_bytes(e.xs[i]), i);
    for (std::size_t i = 0; i < m.ys.size() && i < a.ys.size(); ++i) {
      rows_in(m.y_data(i), a.ys[i], row_bytes(e.ys[i]), off, r);
    }
    if (m.sample_weight >= 0 && a.sample_weight.defined()) {
      rows_in(m.sample_weight_data(), a.sample_weight, sizeof(float), off, r);
    }
    StepContext mc = ctx;
    if (training) mc.step = ctx.step + (index << 40);  // a dropout stream of its own per micro-batch
    mc.row_offset = 0;  // (so not the global batch's rows: Note [Random draws by global row])
    mc.rows = 0;
    if (before_run) before_run(m.program, false);
    run_program(m, mc);
    // Losses are means over their micro-batch (Keras's sum_over_batch_size): weight by rows.
    if (m.loss >= 0) loss_sum += static_cast<double>(m.loss_value()) * static_cast<double>(r);
    for (std::size_t i = 0; i < m.output_losses.size() && i < output_loss_sums.size(); ++i) {
      output_loss_sums[i] += static_cast<double>(m.output_loss_value(i)) * static_cast<double>(r);
    }
    for (std::size_t i = 0; i < m.preds.size(); ++i) {
      const std::size_t row = row_bytes(e.preds[i]);
      std::memcpy(static_cast<char*>(a.preds[i].raw()) + static_cast<std::size_t>(off) * row, m.pred_data(i),
                  static_cast<std::size_t>(r) * row);
    }
    if (a.mode == Mode::accumulate) a.nonfinite += m.staged->nonfinite;  // its sums, added on the device
    // Each micro-batch's gradient is of its mean loss: weight it by its rows (host sums;
    // an accumulate program has no gradient values, only its sums).
    for (std::size_t k = 0; k < m.gradient_values.size(); ++k) {
      float* sum = a.grad_sums[m.gradient_weights[k]].data<float>();
      const std::int64_t n = a.grad_sums[m.gradient_weights[k]].numel();
      const void* grad = m.program.data(m.gradient_values[k]);
      if (!backend_->host_addressable()) {
        std::vector<float>& copied = programs_->host_scratch;  // on a device: the gradient, copied out
        copied.resize(static_cast<std::size_t>(n));
        read_buffer(copied.data(), grad, static_cast<std::size_t>(n) * sizeof(float));
        grad = copied.data();
      }
      const float* g = static_cast<const float*>(grad);
      const float w = static_cast<float>(r);
      for (std::int64_t i = 0; i < n; ++i) sum[i] += w * g[i];
    }
    for (std::size_t i = 0; i < m.xs.size(); ++i) m.set_x(nullptr, i);
  }
  for (std::size_t i = 0; i < output_loss_sums.size(); ++i) {
    a.output_losses[i] = static_cast<float>(output_loss_sums[i] / static_cast<double>(rows));
  }
  a.loss = static_cast<float>(loss_sum / static_cast<double>(rows));
}

void StepEngine::reserve_scaled_update(const Entry& e) {
  reserve_update_arena("loss scaling on the device");
  reserve_zero_gradient(zero_gradient_bytes(e), "loss scaling on the device");
}

void StepEngine::reserve_zero_gradient(std::size_t bytes, const char* why) {
  Programs& p = *programs_;
  if (bytes > 0 && reserve_buffer(p.zero_gradient, bytes, "zero gradient", why)) {
    const std::vector<char> zeros(p.zero_gradient.nbytes(), 0);
    write_buffer(p.zero_gradient.raw(), zeros.data(), zeros.size());
  }
}

void StepEngine::reserve_update_arena(const char* why) {
  const Entry& apply = entry_mode(static_cast<int>(Mode::apply), 0, /*bind=*/false);
  reserve_buffer(programs_->update_arena, std::max<std::size_t>(apply.program.arena_bytes(), 64), "update arena", why);
}

bool StepEngine::reserve_buffer(Tensor& t, std::size_t bytes, const char* what, const char* why, DType dtype) {
  if (t.defined() && t.nbytes() >= bytes) return false;
  sync_device();  // a program still queued may use the old one
  t = Tensor();
  try {
    const auto n = static_cast<std::int64_t>((bytes + dtype_size(dtype) - 1) / dtype_size(dtype));
    t = allocate_tensor(backend_->allocator(), Shape{n}, dtype);
  } catch (const OutOfMemory& oom) {
    throw OutOfMemory(std::string(oom.what()) + " for the " + what + " of model '" + model_.name_ + "' (" + why + ")",
                      oom.hint(), oom.shared_details());
  }
  return true;
}

StepEngine::Entry& StepEngine::update_in_own_arena() {
  Programs& p = *programs_;
  Entry& apply = entry_mode(static_cast<int>(Mode::apply), 0, /*bind=*/false);
  // The shared arena's growth rebinds every entry to it, this one too: back to its own.
  if (!apply.bound || apply.program.arena() != p.update_arena.raw()) {
    apply.program.bind(p.update_arena.raw());
    apply.graph.drop();  // captured with the other arena's addresses
    apply.bound = true;
  }
  return apply;
}

std::size_t StepEngine::zero_gradient_bytes(const Entry& e) const {
  std::size_t bytes = 0;
  const std::vector<Weight*>& trainable = programs_->trainable;
  for (std::size_t k = 0; k < trainable.size(); ++k) {
    if (std::find(e.gradient_weights.begin(), e.gradient_weights.end(), k) == e.gradient_weights.end()) {
      bytes = std::max(bytes, trainable[k]->value.nbytes());
    }
  }
  return bytes;
}

bool StepEngine::update_loss_scale(bool finite) {
  const OptimizerOptions::LossScale& ls = model_.compile_options_.optimizer.loss_scale;
  if (!finite) {
    if (ls.dynamic) loss_scale_ /= 2.0;
    loss_scale_good_steps_ = 0;
    ++skipped_steps_;
    ++fit_skipped_steps_;
    return false;
  }
  if (ls.dynamic && ++loss_scale_good_steps_ >= ls.growth_steps) {
    loss_scale_ *= 2.0;
    loss_scale_good_steps_ = 0;
  }
  return true;
}

// Class and sample weights (FitOptions::class_weight / sample_weight), staged per batch
// into the program's sample-weight input, or a split step's staging.
void StepEngine::set_sample_weighting(bool weighted, std::map<std::int64_t, double> class_weight) {
  class_weight_ = std::move(class_weight);
  if (weighted == weighted_) return;
  weighted_ = weighted;
  // The training programs gain or lose their sample-weight input: plan them again.
  drop_lookahead();  // a batch staged ahead belongs to an entry about to go
  if (programs_) programs_->entries.clear();
}

void StepEngine::stage_sample_weights(Entry& e, std::int64_t rows, const float* given) {
  float* w = e.sample_weight_data();
  for (std::int64_t i = 0; i < rows; ++i) w[i] = given ? given[i] : 1.0f;
  if (class_weight_.empty() || is_inference(e.mode)) return;  // Keras weighs only training by class
  // The class of each staged target, as Keras's class_weight_to_sample_weights reads it.
  const TensorDesc& y = e.program.graph().desc(e.ys[0]);
  const std::int64_t width = y.shape.rank() >= 2 ? y.shape.numel() / y.shape[0] : 1;
  for (std::int64_t i = 0; i < rows; ++i) {
    std::int64_t cls = 0;
    if (y.dtype == DType::i32) {
      cls = static_cast<const std::int32_t*>(e.y_data(0))[i];
    } else {
      const float* t = static_cast<const float*>(e.y_data(0)) + i * width;
      if (width == 1) {
        cls = static_cast<std::int64_t>(std::nearbyint(t[0]));
      } else {
        cls = std::max_element(t, t + width) - t;
      }
    }
    const auto it = class_weight_.find(cls);
    if (it != class_weight_.end()) w[i] *= static_cast<float>(it->second);
  }
}

}  // namespace nnfit
