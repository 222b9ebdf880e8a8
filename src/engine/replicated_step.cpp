// ReplicatedStep: one data-parallel step on this rank's slice of the global batch
// (docs/design/distributed.md; the notes are in replicas.cpp): the slice's gradients,
// seeded with its share of the rows, copied into the gradient buckets, each bucket's sum
// across ranks started as the backward pass completes it, then the update from the
// global mean, after the ranks agree on loss scaling's verdict.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "engine/step.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/communicator.h"

namespace nnfit {

namespace {

// Writes the gradient seed `one` (on a device on the compute queue, in order with the
// step) and sets it back to 1 when the step ends, however it ends.
struct SeedWrite {
  const StepEngine& engine;
  Tensor& one;
  void operator()(const float* value) const {
    DeviceQueues* q = engine.backend_->queues();
    if (q) q->copy_to_device(Queue::compute, one.raw(), value, sizeof(float));
    else engine.write_buffer(one.raw(), value, sizeof(float));
  }
  ~SeedWrite() {
    static const float kUnit = 1.0f;  // back to 1 after the step (ordered after it on a device)
    try {
      (*this)(&kUnit);
    } catch (const Error&) {  // the step failed already (its error is the one to report)
    }
  }
};

}  // namespace

bool ReplicatedStep::run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) {
  Programs& p = *engine_.programs_;
  // Note [Replica gradient seed]: the slice's loss is the mean over its b rows, the
  // global batch's over B. Seeding the slice's backward pass (dL/dL) with b / B makes its
  // gradient (1/B) * sum over its rows, so the ranks' gradients add up to the global
  // batch's mean, and every row's gradient in the backward pass is the one a single
  // process computes: what makes float16's overflows (loss scaling) the same. A split
  // slice seeds each micro-batch of r rows with 1/B and weights it by r, which is the same
  // sum. Under loss scaling the seed is also times the scale; the sum is unscaled below.
  const double scale = engine_.loss_scaling() ? engine_.loss_scale_ : 1.0;
  begin(e, rows, ctx, scale);
  SeedWrite seed_write{engine_, p.one};
  seed_write(&p.seed_host);
  // A loss-scaled slice on a device unscales and checks its gradients before their sums
  // (Note [Loss scale across ranks]): its unscale_gradient nodes divide by Programs::scale,
  // as do a split slice's accumulate_gradient nodes (Note [Micro-batches on the device];
  // the seed carries the 1/B).
  const bool split_on_device = e.split && e.split->mode == Mode::accumulate;
  const bool unscaled = (e.mode == Mode::scaled && !e.split) || split_on_device;
  if (unscaled) {
    p.scale_host = static_cast<float>(scale);
    engine_.backend_->queues()->copy_to_device(Queue::compute, p.scale.raw(), &p.scale_host, sizeof p.scale_host);
  }
  // Random ops (Dropout) draw the global batch's numbers for this slice's rows, so the
  // masks are one process's (Note [Random draws by global row]).
  StepContext slice_ctx = ctx;
  slice_ctx.row_offset = engine_.replica_slice(engine_.replica_global_rows_).first;
  slice_ctx.rows = rows;
  if (rows > 0 && e.split) run_split(e, rows, ctx, before_run);
  else if (rows > 0) run_whole(e, slice_ctx, before_run);
  // The next batch staged while the device runs this slice's step and its sums (Note
  // [Input double buffer]); fit's lookahead sets replica_global_rows_, read above.
  engine_.run_lookahead();
  wait_for_sums();
  if (rows > 0 && !e.split && e.staged) e.finish_download(*engine_.backend_);

  // The update runs in an arena of its own: the shared one still holds this step's loss
  // and predictions, which the epoch's sums read after the step. (A split step copied
  // them out: its update runs in the shared arena, as in one process, where make_split
  // planned it, so a rank short of memory needs no second arena.)
  Entry* update = nullptr;
  if (e.split) {
    Entry& shared = engine_.entry_mode(static_cast<int>(Mode::apply), 0, /*bind=*/false);
    if (shared.program.arena() != p.arena.raw()) shared.bound = false;  // bound below, its graph dropped
    update = &engine_.entry_mode(static_cast<int>(Mode::apply), 0);
  } else {
    engine_.reserve_replica_update();  // made when the slice was planned; here if it was planned before
    update = &engine_.update_in_own_arena();
  }
  Entry& apply = *update;
  bool finite = feed_update(apply, scale, unscaled);
  // Note [Loss scale across ranks]: every rank must skip the same steps and keep the same
  // scale, or the replicas drift apart (and the next step's scale differs). The summed
  // gradients are the same on every rank in practice, but MPI does not promise the same
  // bits everywhere (an algorithm may add in a different order per rank, and a sum near
  // the float range may overflow on one rank only), so the ranks agree on the verdict:
  // one sum of a double, only under loss scaling. Any rank's non-finite skips the step.
  // On a device (Mode::scaled) each rank unscales its own gradients in its gradient
  // program, u = g / scale (Programs::scale; the seed `one` is scale · b / B), flags a
  // non-finite element there, and the buckets sum the u: no gradient goes to host memory
  // for the check, only the flags' count with the loss. The verdict is then whether any
  // rank's gradients were non-finite (a NaN or an infinity in one makes every sum so);
  // the sum of finite u cannot overflow in practice (it would take |u| near 3e38 / ranks).
  // Dividing before or after the sum gives the same floats when the scale is a power of
  // two (a dynamic scale always is), else the same within rounding.
  if (unscaled) finite = rows == 0 || (split_on_device ? e.split->nonfinite : e.staged->nonfinite) == 0.0f;
  if (engine_.loss_scaling()) {
    double non_finite = finite ? 0.0 : 1.0;
    engine_.comm_->all_reduce_sum(&non_finite, 1, "allreduce of the loss scale's finite check");
    if (!engine_.update_loss_scale(non_finite == 0.0)) return false;
  }
  if (before_run) before_run(apply.program, true);
  engine_.run_program(apply, ctx);  // on a device with queues captured and replayed (Note [Captured steps])
  return true;
}

void ReplicatedStep::begin(Entry& e, std::int64_t rows, const StepContext& ctx, double scale) {
  Programs& p = *engine_.programs_;
  Replicas& rp = engine_.replica_state();
  flat_ = rp.flat.data<float>();  // device memory when rp.on_device
  // The buckets' communicator: NCCL's on a device (Note [Device gradient sums]), else comm_.
  sums_ = rp.on_device ? engine_.device_comm_.get() : engine_.comm_.get();
  queues_ = rp.on_device ? engine_.backend_->queues() : nullptr;
  // A rank sums zeros where it made no gradient (no rows); every gradient it made is
  // written over, and on the device the gaps between buckets hold zeros from the start.
  if (!rp.on_device) std::memset(flat_, 0, rp.flat.nbytes());
  else if (rows == 0) {
    p.host_scratch.assign(static_cast<std::size_t>(rp.flat.numel()), 0.0f);
    engine_.write_buffer(flat_, p.host_scratch.data(), rp.flat.nbytes());
  }
  engine_.comm_->set_step(ctx.step + 1);
  sums_->set_step(ctx.step + 1);
  // On a device the seed is copied in on the compute queue, before the step's work, from
  // host memory that stays as it is until the step's wait (no wait for the device here).
  const double global_rows = static_cast<double>(std::max<std::int64_t>(engine_.replica_global_rows_, 1));
  p.seed_host = static_cast<float>(scale * (e.split ? 1.0 : static_cast<double>(rows)) / global_rows);
  // Gradients this rank still owes each bucket; a rank without rows owes none (zeros).
  owed_.assign(rp.buckets.size(), 0);
  if (rows > 0 && !e.split) {
    for (std::size_t k : e.gradient_weights) ++owed_[static_cast<std::size_t>(rp.bucket_of[k])];
  }
  started_ = 0;
}

void ReplicatedStep::start_complete() {
  const Replicas& rp = *engine_.replicas_;
  for (; started_ < rp.buckets.size() && owed_[started_] == 0; ++started_) {
    const Replicas::Bucket& b = rp.buckets[started_];
    sums_->start_all_reduce_sum(flat_ + b.begin, b.end - b.begin, b.what.c_str());
  }
}

// Each gradient, of (1/B) * the slice's summed loss (the seed), as it is.
void ReplicatedStep::finish(Entry& e, std::size_t j) {
  const Replicas& rp = *engine_.replicas_;
  const std::size_t k = e.gradient_weights[j];
  const std::size_t bytes = static_cast<std::size_t>(engine_.programs_->trainable[k]->value.numel()) * sizeof(float);
  const void* grad = e.program.data(e.gradient_values[j]);
  if (queues_) queues_->copy_on_device(Queue::compute, flat_ + rp.offset[k], grad, bytes);
  else engine_.read_buffer(flat_ + rp.offset[k], grad, bytes);
  --owed_[static_cast<std::size_t>(rp.bucket_of[k])];
}

void ReplicatedStep::run_split(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) {
  // A slice that does not fit (Note [Micro-batches across ranks]): its micro-batches'
  // gradients are summed on this rank first, already weighted by their rows; their
  // buckets start after the last one (no overlap).
  Programs& p = *engine_.programs_;
  const Replicas& rp = *engine_.replicas_;
  const bool split_on_device = e.split->mode == Mode::accumulate;
  engine_.run_micro_batch_programs(e, rows, ctx, before_run);
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    const Tensor& g = split_on_device ? p.device_grad_sums[k] : e.split->grad_sums[k];
    float* dst = flat_ + rp.offset[k];
    if (split_on_device && rp.on_device) queues_->copy_on_device(Queue::compute, dst, g.raw(), g.nbytes());
    else if (split_on_device) engine_.read_buffer(dst, g.raw(), g.nbytes());  // host buckets
    else if (rp.on_device) engine_.write_buffer(dst, g.raw(), g.nbytes());
    else std::memcpy(dst, g.raw(), g.nbytes());
  }
}

void ReplicatedStep::run_whole(Entry& e, const StepContext& slice_ctx, const BeforeRun& before_run) {
  if (before_run) before_run(e.program, false);
  if (e.staged) e.upload(*engine_.backend_);
  // The program with each gradient's copy and its bucket's sum enqueued as it completes;
  // on the device also the sums left and the compute stream's join, so that a capture
  // holds the whole step (Note [Captured gradient sums]).
  if (engine_.replicas_->on_device) {
    if (!sums_->capturable()) e.graph.uncapturable = true;  // kernel by kernel, its sums between
    engine_.captured_step_->launch(e, slice_ctx, *queues_, [&](const StepContext& c) { run_with_sums(e, c); });
    started_ = engine_.replicas_->buckets.size();  // every sum is enqueued: by the body, or in the graph launched
  } else {
    run_with_sums(e, slice_ctx);
  }
  if (e.staged) e.download(*engine_.backend_);
}

void ReplicatedStep::run_with_sums(Entry& e, const StepContext& c) {
  Replicas& rp = *engine_.replicas_;
  if (engine_.data_parallel_.overlap) {
    auto it = rp.finals.find(&e.program);
    if (it == rp.finals.end()) {
      std::vector<std::vector<std::size_t>> per_step(std::max<std::size_t>(e.program.steps().size(), 1));
      for (std::size_t j = 0; j < e.gradient_values.size(); ++j) {
        const int s = e.program.producer_step(e.gradient_values[j]);
        per_step[s >= 0 ? static_cast<std::size_t>(s) : per_step.size() - 1].push_back(j);
      }
      it = rp.finals.emplace(&e.program, std::move(per_step)).first;
    }
    const auto& per_step = it->second;
    e.program.run(c, [&](std::size_t step) {
      if (per_step[step].empty()) {
        sums_->progress();
        return;
      }
      for (std::size_t j : per_step[step]) finish(e, j);
      start_complete();
    });
  } else {
    e.program.run(c);
    for (std::size_t j = 0; j < e.gradient_values.size(); ++j) finish(e, j);
  }
  if (rp.on_device) {
    start_complete();
    sums_->join();
  }
}

void ReplicatedStep::wait_for_sums() {
  // What the step waits for the sums after its backward pass (steps.jsonl's allreduce_us):
  // the communication the overlap did not hide. (A timed step's kernels, the only ones
  // logged, have run by now; on a device the results' copies follow the sums, so they are
  // read after the watchdog's wait.)
  const std::size_t n_buckets = engine_.replicas_->buckets.size();
  const auto wait_start = std::chrono::steady_clock::now();
  start_complete();
  NNFIT_CHECK(started_ == n_buckets, InvalidArgument, "internal: ", n_buckets - started_,
              " gradient bucket(s) never completed");
  sums_->wait_all();
  engine_.replica_allreduce_us_ =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - wait_start).count();
}

bool ReplicatedStep::feed_update(Entry& apply, double scale, bool unscaled) {
  Programs& p = *engine_.programs_;
  const Replicas& rp = *engine_.replicas_;
  Backend& backend = *engine_.backend_;
  const float inv = static_cast<float>(1.0 / scale);
  bool finite = true;
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    void* input = apply.program.data(apply.gradient_inputs[k]);
    const float* src = flat_ + rp.offset[k];
    const std::int64_t n = p.trainable[k]->value.numel();
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    if (!engine_.loss_scaling() || unscaled) {  // the sum as it is: the seed made it the global mean
      if (queues_) queues_->copy_on_device(Queue::compute, input, src, bytes);  // after the sums (wait_all)
      else engine_.write_buffer(input, src, bytes);
      continue;
    }
    if (!backend.host_addressable()) p.host_scratch.resize(static_cast<std::size_t>(n));  // on a device: copied in below
    float* dst = backend.host_addressable() ? static_cast<float*>(input) : p.host_scratch.data();
    if (rp.on_device) engine_.read_buffer(dst, src, bytes);  // the device's sums, for the finite check
    const float* sum = rp.on_device ? dst : src;
    bool ok = true;
#pragma omp simd reduction(&& : ok)
    for (std::int64_t i = 0; i < n; ++i) {
      dst[i] = sum[i] * inv;
      ok = ok && std::isfinite(dst[i]);
    }
    finite = finite && ok;
    engine_.write_buffer(input, dst, bytes);
  }
  return finite;
}

}  // namespace nnfit
