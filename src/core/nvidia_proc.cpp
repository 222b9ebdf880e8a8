// The NVIDIA driver's GPU folders (nnfit/core/nvidia_proc.h): one directory listing with
// std::filesystem's error codes, so a missing or unreadable /proc never throws.
#include "nnfit/core/nvidia_proc.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace nnfit {

NvidiaGpuFolders list_nvidia_gpu_folders(const std::string& gpus_dir) {
  namespace fs = std::filesystem;
  NvidiaGpuFolders out;
  std::error_code ec;
  if (!fs::is_directory(gpus_dir, ec)) return out;
  out.present = true;
  fs::directory_iterator it(gpus_dir, ec);
  if (ec) {
    out.error = ec.message();
    return out;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    out.entries.push_back(it->path().filename().string());
    std::error_code dir_ec;
    if (it->is_directory(dir_ec)) ++out.folders;
  }
  std::sort(out.entries.begin(), out.entries.end());
  return out;
}

}  // namespace nnfit
