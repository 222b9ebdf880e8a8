#include "stop_signals.h"

#include <unistd.h>

#include "nnfit/dist/communicator.h"

namespace nnfit::cli {

namespace {

std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free, "the flag is set from a signal handler");

extern "C" void on_stop_signal(int sig) {
  // Under mpirun a SIGTERM may be the launcher ending the job for a dead rank: the MPI
  // communicator's handler (which this one replaced) names it (Note [Launcher termination]).
  if (sig == SIGTERM) dist::notify_termination_signal();
  int none = 0;
  if (!g_received.compare_exchange_strong(none, sig)) _exit(128 + sig);  // the second: at once
  static const char kNote[] = "\nnnfit: stopping at the next step (a second Ctrl-C or SIGTERM exits at once)\n";
  [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, kNote, sizeof kNote - 1);
}

}  // namespace

StopSignals::StopSignals() {
  g_received.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes in flight go on; fit looks at the flag
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

const std::atomic<int>* StopSignals::flag() const { return &g_received; }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

}  // namespace nnfit::cli
