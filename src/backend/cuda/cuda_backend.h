// Private: the CUDA backend's factory (in the CUDA plugin, libnnfit_cuda.so).
#pragma once
#include <memory>

#include "nnfit/backend/backend.h"

namespace nnfit {

BackendInfo cuda_backend_info();
// Its allocator is a BfcAllocator over the device's memory under `policy`. throws:
// Unsupported naming the CUDA error when no usable device exists.
std::unique_ptr<Backend> make_cuda_backend(int device_index, const MemoryPolicy& policy);

}  // namespace nnfit
