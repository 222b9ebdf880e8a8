// How long libgomp's idle threads spin before they sleep, set before libgomp reads it.
//
// Note [OpenMP spin]. Between parallel regions libgomp's worker threads busy-wait for
// GOMP_SPINCOUNT iterations (300,000 by default: milliseconds) before blocking. On a quiet
// machine with a core per thread that costs nothing; as soon as anything else wants those
// cores (the input pipeline's threads, another process) the spinning threads take their
// time slices, and a thread descheduled in the middle of a region stalls its partner at
// the next barrier for a whole slice (bench/RESULTS.md, "OpenMP spin": a 2-thread MLP
// epoch on a loaded 2-core machine, 46 s with the default spin, 5.8 s with a short one).
//
// libgomp reads the variable once, in its own constructor, before main() runs; and a
// setenv from the executable's .preinit_array is lost, because libc installs the
// original environment after it. So when neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is
// set, nnfit sets its default and executes itself again (same pid, same arguments, a few
// milliseconds); the second start finds the variable set and goes on. A value the user
// set always wins, and NNFIT_OPENMP_SPIN=default keeps libgomp's own default.
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "commands.h"
#include "nnfit/core/env_flags.h"

namespace nnfit::cli {

namespace {
constexpr const char* kSpinCount = "10000";
}  // namespace

void apply_openmp_spin_default(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  const std::optional<std::string> choice = env_flag("NNFIT_OPENMP_SPIN");
  if (choice == "default") return;
  if (setenv("GOMP_SPINCOUNT", choice && !choice->empty() ? choice->c_str() : kSpinCount, 1) != 0) return;
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
