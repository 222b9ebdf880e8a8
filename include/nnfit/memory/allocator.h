// The narrow allocator interface every device's memory goes through; the statistics it
// reports are MemoryStats (core/memory_stats.h, so that core's OutOfMemory can carry
// them). Mechanism (how bytes are obtained) stays behind the interface so the BFC
// allocator and CUDA memory sources can replace the host allocator without callers
// changing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "nnfit/core/device.h"
#include "nnfit/core/memory_stats.h"
#include "nnfit/core/tensor.h"

namespace nnfit {

// Thread safety: implementations are safe to call from several threads.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory aligned to `alignment` (a power of two), or throws OutOfMemory with the
  // request, the device and the current statistics (in its message and details()). A zero-byte request returns a unique
  // non-null pointer.
  virtual void* allocate(std::size_t bytes, std::size_t alignment = 64) = 0;
  // requires: ptr came from allocate() of this allocator and was not freed.
  virtual void deallocate(void* ptr) = 0;
  virtual MemoryStats stats() const = 0;
  // Restarts the peak at the current in-use figure.
  virtual void reset_peak() = 0;
  virtual Device device() const = 0;
};

// A tensor whose buffer comes from `allocator` and goes back to it when the last handle
// drops. requires: the allocator outlives the tensor.
Tensor allocate_tensor(Allocator& allocator, Shape shape, DType dtype);

}  // namespace nnfit
