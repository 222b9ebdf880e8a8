// DeviceQueues on CUDA (nnfit/backend/device_queues.h): two streams made non-blocking (so
// neither waits for the legacy default stream) and events made without timing (the cheap
// kind cudaStreamWaitEvent wants). In the CUDA plugin. Compiled and linked here; never run
// (no GPU where it was written): CudaDevice.QueuesRunTheDoubleBuffer checks it on cuda:0.
#include "backend/cuda/cuda_queues.h"

#include <cuda_runtime.h>

#include <vector>

#include "backend/cuda/cuda_sub_allocator.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw BackendError(std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}

class CudaQueues final : public DeviceQueues {
 public:
  CudaQueues(int device, int num_events) : device_(device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    for (cudaStream_t& s : streams_) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    events_.resize(static_cast<std::size_t>(num_events));
    for (cudaEvent_t& e : events_) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  }
  ~CudaQueues() override {
    // Pending work still reads the buffers the caller owns: finish it before they go.
    for (cudaStream_t s : streams_) cudaStreamSynchronize(s);
    for (cudaGraphExec_t g : graphs_) {
      if (g) cudaGraphExecDestroy(g);
    }
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  }
  int num_events() const override { return static_cast<int>(events_.size()); }
  void copy_to_device(Queue q, void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream(q)), "cudaMemcpyAsync (host to device)");
  }
  void copy_on_device(Queue q, void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream(q)), "cudaMemcpyAsync (device to device)");
  }
  void copy_to_host(Queue q, void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream(q)), "cudaMemcpyAsync (device to host)");
  }
  void record(Queue q, int e) override { check(cudaEventRecord(event(e), stream(q)), "cudaEventRecord"); }
  void wait(Queue q, int e) override { check(cudaStreamWaitEvent(stream(q), event(e), 0), "cudaStreamWaitEvent"); }
  void host_wait(int e) override { check(cudaEventSynchronize(event(e)), "cudaEventSynchronize"); }
  void* native(Queue q) override { return stream(q); }
  bool supports_graphs() const override { return true; }
  // Thread-local capture: other threads' CUDA calls (the input pipeline's pinned copies)
  // are neither captured nor refused.
  void begin_capture(Queue q) override {
    check(cudaStreamBeginCapture(stream(q), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  int end_capture(Queue q) override {
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(stream(q), &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t st = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(st, "cudaGraphInstantiate");
    graphs_.push_back(exec);
    return static_cast<int>(graphs_.size()) - 1;
  }
  void launch_graph(Queue q, int g) override {
    NNFIT_CHECK(g >= 0 && g < static_cast<int>(graphs_.size()) && graphs_[static_cast<std::size_t>(g)], InvalidArgument,
                "graph ", g, " does not exist");
    check(cudaGraphLaunch(graphs_[static_cast<std::size_t>(g)], stream(q)), "cudaGraphLaunch");
  }
  void drop_graph(int g) override {
    if (g < 0 || g >= static_cast<int>(graphs_.size()) || !graphs_[static_cast<std::size_t>(g)]) return;
    cudaGraphExecDestroy(graphs_[static_cast<std::size_t>(g)]);
    graphs_[static_cast<std::size_t>(g)] = nullptr;
  }

 private:
  cudaStream_t stream(Queue q) const { return streams_[q == Queue::compute ? 0 : 1]; }
  cudaEvent_t event(int e) const {
    NNFIT_CHECK(e >= 0 && e < static_cast<int>(events_.size()), InvalidArgument, "event ", e, " of ", events_.size());
    return events_[static_cast<std::size_t>(e)];
  }
  int device_;
  cudaStream_t streams_[2] = {nullptr, nullptr};  // compute, copy
  std::vector<cudaEvent_t> events_;
  std::vector<cudaGraphExec_t> graphs_;  // by id; null once dropped
};

}  // namespace

std::unique_ptr<DeviceQueues> make_cuda_queues_impl(int device_index, int num_events) {
  require_cuda_device(device_index);
  return std::make_unique<CudaQueues>(device_index, num_events);
}

}  // namespace nnfit
