// Device placement (nnfit/backend/device_placement.h): parse the request, look at the NVIDIA
// driver's /proc files (nnfit/core/nvidia_proc.h, the probe `nnfit doctor` uses too), and
// only then (Note [Placement without the plugin]) ask the CUDA plugin's runtime how many
// devices it sees.
#include "nnfit/backend/device_placement.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "nnfit/backend/backend.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/nvidia_proc.h"

namespace nnfit {

namespace {

namespace fs = std::filesystem;

const char* kAccepted = "expected auto, cpu, cuda or cuda:N (N a GPU index from 0)";

std::string plural_gpus(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

// Where an explicit CUDA request stands, as one clause: why it cannot be used.
[[noreturn]] void refuse(const DeviceRequest& r, const std::string& why, const std::string& hint) {
  throw Unsupported(r.where + " " + r.device.to_string() + ": " + why, hint);
}

const char* kUseCpu = "train on the CPU with --device cpu (fit.device \"cpu\"), or leave the device out: the default "
                      "is the first usable GPU, else the CPU";

}  // namespace

DeviceRequest parse_device_request(std::string_view text, std::string_view where) {
  DeviceRequest r;
  r.where = std::string(where);
  if (text.empty() || text == "auto") return r;
  r.automatic = false;
  if (text == "cpu" || text == "cpu:0") return r;
  auto bad = [&] {
    return InvalidArgument(std::string(where) + ": unknown device \"" + std::string(text) + "\"", kAccepted);
  };
  if (text.substr(0, 4) != "cuda") throw bad();
  r.device.type = DeviceType::cuda;
  std::string_view index = text.substr(4);
  if (index.empty()) return r;
  if (index[0] != ':' || index.size() < 2 || index.size() > 5) throw bad();
  int n = 0;
  for (char c : index.substr(1)) {
    if (c < '0' || c > '9') throw bad();
    n = n * 10 + (c - '0');
  }
  r.device.index = n;
  return r;
}

GpuDriverProbe probe_gpu_driver(const std::string& root_in) {
  const std::string root = [&] {
    if (!root_in.empty()) return root_in;
    std::string env = env_flag("NNFIT_DRIVER_ROOT").value_or("");
    return env.empty() ? std::string(1, '/') : env;
  }();
  const fs::path base(root);
  GpuDriverProbe p;
  const fs::path gpus = base / fs::path(kNvidiaProcGpusDir).relative_path();
  p.path = (root == "/" ? fs::path(kNvidiaProcGpusDir) : gpus).string();
  const NvidiaGpuFolders listed = list_nvidia_gpu_folders(gpus.string());
  if (listed.present) {
    p.driver = true;
    p.gpus = listed.folders;
    return p;
  }
  // WSL 2: the Windows driver serves the GPU through /dev/dxg; nothing lists it in /proc.
  std::error_code ec;
  if (fs::exists(base / "dev/dxg", ec)) p.driver = p.wsl = true;
  return p;
}

std::string DevicePlacement::to_string() const {
  return (device.type == DeviceType::cpu ? std::string("cpu") : device.to_string()) + " (" + reason + ")";
}

DevicePlacement place_device(const DeviceRequest& request, const std::string& root, int local_rank) {
  if (!request.automatic && request.device.type == DeviceType::cpu) {
    return {Device{}, "requested by " + request.where};
  }
  const GpuDriverProbe probe = probe_gpu_driver(root);
  if (!probe.driver || (!probe.wsl && probe.gpus == 0)) {
    const std::string why = !probe.driver ? "no NVIDIA driver: " + probe.path + " absent"
                                          : "the NVIDIA driver lists no GPU in " + probe.path;
    if (request.automatic) return {Device{}, why};
    refuse(request, "no NVIDIA GPU on this machine (" + why + ")",
           std::string("run 'nnfit doctor' to check the driver; or ") + kUseCpu);
  }
  // A GPU is listed: now the plugin may load.
  std::string why_not;
  const int count = cuda_device_count(&why_not);
  const std::string listed = probe.wsl ? "WSL's GPU device /dev/dxg is present" : probe.path + " lists " + plural_gpus(probe.gpus);
  if (count == 0) {
    const std::string why = listed + ", but CUDA cannot use it: " + why_not;
    if (request.automatic) return {Device{}, why};
    refuse(request, why, std::string("run 'nnfit doctor' to check the driver, toolkit and plugin; or ") + kUseCpu);
  }
  const Device gpu = request.automatic ? Device{DeviceType::cuda, std::max(local_rank, 0) % count} : request.device;
  if (gpu.index >= count) {
    refuse(request, "the CUDA runtime sees " + plural_gpus(count) + " (cuda:0" +
                        (count > 1 ? " to cuda:" + std::to_string(count - 1) : std::string()) + ")",
           "pick an index below " + std::to_string(count) + " ('nnfit doctor' lists the GPUs)");
  }
  if (!request.automatic) return {gpu, "requested by " + request.where};
  if (local_rank > 0) {
    return {gpu, "GPU " + std::to_string(gpu.index) + " of " + std::to_string(count) + " for local rank " +
                     std::to_string(local_rank) + " (" + listed + ")"};
  }
  return {gpu, "the first usable GPU (" + listed + ")"};
}

}  // namespace nnfit
