// The input pipelines' RAM budget (ram_budget.h).
#include "nnfit/data/ram_budget.h"

#include <atomic>
#include <fstream>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/units.h"

namespace nnfit::data {
namespace {

std::atomic<std::int64_t> g_in_use{0};
std::atomic<std::int64_t> g_limit_override{0};

std::int64_t half_of_available() {
  static const std::int64_t half = [] {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    std::int64_t kb = 0;
    while (in >> key >> kb >> unit) {
      if (key == "MemAvailable:") return kb * 1024 / 2;
    }
    return std::int64_t{1} << 30;  // unknown: 1 GiB
  }();
  return half;
}

}  // namespace

std::int64_t pipeline_ram_limit() {
  if (const std::int64_t set = g_limit_override.load(); set > 0) return set;
  if (auto v = env_flag("NNFIT_PIPELINE_RAM_LIMIT"); v && !v->empty()) {
    return parse_size_bytes(*v, "NNFIT_PIPELINE_RAM_LIMIT");
  }
  return half_of_available();
}

void set_pipeline_ram_limit(std::int64_t bytes) { g_limit_override = bytes > 0 ? bytes : 0; }

std::int64_t pipeline_ram_in_use() { return g_in_use.load(); }

void RamReservation::add(std::int64_t bytes, const std::string& hint) {
  if (bytes <= 0) return;
  const std::int64_t limit = pipeline_ram_limit();
  const std::int64_t before = g_in_use.fetch_add(bytes);
  if (before + bytes > limit) {
    g_in_use.fetch_sub(bytes);
    throw OutOfMemory(who_ + ": holding " + format_bytes(bytes_ + bytes) + " would pass the input pipeline's RAM budget of " +
                          format_bytes(limit) + " (" + format_bytes(before - bytes_) +
                          " held by other pipeline buffers; NNFIT_PIPELINE_RAM_LIMIT sets the budget, default half "
                          "of the available memory)",
                      hint);
  }
  bytes_ += bytes;
}

void RamReservation::sub(std::int64_t bytes) {
  if (bytes <= 0) return;
  g_in_use.fetch_sub(bytes);
  bytes_ -= bytes;
}

}  // namespace nnfit::data
