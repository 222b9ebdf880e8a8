// What fit writes into a log directory besides TensorBoard's events: steps.jsonl (through
// profile/step_log.h), ops.json and pipeline.json. Internal to the model module.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/data/dataset.h"
#include "nnfit/graph/program.h"

namespace nnfit::step_profile {

// Note [Step breakdown]: with a log dir, fit times each step in parts that do not overlap:
// the wait in the feed's next() (input), the program's kernels split by phase (the
// Program reads the clock once per kernel; Note [Step phases] in program.cpp) and the
// callbacks. A step run as micro-batches (on_oom="reduce_batch") times every program it
// runs: its micro-batches' forward and backward kernels add up, and its update-only
// program is the update (its nodes have no backward range to place them by); the host's
// gradient sums between them are in no part. h2d is 0 on CPU (the program reads the
// batch where the pipeline made it) and allreduce 0 until dist/ lands. Lines are buffered
// and written at each epoch end, with ops.json (per-node kernel time, FLOPs and bytes, for
// the compute- and memory-bound evidence of `nnfit profile`) and pipeline.json (the pipeline's measure()
// points).
struct ProfileFiles {
  std::string steps, ops, pipeline;
  static ProfileFiles open(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
      throw DataError(dir, -1, "cannot create the log directory" + (ec ? ": " + ec.message() : std::string()));
    }
    return {dir + "/steps.jsonl", dir + "/ops.json", dir + "/pipeline.json"};
  }
};

struct TimedProgram {
  Program* program = nullptr;
  std::int64_t runs = 0;     // times it ran (a step on micro-batches runs its programs several times)
  bool ours = false;         // fit turned its timing on (NNFIT_KERNEL_TIMES may have done it)
  bool update_only = false;  // all optimizer update (an accumulated step's update-only program)
};

inline std::int64_t to_us(double seconds) { return static_cast<std::int64_t>(seconds * 1e6 + 0.5); }

// ops.json: per node of the timed programs, kernel time per run, calls, phase, kernel,
// FLOPs and bytes (docs/cli.md, "Log directory files"); `steps`: the training steps they ran in.
void write_ops_json(const std::string& path, const std::vector<TimedProgram>& timed, std::int64_t steps,
                    int threads, const std::string& device);
// pipeline.json: the pipeline's measure() points after `epoch` (0-based).
void write_pipeline_json(const std::string& path,
                         const std::vector<std::pair<std::string, std::shared_ptr<data::StageStats>>>& stages,
                         std::int64_t epoch);

}  // namespace nnfit::step_profile
