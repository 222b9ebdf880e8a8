// What bounds a training run's step, from what its --logdir holds: steps.jsonl (the step's
// parts), ops.json (per-op kernel times, FLOPs, bytes) and pipeline.json (per-stage input
// times). The analysis names exactly one of input-bound, compute-bound, memory-bound or
// synchronization-bound with its evidence (Note [Profile verdict] in bottleneck.cpp),
// against ceilings measured on this host: oneDNN's sgemm for FLOP/s and a STREAM triad for
// bandwidth (bandwidth.h). `nnfit profile` prints it; its --json form is this object
// (docs/cli.md, "nnfit profile --json").
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "nnfit/profile/html_report.h"
#include "nnfit/profile/step_log.h"

namespace nnfit::profile {

struct BottleneckOptions {
  std::string log_dir;     // the run's --logdir (ops.json, pipeline.json are read from it)
  double peak_gflops = 0;  // the FLOP/s ceiling; 0: measure with measure_sgemm_gflops
  double peak_gbps = 0;    // the bandwidth ceiling; 0: measure when ops.json has bytes
};

// The summary of `steps` (not empty; the first is left out as warm-up when there are 3 or
// more) with the directory's ops.json and pipeline.json when present.
// throws: DataError naming ops.json or pipeline.json when one is not what nnfit writes.
nlohmann::ordered_json analyze_log_dir(const BottleneckOptions& options, const std::vector<StepRecord>& steps);

// The summary's fields as the HTML report shows them (nothing recomputed).
ReportVerdict report_verdict(const nlohmann::ordered_json& summary);

// GFLOP/s of oneDNN's f32 sgemm, 1024^3, best of 3, at `threads` (0: OpenMP's default):
// the ceiling kernels are judged by.
double measure_sgemm_gflops(int threads);

}  // namespace nnfit::profile
