// Step-log downsampling for the HTML report (step_buckets.h): one pass over the records,
// buckets by position in the log (not by step number), so a log appended to by a second
// fit, whose step numbers continue, buckets the same way.
#include "step_buckets.h"

#include <algorithm>

#include "nnfit/core/error.h"

namespace nnfit::profile {

std::array<std::int64_t, kStepParts> step_parts_us(const StepRecord& r) {
  return {r.input_wait_us, r.h2d_us, r.forward_us, r.backward_us, r.allreduce_us, r.update_us, r.callbacks_us};
}

std::vector<StepBucket> bucket_steps(const std::vector<StepRecord>& steps, std::size_t max_buckets) {
  NNFIT_CHECK(max_buckets >= 1, InvalidArgument, "bucket_steps: max_buckets must be at least 1");
  const std::size_t n = steps.size();
  const std::size_t buckets = std::min(n, max_buckets);
  std::vector<StepBucket> out;
  out.reserve(buckets);
  std::size_t at = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t size = n / buckets + (b < n % buckets ? 1 : 0);
    StepBucket k;
    k.first_step = steps[at].step;
    k.last_step = steps[at + size - 1].step;
    k.count = size;
    k.total_us.min = k.memory_in_use_bytes.min = 1e300;
    k.total_us.max = k.memory_in_use_bytes.max = -1e300;
    for (std::size_t i = at; i < at + size; ++i) {
      const auto parts = step_parts_us(steps[i]);
      for (std::size_t p = 0; p < kStepParts; ++p) k.mean_part_us[p] += static_cast<double>(parts[p]);
      const auto total = static_cast<double>(steps[i].total_us());
      const auto memory = static_cast<double>(steps[i].memory_in_use_bytes);
      k.total_us.mean += total;
      k.total_us.min = std::min(k.total_us.min, total);
      k.total_us.max = std::max(k.total_us.max, total);
      k.memory_in_use_bytes.mean += memory;
      k.memory_in_use_bytes.min = std::min(k.memory_in_use_bytes.min, memory);
      k.memory_in_use_bytes.max = std::max(k.memory_in_use_bytes.max, memory);
    }
    const auto count = static_cast<double>(size);
    for (double& m : k.mean_part_us) m /= count;
    k.total_us.mean /= count;
    k.memory_in_use_bytes.mean /= count;
    out.push_back(k);
    at += size;
  }
  return out;
}

}  // namespace nnfit::profile
