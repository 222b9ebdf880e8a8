// The declared NNFIT_* environment variables.
#include "nnfit/core/env_flags.h"

#include <cstdlib>
#include <string>

#include "nnfit/core/error.h"

namespace nnfit {

const std::vector<EnvFlag>& env_flags() {
  static const std::vector<EnvFlag> kFlags = {
      {"NNFIT_VERBOSE", "0",
       "1 prints which kernel implementation each op chose and why the others declined"},
      {"NNFIT_NUM_THREADS", "",
       "compute threads when --threads is not given (default: all cores)"},
      {"NNFIT_KERNEL_TIMES", "0",
       "1 times every kernel of the training program and prints the totals to stderr after fit()"},
      {"NNFIT_MEMORY_LIMIT", "",
       "hard limit on memory reserved per device, as a SIZE (4GiB, 512MiB, 4GB, bytes); "
       "the C++ API, fit.memory and --memory-limit take precedence"},
      {"NNFIT_MEMORY_PREALLOCATE", "",
       "reserve this FRACTION of total memory up front (0.5 or 50%); default: grow on demand"},
      {"NNFIT_PIPELINE_RAM_LIMIT", "",
       "SIZE the input pipelines' in-memory caches, shuffle buffers and fixed-size prefetch queues may hold "
       "together; default: half of the available memory"},
      {"NNFIT_DETERMINISTIC", "0",
       "1: results independent of the number of threads (set_op_determinism; nnfit train --deterministic); "
       "runs with the same seed and thread count are bitwise equal either way"},
      {"NNFIT_PIPELINE_SCHED", "batch",
       "the scheduling policy of input-pipeline threads: batch (SCHED_BATCH: they never preempt the training "
       "thread when they wake) or normal; see docs/cli.md, Environment"},
      {"NNFIT_OPENMP_SPIN", "auto",
       "the nnfit CLI's GOMP_SPINCOUNT when neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set: auto (1000 when "
       "the 1-minute load average is at least the usable cores at start, else libgomp's default), default "
       "(never change it) or a spin count; see docs/cli.md, Environment"},
      {"NNFIT_PLUGIN_DIR", "",
       "where the CUDA and MPI plugins (libnnfit_cuda.so, libnnfit_mpi.so) are looked for, ':'-separated; "
       "default: beside the nnfit binary, then ../lib/nnfit from it"},
      {"NNFIT_CUDA_GRAPHS", "1",
       "0: run every training step's kernels one launch at a time instead of capturing the step once as a "
       "CUDA graph and replaying it (for comparing, or a capture problem on a new driver)"},
      {"NNFIT_DRIVER_ROOT", "/",
       "the directory under which the default device looks for proc/driver/nvidia/gpus (tests, containers "
       "with the host's /proc mounted elsewhere); a GPU listed there is what makes nnfit load its CUDA plugin"},
      {"TF_FORCE_GPU_ALLOW_GROWTH", "",
       "accepted for TensorFlow users: true or false; nnfit grows on demand unless told to preallocate"},
      {"FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist",
       "where the Fashion-MNIST examples and benchmarks find the IDX files"},
  };
  return kFlags;
}

std::optional<std::string> env_flag(std::string_view name) {
  bool declared = false;
  for (const EnvFlag& f : env_flags()) declared = declared || f.name == name;
  NNFIT_CHECK(declared, InvalidArgument, "environment flag ", name, " is not declared in env_flags()");
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

bool env_flag_enabled(std::string_view name) {
  auto v = env_flag(name);
  return v && (*v == "1" || *v == "true" || *v == "yes" || *v == "on");
}

}  // namespace nnfit
