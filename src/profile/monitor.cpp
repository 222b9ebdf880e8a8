// The host and NVML samplers behind `nnfit monitor`. NVML's C API is declared here by
// hand (the functions and structs used, from NVIDIA's NVML API reference): nvmlMemory_t
// {total, free, used} (unsigned long long), nvmlUtilization_t {gpu, memory} (unsigned),
// nvmlProcessInfo_t {pid, usedGpuMemory, gpuInstanceId, computeInstanceId} for the _v2/_v3
// process queries and nvmlProcessInfo_v1_t {pid, usedGpuMemory} for the original one.
#include "nnfit/profile/monitor.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace nnfit::profile {

// NVML's structs, named (not in the anonymous namespace): Monitor::Nvml's members use them,
// and GCC warns (-Wsubobject-linkage) when a unity batch puts this file after another.
namespace nvml_abi {

struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned gpu, memory;
};
struct NvmlProcessInfoV2 {
  unsigned pid;
  unsigned long long used;
  unsigned gpu_instance, compute_instance;
};
struct NvmlProcessInfoV1 {
  unsigned pid;
  unsigned long long used;
};

}  // namespace nvml_abi

namespace {

constexpr unsigned long long kNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE
constexpr int kInsufficientSize = 7;                  // NVML_ERROR_INSUFFICIENT_SIZE

std::string comm_of(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

struct Monitor::Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, void**) = nullptr;
  int (*name)(void*, char*, unsigned) = nullptr;
  int (*memory)(void*, nvml_abi::NvmlMemory*) = nullptr;
  int (*utilization)(void*, nvml_abi::NvmlUtilization*) = nullptr;
  int (*procs_v2)(void*, unsigned*, nvml_abi::NvmlProcessInfoV2*) = nullptr;  // _v3 or _v2
  int (*procs_v1)(void*, unsigned*, nvml_abi::NvmlProcessInfoV1*) = nullptr;

  template <typename F>
  void load(F& f, const char* symbol) {
    f = reinterpret_cast<F>(dlsym(lib, symbol));
  }
  ~Nvml() {
    if (shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

Monitor::Monitor(const std::string& nvml_library) {
  auto n = std::make_unique<Nvml>();
  n->lib = dlopen(nvml_library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!n->lib) {
    gpu_status_ = "no NVIDIA driver: " + nvml_library +
                  " not found by the dynamic loader, so there are no GPU figures (host figures only)";
    return;
  }
  n->load(n->init, "nvmlInit_v2");
  n->load(n->count, "nvmlDeviceGetCount_v2");
  n->load(n->handle, "nvmlDeviceGetHandleByIndex_v2");
  n->load(n->name, "nvmlDeviceGetName");
  n->load(n->memory, "nvmlDeviceGetMemoryInfo");
  n->load(n->utilization, "nvmlDeviceGetUtilizationRates");
  n->load(n->procs_v2, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!n->procs_v2) n->load(n->procs_v2, "nvmlDeviceGetComputeRunningProcesses_v2");
  if (!n->procs_v2) n->load(n->procs_v1, "nvmlDeviceGetComputeRunningProcesses");
  if (!n->init || !n->count || !n->handle) {
    gpu_status_ = nvml_library + " lacks nvmlInit_v2 / nvmlDeviceGetCount_v2 / nvmlDeviceGetHandleByIndex_v2 "
                                 "(a driver older than R450?)";
    return;
  }
  if (const int rc = n->init(); rc != 0) {
    gpu_status_ = rc == 18 ? "NVML: driver/library version mismatch (error 18): the kernel module and the user-space "
                             "driver differ, usually after a driver update without a reboot; reboot"
                           : "NVML could not start (error " + std::to_string(rc) + "); run `nnfit doctor`";
    return;
  }
  n->load(n->shutdown, "nvmlShutdown");
  int (*version)(char*, unsigned) = nullptr;
  n->load(version, "nvmlSystemGetDriverVersion");
  char buf[96] = {};
  if (version && version(buf, sizeof buf) == 0) driver_version_ = buf;
  nvml_ = std::move(n);
}

Monitor::~Monitor() = default;

MonitorSample Monitor::sample() {
  MonitorSample s;
  s.unix_seconds = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Host CPU: busy and total jiffies from /proc/stat's first line, against the last sample.
  {
    std::ifstream in("/proc/stat");
    std::string cpu;
    std::uint64_t v[10] = {};
    in >> cpu;
    for (auto& x : v) in >> x;
    const std::uint64_t idle = v[3] + v[4];
    std::uint64_t total = 0;
    for (int i = 0; i < 8; ++i) total += v[i];  // guest time is already in user/nice
    const std::uint64_t busy = total - idle;
    if (total > last_total_) {
      s.host.cpu_percent = 100.0 * static_cast<double>(busy - last_busy_) / static_cast<double>(total - last_total_);
    }
    last_busy_ = busy;
    last_total_ = total;
  }
  cpu_set_t set;
  s.host.cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  {
    std::ifstream in("/proc/loadavg");
    in >> s.host.load_average_1m;
  }
  {
    std::ifstream in("/proc/meminfo");
    std::string key, unit;
    std::int64_t kb = 0, total = 0, available = -1;
    while (in >> key >> kb >> unit) {
      if (key == "MemTotal:") total = kb * 1024;
      if (key == "MemAvailable:") available = kb * 1024;
    }
    s.host.ram_total_bytes = total;
    s.host.ram_used_bytes = available >= 0 ? total - available : 0;
  }
  if (!nvml_) return s;
  unsigned count = 0;
  if (nvml_->count(&count) != 0) return s;
  for (unsigned i = 0; i < count; ++i) {
    void* dev = nullptr;
    if (nvml_->handle(i, &dev) != 0) continue;
    GpuSample g;
    g.index = i;
    char name[96] = {};
    if (nvml_->name && nvml_->name(dev, name, sizeof name) == 0) g.name = name;
    nvml_abi::NvmlMemory m{};
    if (nvml_->memory && nvml_->memory(dev, &m) == 0) {
      g.memory_used_bytes = static_cast<std::int64_t>(m.used);
      g.memory_total_bytes = static_cast<std::int64_t>(m.total);
    }
    nvml_abi::NvmlUtilization u{};
    if (nvml_->utilization && nvml_->utilization(dev, &u) == 0) {
      g.utilization_percent = static_cast<int>(u.gpu);
      g.memory_utilization_percent = static_cast<int>(u.memory);
    }
    auto add = [&](unsigned pid, unsigned long long used) {
      g.processes.push_back({pid, used == kNotAvailable ? -1 : static_cast<std::int64_t>(used), comm_of(pid)});
    };
    if (nvml_->procs_v2) {
      std::vector<nvml_abi::NvmlProcessInfoV2> p(64);
      unsigned n = static_cast<unsigned>(p.size());
      int rc = nvml_->procs_v2(dev, &n, p.data());
      if (rc == kInsufficientSize) {
        p.resize(n + 16);
        n = static_cast<unsigned>(p.size());
        rc = nvml_->procs_v2(dev, &n, p.data());
      }
      if (rc == 0) {
        for (unsigned k = 0; k < n; ++k) add(p[k].pid, p[k].used);
      }
    } else if (nvml_->procs_v1) {
      std::vector<nvml_abi::NvmlProcessInfoV1> p(64);
      unsigned n = static_cast<unsigned>(p.size());
      if (nvml_->procs_v1(dev, &n, p.data()) == 0) {
        for (unsigned k = 0; k < n; ++k) add(p[k].pid, p[k].used);
      }
    }
    s.gpus.push_back(std::move(g));
  }
  return s;
}

}  // namespace nnfit::profile
