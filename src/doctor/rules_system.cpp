// Rules about the machine below Python: driver, GPUs, toolkits, CUDA libraries and the
// environment variables that select them.
#include <set>

#include "rules_util.h"

namespace nnfit::doctor {
namespace {

bool gpu_framework_present(const Facts& facts, std::string* which) {
  for (const auto& env : facts.envs) {
    for (const auto& p : env.packages) {
      if (p.cuda_build.value_or(false) || p.name == "tensorflow-gpu") {
        if (which) *which = p.name + " " + p.version + " in " + env_label(env);
        return true;
      }
    }
  }
  return false;
}

std::string toolkit_of_path(const Facts& facts, const std::string& path) {
  for (const auto& tk : facts.toolkits) {
    if (path == tk.path || path.rfind(tk.path + "/", 0) == 0) return tk.path;
  }
  return "";
}

}  // namespace

std::string env_label(const PythonEnvFacts& env) {
  if (env.kind == "system") return "system";
  std::size_t slash = env.path.find_last_of('/');
  return slash == std::string::npos ? env.path : env.path.substr(slash + 1);
}

std::string driver_upgrade_fix(const std::string& min_driver) {
  auto v = Version::parse(min_driver);
  std::string series = v ? std::to_string(v->major()) : "<series>";
  return "upgrade the NVIDIA driver to " + min_driver + " or newer (Ubuntu: sudo apt install nvidia-driver-" + series +
         "), then reboot";
}

Support driver_supports(const Facts& facts, const CompatTables& tables, const Version& cuda) {
  Support s;
  std::string cuda_mm = cuda.major_minor();
  auto dv = Version::parse(facts.driver.version);
  auto native = Version::parse(facts.driver.cuda_version);
  if (native && !(*native < Version({cuda.major(), cuda.minor()}))) {
    s.why = "driver supports CUDA " + facts.driver.cuda_version + " >= " + cuda_mm;
    return s;
  }
  if (!dv) {
    s.why = "driver version unknown; CUDA " + cuda_mm + " not checked";
    return s;
  }
  auto min = tables.min_driver(cuda);
  if (min && !(*dv < *min)) {
    s.why = "driver " + facts.driver.version + " >= " + min->str() + " needed by CUDA " + cuda_mm;
    return s;
  }
  auto compat = cuda.major() >= 11 ? tables.minor_compat_min(cuda.major()) : std::nullopt;
  bool newer = !min && tables.newest_known_cuda() < cuda;
  if (compat && !(*dv < *compat)) {
    s.status = Status::kWarn;
    s.why = std::string(newer ? "CUDA " + cuda_mm + " is newer than the tables know; it" : "driver " + facts.driver.version +
                                                                                             " is older than CUDA " + cuda_mm +
                                                                                             " asks for (" + (min ? min->str() : "?") +
                                                                                             ") but it") +
            " runs through CUDA minor-version compatibility (driver >= " + compat->str() + " for CUDA " +
            std::to_string(cuda.major()) + ".x); features that need a newer driver and PTX from CUDA " + cuda_mm +
            " will fail";
    s.min_driver = min ? min->str() : "";
    return s;
  }
  if (!min) {
    s.status = Status::kWarn;
    s.why = "CUDA " + cuda_mm + " is " + (newer ? "newer than the tables know" : "not in the tables") +
            "; its driver requirement is not checked";
    return s;
  }
  s.status = Status::kFail;
  s.min_driver = min->str();
  s.why = "driver " + facts.driver.version + " is too old for CUDA " + cuda_mm + " (needs >= " + min->str() +
          (compat ? ", or >= " + compat->str() + " through minor-version compatibility" : "") + ")";
  if (compat && *compat < *min) s.min_driver = compat->str();
  return s;
}

void check_driver(const Facts& facts, const CompatTables& tables, std::vector<Check>& out) {
  (void)tables;
  const DriverFacts& d = facts.driver;
  if (d.loaded) {
    std::string title = d.version.empty() ? "NVIDIA driver (WSL)" : "NVIDIA driver " + d.version;
    if (!d.cuda_version.empty()) title += " (supports CUDA " + d.cuda_version + ")";
    std::string detail = "from " + d.source;
    if (d.wsl) detail += "; WSL layout: the Windows driver is exposed through /usr/lib/wsl/lib/libcuda.so.1, "
                         "no /proc/driver/nvidia is expected";
    out.push_back({"driver", Status::kOk, title, detail, ""});
    if (!d.version.empty() && !d.userspace_version.empty() && d.userspace_version != d.version) {
      out.push_back({"driver-mismatch", Status::kFail,
                     "kernel module " + d.version + " differs from user-space driver " + d.userspace_version,
                     "the driver libraries (" + d.userspace_library + ") were upgraded but the old kernel module is "
                     "still loaded; NVML fails with 'Driver/library version mismatch' and cuInit with "
                     "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
                     "reboot (or: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia)"});
    }
    return;
  }
  std::string why = facts.libraries_loaded ? d.nvml_error : "library loading skipped (--root)";
  if (d.nvidia_pci_device) {
    out.push_back({"driver", Status::kFail, "NVIDIA GPU present but no driver loaded",
                   "an NVIDIA display/3D controller is on the PCI bus, but /proc/driver/nvidia/version does not exist "
                   "(" + why + "): the kernel module is not loaded (not installed, not rebuilt for this kernel, or "
                   "blocked by Secure Boot)",
                   "install the driver (Ubuntu: sudo ubuntu-drivers install), or rebuild it for this kernel "
                   "(sudo dkms autoinstall) and reboot; with Secure Boot, enroll the module signing key"});
    return;
  }
  std::string which;
  std::string detail = "no /proc/driver/nvidia/version and no WSL driver (" + why + "); GPU checks are skipped";
  if (gpu_framework_present(facts, &which)) {
    detail += "; " + which + " is a CUDA build and will run on the CPU only";
  }
  out.push_back({"driver", Status::kWarn, "no NVIDIA driver", detail,
                 "nothing to do for CPU training; for a GPU, install the NVIDIA driver and reboot"});
}

void check_gpus(const Facts& facts, const CompatTables& tables, std::vector<Check>& out) {
  if (facts.cuda_visible_devices && !facts.gpus.empty()) {
    const std::string& v = *facts.cuda_visible_devices;
    std::string t = v;
    bool hides = t.empty() || t == "-1" || t == "NoDevFiles" || t == "none";
    if (!hides) {
      // Indices at or beyond the GPU count hide everything from the first bad one on.
      auto first = Version::parse(t);
      hides = t[0] >= '0' && t[0] <= '9' && first && first->major() >= static_cast<int>(facts.gpus.size());
    }
    if (hides) {
      out.push_back({"gpu-visible", Status::kFail, "CUDA_VISIBLE_DEVICES='" + v + "' hides every GPU",
                     std::to_string(facts.gpus.size()) + " GPU(s) installed but none visible to CUDA programs: "
                     "they fail with 'no CUDA-capable device is detected'",
                     "unset CUDA_VISIBLE_DEVICES (or set it to 0)"});
    } else {
      out.push_back({"gpu-visible", Status::kOk, "CUDA_VISIBLE_DEVICES='" + v + "'", "", ""});
    }
  }
  for (const auto& gpu : facts.gpus) {
    std::string id = "gpu:" + std::to_string(gpu.index);
    std::string title = "GPU " + std::to_string(gpu.index) + ": " + gpu.name;
    if (!gpu.compute_capability.empty()) title += " (compute capability " + gpu.compute_capability + ")";
    if (gpu.memory_bytes > 0) title += ", " + std::to_string(gpu.memory_bytes >> 20) + " MiB";
    if (gpu.compute_capability.empty()) {
      out.push_back({id, Status::kWarn, title, "model not in data/compat/gpu_models.csv; compute capability unknown",
                     "add the model to data/compat/gpu_models.csv with its source"});
      continue;
    }
    out.push_back({id, Status::kOk, title, "from " + gpu.source, ""});
    auto range = tables.cuda_range_for(gpu.compute_capability);
    for (const auto& tk : facts.toolkits) {
      auto v = Version::parse(tk.version);
      if (!v || !range) continue;
      Version mm({v->major(), v->minor()});
      if (range->first && mm < *range->first) {
        out.push_back({"gpu-toolkit:" + std::to_string(gpu.index) + ":" + tk.path, Status::kFail,
                       "CUDA " + tk.version + " at " + tk.path + " cannot build for compute capability " +
                           gpu.compute_capability,
                       range->architecture + " needs CUDA >= " + range->first->str(),
                       "install CUDA " + range->first->str() + " or newer"});
      } else if (range->last && *range->last < mm) {
        out.push_back({"gpu-toolkit:" + std::to_string(gpu.index) + ":" + tk.path, Status::kFail,
                       "CUDA " + tk.version + " at " + tk.path + " no longer supports compute capability " +
                           gpu.compute_capability,
                       range->architecture + " was last supported by CUDA " + range->last->str(),
                       "use CUDA " + range->last->str() + " for this GPU"});
      }
    }
  }
}

void check_toolkits(const Facts& facts, const CompatTables& tables, std::vector<Check>& out) {
  for (const auto& tk : facts.toolkits) {
    std::string id = "toolkit:" + tk.path;
    auto v = Version::parse(tk.version);
    std::string how = tk.version_source + (tk.wheel_assembled ? ", assembled from NVIDIA wheels" : "") +
                      (tk.has_nvcc ? ", nvcc present" : ", no nvcc");
    if (!v) {
      out.push_back({id, Status::kWarn, "CUDA toolkit at " + tk.path + ", version unknown", how, ""});
      continue;
    }
    std::string title = "CUDA toolkit " + tk.version + " at " + tk.path;
    if (tk.wheel_assembled) title += " (assembled from NVIDIA wheels; version from dist-info)";
    if (tables.newest_known_cuda() < Version({v->major(), v->minor()})) title += " (newer than the tables know)";
    if (!facts.driver.loaded || facts.driver.version.empty()) {
      out.push_back({id, Status::kOk, title, "read from " + how + "; no driver to check it against", ""});
      continue;
    }
    Support s = driver_supports(facts, tables, *v);
    out.push_back({id, s.status, title, "read from " + how + "; " + s.why,
                   s.status == Status::kFail ? driver_upgrade_fix(s.min_driver) : ""});
  }
}

void check_libraries(const Facts& facts, const CompatTables& tables, std::vector<Check>& out) {
  for (const auto& lib : facts.libraries) {
    std::string title = lib.name + " " + lib.version +
                        (lib.source == "cudnnGetVersion" ? " loaded from " + lib.path + " (what programs get)" : "");
    if (lib.name == "cudnn") {
      auto v = Version::parse(lib.version);
      Version known = tables.newest_known_cudnn();
      if (v && Version({known.major(), known.minor()}) < Version({v->major(), v->minor()})) {
        title += " (newer than the tables know: " + known.str() + ")";
      }
    }
    out.push_back({lib.name + ":" + lib.path, Status::kOk, title, "from " + lib.source + " " + lib.path, ""});
  }
}

void check_env_vars(const Facts& facts, std::vector<Check>& out) {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    auto it = facts.env.find(var);
    if (it == facts.env.end()) continue;
    std::string tk = toolkit_of_path(facts, facts.env_resolved.count(var) ? facts.env_resolved.at(var) : it->second);
    bool found = false;
    for (const auto& t : facts.toolkits) found = found || t.path == tk;
    if (!found) {
      bool default_exists = !facts.default_toolkit.empty();
      out.push_back({std::string("env:") + var, Status::kFail,
                     std::string(var) + "=" + it->second + " is not a CUDA toolkit",
                     "the directory does not exist or holds no toolkit; build tools (CMake, setup.py, "
                     "torch.utils.cpp_extension) that read it fail",
                     default_exists ? std::string("export ") + var + "=" + facts.default_toolkit
                                    : std::string("unset ") + var});
      continue;
    }
    std::string other = facts.nvcc_on_path;
    if (!other.empty() && other != tk) {
      out.push_back({std::string("env:") + var, Status::kWarn,
                     std::string(var) + "=" + it->second + " but nvcc on PATH is from " + other,
                     std::string("two toolkits are in use: builds that read ") + var + " compile with one and link with the "
                     "other's libraries",
                     "export " + std::string(var) + "=" + other + "  (or put " + tk + "/bin first on PATH)"});
    } else {
      out.push_back({std::string("env:") + var, Status::kOk, std::string(var) + "=" + it->second, "", ""});
    }
  }
  auto ld = facts.env.find("LD_LIBRARY_PATH");
  if (ld == facts.env.end()) return;
  std::string home_tk;
  if (auto h = facts.env_resolved.find("CUDA_HOME"); h != facts.env_resolved.end()) {
    home_tk = toolkit_of_path(facts, h->second);
  }
  std::vector<std::string> missing, foreign;
  for (const auto& dir : facts.ld_library_path_resolved) {
    bool is_cuda = dir.find("/cuda") != std::string::npos;
    if (!is_cuda) continue;
    std::string tk = toolkit_of_path(facts, dir);
    if (tk.empty()) {
      missing.push_back(dir);
    } else if (!home_tk.empty() && tk != home_tk) {
      foreign.push_back(dir);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    out.push_back({"env:LD_LIBRARY_PATH", Status::kWarn, "LD_LIBRARY_PATH names CUDA directories that hold no toolkit",
                   list + ": a removed or never-installed toolkit; libraries are searched there first",
                   "remove them from LD_LIBRARY_PATH in your shell profile"});
  } else if (!foreign.empty()) {
    out.push_back({"env:LD_LIBRARY_PATH", Status::kWarn, "LD_LIBRARY_PATH and CUDA_HOME name different toolkits",
                   "LD_LIBRARY_PATH has " + foreign[0] + " but CUDA_HOME is " + home_tk +
                       ": programs built against one load the other's libraries",
                   "export LD_LIBRARY_PATH=" + home_tk + "/lib64"});
  }
}

}  // namespace nnfit::doctor
