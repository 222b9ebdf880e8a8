// Private: the seam between nnfit's core and the CUDA plugin (libnnfit_cuda.so, built from
// src/backend/cuda/ where a toolkit is found). The core (backend_registry.cpp) loads the
// plugin with load_plugin() the first time a CUDA device, its kernels or its state are asked
// for, and calls these factories; the plugin's cuda_plugin_entry.cpp fills the table. A C++
// table, not a C ABI: both sides come from one build (Note [Plugin symbols]).
#pragma once
#include <memory>
#include <string>

#include "nnfit/backend/backend.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/plugin.h"

namespace nnfit {

struct CudaPlugin {
  PluginHeader header;
  // The runtime's version and the devices it finds (never throws).
  BackendInfo (*info)();
  // As make_backend / make_cuda_sub_allocator in nnfit/backend/backend.h.
  std::unique_ptr<Backend> (*make_backend)(int device_index, const MemoryPolicy& policy);
  std::unique_ptr<SubAllocator> (*make_sub_allocator)(int device_index, CudaMemory kind);
  // Adds every CUDA kernel (DeviceType::cuda) to `registry`.
  void (*register_kernels)(KernelRegistry& registry);
  // The devices the runtime sees; 0 with the runtime's reason in *why_not when it sees none
  // or fails (never throws).
  int (*device_count)(std::string* why_not);
  // As make_cuda_queues in nnfit/backend/device_queues.h.
  std::unique_ptr<DeviceQueues> (*make_queues)(int device_index, int num_events);
};

}  // namespace nnfit

// The plugin's one exported function.
extern "C" const nnfit::PluginHeader* nnfit_cuda_plugin();  // &the CudaPlugin's header (Note [Plugin entry type])
