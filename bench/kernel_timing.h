// Timing one kernel run and the median of a set of timings, for the kernel benches that run
// kernels alternately in one process (omp_kernels_bench.cpp, pool_bench.cpp).
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

#include "nnfit/backend/kernel.h"

namespace nnfit::bench {

// Microseconds of one kernel.run(args).
inline double time_us(Kernel& kernel, const KernelArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  kernel.run(args);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace nnfit::bench
