// The NCCL communicator (nnfit/dist/nccl_communicator.h) and the NCCL plugin's entry point:
// libnnfit_nccl.so, built where CMake finds NCCL beside the CUDA toolkit. Device tensors
// are summed with ncclAllReduce on a stream of its own; the ranks, the bootstrap (the
// ncclUniqueId broadcast from rank 0), barriers and the end of a failed job go through
// the MPI communicator it is given. Every NCCL call is non-blocking and polled under the
// watchdog (Note [NCCL watchdog], dist/nccl_host.h). Compiled and linked here; never run
// (no GPU where it was written; docs/design/distributed.md, "NCCL").
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "dist/nccl_host.h"
#include "dist/nccl_plugin.h"
#include "nnfit/core/error.h"

#ifndef NNFIT_BUILD_ID
#error "NNFIT_BUILD_ID is set by cmake/plugins.cmake"
#endif

namespace nnfit::dist {
namespace {

static_assert(ncclSuccess == static_cast<int>(NcclResult::success) &&
              ncclUnhandledCudaError == static_cast<int>(NcclResult::unhandled_cuda_error) &&
              ncclSystemError == static_cast<int>(NcclResult::system_error) &&
              ncclInternalError == static_cast<int>(NcclResult::internal_error) &&
              ncclInvalidArgument == static_cast<int>(NcclResult::invalid_argument) &&
              ncclInvalidUsage == static_cast<int>(NcclResult::invalid_usage) &&
              ncclRemoteError == static_cast<int>(NcclResult::remote_error) &&
              ncclInProgress == static_cast<int>(NcclResult::in_progress),
              "dist/nccl_host.h's NcclResult must mirror nccl.h");

void cuda_check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw BackendError(std::string(call) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(std::shared_ptr<Communicator> host, int device, void* compute_stream, const CommunicatorOptions& o)
      : host_(std::move(host)), compute_(static_cast<cudaStream_t>(compute_stream)), timeout_s_(o.timeout_s) {
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    cuda_check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    cuda_check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    cuda_check(cudaEventCreateWithFlags(&watch_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ncclUniqueId id{};
    if (host_->rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId", "NCCL's bootstrap");
    host_->broadcast(&id, sizeof(id), 0, "broadcast of NCCL's unique id");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // every call returns at once; the watchdog polls (Note [NCCL watchdog])
    check(ncclCommInitRankConfig(&comm_, host_->size(), id, host_->rank(), &config), "ncclCommInitRankConfig",
          "NCCL's bootstrap");
  }
  ~NcclCommunicator() override {
    if (comm_) {
      if (aborted_) ncclCommAbort(comm_);
      else ncclCommDestroy(comm_);
    }
    if (watch_) cudaEventDestroy(watch_);
    if (done_) cudaEventDestroy(done_);
    if (ready_) cudaEventDestroy(ready_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  int local_rank() const override { return host_->local_rank(); }
  std::string name() const override {
    int v = 0;
    ncclGetVersion(&v);
    return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100) +
           " over " + host_->name();
  }

  void all_reduce_sum(float* data, std::int64_t count, const char* what) override {
    start(data, count, ncclFloat, what);
    wait_all();
  }
  void all_reduce_sum(double* data, std::int64_t count, const char* what) override {
    start(data, count, ncclDouble, what);
    wait_all();
  }
  void broadcast(void* data, std::int64_t bytes, int root, const char* what) override {
    after_compute();
    check(ncclBroadcast(data, data, static_cast<std::size_t>(bytes), ncclUint8, root, comm_, stream_), "ncclBroadcast",
          what);
    last_what_ = what;
    wait_all();
  }
  void barrier(const char* what) override { host_->barrier(what); }

  void start_all_reduce_sum(float* data, std::int64_t count, const char* what) override {
    start(data, count, ncclFloat, what);
  }
  void progress() override {}  // NCCL's kernels progress on the device
  // NCCL captures its collectives into CUDA graphs from 2.9.6 on, and lets captured and
  // direct launches mix on one communicator by default (NCCL_GRAPH_MIXING_SUPPORT=1).
  bool capturable() const override {
    int v = 0;
    return ncclGetVersion(&v) == ncclSuccess && v >= 20906;
  }
  // The compute stream waits for the sums: the optimizer's kernels read them. Inside a
  // capture the record and the wait are the graph's join of NCCL's stream.
  void join() override {
    cuda_check(cudaEventRecord(done_, stream_), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(compute_, done_, 0), "cudaStreamWaitEvent");
  }
  // Everything on the compute stream so far, which now waits for the sums: the sums
  // started here, and a launched graph's own (an event inside a graph is no record the
  // host can poll, so the watchdog polls one after it).
  void wait_all() override {
    join();
    cuda_check(cudaEventRecord(watch_, compute_), "cudaEventRecord");
    poll([this] { return cudaEventQuery(watch_) != cudaErrorNotReady; }, "ncclAllReduce", last_what_);
    cuda_check(cudaEventQuery(watch_), "the compute stream after the sums");
  }
  [[noreturn]] void abort_job(const std::string& message, int exit_code) override {
    if (comm_ && !aborted_) {
      ncclCommAbort(comm_);
      aborted_ = true;
    }
    host_->abort_job(message, exit_code);
    std::_Exit(exit_code);  // not reached: the host's abort_job ends the job
  }

 private:
  // Work on the NCCL stream starts after what the compute stream has enqueued so far
  // (the backward kernels that made the gradients).
  void after_compute() {
    cuda_check(cudaEventRecord(ready_, compute_), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(stream_, ready_, 0), "cudaStreamWaitEvent");
  }
  void start(void* data, std::int64_t count, ncclDataType_t type, const char* what) {
    after_compute();
    check(ncclAllReduce(data, data, static_cast<std::size_t>(count), type, ncclSum, comm_, stream_), "ncclAllReduce",
          what);
    last_what_ = what;
  }
  // A non-blocking call returns ncclInProgress until it is enqueued (or the communicator
  // is made): wait for that under the watchdog; any other failure is thrown at once.
  void check(ncclResult_t r, const char* call, const char* what) {
    if (r == ncclSuccess) return;
    if (r == ncclInProgress) {
      poll([this] {
        ncclResult_t a = ncclSuccess;
        ncclCommGetAsyncError(comm_, &a);
        return a != ncclInProgress;
      }, call, what);
      return;
    }
    throw_nccl_error(r, site(call, what), ncclGetErrorString(r), comm_ ? ncclGetLastError(comm_) : "");
  }
  template <typename Done>
  void poll(Done done, const char* call, const char* what) {
    NcclPoll p;
    p.done = done;
    p.async_error = [this] {
      ncclResult_t a = ncclSuccess;
      if (comm_) ncclCommGetAsyncError(comm_, &a);
      return static_cast<int>(a);
    };
    p.abort = [this] {
      if (comm_ && !aborted_) ncclCommAbort(comm_);
      aborted_ = true;
    };
    p.locate = [this, what] { host_->barrier(what); };
    p.last_error = [this] { return std::string(comm_ ? ncclGetLastError(comm_) : ""); };
    p.error_string = [](int r) { return std::string(ncclGetErrorString(static_cast<ncclResult_t>(r))); };
    int spins = 0;
    p.pause = [&spins] { std::this_thread::sleep_for(std::chrono::microseconds(spins++ < 100 ? 20 : 500)); };
    p.now_s = &now_s;
    poll_collective(p, timeout_s_, site(call, what));
  }
  NcclCallSite site(const char* call, const char* what) const { return {call, what, host_->rank(), step_}; }

  std::shared_ptr<Communicator> host_;
  cudaStream_t compute_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr, done_ = nullptr, watch_ = nullptr;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
  double timeout_s_;
  const char* last_what_ = "";
};

std::unique_ptr<Communicator> make(std::shared_ptr<Communicator> host, int device, void* compute_stream,
                                   const CommunicatorOptions& options) {
  int count = 0;
  const cudaError_t st = cudaGetDeviceCount(&count);
  if (st != cudaSuccess || device < 0 || device >= count) {
    if (st != cudaSuccess) cudaGetLastError();
    throw Unsupported("the NCCL communicator on cuda:" + std::to_string(device) + ": " +
                          (st != cudaSuccess ? std::string(cudaGetErrorString(st))
                                             : "this machine has " + std::to_string(count) + " CUDA device(s)"),
                      "run 'nnfit doctor' to check the driver, or train on the CPU over MPI (--device cpu)");
  }
  return std::make_unique<NcclCommunicator>(std::move(host), device, compute_stream, options);
}

const NcclPlugin kPlugin = {{NNFIT_BUILD_ID}, &make};

}  // namespace
}  // namespace nnfit::dist

extern "C" const nnfit::PluginHeader* nnfit_nccl_plugin() { return &nnfit::dist::kPlugin.header; }
