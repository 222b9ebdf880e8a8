// Driver probe. NVML is loaded with dlopen so nnfit has no link dependency on the driver;
// without it (no driver, or --root) the kernel module version comes from
// /proc/driver/nvidia/version and GPUs from /proc/driver/nvidia/gpus/*/information (the
// folders listed by nnfit/core/nvidia_proc.h, the probe device placement uses too).
// Note [Driver version sources]: the /proc file is the *kernel module*; the
// libnvidia-ml.so.<ver> suffix is the *user-space* driver. They differ after a driver
// upgrade without reboot, which is its own finding.
#include <dlfcn.h>


#include "nnfit/core/nvidia_proc.h"
#include "pattern.h"
#include "probes.h"

namespace nnfit::doctor {
namespace {

// First whitespace-separated token that looks like a driver version (formats.md §1.1:
// in the open-module layout the token after "Module" is "for").
std::string driver_version_in(const std::string& line) {
  static const Pattern kVersion("(^|[[:space:]])([0-9]{3}\\.[0-9]+(\\.[0-9]+)?)([[:space:]]|$)");
  if (auto m = kVersion.search(line)) return (*m)[2];
  return "";
}

void probe_nvml(Facts& facts) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    facts.driver.nvml_error = "libnvidia-ml.so.1 not found by the dynamic loader";
    return;
  }
  using InitFn = int (*)();
  using StrFn = int (*)(char*, unsigned);
  using IntFn = int (*)(int*);
  using CountFn = int (*)(unsigned*);
  using HandleFn = int (*)(unsigned, void**);
  using DevStrFn = int (*)(void*, char*, unsigned);
  using CcFn = int (*)(void*, int*, int*);
  struct Memory { unsigned long long total, free, used; };
  using MemFn = int (*)(void*, Memory*);
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  auto init = reinterpret_cast<InitFn>(sym("nvmlInit_v2"));
  if (init == nullptr) {
    facts.driver.nvml_error = "nvmlInit_v2 missing from libnvidia-ml.so.1";
    return;
  }
  int rc = init();
  if (rc != 0) {
    facts.driver.nvml_error = rc == 18 ? "NVML: driver/library version mismatch (error 18)"
                                       : "nvmlInit_v2 failed with error " + std::to_string(rc);
    return;
  }
  char buf[96] = {};
  if (auto f = reinterpret_cast<StrFn>(sym("nvmlSystemGetDriverVersion")); f && f(buf, sizeof buf) == 0) {
    facts.driver.loaded = true;
    facts.driver.version = buf;
    facts.driver.source = "nvml";
  }
  int cuda = 0;
  if (auto f = reinterpret_cast<IntFn>(sym("nvmlSystemGetCudaDriverVersion_v2")); f && f(&cuda) == 0 && cuda > 0) {
    facts.driver.cuda_version = std::to_string(cuda / 1000) + "." + std::to_string((cuda % 1000) / 10);
  }
  unsigned count = 0;
  auto get_count = reinterpret_cast<CountFn>(sym("nvmlDeviceGetCount_v2"));
  auto get_handle = reinterpret_cast<HandleFn>(sym("nvmlDeviceGetHandleByIndex_v2"));
  auto get_name = reinterpret_cast<DevStrFn>(sym("nvmlDeviceGetName"));
  auto get_cc = reinterpret_cast<CcFn>(sym("nvmlDeviceGetCudaComputeCapability"));
  auto get_mem = reinterpret_cast<MemFn>(sym("nvmlDeviceGetMemoryInfo"));
  if (get_count && get_handle && get_count(&count) == 0) {
    for (unsigned i = 0; i < count && i < 64; ++i) {
      void* dev = nullptr;
      if (get_handle(i, &dev) != 0) continue;
      GpuFacts gpu;
      gpu.index = static_cast<int>(i);
      gpu.source = "nvml";
      char name[96] = {};
      if (get_name && get_name(dev, name, sizeof name) == 0) gpu.name = name;
      int major = 0, minor = 0;
      if (get_cc && get_cc(dev, &major, &minor) == 0) {
        gpu.compute_capability = std::to_string(major) + "." + std::to_string(minor);
      }
      Memory mem{};
      if (get_mem && get_mem(dev, &mem) == 0) gpu.memory_bytes = static_cast<std::int64_t>(mem.total);
      facts.gpus.push_back(gpu);
    }
  }
  if (auto shutdown = reinterpret_cast<InitFn>(sym("nvmlShutdown"))) shutdown();
  // The library stays loaded: unloading NVML while its threads wind down is not safe.
}

void probe_proc(const RootFs& fs, Facts& facts) {
  const std::string path = kNvidiaProcVersionFile;
  if (auto text = fs.read(path)) {
    std::string version = driver_version_in(split(*text, '\n')[0]);
    if (version.empty()) {
      fs.problem(path, "no driver version on its first line");
    } else if (!facts.driver.loaded) {
      facts.driver.loaded = true;
      facts.driver.version = version;
      facts.driver.source = path;
    } else if (facts.driver.version != version) {
      // NVML answered (user space) but the kernel module is another version.
      facts.driver.userspace_version = facts.driver.version;
      facts.driver.userspace_library = "nvml";
      facts.driver.version = version;
      facts.driver.source = path;
    }
  }
  if (!facts.gpus.empty()) return;
  const std::string gpus = kNvidiaProcGpusDir;
  const NvidiaGpuFolders listed = list_nvidia_gpu_folders(fs.host(gpus));
  if (!listed.error.empty()) fs.problem(gpus, "directory cannot be listed: " + listed.error);
  int index = 0;
  for (const auto& bus : listed.entries) {
    std::string file = gpus + "/" + bus + "/information";
    auto text = fs.read(file);
    if (!text) continue;
    GpuFacts gpu;
    gpu.index = index++;
    gpu.source = file;
    for (const auto& line : split(*text, '\n')) {
      if (starts_with(line, "Model:")) gpu.name = trim(line.substr(6));
    }
    if (gpu.name.empty()) fs.problem(file, "no 'Model:' line");
    facts.gpus.push_back(gpu);
  }
}

void probe_userspace(const RootFs& fs, Facts& facts) {
  static const Pattern kLib("^lib(nvidia-ml|cuda)\\.so\\.([0-9]{3}\\.[0-9]+(\\.[0-9]+)?)$");
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/aarch64-linux-gnu",
                          "/usr/lib64/nvidia"}) {
    for (const auto& name : fs.list(dir)) {
      if (auto m = kLib.match(name)) {
        if (facts.driver.userspace_library.empty()) {
          facts.driver.userspace_version = (*m)[2];
          facts.driver.userspace_library = std::string(dir) + "/" + name;
        }
      }
    }
  }
  for (const char* lib : {"/usr/lib/wsl/lib/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so"}) {
    if (fs.exists(lib)) facts.driver.wsl = true;
  }
  if (facts.driver.wsl && !facts.driver.loaded) {
    facts.driver.loaded = true;
    facts.driver.source = "wsl";
  }
  for (const auto& dev : fs.list("/sys/bus/pci/devices")) {
    auto vendor = fs.read("/sys/bus/pci/devices/" + dev + "/vendor", 64);
    auto cls = fs.read("/sys/bus/pci/devices/" + dev + "/class", 64);
    if (vendor && cls && trim(*vendor) == "0x10de" && starts_with(trim(*cls), "0x03")) {
      facts.driver.nvidia_pci_device = true;
    }
  }
}

}  // namespace

void probe_driver(const RootFs& fs, const ProbeOptions& options, Facts& facts) {
  if (facts.libraries_loaded) {
    probe_nvml(facts);
  } else {
    facts.driver.nvml_error = "library loading skipped (--root)";
  }
  probe_proc(fs, facts);
  probe_userspace(fs, facts);
  if (auto it = options.env.find("CUDA_VISIBLE_DEVICES"); it != options.env.end()) {
    facts.cuda_visible_devices = it->second;
  }
}

}  // namespace nnfit::doctor
