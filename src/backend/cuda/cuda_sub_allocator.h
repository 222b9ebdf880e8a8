// Private: CUDA memory sources for BfcAllocator (in the CUDA plugin, libnnfit_cuda.so).
// The BFC algorithm is the host's, unchanged; only where regions come from differs:
// device memory (cudaMalloc/cudaFree) or page-locked host memory
// (cudaHostAlloc/cudaFreeHost) for fast, asynchronous host<->device copies.
#pragma once
#include <memory>

#include "nnfit/memory/sub_allocator.h"

namespace nnfit {

// Regions of device memory on cuda:`device_index`; total_bytes() is the device's memory.
// throws: Unsupported naming the device and the CUDA error when it cannot be used (no
// driver, no such device), with a hint to run `nnfit doctor`.
std::unique_ptr<SubAllocator> make_cuda_device_sub_allocator(int device_index);

// Regions of pinned host memory, made with cuda:`device_index` current (device() is the
// host, cpu:0); total_bytes() is the host's, as for host memory. throws: as above.
std::unique_ptr<SubAllocator> make_cuda_pinned_sub_allocator(int device_index);

// Throws the Unsupported above unless cuda:`device_index` can be used.
void require_cuda_device(int device_index);

}  // namespace nnfit
