// The NCCL communicator's host side (nnfit/dist/nccl_communicator.h, dist/nccl_host.h):
// the choice of communicator, the bucket layout, NCCL's results as nnfit's errors, the
// watchdog's polling loop, and the loading of the plugin. The only `#if NNFIT_WITH_NCCL`.
#include "dist/nccl_host.h"

#include <cstdio>

#include "dist/nccl_plugin.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/nccl_communicator.h"

namespace nnfit::dist {

namespace {

const char* kInstallNccl =
    "install NCCL beside the CUDA toolkit (NVIDIA's libnccl2 and libnccl-dev packages, or the toolkit's own) and "
    "rebuild nnfit";
const char* kInstallMpi = "install Open MPI (apt-get install libopenmpi-dev openmpi-bin, or scripts/setup.sh) and rebuild";

std::string where(const NcclCallSite& s) {
  return "rank " + std::to_string(s.rank) + ": " + s.call + " (" + s.what + " at step " + std::to_string(s.step) + ")";
}

}  // namespace

CommunicatorChoice choose_communicator(Device device, int world_size, bool mpi_built, bool nccl_built) {
  if (world_size == 0 || world_size == 1) return {CommunicatorKind::single_process, "one process"};
  const std::string ranks = world_size > 0 ? std::to_string(world_size) + " ranks" : "a PMIx launcher's ranks";
  if (!mpi_built) {
    throw Unsupported("started with " + ranks + ", but this nnfit was built without MPI, which starts and watches "
                      "them", kInstallMpi);
  }
  if (device.type == DeviceType::cpu) return {CommunicatorKind::mpi, "MPI over " + ranks + " (host tensors)"};
  if (!nccl_built) {
    throw Unsupported("a model on " + device.to_string() + " with " + ranks + " sums its gradients with NCCL, but this "
                      "nnfit was built without NCCL",
                      std::string(kInstallNccl) + "; or train on the CPU (--device cpu) over MPI");
  }
  return {CommunicatorKind::nccl, "NCCL over " + ranks + " (device tensors on " + device.to_string() +
                                      "; bootstrapped and watched over MPI)"};
}

std::string nccl_result_name(int result) {
  static const char* const kNames[] = {"ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError",
                                       "ncclInternalError",   "ncclInvalidArgument",    "ncclInvalidUsage",
                                       "ncclRemoteError",     "ncclInProgress"};
  if (result >= 0 && result < 8) return kNames[result];
  return "ncclResult_t " + std::to_string(result);
}

void throw_nccl_error(int result, const NcclCallSite& site, std::string_view error_string, std::string_view last_error) {
  std::string what = where(site) + ": " + nccl_result_name(result) + ": " + std::string(error_string);
  if (!last_error.empty()) what += " (" + std::string(last_error) + ")";
  const std::string debug = "NCCL_DEBUG=WARN (or INFO) prints NCCL's own account";
  switch (static_cast<NcclResult>(result)) {
    case NcclResult::remote_error:
      throw PeerFailure(what + ": another rank failed or its connection was lost",
                        "the other ranks' lines name their own error; " + debug);
    case NcclResult::unhandled_cuda_error:
      if (last_error.find("out of memory") != std::string_view::npos) {
        throw OutOfMemory(what, "NCCL's buffers did not fit beside the model: try a smaller --batch-size or "
                                "--memory-limit, or a smaller NCCL_BUFFSIZE");
      }
      throw BackendError(what, "a CUDA call inside NCCL failed: run 'nnfit doctor' to check the driver; " + debug);
    case NcclResult::system_error:
      throw BackendError(what, "a system call or the network failed: " + debug +
                                   " and names it; in a container give /dev/shm room (docker --shm-size=1g) or set "
                                   "NCCL_SHM_DISABLE=1");
    case NcclResult::internal_error:
      throw BackendError(what, debug + "; report it with NCCL's version ('nnfit doctor' shows it)");
    case NcclResult::invalid_argument:
    case NcclResult::invalid_usage:
      throw BackendError("internal error: " + what, "nnfit called NCCL wrongly: please report this as a bug");
    default:
      throw BackendError(what, debug);
  }
}

void poll_collective(const NcclPoll& poll, double timeout_s, const NcclCallSite& site) {
  const double deadline = poll.now_s() + timeout_s;
  for (;;) {
    if (poll.done()) return;
    const int async = poll.async_error();
    if (async != static_cast<int>(NcclResult::success) && async != static_cast<int>(NcclResult::in_progress)) {
      const std::string detail = poll.last_error ? poll.last_error() : std::string();
      poll.abort();
      throw_nccl_error(async, site, poll.error_string ? poll.error_string(async) : std::string(), detail);
    }
    if (poll.now_s() >= deadline) {
      poll.abort();
      if (poll.locate) poll.locate();  // throws naming a rank that does not answer
      char limit[32];
      std::snprintf(limit, sizeof(limit), "%gs", timeout_s);
      throw CollectiveTimeout(where(site) + " did not complete within the collective timeout of " + limit +
                                  ", though every rank answered over MPI: NCCL itself hung",
                              "NCCL_DEBUG=INFO shows where; check the GPUs' links with 'nvidia-smi topo -m'");
    }
    if (poll.pause) poll.pause();
  }
}

bool nccl_available() { return NNFIT_WITH_NCCL != 0; }

namespace {
#if NNFIT_WITH_NCCL
const NcclPlugin& nccl_plugin() {
  static const PluginSpec kSpec = {"libnnfit_nccl.so", "nnfit_nccl_plugin", "the NCCL communicator",
                                   "NCCL and the CUDA runtime it was built with", false};
  return reinterpret_cast<const NcclPlugin&>(load_plugin(kSpec));
}
#endif
}  // namespace

CommunicatorInfo nccl_info() {
#if NNFIT_WITH_NCCL
  try {
    nccl_plugin();
    return {"nccl", true, true, "libnnfit_nccl.so loads"};
  } catch (const Error& e) {
    return {"nccl", true, false, std::string("plugin not loaded: ") + e.what()};
  }
#else
  return {"nccl", false, false, "not built: no NCCL was found beside the CUDA toolkit at configure time"};
#endif
}

std::unique_ptr<Communicator> make_nccl_communicator(std::shared_ptr<Communicator> host, int device_index,
                                                     void* compute_stream, const CommunicatorOptions& options) {
  NNFIT_CHECK(host != nullptr, InvalidArgument, "the NCCL communicator needs the MPI communicator to bootstrap over");
  NNFIT_CHECK(options.timeout_s > 0, InvalidArgument, "the collective timeout must be positive, got ", options.timeout_s,
              " s");
#if NNFIT_WITH_NCCL
  return nccl_plugin().make_communicator(std::move(host), device_index, compute_stream, options);
#else
  (void)device_index;
  (void)compute_stream;
  throw Unsupported("this nnfit was built without NCCL", kInstallNccl);
#endif
}

}  // namespace nnfit::dist
