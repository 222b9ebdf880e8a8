// Private: the CUDA backend's factory (in the CUDA plugin, libnnfit_cuda.so).
#pragma once
#include <memory>
#include <string>

#include "nnfit/backend/backend.h"

namespace nnfit {

BackendInfo cuda_backend_info();
// The devices the runtime sees; 0 and the runtime's message in *why_not when none (or no
// driver). Never throws. (Not named cuda_device_count: the plugin's references bind to the
// executable's definitions first, Note [Plugin symbols], and that is the core's function.)
int cuda_runtime_device_count(std::string* why_not);
// Its allocator is a BfcAllocator over the device's memory under `policy`. throws:
// Unsupported naming the CUDA error when no usable device exists.
std::unique_ptr<Backend> make_cuda_backend(int device_index, const MemoryPolicy& policy);

}  // namespace nnfit
