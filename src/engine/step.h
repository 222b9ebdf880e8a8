// The ways of running a step (Note [Step kinds]): plain (the host runs the program),
// captured (a device's queues capture it as a graph and replay it), micro-batched (a
// batch that does not fit, or loss scaling on the host, as micro-batches whose gradients
// are summed into one update), loss-scaled (on a device: scaled gradients checked there,
// then the update), replicated (data-parallel: this rank's slice, gradient sums across
// ranks, then the update). Each is a class behind one small interface, Step.
#pragma once
#include <cstdint>

#include "engine/engine_types.h"

namespace nnfit {

using Entry = StepEngine::Entry;
using BeforeRun = StepEngine::BeforeRun;
using MicroBatches = StepEngine::MicroBatches;
using Programs = StepEngine::Programs;
using Replicas = StepEngine::Replicas;

enum class StepKind { plain, captured, micro_batched, loss_scaled, replicated };
const char* step_kind_name(StepKind kind);

// Note [Step kinds]: which way an entry's step runs, a function of the entry and the
// engine alone: a data-parallel gradient entry (Mode::grads or Mode::scaled while more
// than one rank trains) is replicated, whether its slice is split or not; else a split
// entry is micro-batched; else a Mode::scaled entry (loss scaling on a device with queues)
// is loss-scaled; else the program runs once, captured where the backend's queues can
// capture graphs, plain elsewhere. The steps that run several programs (micro-batched,
// loss-scaled, replicated) run each through the engine's run_program, so they are
// captured on a device too.
StepKind choose_step(Mode mode, bool split, bool replicated, bool queues);

// One way of running a step. Made by the StepEngine (one of each), which outlives it.
// Thread safety: none (the engine's thread).
class Step {
 public:
  virtual ~Step() = default;
  virtual StepKind kind() const = 0;
  // Runs entry `e` on its staged batch of `rows` rows (its slice's, replicated: may be
  // 0). `before_run` (may be empty) is called before each program the step runs, with
  // whether that program is all optimizer update. Returns whether the optimizer stepped
  // (a loss-scaled step with non-finite gradients is skipped; inference: true).
  virtual bool run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) = 0;
};

// The program run by the host's call (the CPU, or a device without queues): the batch
// copied in before (a staged entry), the results out after.
class PlainStep final : public Step {
 public:
  explicit PlainStep(StepEngine& engine) : engine_(engine) {}
  StepKind kind() const override { return StepKind::plain; }
  bool run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) override;
  // The program alone (no before_run): what the other steps run each program with.
  void run_program(Entry& e, const StepContext& ctx);

 private:
  StepEngine& engine_;
};

// The program on a device's queues, captured as a graph at its first run and replayed
// after where the queues can (Note [Captured steps]), else enqueued kernel by kernel.
class CapturedStep final : public Step {
 public:
  explicit CapturedStep(StepEngine& engine) : engine_(engine) {}
  StepKind kind() const override { return StepKind::captured; }
  bool run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) override;
  void run_program(Entry& e, const StepContext& ctx);
  // The step's values copied in, then the graph launched (captured first if need be) or
  // the program run kernel by kernel. `body`, if given, is what runs (and is captured)
  // instead of e.program.run: the program with what must be enqueued between its kernels
  // (a data-parallel step's gradient sums); it is given the context whose step values
  // are in device memory.
  void launch(Entry& e, const StepContext& ctx, DeviceQueues& queues,
              const std::function<void(const StepContext&)>& body = {});

 private:
  StepEngine& engine_;
};

// A split entry (MicroBatches): its micro-batches' programs, then for training the
// update from their summed gradients (on the host, or on the device: Note [Micro-batches
// on the device]), after loss scaling's decision when it is on.
class MicroBatchedStep final : public Step {
 public:
  explicit MicroBatchedStep(StepEngine& engine) : engine_(engine) {}
  StepKind kind() const override { return StepKind::micro_batched; }
  bool run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) override;

 private:
  // Copies the summed gradients times `inv` into the update's inputs (on the device:
  // device to device); returns whether every one is finite (the host's check).
  bool feed_update(Entry& apply, const MicroBatches& a, float inv);
  StepEngine& engine_;
};

// A Mode::scaled entry on a device with queues (Note [Loss scaling on the device]).
class LossScaledStep final : public Step {
 public:
  explicit LossScaledStep(StepEngine& engine) : engine_(engine) {}
  StepKind kind() const override { return StepKind::loss_scaled; }
  bool run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) override;

 private:
  StepEngine& engine_;
};

// One data-parallel step on this rank's slice (replicas.cpp has the notes): the slice's
// gradients into the buckets, each bucket's sum started as it completes, then the update
// from the global mean. Its per-step bookkeeping lives in the members below.
class ReplicatedStep final : public Step {
 public:
  explicit ReplicatedStep(StepEngine& engine) : engine_(engine) {}
  StepKind kind() const override { return StepKind::replicated; }
  bool run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) override;

 private:
  // The buckets zeroed where no gradient will be written, the step numbered on both
  // communicators, and the gradient seed (Note [Replica gradient seed]) written.
  void begin(Entry& e, std::int64_t rows, const StepContext& ctx, double scale);
  // Starts the sums of the buckets no gradient is owed to any more, in index order.
  void start_complete();
  // Gradient j of the slice's program copied into its bucket.
  void finish(Entry& e, std::size_t j);
  // A split slice: its micro-batches, their sums copied into the buckets.
  void run_split(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run);
  // A whole slice: the program with each gradient's copy and bucket sum as it completes.
  void run_whole(Entry& e, const StepContext& slice_ctx, const BeforeRun& before_run);
  // The program run with its gradients' copies and sums between its kernels.
  void run_with_sums(Entry& e, const StepContext& c);
  // Waits for every bucket's sum; records the wait (steps.jsonl's allreduce_us).
  void wait_for_sums();
  // The update's inputs from the buckets (unscaled and checked under host loss scaling);
  // returns whether the step's gradients are finite on this rank.
  bool feed_update(Entry& apply, double scale, bool unscaled);
  StepEngine& engine_;
  // The running step's: its buckets' buffer and communicator, the device queues that copy
  // into them (null: host memory), the gradients still owed to each bucket and the
  // buckets whose sums have started.
  float* flat_ = nullptr;
  dist::Communicator* sums_ = nullptr;
  DeviceQueues* queues_ = nullptr;
  std::vector<int> owed_;
  std::size_t started_ = 0;
};

}  // namespace nnfit
