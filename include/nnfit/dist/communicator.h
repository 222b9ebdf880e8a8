// Communicator: the seam data-parallel training talks through (docs/design/distributed.md).
// Sums of float and double buffers across ranks, broadcast, barrier, and non-blocking
// sums that gradient buckets start while the backward pass still runs. Two
// implementations: one process (always built: every collective is the identity) and MPI
// (a plugin built where CMake finds MPI and loaded when used; src/dist/mpi/); and NCCL for
// the gradients of a model on a GPU (nccl_communicator.h, over the MPI one).
//
// Note [Collective watchdog]: every MPI collective is non-blocking and polled against a
// deadline (CommunicatorOptions::timeout_s), and the polling also reads a control channel
// on which a rank that failed announces its error. So a rank that raises, stalls or dies
// never leaves the others waiting forever: they throw PeerFailure or CollectiveTimeout,
// whose message names the rank, the step and the collective, and the caller ends the job
// with abort_job().
//
// Thread safety: a communicator is used from one thread (the training loop's).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit::dist {

// Another rank failed and told this one (its message is in what()).
class PeerFailure : public Error {
 public:
  using Error::Error;
};

// A collective did not complete within the timeout; what() names the rank(s) that did not
// arrive, the step and the collective.
class CollectiveTimeout : public Error {
 public:
  using Error::Error;
};

struct CommunicatorOptions {
  double timeout_s = 300;  // the watchdog's deadline for each collective (--collective-timeout)
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  // This process's rank in [0, size()), and its rank among the ranks on its host.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;
  // "single process" or "MPI (Open MPI v4.1.4)", for logs.
  virtual std::string name() const = 0;

  // Blocking collectives. `what` names the collective in watchdog messages ("broadcast of
  // the weights"); it must outlive the call. throws: PeerFailure, CollectiveTimeout.
  virtual void all_reduce_sum(float* data, std::int64_t count, const char* what) = 0;
  virtual void all_reduce_sum(double* data, std::int64_t count, const char* what) = 0;
  virtual void broadcast(void* data, std::int64_t bytes, int root, const char* what) = 0;
  virtual void barrier(const char* what) = 0;

  // Non-blocking sum in place: every rank must start the same sums in the same order.
  // progress() lets pending sums advance (cheap; call it between kernels); wait_all()
  // blocks until all have completed, under the watchdog. requires: `data` untouched until
  // wait_all returns. throws: PeerFailure, CollectiveTimeout.
  virtual void start_all_reduce_sum(float* data, std::int64_t count, const char* what) = 0;
  virtual void progress() = 0;
  virtual void wait_all() = 0;

  // A device communicator (NCCL's; Note [Captured gradient sums] in replicas.cpp)
  // whose sums may be enqueued while the compute stream is being captured into a graph,
  // with join() last: join() enqueues the compute stream's wait for every sum started so
  // far and returns at once, so the capture ends on the compute stream. wait_all() then
  // waits, under the watchdog, for everything enqueued on the compute stream, the graph's
  // sums with it. Host communicators say false and do nothing in join().
  virtual bool capturable() const { return false; }
  virtual void join() {}

  // After this rank failed (or after PeerFailure / CollectiveTimeout): ends the whole job
  // with `exit_code`. A rank whose own error this is first sends `message` to the others
  // (they throw PeerFailure naming it) and waits briefly for them to report it; a rank
  // that was told of another's failure acknowledges and lets the failing rank end the job.
  // The one call that ends the process: only the CLI makes it, after printing its line.
  [[noreturn]] virtual void abort_job(const std::string& message, int exit_code) = 0;

  // The optimizer step the next collectives belong to, for watchdog messages.
  void set_step(std::int64_t step) { step_ = step; }
  std::int64_t step() const { return step_; }

 protected:
  std::int64_t step_ = 0;
};

// Makes the communicator that sums device buffers of cuda:`device_index` across the ranks
// of `host` (kept for the bootstrap, barriers and the end of a failed job), its sums
// ordered after the work enqueued on `compute_stream` and the work enqueued there after
// wait_all() ordered after them: make_nccl_communicator's shape (nccl_communicator.h).
using DeviceCommunicatorFactory = std::function<std::unique_ptr<Communicator>(
    std::shared_ptr<Communicator> host, int device_index, void* compute_stream)>;

// One process: rank 0 of 1; the sums and broadcast leave the data as it is.
std::unique_ptr<Communicator> make_single_process_communicator();

// Where this process was started by an MPI launcher (mpirun, mpiexec, srun): the world
// size it announces in the environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE); -1 when a PMIx
// launcher started it without saying the size (PMIX_RANK); 0 when none did.
int launcher_world_size();

// True when this nnfit was built with MPI (CMake found it): its MPI communicator is the
// plugin libnnfit_mpi.so (nnfit/core/plugin.h), which this does not load.
bool mpi_available();

// The communicator plugins of this build, for `nnfit doctor`: "mpi" (libnnfit_mpi.so)
// and "nccl" (libnnfit_nccl.so), each with whether it was built, whether it loads here
// (this loads it, and the vendor library it links, without initializing either) and why
// not: the loader's line. A plugin not built says what configure found missing.
struct CommunicatorInfo {
  std::string name;
  bool compiled = false;
  bool available = false;
  std::string detail;
};
std::vector<CommunicatorInfo> communicator_infos();

// The MPI communicator over MPI_COMM_WORLD (initializes MPI; finalized when destroyed).
// Loads the MPI plugin on the first call. throws: Unsupported when nnfit was built without
// MPI (naming the package to install), or when the plugin or Open MPI's libmpi cannot be
// loaded (naming the library, as dlerror does, and what to install).
std::unique_ptr<Communicator> make_mpi_communicator(const CommunicatorOptions& options);

// The communicator for this process: MPI when started by a launcher with more than one
// rank (or by a PMIx launcher, which does not say how many, in a build with MPI), one
// process otherwise, without loading the MPI plugin. throws: Unsupported when a launcher
// started several ranks but there is no MPI to join them (not built, or the plugin or
// libmpi does not load): each would train alone and write the same files.
std::unique_ptr<Communicator> make_communicator(const CommunicatorOptions& options);

// Async-signal-safe: the launcher is ending the job (it sent SIGTERM because a rank died).
// The MPI communicator installs a SIGTERM handler that does this (Note [Launcher
// termination]); a program that installs its own SIGTERM handler afterwards replaces it,
// and must call this from its handler so a rank waiting in a collective still names the
// dead rank. Does nothing without an MPI communicator.
void notify_termination_signal();

// A duration as written in flags: `20s`, `5m`, `1h`, `1.5m`, or plain seconds `30`; in
// seconds. `where` names the source in errors. throws: InvalidArgument.
double parse_duration_seconds(std::string_view text, std::string_view where);

}  // namespace nnfit::dist
