// HostAllocator: std::aligned_alloc with a size table for exact in-use/peak figures.
#include "nnfit/memory/host_allocator.h"

#include <cstdlib>

#include "nnfit/core/error.h"
#include "nnfit/core/units.h"

namespace nnfit {

HostAllocator::~HostAllocator() {
  for (auto& [ptr, size] : sizes_) std::free(ptr);
}

void* HostAllocator::allocate(std::size_t bytes, std::size_t alignment) {
  std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  if (rounded == 0) rounded = alignment;
  std::lock_guard<std::mutex> lock(mutex_);
  if (limit_bytes_ != 0 &&
      static_cast<std::size_t>(stats_.in_use_bytes) + rounded > limit_bytes_) {
    ++stats_.ooms;
    throw OutOfMemory("cpu:0: cannot allocate " + format_bytes(static_cast<std::int64_t>(rounded)) +
                          ": limit " + format_bytes(static_cast<std::int64_t>(limit_bytes_)) +
                          ", in use " + format_bytes(stats_.in_use_bytes),
                      "lower the batch size or raise the memory limit", details_locked(rounded));
  }
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) {
    ++stats_.ooms;
    throw OutOfMemory("cpu:0: the system refused " + format_bytes(static_cast<std::int64_t>(rounded)) +
                          " (in use by nnfit: " + format_bytes(stats_.in_use_bytes) + ")",
                      {}, details_locked(rounded));
  }
  sizes_[p] = rounded;
  stats_.in_use_bytes += static_cast<std::int64_t>(rounded);
  stats_.reserved_bytes = stats_.in_use_bytes;
  if (stats_.in_use_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.in_use_bytes;
  ++stats_.allocations;
  return p;
}

void HostAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.find(ptr);
  NNFIT_CHECK(it != sizes_.end(), InvalidArgument, "deallocate of a pointer this allocator does not own");
  stats_.in_use_bytes -= static_cast<std::int64_t>(it->second);
  stats_.reserved_bytes = stats_.in_use_bytes;
  ++stats_.frees;
  sizes_.erase(it);
  std::free(ptr);
}

std::shared_ptr<const OutOfMemoryDetails> HostAllocator::details_locked(std::size_t request) const {
  auto d = std::make_shared<OutOfMemoryDetails>();
  d->device = device();
  d->request_bytes = static_cast<std::int64_t>(request);
  d->limit_bytes = static_cast<std::int64_t>(limit_bytes_);
  d->stats = stats_;
  return d;
}

MemoryStats HostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void HostAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.in_use_bytes;
}

Tensor allocate_tensor(Allocator& allocator, Shape shape, DType dtype) {
  std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
  void* p = allocator.allocate(bytes);
  Allocator* owner = &allocator;
  auto buffer = std::make_shared<Buffer>(p, bytes, allocator.device(),
                                         [owner](void* q) { owner->deallocate(q); });
  return Tensor(std::move(buffer), std::move(shape), dtype);
}

}  // namespace nnfit
