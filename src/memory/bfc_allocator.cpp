// BfcAllocator: bins of free chunks ordered by (size, address), best fit, exact splits,
// merge on free, regions that double in size as they are added, and a hard limit on the
// bytes reserved from the source.
//
// Note [BFC accounting]: chunks are multiples of kMinChunkBytes and are always split to
// the rounded request, so in_use_bytes equals the sum of requests rounded up to 64 bytes,
// exactly what the planner counts; reserved_bytes is what the source handed over, and
// reserved - in_use is the free memory that fragmentation is measured over.
#include "nnfit/memory/bfc_allocator.h"

#include <algorithm>
#include <bit>
#include <string>

#include "nnfit/core/error.h"

namespace nnfit {
namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

std::size_t padding(const char* p, std::size_t alignment) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return static_cast<std::size_t>(round_up(a, alignment) - a);
}

}  // namespace

BfcAllocator::BfcAllocator(std::unique_ptr<SubAllocator> source, MemoryPolicy policy)
    : source_(std::move(source)),
      policy_(policy),
      in_use_(&node_pool_) {
  bins_.reserve(kBins);
  for (int b = 0; b < kBins; ++b) bins_.emplace_back(&node_pool_);
  NNFIT_CHECK(source_ != nullptr, InvalidArgument, "BfcAllocator needs a SubAllocator");
  NNFIT_CHECK(policy_.limit_bytes >= 0, InvalidArgument, "memory limit must not be negative, got ",
              policy_.limit_bytes);
  NNFIT_CHECK(policy_.preallocate_fraction >= 0 && policy_.preallocate_fraction <= 1, InvalidArgument,
              "memory preallocate fraction must be in [0, 1], got ", policy_.preallocate_fraction);
  if (policy_.preallocate_fraction > 0) {
    const std::int64_t total = source_->total_bytes();
    const std::string dev = source_->device().to_string();
    NNFIT_CHECK(total > 0, InvalidArgument, dev, ": cannot preallocate a fraction of total memory: the total is unknown");
    const auto bytes = static_cast<std::size_t>(static_cast<double>(total) * policy_.preallocate_fraction) /
                       kMinChunkBytes * kMinChunkBytes;
    if (policy_.limit_bytes > 0 && static_cast<std::int64_t>(bytes) > policy_.limit_bytes) {
      throw InvalidArgument(dev + ": preallocating " + std::to_string(policy_.preallocate_fraction) + " of " +
                                format_bytes(total) + " (" + format_bytes(static_cast<std::int64_t>(bytes)) +
                                ") exceeds the memory limit " + format_bytes(policy_.limit_bytes),
                            "lower the preallocate fraction or raise the limit");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    next_region_bytes_ = bytes;  // the whole preallocation as one region
    if (bytes > 0 && !grow(bytes, kMinChunkBytes)) {
      ++stats_.ooms;
      throw_oom(bytes, "the preallocation of " + std::to_string(policy_.preallocate_fraction) + " of total memory failed");
    }
    next_region_bytes_ = kFirstRegionBytes;
  }
}

BfcAllocator::~BfcAllocator() {
  for (const Region& r : regions_) {
    if (r.live) source_->free(r.base, r.bytes);
  }
}

Device BfcAllocator::device() const { return source_->device(); }

int BfcAllocator::bin_for(std::size_t bytes) {
  const std::size_t units = std::max<std::size_t>(bytes / kMinChunkBytes, 1);
  return std::min(static_cast<int>(std::bit_width(units)) - 1, kBins - 1);
}

BfcAllocator::ChunkId BfcAllocator::new_chunk() {
  if (!free_ids_.empty()) {
    ChunkId id = free_ids_.back();
    free_ids_.pop_back();
    chunks_[id] = Chunk{};
    return id;
  }
  chunks_.emplace_back();
  return chunks_.size() - 1;
}

void BfcAllocator::insert_free(ChunkId id) {
  const Chunk& c = chunks_[id];
  bins_[static_cast<std::size_t>(bin_for(c.bytes))].emplace(c.bytes, reinterpret_cast<std::uintptr_t>(c.ptr), id);
}

void BfcAllocator::remove_free(ChunkId id) {
  const Chunk& c = chunks_[id];
  bins_[static_cast<std::size_t>(bin_for(c.bytes))].erase({c.bytes, reinterpret_cast<std::uintptr_t>(c.ptr), id});
}

BfcAllocator::ChunkId BfcAllocator::find_fit(std::size_t bytes, std::size_t alignment) const {
  for (int b = bin_for(bytes); b < kBins; ++b) {
    const auto& bin = bins_[static_cast<std::size_t>(b)];
    for (auto it = bin.lower_bound({bytes, 0, 0}); it != bin.end(); ++it) {
      const Chunk& c = chunks_[std::get<2>(*it)];
      if (c.bytes >= padding(c.ptr, alignment) + bytes) return std::get<2>(*it);
    }
  }
  return kNone;
}

void BfcAllocator::split(ChunkId id, std::size_t bytes) {
  const ChunkId n = new_chunk();  // may move chunks_: index, do not hold references
  Chunk& c = chunks_[id];
  Chunk& rest = chunks_[n];
  rest.ptr = c.ptr + bytes;
  rest.bytes = c.bytes - bytes;
  rest.region = c.region;
  rest.prev = id;
  rest.next = c.next;
  if (c.next != kNone) chunks_[c.next].prev = n;
  c.next = n;
  c.bytes = bytes;
  insert_free(n);
}

BfcAllocator::ChunkId BfcAllocator::merge(ChunkId id) {
  auto absorb_next = [this](ChunkId a) {
    const ChunkId b = chunks_[a].next;
    remove_free(b);
    chunks_[a].bytes += chunks_[b].bytes;
    chunks_[a].next = chunks_[b].next;
    if (chunks_[b].next != kNone) chunks_[chunks_[b].next].prev = a;
    free_ids_.push_back(b);
  };
  if (chunks_[id].next != kNone && !chunks_[chunks_[id].next].in_use) absorb_next(id);
  const ChunkId prev = chunks_[id].prev;
  if (prev != kNone && !chunks_[prev].in_use) {
    remove_free(prev);
    absorb_next(prev);  // `id` is not in a bin, so remove_free inside is a no-op on it
    return prev;
  }
  return id;
}

bool BfcAllocator::grow(std::size_t bytes, std::size_t alignment) {
  std::size_t needed = bytes;
  if (alignment > SubAllocator::kRegionAlignment) needed += alignment - SubAllocator::kRegionAlignment;
  std::size_t region_bytes = std::max(needed, next_region_bytes_);
  if (policy_.limit_bytes > 0) {
    const auto available = static_cast<std::size_t>(
        std::max<std::int64_t>(policy_.limit_bytes - stats_.reserved_bytes, 0) / static_cast<std::int64_t>(kMinChunkBytes) *
        static_cast<std::int64_t>(kMinChunkBytes));
    if (needed > available) return false;
    region_bytes = std::min(region_bytes, available);
  }
  void* base = source_->alloc(region_bytes);
  if (base == nullptr && region_bytes > needed) {
    region_bytes = needed;
    base = source_->alloc(region_bytes);
  }
  if (base == nullptr) return false;
  if (region_bytes >= next_region_bytes_) next_region_bytes_ = std::min(next_region_bytes_ * 2, kMaxGrowthRegionBytes);

  std::size_t r = 0;
  while (r < regions_.size() && regions_[r].live) ++r;
  if (r == regions_.size()) regions_.emplace_back();
  const ChunkId id = new_chunk();
  Chunk& c = chunks_[id];
  c.ptr = static_cast<char*>(base);
  c.bytes = region_bytes;
  c.region = r;
  regions_[r] = Region{c.ptr, region_bytes, true, id};
  insert_free(id);
  stats_.reserved_bytes += static_cast<std::int64_t>(region_bytes);
  return true;
}

void* BfcAllocator::allocate(std::size_t bytes, std::size_t alignment) {
  NNFIT_CHECK(alignment != 0 && std::has_single_bit(alignment), InvalidArgument, "alignment ", alignment,
              " is not a power of two");
  alignment = std::max(alignment, kMinChunkBytes);
  const std::size_t rounded = std::max(round_up(bytes, kMinChunkBytes), kMinChunkBytes);
  std::lock_guard<std::mutex> lock(mutex_);
  ChunkId id = find_fit(rounded, alignment);
  if (id == kNone && grow(rounded, alignment)) id = find_fit(rounded, alignment);
  if (id == kNone && release_unused_locked() > 0 && grow(rounded, alignment)) id = find_fit(rounded, alignment);
  if (id == kNone) {
    ++stats_.ooms;
    const bool at_limit = policy_.limit_bytes > 0 &&
                          stats_.reserved_bytes + static_cast<std::int64_t>(rounded) > policy_.limit_bytes;
    throw_oom(rounded, at_limit ? "no free block is large enough and the limit leaves no room to grow"
                                : "the system refused more memory");
  }
  remove_free(id);
  if (const std::size_t pad = padding(chunks_[id].ptr, alignment); pad > 0) {
    split(id, pad);  // the front goes back to its bin, the rest is ours
    const ChunkId front = id;
    id = chunks_[front].next;
    remove_free(id);
    insert_free(front);
  }
  if (chunks_[id].bytes > rounded) split(id, rounded);
  chunks_[id].in_use = true;
  in_use_.emplace(chunks_[id].ptr, id);
  stats_.in_use_bytes += static_cast<std::int64_t>(rounded);
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes);
  ++stats_.allocations;
  return chunks_[id].ptr;
}

void BfcAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(ptr);
  NNFIT_CHECK(it != in_use_.end(), InvalidArgument, "deallocate of a pointer this allocator does not own");
  const ChunkId id = it->second;
  in_use_.erase(it);
  stats_.in_use_bytes -= static_cast<std::int64_t>(chunks_[id].bytes);
  ++stats_.frees;
  chunks_[id].in_use = false;
  insert_free(merge(id));
}

std::int64_t BfcAllocator::release_unused() {
  std::lock_guard<std::mutex> lock(mutex_);
  return release_unused_locked();
}

std::int64_t BfcAllocator::release_unused_locked() {
  std::int64_t released = 0;
  for (Region& r : regions_) {
    if (!r.live) continue;
    const Chunk& c = chunks_[r.first];
    if (c.in_use || c.bytes != r.bytes) continue;
    remove_free(r.first);
    free_ids_.push_back(r.first);
    source_->free(r.base, r.bytes);
    released += static_cast<std::int64_t>(r.bytes);
    r = Region{};
  }
  stats_.reserved_bytes -= released;
  if (released > 0) next_region_bytes_ = kFirstRegionBytes;
  return released;
}

std::int64_t BfcAllocator::largest_free_locked() const {
  for (int b = kBins - 1; b >= 0; --b) {
    const auto& bin = bins_[static_cast<std::size_t>(b)];
    if (!bin.empty()) return static_cast<std::int64_t>(std::get<0>(*bin.rbegin()));
  }
  return 0;
}

MemoryStats BfcAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_locked();
}

MemoryStats BfcAllocator::stats_locked() const {
  MemoryStats s = stats_;
  s.largest_free_block_bytes = largest_free_locked();
  const std::int64_t free_bytes = s.reserved_bytes - s.in_use_bytes;
  s.fragmentation = free_bytes > 0 ? 1.0 - static_cast<double>(s.largest_free_block_bytes) / static_cast<double>(free_bytes) : 0.0;
  return s;
}

void BfcAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.in_use_bytes;
}

void BfcAllocator::throw_oom(std::size_t bytes, const std::string& why) {
  auto details = std::make_shared<OutOfMemoryDetails>();
  details->device = source_->device();
  details->request_bytes = static_cast<std::int64_t>(bytes);
  details->limit_bytes = policy_.limit_bytes;
  details->stats = stats_locked();
  const MemoryStats& s = details->stats;
  const std::string limit = policy_.limit_bytes > 0 ? format_bytes(policy_.limit_bytes) : "none";
  // Built before the throw: the details are moved into the exception.
  const std::string what = details->device.to_string() + ": out of memory allocating " +
                           format_bytes(static_cast<std::int64_t>(bytes)) + ": " + why + " (limit " + limit +
                           ", in use " + format_bytes(s.in_use_bytes) + ", reserved " + format_bytes(s.reserved_bytes) +
                           ", largest free block " + format_bytes(s.largest_free_block_bytes) + ")";
  throw OutOfMemory(what,
                    "lower the batch size ('nnfit plan CONFIG.json --memory-limit SIZE' prints the largest that "
                    "fits) or raise the memory limit",
                    std::move(details));
}

}  // namespace nnfit
