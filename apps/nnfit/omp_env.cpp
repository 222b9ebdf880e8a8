// How long libgomp's idle threads spin before they sleep, set before libgomp reads it.
//
// Note [OpenMP spin]. Between parallel regions libgomp's worker threads busy-wait for
// GOMP_SPINCOUNT iterations (300,000 by default: milliseconds) before blocking. On a quiet
// machine with a core per thread that is what makes small steps fast: a shorter spin lets
// workers fall asleep between kernels and the futex wake-ups cost the MLP 10-16% of its
// throughput (bench/RESULTS.md, "OpenMP spin"). On a machine whose cores are already busy
// the same spinning is ruinous: the spinning threads take the time slices the working ones
// need, and a thread descheduled inside a region stalls its partner at the next barrier
// (a 2-thread MLP epoch on a loaded 2-core machine: 46 s with the default, 5.8 s with a
// spin of 1,000). So by default ("auto") nnfit shortens the spin only when the machine is
// busy when it starts: a 1-minute load average at or above the cores this process may use.
//
// libgomp reads the variable once, in its own constructor, before main() runs; a setenv
// from the executable's .preinit_array is lost, because libc installs the original
// environment after it. So when nnfit changes it, it sets it and executes itself again
// (same pid, same arguments, about 6 ms). A GOMP_SPINCOUNT or OMP_WAIT_POLICY the user set
// always wins; NNFIT_OPENMP_SPIN=default never touches it, a number always sets it.
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "commands.h"
#include "nnfit/core/env_flags.h"

namespace nnfit::cli {

namespace {

constexpr const char* kBusySpinCount = "1000";  // libgomp's own choice when oversubscribed

bool machine_is_busy() {
  double load = 0;
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return false;
  const bool read = std::fscanf(f, "%lf", &load) == 1;
  std::fclose(f);
  cpu_set_t set;
  if (!read || sched_getaffinity(0, sizeof set, &set) != 0) return false;
  return load >= CPU_COUNT(&set);
}

}  // namespace

void apply_openmp_spin_default(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  const std::string choice = env_flag("NNFIT_OPENMP_SPIN").value_or("auto");
  if (choice == "default") return;
  std::string spin = choice;
  if (choice == "auto" || choice.empty()) {
    if (!machine_is_busy()) return;
    spin = kBusySpinCount;
  }
  if (setenv("GOMP_SPINCOUNT", spin.c_str(), 1) != 0) return;
  // The resolved path, not /proc/self/exe, so the process keeps its name ("nnfit" in ps,
  // top and nvidia-smi rather than "exe").
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    execv(self, argv);
  }
  // Not reached unless exec failed (no /proc, say): run on with libgomp's default.
  unsetenv("GOMP_SPINCOUNT");
}

}  // namespace nnfit::cli
