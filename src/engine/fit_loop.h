// FitLoop: the epoch loop of one fit (both StepEngine::fit overloads run one over their
// EpochFeed): Keras's callbacks around epochs and batches, the resume point, each step
// taken from the feed (or staged ahead by the last step on a device: Note [Input double
// buffer]) and run by the engine's step for its entry, the epoch's logs with validation,
// and fit's end (EMA weights, on_train_end).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/engine_types.h"
#include "engine/fit_profile.h"

namespace nnfit {

// Made on fit's stack; the engine and the feed outlive it. While it lives the engine's
// fit state (fit_callbacks_, totals_, resume_, shard_validation_) is this fit's; its
// destructor clears it. Thread safety: none (fit's thread).
class FitLoop {
 public:
  // throws: InvalidArgument for a negative steps_per_epoch, an initial_epoch outside
  // [0, epochs], profile_steps without a log dir.
  FitLoop(StepEngine& engine, const FitOptions& options, std::int64_t steps_per_epoch, StepEngine::EpochFeed& feed,
          data::Autotuner* validation_tuner);
  ~FitLoop();
  FitLoop(const FitLoop&) = delete;
  FitLoop& operator=(const FitLoop&) = delete;

  History run();

 private:
  // on_train_begin, then where to start: a callback's restored backup, rank 0's when
  // replicated.
  void begin();
  // Whether FitOptions::interrupt (data-parallel: the ranks' agreed signal) stops training
  // at this boundary, `done` batches into `epoch`; records where.
  bool interrupt_at(std::int64_t epoch, std::int64_t done);
  // One epoch's batches; false when it was interrupted (no validation, no epoch end).
  bool run_epoch(std::int64_t epoch);
  // Step s of the epoch; false at the end of the pass or when training stops.
  bool run_step(std::int64_t epoch, std::int64_t s);
  // The next batch: the one staged ahead by the last step, else the feed's (timed as
  // input wait, staged to the device as h2d). Null at the end of the pass.
  StepEngine::Entry* take_batch(std::int64_t global_step, std::int64_t& rows, double& input_wait, double& h2d);
  // The epoch's logs (sums across ranks, validation, throughput) into the history, and
  // on_epoch_end.
  void end_epoch(std::int64_t epoch);
  // After the last epoch: queued work done, EMA weights, on_train_end.
  void finish();
  template <typename Hook>
  void call_callbacks(Hook&& hook);

  StepEngine& engine_;
  const FitOptions& options_;
  std::int64_t steps_per_epoch_;
  std::vector<std::string> step_notes_;
  StepEngine::EpochFeed limited_;  // the feed cut into steps_per_epoch batches, if asked
  StepEngine::EpochFeed& feed_;
  data::Autotuner* validation_tuner_;
  StepEngine::Totals totals_;
  FitProfile profile_;
  History history_;
  StepContext ctx_;
  std::int64_t start_epoch_ = 0, skip_ = 0;
  std::string progress_;  // a resumed epoch's sums
  // The running epoch's time in steps and waiting for batches.
  double train_seconds_ = 0, wait_seconds_ = 0;
  Logs batch_logs_;
  // The batch the last step's lookahead took (Note [Input double buffer]); a batch left
  // here when the epoch stops early is dropped.
  struct Ahead {
    StepEngine::Entry* e = nullptr;
    std::int64_t rows = 0;
    double input_wait = 0, h2d = 0;
    bool taken = false;
  } ahead_;
  // The lookahead run_program calls (StepEngine::lookahead_): batch next_step_ taken and
  // staged.
  std::int64_t next_step_ = 0;
  std::function<void()> take_next_;
};

}  // namespace nnfit
