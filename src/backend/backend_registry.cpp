// Which backends this binary has. The one place that knows about NNFIT_WITH_CUDA, and the
// one that loads the CUDA plugin (libnnfit_cuda.so; cuda_plugin.h): on the first request
// for a CUDA device, its memory, its kernels or its state, never for the CPU.
#include "backend/cuda_plugin.h"
#include "backend/kernel_families.h"
#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// The loaded plugin. throws: Unsupported starting with `request` ("device cuda:0
// requested"; the loader's message alone when empty) when there is none: this build has
// no CUDA, or the plugin or a vendor library it needs cannot be loaded.
const CudaPlugin& cuda_plugin(const std::string& request) {
#if NNFIT_WITH_CUDA
  static const PluginSpec kSpec = {"libnnfit_cuda.so", "nnfit_cuda_plugin", "the CUDA backend",
                                   "the libraries it was built with (" NNFIT_CUDA_LIBRARIES ")", false};
  try {
    return reinterpret_cast<const CudaPlugin&>(load_plugin(kSpec));
  } catch (const Unsupported& e) {
    if (request.empty()) throw;
    throw Unsupported(request + ", but " + e.what(), e.hint());
  }
#else
  throw Unsupported((request.empty() ? std::string("CUDA requested") : request) + " but this nnfit was built without CUDA",
                    "rebuild where a CUDA toolkit is installed (configure with -DNNFIT_WITH_CUDA=ON and "
                    "CUDAToolkit_ROOT=/usr/local/cuda), or use the cpu device");
#endif
}

#if NNFIT_WITH_CUDA
// The CUDA kernels, registered once from the plugin when first asked for; on failure the
// loader's message, kept (the plugin does not appear during a run).
struct CudaKernels {
  KernelRegistry registry;
  std::string error;
  bool loaded = false;
};

const CudaKernels& cuda_kernels() {
  static const CudaKernels kKernels = [] {
    CudaKernels k;
    try {
      cuda_plugin("").register_kernels(k.registry);
      k.loaded = true;
    } catch (const Error& e) {
      k.error = e.what();
    }
    return k;
  }();
  return kKernels;
}
#endif

}  // namespace

std::vector<BackendInfo> backend_infos() {
  std::vector<BackendInfo> infos;
  infos.push_back({make_cpu_backend()->name(), true, true, "always built"});
#if NNFIT_WITH_CUDA
  try {
    infos.push_back(cuda_plugin("").info());
  } catch (const Error& e) {
    infos.push_back({"cuda", false, false, std::string("plugin not loaded: ") + e.what()});
  }
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

const KernelRegistry* plugin_kernel_registry(DeviceType device, std::string* why_not) {
  if (device != DeviceType::cuda) return nullptr;
#if NNFIT_WITH_CUDA
  const CudaKernels& k = cuda_kernels();
  if (!k.loaded && why_not) *why_not = k.error;
  return k.loaded ? &k.registry : nullptr;
#else
  if (why_not) *why_not = "this nnfit was built without CUDA";
  return nullptr;
#endif
}

int cuda_device_count(std::string* why_not) {
  try {
    return cuda_plugin("").device_count(why_not);
  } catch (const Error& e) {
    if (why_not) *why_not = e.what();
    return 0;
  }
}

std::unique_ptr<Backend> make_backend(Device device, const MemoryPolicy& policy) {
  if (device.type == DeviceType::cpu) return make_cpu_backend(policy);
  return cuda_plugin("device " + device.to_string() + " requested").make_backend(device.index, policy);
}

std::unique_ptr<DeviceQueues> make_cuda_queues(int device_index, int num_events) {
  return cuda_plugin("the streams of cuda:" + std::to_string(device_index) + " requested")
      .make_queues(device_index, num_events);
}

std::unique_ptr<SubAllocator> make_cuda_sub_allocator(int device_index, CudaMemory kind) {
  const std::string request = std::string("CUDA ") + (kind == CudaMemory::device ? "device" : "pinned host") +
                              " memory of cuda:" + std::to_string(device_index) + " requested";
  return cuda_plugin(request).make_sub_allocator(device_index, kind);
}

}  // namespace nnfit
