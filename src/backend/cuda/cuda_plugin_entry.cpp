// The CUDA plugin's entry point (cuda_plugin.h): the table of the CUDA backend's factories
// that the core calls through. Built into libnnfit_cuda.so only.
#include "backend/cuda_plugin.h"

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_queues.h"
#include "backend/cuda/cuda_sub_allocator.h"

#ifndef NNFIT_BUILD_ID
#error "NNFIT_BUILD_ID is set by cmake/plugins.cmake"
#endif

namespace nnfit {
namespace {

std::unique_ptr<SubAllocator> make_sub_allocator(int device_index, CudaMemory kind) {
  return kind == CudaMemory::device ? make_cuda_device_sub_allocator(device_index)
                                    : make_cuda_pinned_sub_allocator(device_index);
}

const CudaPlugin kPlugin = {{NNFIT_BUILD_ID}, &cuda_backend_info, &make_cuda_backend, &make_sub_allocator,
                            &register_cuda_kernels, &cuda_runtime_device_count, &make_cuda_queues_impl};

}  // namespace
}  // namespace nnfit

extern "C" const nnfit::PluginHeader* nnfit_cuda_plugin() { return &nnfit::kPlugin.header; }
