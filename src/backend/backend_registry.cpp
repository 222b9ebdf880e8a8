// Which backends this binary has. The one place that knows about NNFIT_WITH_CUDA.
#include "backend/kernel_families.h"
#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"

#if NNFIT_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_sub_allocator.h"
#endif

namespace nnfit {

std::vector<BackendInfo> backend_infos() {
  std::vector<BackendInfo> infos;
  infos.push_back({make_cpu_backend()->name(), true, true, "always built"});
#if NNFIT_WITH_CUDA
  infos.push_back(cuda_backend_info());
#else
  infos.push_back({"cuda", false, false,
                   "not built: no CUDA toolkit was found at configure time "
                   "(configure with -DNNFIT_WITH_CUDA=ON and CUDAToolkit_ROOT=/usr/local/cuda)"});
#endif
  return infos;
}

std::string cuda_build_architectures() {
#if NNFIT_WITH_CUDA
  return NNFIT_CUDA_ARCHITECTURES;
#else
  return "";
#endif
}

void register_cuda_kernels_if_built(KernelRegistry& registry) {
#if NNFIT_WITH_CUDA
  register_cuda_kernels(registry);
#else
  (void)registry;
#endif
}

std::unique_ptr<Backend> make_backend(Device device, const MemoryPolicy& policy) {
  if (device.type == DeviceType::cpu) return make_cpu_backend(policy);
#if NNFIT_WITH_CUDA
  return make_cuda_backend(device.index, policy);
#else
  throw Unsupported("device " + device.to_string() + " requested but this nnfit was built without CUDA",
                    "rebuild where a CUDA toolkit is installed, or use the cpu device");
#endif
}

std::unique_ptr<SubAllocator> make_cuda_sub_allocator(int device_index, CudaMemory kind) {
#if NNFIT_WITH_CUDA
  return kind == CudaMemory::device ? make_cuda_device_sub_allocator(device_index)
                                    : make_cuda_pinned_sub_allocator(device_index);
#else
  throw Unsupported(std::string("CUDA ") + (kind == CudaMemory::device ? "device" : "pinned host") +
                        " memory of cuda:" + std::to_string(device_index) +
                        " requested but this nnfit was built without CUDA",
                    "rebuild where a CUDA toolkit is installed, or use host memory");
#endif
}

}  // namespace nnfit
