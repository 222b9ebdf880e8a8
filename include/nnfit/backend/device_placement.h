// Device placement: which device a model trains on, and why (docs/design/cuda.md,
// "Device placement"). A request is "auto" (the default: the first usable GPU, else the
// CPU), "cpu" or "cuda:N". Note [Placement without the plugin]: finding that there is no
// GPU must not load the CUDA plugin (its libraries cost every CPU run ~140 MiB and ~70 ms),
// so the driver is looked at first, in ROOT/proc/driver/nvidia/gpus (one folder per GPU,
// as `nnfit doctor` reads it), and the plugin is loaded only where a GPU is listed there
// (or where /dev/dxg says WSL's paravirtualized GPU may be present).
//
// Thread safety: the functions are reentrant; the plugin loads once per process.
#pragma once
#include <string>
#include <string_view>

#include "nnfit/core/device.h"

namespace nnfit {

struct DeviceRequest {
  bool automatic = true;  // "auto": the first usable GPU, else the CPU
  Device device;          // when not automatic
  std::string where;      // where it was written, for messages: "--device", "fit.device"
};

// "auto" (or ""), "cpu", "cpu:0", "cuda" (cuda:0), "cuda:N". throws: InvalidArgument
// naming `where` and the accepted forms.
DeviceRequest parse_device_request(std::string_view text, std::string_view where);

// What the NVIDIA kernel driver lists under ROOT (no library is loaded).
struct GpuDriverProbe {
  bool driver = false;  // ROOT/proc/driver/nvidia/gpus exists (or WSL's /dev/dxg)
  bool wsl = false;     // only /dev/dxg: the GPUs are not listed, the runtime must say
  int gpus = 0;         // folders in ROOT/proc/driver/nvidia/gpus
  std::string path;     // the folder looked at, as the messages show it
};
// root: "" for NNFIT_DRIVER_ROOT, else "/" (tests and containers point it elsewhere).
GpuDriverProbe probe_gpu_driver(const std::string& root = "");

struct DevicePlacement {
  Device device;
  std::string reason;  // "no NVIDIA driver: /proc/driver/nvidia/gpus absent"
  // "cpu (no NVIDIA driver: /proc/driver/nvidia/gpus absent)"
  std::string to_string() const;
};

// Resolves a request. Automatic: the CPU, with the reason, unless the driver lists a GPU,
// the CUDA plugin loads and its runtime sees the device. An
// explicit CUDA device that cannot be used throws Unsupported saying what is missing
// (no driver, no such GPU, the plugin or runtime's error)
// and what to do; an explicit "cpu" never loads anything. `local_rank`: this process's rank
// among the data-parallel ranks on its host; automatic then picks GPU local_rank mod the
// GPUs it sees, so the ranks of a host share its GPUs one each (as Horovod and
// MultiWorkerMirroredStrategy pin them).
DevicePlacement place_device(const DeviceRequest& request, const std::string& root = "", int local_rank = 0);

}  // namespace nnfit
