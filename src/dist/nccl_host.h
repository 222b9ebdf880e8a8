// Private: the NCCL communicator's host-side logic, plain C++ without NCCL's header so it
// is compiled into the dist module and unit-tested where NCCL cannot run
// (tests/dist/nccl_host_test.cpp); the plugin (src/dist/nccl/) calls it.
//
// Note [NCCL watchdog]: an NCCL collective cannot be waited on with a deadline, and a
// stalled or dead peer leaves it spinning on the device forever. So the plugin never
// blocks in NCCL: it records an event after each collective and polls it (cudaEventQuery)
// with ncclCommGetAsyncError, under the communicator's timeout. Past the deadline it
// aborts the NCCL communicator (ncclCommAbort frees the device from the hung kernel) and
// asks the MPI communicator to locate the culprit with a barrier under MPI's own watchdog,
// which names the rank that does not answer; only when every rank reaches that barrier
// (NCCL itself hung) is the NCCL timeout the message.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nnfit::dist {

// ncclResult_t's values (nccl.h; the plugin static_asserts that they match).
enum class NcclResult : int {
  success = 0,
  unhandled_cuda_error = 1,
  system_error = 2,
  internal_error = 3,
  invalid_argument = 4,
  invalid_usage = 5,
  remote_error = 6,
  in_progress = 7,
};

// Where an NCCL call was made, for messages.
struct NcclCallSite {
  const char* call = "";  // "ncclAllReduce"
  const char* what = "";  // the collective as the training loop names it ("allreduce of gradient bucket 1 of 3")
  int rank = 0;
  std::int64_t step = 0;
};

// The nnfit error for a failed NCCL call (result != success and != in_progress):
// remote_error is PeerFailure (another rank failed or the connection went), a CUDA
// out-of-memory inside NCCL is OutOfMemory, anything else BackendError; each message
// names the rank, the step, the collective, NCCL's name for the result, its text and
// ncclGetLastError's detail, and the hint says what to look at. `error_string` is
// ncclGetErrorString(result); `last_error` ncclGetLastError(comm) (may be empty).
[[noreturn]] void throw_nccl_error(int result, const NcclCallSite& site, std::string_view error_string,
                                   std::string_view last_error);

// NCCL's name for a result ("ncclSystemError"), "ncclResult_t N" for an unknown one.
std::string nccl_result_name(int result);

// Polls a collective to completion under a deadline (Note [NCCL watchdog]).
struct NcclPoll {
  std::function<bool()> done;         // the event after the collective has been reached
  std::function<int()> async_error;   // ncclCommGetAsyncError's result (0: none; 7: in progress)
  std::function<void()> abort;        // ncclCommAbort
  std::function<void()> locate;       // the MPI barrier that names a silent rank (throws), or empty
  std::function<std::string()> last_error;  // ncclGetLastError
  std::function<std::string(int)> error_string;  // ncclGetErrorString
  std::function<void()> pause;        // between polls (the plugin sleeps ~50 µs, backing off); may be empty
  std::function<double()> now_s;      // a monotonic clock in seconds
};
// Returns when done() holds. throws: as throw_nccl_error for an asynchronous error (after
// abort()); past timeout_s, abort(), then locate()'s error, else CollectiveTimeout naming
// the rank, the step, the collective and the timeout.
void poll_collective(const NcclPoll& poll, double timeout_s, const NcclCallSite& site);

}  // namespace nnfit::dist
