// MemoryStats: an allocator's figures as one plain struct (after c10's DeviceStats). It
// lives in core, below the memory module that fills it, so that core's OutOfMemory can
// carry a snapshot of it (error.h) without core depending on memory.
#pragma once
#include <cstdint>

namespace nnfit {

struct MemoryStats {
  std::int64_t in_use_bytes = 0;
  std::int64_t peak_bytes = 0;
  std::int64_t reserved_bytes = 0;
  std::int64_t allocations = 0;
  std::int64_t frees = 0;
  std::int64_t largest_free_block_bytes = 0;
  std::int64_t ooms = 0;
  // 1 - largest free block / free bytes (reserved - in use): 0 when the free memory is one
  // block (or there is none), near 1 when it is scattered in small pieces.
  double fragmentation = 0.0;
};

}  // namespace nnfit
