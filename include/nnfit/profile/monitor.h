// What `nnfit monitor` shows (and what fit can sample): per NVIDIA GPU its utilization,
// memory used/total and the processes holding it, through NVML loaded with dlopen at run
// time (no link dependency; without a driver the monitor says so and shows the host
// only), and the host's CPU utilization and RAM. See docs/cli.md (`nnfit monitor`).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nnfit::profile {

struct GpuProcess {
  unsigned pid = 0;
  std::int64_t used_bytes = -1;  // -1: NVML does not know (e.g. under WDDM)
  std::string command;           // /proc/<pid>/comm, "" if not visible
};

struct GpuSample {
  unsigned index = 0;
  std::string name;
  int utilization_percent = -1;         // -1: not reported
  int memory_utilization_percent = -1;  // memory-controller busy share
  std::int64_t memory_used_bytes = 0, memory_total_bytes = 0;
  std::vector<GpuProcess> processes;
};

struct HostSample {
  double cpu_percent = 0;  // all cores, since the previous sample (or since boot for the first)
  int cores = 0;
  double load_average_1m = 0;
  std::int64_t ram_used_bytes = 0, ram_total_bytes = 0;  // used = total - MemAvailable
};

struct MonitorSample {
  double unix_seconds = 0;
  HostSample host;
  std::vector<GpuSample> gpus;
};

class Monitor {
 public:
  // Loads NVML (`nvml_library`, default libnvidia-ml.so.1 through the dynamic loader) if
  // it can; never throws for a missing or broken driver (gpu_status() says why).
  explicit Monitor(const std::string& nvml_library = "libnvidia-ml.so.1");
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  MonitorSample sample();
  // "" when NVML answered; otherwise why there are no GPU figures, in plain words.
  const std::string& gpu_status() const { return gpu_status_; }
  const std::string& driver_version() const { return driver_version_; }

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string gpu_status_, driver_version_;
  std::uint64_t last_busy_ = 0, last_total_ = 0;
};

}  // namespace nnfit::profile
