// The NVIDIA kernel driver's /proc files, read without loading any library: where they are
// and which GPU folders the driver lists. The one probe of them, shared by device placement
// (src/backend/device_placement.cpp) and `nnfit doctor` (src/doctor/probe_driver.cpp); it
// lives in core because the doctor links nothing else. Each caller words its own messages.
#pragma once
#include <string>
#include <vector>

namespace nnfit {

// In-root paths: a probe of another tree (a container image, a test's fake root) puts its
// root in front.
inline constexpr const char* kNvidiaProcVersionFile = "/proc/driver/nvidia/version";
inline constexpr const char* kNvidiaProcGpusDir = "/proc/driver/nvidia/gpus";

// What the driver's GPU folder holds: one sub-folder per GPU, named by its PCI bus id.
struct NvidiaGpuFolders {
  bool present = false;              // the folder exists (the kernel module is loaded)
  std::vector<std::string> entries;  // the names in it, sorted
  int folders = 0;                   // how many of them are folders (GPUs)
  std::string error;                 // why a present folder could not be listed, else ""
};

// Lists `gpus_dir`, a host path (kNvidiaProcGpusDir, or it under a probe root). Never
// throws: an absent folder is `present == false`, an unlistable one sets `error`.
NvidiaGpuFolders list_nvidia_gpu_folders(const std::string& gpus_dir);

}  // namespace nnfit
