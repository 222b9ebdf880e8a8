// HostAllocator: aligned host memory with exact accounting and an optional hard limit.
// A malloc-per-request allocator kept for tests and tools that want no caching; the CPU
// backend allocates through BfcAllocator (bfc_allocator.h).
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>

#include "nnfit/core/error.h"
#include "nnfit/memory/allocator.h"

namespace nnfit {

// Thread safety: all methods take an internal mutex.
class HostAllocator final : public Allocator {
 public:
  // limit_bytes == 0 means no limit.
  explicit HostAllocator(std::size_t limit_bytes = 0) : limit_bytes_(limit_bytes) {}
  ~HostAllocator() override;

  void* allocate(std::size_t bytes, std::size_t alignment = 64) override;
  void deallocate(void* ptr) override;
  MemoryStats stats() const override;
  void reset_peak() override;
  Device device() const override { return Device{}; }

 private:
  std::shared_ptr<const OutOfMemoryDetails> details_locked(std::size_t request) const;

  mutable std::mutex mutex_;
  std::size_t limit_bytes_;
  MemoryStats stats_;
  std::unordered_map<void*, std::size_t> sizes_;
};

}  // namespace nnfit
