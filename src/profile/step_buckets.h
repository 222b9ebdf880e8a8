// Downsampling of a step log for charts: consecutive steps are grouped into at most
// `max_buckets` buckets of (almost) equal size, each keeping the mean of every part, the
// min/mean/max of the step's total and of memory in use. A chart of the means shows the
// trend at a size that does not grow with the run (a 100k-step run gives the same page
// as a 1k-step one), and min/max keep the spikes visible.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nnfit/profile/step_log.h"

namespace nnfit::profile {

// The parts of a step in steps.jsonl's order (input_wait_us ... callbacks_us).
inline constexpr std::size_t kStepParts = 7;
inline constexpr std::array<const char*, kStepParts> kStepPartNames = {
    "input_wait", "h2d", "forward", "backward", "allreduce", "update", "callbacks"};
std::array<std::int64_t, kStepParts> step_parts_us(const StepRecord& r);

struct MinMeanMax {
  double min = 0, mean = 0, max = 0;
};

// Steps [first_step, last_step] of the log (global step numbers), `count` records.
struct StepBucket {
  std::int64_t first_step = 0, last_step = 0;
  std::size_t count = 0;
  std::array<double, kStepParts> mean_part_us{};  // mean of each part over the bucket
  MinMeanMax total_us;                             // the step's total (the sum of its parts)
  MinMeanMax memory_in_use_bytes;
};

// Buckets `steps` in log order: min(steps.size(), max_buckets) buckets, the first
// steps.size() % buckets of them one record longer. A bucket of one step holds that step
// exactly. requires: max_buckets >= 1.
std::vector<StepBucket> bucket_steps(const std::vector<StepRecord>& steps, std::size_t max_buckets);

}  // namespace nnfit::profile
