// The recycling cache behind Tensor::uninitialized and Tensor::zeros for large host
// buffers (Note [Host buffer cache] in src/core/host_buffer_cache.cpp).
//
// Thread safety: every function may be called from any thread.
#pragma once
#include <cstddef>

namespace nnfit::host_buffer_cache {

// 64-byte aligned memory of exactly `bytes` (a multiple of 64); null if the system has none.
void* allocate(std::size_t bytes);
// Returns memory from allocate() of the same size; it may be kept for reuse.
void release(void* p, std::size_t bytes);

struct Stats {
  std::size_t cached_bytes = 0;     // held for reuse now
  std::size_t limit_bytes = 0;      // the most it holds
  long long hits = 0, misses = 0;   // cacheable allocations served from the cache, or not
};
Stats stats();
// Frees everything held for reuse (tests; or before a large allocation).
void trim();

}  // namespace nnfit::host_buffer_cache
