// Private to the CUDA backend: the host side of Note [Kernel/launcher split]. An own CUDA
// kernel is a functor `f` with `NNFIT_HD void operator()(std::int64_t i) const` that
// computes grid index i reading and writing only what index i owns (no atomics, no shared
// memory, no order between indices). Launch policies run it over i in [0, n):
//   HostLaunch   (here): a loop that walks the same grid the device gets, block by block,
//                thread by thread, grid-stride; compiled by g++ for `ctest -L cuda-host`.
//   DeviceLaunch (launch_device.cuh): a thin __global__ wrapper, same grid, on a stream.
// The kernel classes are templates on the policy, so the checked host code and the device
// code are one source; only the loop around f(i) differs.
#pragma once
#include <algorithm>
#include <cstdint>

#include "nnfit/backend/kernel.h"

namespace nnfit::cuda {

inline constexpr int kThreadsPerBlock = 256;
// Past this many blocks each thread takes several indices (the grid-stride loop).
inline constexpr std::int64_t kMaxBlocks = 65535;

struct Grid {
  std::int64_t blocks = 1;
  int threads = kThreadsPerBlock;
};

inline Grid grid_for(std::int64_t n) {
  Grid g;
  g.blocks = std::clamp<std::int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, 1, kMaxBlocks);
  return g;
}

struct HostLaunch {
  static constexpr bool kDevice = false;
  template <class F>
  static void run(const F& f, std::int64_t n, const StepContext* /*ctx*/) {
    const Grid g = grid_for(n);
    const std::int64_t stride = g.blocks * g.threads;
    for (std::int64_t block = 0; block < g.blocks; ++block) {
      for (int thread = 0; thread < g.threads; ++thread) {
        for (std::int64_t i = block * g.threads + thread; i < n; i += stride) f(i);
      }
    }
  }
  // A copy within the device's memory (host memory here).
  static void copy(void* dst, const void* src, std::size_t bytes, const StepContext* /*ctx*/) {
    if (dst != src && bytes) std::copy_n(static_cast<const char*>(src), bytes, static_cast<char*>(dst));
  }
  // A copy of host values into device memory (host memory here) before the functors that
  // read them: only step_scalars' StepScalars, where no device copy exists (outside a
  // model's queues), which is never in a captured graph.
  static void upload(void* dst, const void* src, std::size_t bytes, const StepContext* /*ctx*/) {
    if (bytes) std::copy_n(static_cast<const char*>(src), bytes, static_cast<char*>(dst));
  }
};

}  // namespace nnfit::cuda
