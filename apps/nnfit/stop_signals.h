// SIGINT and SIGTERM while `nnfit train` trains (what a preempted cloud job or Ctrl-C
// sends): the first sets a flag that fit reads at the next step boundary
// (FitOptions::interrupt: callbacks' on_train_end run, a BackupAndRestore keeps that
// step), a second of either exits at once with 128 + the signal number.
#pragma once
#include <atomic>
#include <csignal>

namespace nnfit::cli {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the ones before
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The signal received (0: none yet), for FitOptions::interrupt.
  const std::atomic<int>* flag() const;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// "SIGINT", "SIGTERM" or "signal N".
const char* signal_name(int sig);

}  // namespace nnfit::cli
