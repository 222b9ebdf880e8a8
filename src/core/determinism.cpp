#include "nnfit/core/determinism.h"

#include <atomic>

#include "nnfit/core/env_flags.h"

namespace nnfit {

namespace {

// -1: not decided yet (the environment decides on first use).
std::atomic<int> g_determinism{-1};

}  // namespace

void set_op_determinism(bool on) { g_determinism.store(on ? 1 : 0); }

bool op_determinism() {
  int v = g_determinism.load();
  if (v < 0) {
    v = env_flag_enabled("NNFIT_DETERMINISTIC") ? 1 : 0;
    int unset = -1;
    g_determinism.compare_exchange_strong(unset, v);
    v = g_determinism.load();
  }
  return v == 1;
}

}  // namespace nnfit
