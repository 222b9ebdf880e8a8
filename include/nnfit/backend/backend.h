// Backend: the per-device seam (after ggml's backend interface): an allocator, copies and
// synchronization. Kernels are not virtuals here; they live in the KernelRegistry keyed by
// device type. The only `#if NNFIT_WITH_CUDA` is in backend_registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nnfit/core/device.h"
#include "nnfit/memory/allocator.h"
#include "nnfit/memory/memory_policy.h"
#include "nnfit/memory/sub_allocator.h"

namespace nnfit {

class KernelRegistry;  // nnfit/backend/kernel_registry.h
class DeviceQueues;    // nnfit/backend/device_queues.h

enum class CopyKind { host_to_device, device_to_host, device_to_device };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;            // "cpu (oneDNN 2.6.3, OpenMP)"
  virtual Device device() const = 0;
  virtual Allocator& allocator() = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) = 0;
  virtual void synchronize() = 0;
  // Compute threads; the CPU backend maps this onto OpenMP. (optional: default ignores)
  virtual void set_num_threads(int /*threads*/) {}
  virtual int num_threads() const { return 1; }
  // The kernels programs on this backend run: null for the process-wide registry's kernels
  // of device().type (every real backend); a registry of its own for a simulated device
  // (tests/cuda_host/sim_device.h: the CUDA kernels' host-run bodies on guarded memory).
  virtual const KernelRegistry* kernels() const { return nullptr; }
  // The compute and copy queues a model's steps use (Note [The model's device path]), with
  // at least kQueueEvents events; null where kernels and copies run synchronously (the
  // CPU). copy() is not ordered with them: a caller syncs the queues first; work enqueued
  // after copy() returns sees its bytes (it is complete on return).
  static constexpr int kQueueEvents = 8;
  virtual DeviceQueues* queues() { return nullptr; }
  // Host memory the device copies asynchronously (CUDA's page-locked memory), for the
  // batches a model stages and the results it reads back; null: plain host memory.
  virtual Allocator* pinned_allocator() { return nullptr; }
  // Whether the host may read and write this backend's memory directly (the CPU's); where
  // not, the model moves data only through copy().
  bool host_addressable() const { return device().type == DeviceType::cpu; }
};

// The CPU backend; always built. Its allocator is a BfcAllocator over host memory under
// `policy`. throws: InvalidArgument for a self-contradicting policy, OutOfMemory when a
// preallocation fails.
std::unique_ptr<Backend> make_cpu_backend(const MemoryPolicy& policy = {});

struct BackendInfo {
  std::string name;
  bool compiled = false;   // built into this binary
  bool available = false;  // usable now (a device was found)
  std::string detail;      // why not, or the device list
};

// What this binary was built with and what it finds at run time.
std::vector<BackendInfo> backend_infos();
// CMake's CUDA_ARCHITECTURES the CUDA kernels were built for, comma-separated ("80",
// "75-real,80-real,...,100-virtual");
// empty when this nnfit has no CUDA backend.
std::string cuda_build_architectures();
// The CUDA devices the runtime sees. Loads the CUDA plugin (callers that must not load it
// on a machine without a GPU look at the driver first: nnfit/backend/device_placement.h).
// Returns 0 and sets *why_not when there is none: no CUDA in this build, the plugin or a
// library it needs does not load, or the runtime's error (no driver, no device).
int cuda_device_count(std::string* why_not);
// A backend for `device`, its allocator a BfcAllocator under `policy`; throws Unsupported
// with a hint when it is not compiled in or has no device.
std::unique_ptr<Backend> make_backend(Device device, const MemoryPolicy& policy = {});

// CUDA memory sources for a BfcAllocator: device memory of cuda:`device_index`, or pinned
// (page-locked) host memory made with it current, for asynchronous copies. The BFC
// algorithm runs over them unchanged. throws: Unsupported with a hint when this nnfit was
// built without CUDA or the device cannot be used (no driver, no such device).
enum class CudaMemory { device, pinned_host };
std::unique_ptr<SubAllocator> make_cuda_sub_allocator(int device_index, CudaMemory kind);

}  // namespace nnfit
