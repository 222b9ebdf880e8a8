// BfcAllocator: best-fit with coalescing (after TF's bfc_allocator.h) over a SubAllocator.
// Regions are taken from the source on demand (or once, up front, under a preallocate
// policy), cut into chunks kept in size-class bins; a request takes the smallest free
// chunk that fits and splits off the rest; a free merges with free neighbours. Every
// chunk is a multiple of 64 bytes and is always split exactly, so in_use_bytes is the sum
// of the requests rounded up to 64 (the figure the planner predicts; Note [BFC accounting]).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "nnfit/memory/allocator.h"
#include "nnfit/memory/memory_policy.h"
#include "nnfit/memory/sub_allocator.h"

namespace nnfit {

// Owns its SubAllocator and every region it took; the destructor returns them all (the
// memory of tensors still alive is gone with it). Thread safety: all methods take one
// internal mutex.
class BfcAllocator final : public Allocator {
 public:
  static constexpr std::size_t kMinChunkBytes = 64;
  static constexpr std::size_t kFirstRegionBytes = std::size_t{2} << 20;
  // Region sizes double from kFirstRegionBytes up to this; larger requests get their own.
  static constexpr std::size_t kMaxGrowthRegionBytes = std::size_t{256} << 20;

  // throws: InvalidArgument when the policy contradicts itself (a preallocation above the
  // limit); OutOfMemory when the preallocation cannot be obtained.
  explicit BfcAllocator(std::unique_ptr<SubAllocator> source, MemoryPolicy policy = {});
  ~BfcAllocator() override;
  BfcAllocator(const BfcAllocator&) = delete;
  BfcAllocator& operator=(const BfcAllocator&) = delete;

  // alignment: a power of two. throws: OutOfMemory naming the request, the device, the
  // limit, what is in use and the largest free block.
  void* allocate(std::size_t bytes, std::size_t alignment = 64) override;
  void deallocate(void* ptr) override;
  MemoryStats stats() const override;
  void reset_peak() override;
  Device device() const override;

  // Hands every wholly free region back to the source (preallocated ones too); returns
  // the bytes released.
  std::int64_t release_unused();
  const MemoryPolicy& policy() const { return policy_; }

 private:
  using ChunkId = std::size_t;
  static constexpr ChunkId kNone = static_cast<ChunkId>(-1);
  static constexpr int kBins = 32;

  struct Chunk {
    char* ptr = nullptr;
    std::size_t bytes = 0;
    bool in_use = false;
    ChunkId prev = kNone, next = kNone;  // address neighbours within the region
    std::size_t region = 0;
  };
  struct Region {
    char* base = nullptr;
    std::size_t bytes = 0;
    bool live = false;
    ChunkId first = kNone;  // the chunk at base; stable (merges keep the lower chunk)
  };
  // (bytes, address, id): ordered by size, then address, so the first fitting entry of a
  // bin is the best fit.
  using BinEntry = std::tuple<std::size_t, std::uintptr_t, ChunkId>;

  static int bin_for(std::size_t bytes);
  ChunkId new_chunk();
  void insert_free(ChunkId id);
  void remove_free(ChunkId id);
  // The best free chunk for (bytes, alignment) or kNone.
  ChunkId find_fit(std::size_t bytes, std::size_t alignment) const;
  // Splits `id` so it holds exactly `bytes` starting at `id`'s pointer; the rest goes free.
  void split(ChunkId id, std::size_t bytes);
  // Merges free chunk `id` with free neighbours; returns the surviving chunk.
  ChunkId merge(ChunkId id);
  bool grow(std::size_t bytes, std::size_t alignment);
  std::int64_t release_unused_locked();
  std::int64_t largest_free_locked() const;
  MemoryStats stats_locked() const;
  [[noreturn]] void throw_oom(std::size_t bytes, const std::string& why);

  mutable std::mutex mutex_;
  // Bin and lookup nodes come from a pool (declared first: destroyed last), so the
  // bookkeeping of an allocate/free pair does not itself call malloc.
  std::pmr::unsynchronized_pool_resource node_pool_;
  std::unique_ptr<SubAllocator> source_;
  MemoryPolicy policy_;
  std::size_t next_region_bytes_ = kFirstRegionBytes;
  std::vector<Chunk> chunks_;
  std::vector<ChunkId> free_ids_;
  std::vector<Region> regions_;
  std::vector<std::pmr::set<BinEntry>> bins_;  // kBins of them, on node_pool_
  std::pmr::unordered_map<const void*, ChunkId> in_use_;
  MemoryStats stats_;
};

}  // namespace nnfit
