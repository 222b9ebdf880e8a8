// The NCCL communicator: data-parallel sums of device tensors (docs/design/distributed.md,
// "NCCL"). A plugin, libnnfit_nccl.so (src/dist/nccl/), built where CMake finds NCCL
// beside the CUDA toolkit and loaded when a model on a GPU trains on several ranks. Ranks,
// hosts and failures stay MPI's: NCCL is bootstrapped with an ncclUniqueId that rank 0
// makes and broadcasts over the MPI communicator, barrier and abort_job go through it, and
// every NCCL collective runs under the same watchdog deadline (Note [NCCL watchdog]).
//
// The host-side parts are plain C++ here and unit-tested without a GPU: which
// communicator a model picks (choose_communicator), how gradients are laid out in buckets
// (plan_buckets) and what an ncclResult_t becomes (dist/nccl_errors.h).
//
// Thread safety: as Communicator.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/core/device.h"
#include "nnfit/dist/buckets.h"
#include "nnfit/dist/communicator.h"

namespace nnfit::dist {

enum class CommunicatorKind { single_process, mpi, nccl };

struct CommunicatorChoice {
  CommunicatorKind kind = CommunicatorKind::single_process;
  std::string reason;  // "MPI (a model on the CPU sums host tensors)"
};

// The communicator data-parallel training uses for a model on `device`, in a job of
// `world_size` ranks (launcher_world_size(); -1: a PMIx launcher that does not say), given
// what this build has. One rank: single process. A CPU model: MPI. A CUDA model: NCCL over
// MPI (both needed: MPI starts and watches the ranks and carries NCCL's id). throws:
// Unsupported naming what is missing (MPI or NCCL not built) and what to install.
CommunicatorChoice choose_communicator(Device device, int world_size, bool mpi_built, bool nccl_built);

// True when this nnfit was built with NCCL (its plugin libnnfit_nccl.so; not loaded here).
bool nccl_available();
// The NCCL plugin's line of communicator_infos() (communicator.h): loads it where built.
CommunicatorInfo nccl_info();

// The NCCL communicator over the ranks of `host` (an MPI communicator, kept for the
// bootstrap, barrier and abort_job), for device tensors on cuda:`device_index`. Its
// collectives take device pointers and run on a stream of their own; a non-blocking sum
// waits (on the device) for the work enqueued on `compute_stream` (a cudaStream_t; null:
// the default stream) when it starts. Loads the plugin. throws: Unsupported when nnfit
// was built without NCCL or the plugin, libnccl or the device cannot be used;
// BackendError, PeerFailure or CollectiveTimeout from the bootstrap (dist/nccl_errors.h).
std::unique_ptr<Communicator> make_nccl_communicator(std::shared_ptr<Communicator> host, int device_index,
                                                     void* compute_stream, const CommunicatorOptions& options);

// Note [Device gradient buckets]: on a device the gradients of a bucket are copied into
// one flat buffer, summed with one ncclAllReduce and copied back, as the CPU path sums its
// flat buffer: the layout is dist::plan_buckets's (nnfit/dist/buckets.h) with each bucket
// starting at a multiple of 64 floats (256 bytes, the alignment of cudaMalloc and of NCCL's
// fastest paths), the gap before it summed as zeros.

}  // namespace nnfit::dist
