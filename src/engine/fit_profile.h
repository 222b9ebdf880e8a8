// FitProfile: what one fit records for the profiler (Note [Step breakdown]): with a log
// dir every step's parts go to steps.jsonl and the training programs time their kernels
// (ops.json, pipeline.json at each epoch end); profile_steps brackets a trace session;
// NNFIT_KERNEL_TIMES prints the full batch's kernel times when fit ends.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "engine/engine_types.h"
#include "model/step_profile.h"
#include "nnfit/profile/step_log.h"

namespace nnfit {

// Made by FitLoop for one fit; the engine outlives it. Its destructor stops a trace
// session it started and the kernel timers it turned on, however fit ends (a NaN loss,
// bad data), so a later fit or evaluate does not pay for them.
// Thread safety: none (fit's thread).
class FitProfile {
 public:
  // throws: InvalidArgument for profile_steps without a log dir or unreadable; DataError
  // when the log dir cannot be made.
  FitProfile(StepEngine& engine, const FitOptions& options);
  ~FitProfile();
  FitProfile(const FitProfile&) = delete;
  FitProfile& operator=(const FitProfile&) = delete;

  bool logging() const { return log_steps_; }
  // What run_entry calls before each program of a step (empty without a log dir).
  const StepEngine::BeforeRun& before_run() const { return time_program_; }
  // Before step `global_step` (1-based: the iteration it makes): a trace session starts
  // at the range's first step.
  void begin_step(std::int64_t global_step);
  // After a step of `rows` on `e` (counted for the kernel times when it is the full batch).
  void count_step(const StepEngine::Entry& e, std::int64_t rows);
  // The current step's programs' kernel times by phase, into `rec` (with a log dir).
  void add_phases(profile::StepRecord& rec);
  // After step `global_step`: its record into steps.jsonl's buffer (with a log dir); a
  // trace session ends at the range's last step.
  void end_step(const profile::StepRecord& rec, std::int64_t global_step);
  // An epoch that ended early (interrupted): its lines written.
  void flush();
  // An epoch's end: steps.jsonl, ops.json and pipeline.json written.
  void end_epoch(std::int64_t epoch);
  // fit's end: a trace session still running ends; the kernel times printed.
  void finish();

 private:
  void finish_trace();
  StepEngine& engine_;
  const FitOptions& options_;
  const bool kernel_times_;         // NNFIT_KERNEL_TIMES
  const std::int64_t timed_batch_;  // the full batch, whose program's kernels it prints
  std::int64_t timed_steps_ = 0;
  const bool log_steps_;  // a log dir
  std::optional<profile::StepRange> trace_steps_;
  std::unique_ptr<profile::StepLogWriter> step_log_;
  step_profile::ProfileFiles files_;
  std::vector<step_profile::TimedProgram> timed_;  // the training programs whose kernels ops.json sums
  std::int64_t logged_steps_ = 0;
  // The programs the current step runs (one, or a split step's micro-batch programs and
  // its update-only one) and whether each is all update; each is timed from its first run.
  std::vector<std::pair<Program*, bool>> step_programs_;
  StepEngine::BeforeRun time_program_;
  bool tracing_ = false;  // our trace session is running
};

}  // namespace nnfit
