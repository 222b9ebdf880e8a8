// cuda-sim: a simulated CUDA device for checking the model's device path without a GPU
// (Note [Simulated device]). Its memory is host memory the host cannot touch: mmap'd
// regions kept PROT_NONE except while one of its kernels runs or a Backend::copy moves
// bytes, so any host code that reads or writes "device" memory directly faults, and a
// SIGSEGV handler names the access. Its kernels are the own CUDA kernels' host-run bodies
// (cuda_host_registry()) plus the reference kernels standing in for cuBLASLt and cuDNN.
// It checks discipline and arithmetic, not streams, launch shapes or the vendor libraries.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/backend/backend.h"
#include "nnfit/backend/kernel_registry.h"

namespace nnfit::testing {

// A Backend on Device{cuda, 0} whose allocator is a BfcAllocator under `policy` over
// guarded host memory, whose copy() is a memcpy with the memory opened for its duration,
// and whose kernels() is cuda_sim_registry(). While at least one exists, a SIGSEGV handler
// is installed (the previous one is restored when the last is destroyed) that turns a host
// access to guarded memory into one line on stderr and abort(); other faults go to the
// previous handler. Thread safety: as a real backend's; copies and kernel runs may
// overlap on different threads (the memory stays open while any of them runs).
// With `queues`, its queues() are make_cuda_sim_queues()'s, so a model's steps run through
// them as on a GPU; without, a model copies and runs synchronously.
std::unique_ptr<Backend> make_cuda_sim_backend(const MemoryPolicy& policy = {}, bool queues = true);

// Simulated compute and copy queues (sim_queues.cpp, Note [Lazy simulated queues]): the
// copies and kernels enqueued on them run only when the host waits for an event recorded
// after them (host_wait) or the queues are destroyed, so a result read without that wait
// is stale. A sim kernel run with StepContext::stream one of their native() handles is
// enqueued there instead of running at once.
std::unique_ptr<DeviceQueues> make_cuda_sim_queues();
// Enqueues `work` on the simulated queue whose native() handle is `stream`; false when
// `stream` is not one.
bool enqueue_on_cuda_sim_stream(void* stream, std::function<void()> work);
// Runs what is enqueued on that queue (and, as its waits need, on the other) until it is
// empty, as a host waiting for an event recorded on it; false when `stream` is not one.
bool drain_cuda_sim_stream(void* stream);
// Graphs launched on simulated queues so far (their captured steps replayed); 0 for other
// queues.
std::int64_t cuda_sim_graph_launches(DeviceQueues& queues);
// Batches staged through the copy queue so far (records on it: one per
// PinnedDoubleBuffer::stage), and how many of them were staged while the compute queue
// still held work (a step enqueued and not yet waited for: the copy overlaps it).
struct CudaSimStagings {
  std::int64_t total = 0, behind_compute = 0;
};
CudaSimStagings cuda_sim_stagings(DeviceQueues& queues);

// Bytes copied from simulated device memory to host memory so far: by the backend's
// copy() (device_to_host) and by its queues' copy_to_host, counted as they run (a sim
// backend's; 0 for other backends). cuda_sim_queue_bytes_to_host counts the queues' alone.
std::int64_t cuda_sim_bytes_to_host(Backend& backend);
std::int64_t cuda_sim_queue_bytes_to_host(DeviceQueues& queues);

// The simulated device's kernels, under DeviceType::cuda (built once, then read-only):
// every kernel of cuda_host_registry() under its own name ("cuda:relu"), and for the ops
// the real CUDA registry serves through cuBLASLt and cuDNN (cuda_sim_vendor_ops()) the
// reference kernel as "cuda-sim:ref:<op>" (float32) and "cuda-sim:widen:ref:<op>"
// (bfloat16, float16: the float32 reference through the widening adapter). Every kernel
// it hands out opens the guarded memory while it runs and first checks that each of its
// non-empty inputs, outputs and its workspace lie in simulated device memory (throws
// BackendError naming the node and the pointer when not: host memory given to a kernel).
const KernelRegistry& cuda_sim_registry();

// The ops the real CUDA registry gives to cuBLASLt and cuDNN (cublaslt_matmul.cpp,
// cudnn_conv.cpp), for which the simulated device stands the reference kernel in.
const std::vector<std::string>& cuda_sim_vendor_ops();

// Opens the simulated memory (PROT_READ | PROT_WRITE) for its lifetime; nests, and
// across threads (the memory closes when the last one ends). For the sim's own kernels and
// copies: host code that needs it outside them is what the simulated device exists to catch.
class CudaSimOpen {
 public:
  CudaSimOpen();
  ~CudaSimOpen();
  CudaSimOpen(const CudaSimOpen&) = delete;
  CudaSimOpen& operator=(const CudaSimOpen&) = delete;
};

// Whether [ptr, ptr + bytes) lies within one live region of simulated device memory.
bool in_cuda_sim_memory(const void* ptr, std::size_t bytes);

}  // namespace nnfit::testing
