// STREAM's triad on std::threads (profile/bandwidth.h). Plain threads rather than OpenMP:
// the thread count is exactly the one asked for, and the profile module needs nothing
// beyond core. A pass spawns its threads and joins them (about 0.1 ms against the 20 ms
// and more a pass over 3 x 64 MiB takes), which keeps the code free of barriers.
#include "nnfit/profile/bandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit::profile {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kLineDoubles = 64 / sizeof(double);

// "32768K", "2M", "512": sysfs's cache size text.
std::size_t parse_size(const std::string& text) {
  std::size_t i = 0, v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') v = v * 10 + static_cast<std::size_t>(text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) v <<= 10;
  if (i < text.size() && text[i] == 'M') v <<= 20;
  if (i < text.size() && text[i] == 'G') v <<= 30;
  return v;
}

// Runs f(t) for t in [0, threads): t = 0 on this thread, the others on their own.
template <class F>
void on_threads(int threads, const F& f) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(f, t);
  f(0);
  for (std::thread& th : pool) th.join();
}

void triad(double* __restrict a, const double* __restrict b, const double* __restrict c, double s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace

std::size_t last_level_cache_bytes() {
  int best_level = 0;
  std::size_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size)) continue;
    if (level > best_level) {
      best_level = level;
      best = parse_size(size);
    } else if (level == best_level) {
      best = std::max(best, parse_size(size));
    }
  }
  if (best > 0) return best;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return static_cast<std::size_t>(v);
  }
  return 0;
}

std::size_t default_bandwidth_array_bytes() {
  const std::size_t llc = last_level_cache_bytes();
  if (llc == 0) return 256 * kMiB;
  return std::clamp(4 * llc, 64 * kMiB, 1024 * kMiB);
}

BandwidthMeasurement measure_host_bandwidth(const BandwidthOptions& options) {
  NNFIT_CHECK(options.threads >= 1, InvalidArgument, "bandwidth: threads must be at least 1, got ", options.threads);
  NNFIT_CHECK(options.rounds >= 1, InvalidArgument, "bandwidth: rounds must be at least 1, got ", options.rounds);
  const std::size_t threads = static_cast<std::size_t>(options.threads);
  const std::size_t want = options.array_bytes > 0 ? options.array_bytes : default_bandwidth_array_bytes();
  // Each thread gets whole cache lines, the same number.
  const std::size_t per_thread = std::max<std::size_t>(1, want / sizeof(double) / threads / kLineDoubles) * kLineDoubles;
  const std::size_t n = per_thread * threads;
  auto a = std::make_unique_for_overwrite<double[]>(n);
  auto b = std::make_unique_for_overwrite<double[]>(n);
  auto c = std::make_unique_for_overwrite<double[]>(n);
  // First touch by the thread that will read it, so its pages sit on that thread's node.
  on_threads(options.threads, [&](int t) {
    const std::size_t lo = static_cast<std::size_t>(t) * per_thread;
    std::fill(a.get() + lo, a.get() + lo + per_thread, 0.0);
    std::fill(b.get() + lo, b.get() + lo + per_thread, 1.0);
    std::fill(c.get() + lo, c.get() + lo + per_thread, 2.0);
  });
  auto pass = [&](double s) {
    on_threads(options.threads, [&, s](int t) {
      const std::size_t lo = static_cast<std::size_t>(t) * per_thread;
      triad(a.get() + lo, b.get() + lo, c.get() + lo, s, per_thread);
    });
  };
  pass(3.0);
  double best = 0;
  for (int r = 0; r < options.rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pass(3.0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (seconds > 0) best = std::max(best, 3.0 * static_cast<double>(n * sizeof(double)) / seconds / 1e9);
  }
  // The stores are observed, so no compiler may drop the passes; 1 + 3 * 2 is exact.
  NNFIT_CHECK(a[0] == 7.0 && a[n - 1] == 7.0, Error, "bandwidth: the triad computed ", a[0], ", expected 7");
  return {best, n * sizeof(double), options.threads, options.rounds};
}

}  // namespace nnfit::profile
