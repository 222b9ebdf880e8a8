// `nnfit monitor [--interval 1s] [--count N] [--json]`: like nvidia-smi, for the question
// at hand: per GPU its utilization, memory used/total and which processes hold it, and the
// host's CPU and RAM. Without an NVIDIA driver it says so once and shows the host.
#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "cli_checks.h"
#include "nnfit/core/error.h"
#include "nnfit/core/units.h"
#include "nnfit/profile/monitor.h"

namespace nnfit::cli {
namespace {

struct MonitorArgs {
  std::string interval = "1s";
  std::int64_t count = 0;  // 0: until interrupted
  bool json = false;
  std::string nvml = "libnvidia-ml.so.1";
};

volatile std::sig_atomic_t g_stop = 0;

// "1s", "500ms", "2" (seconds), "0.5s".
double parse_interval(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double s = unit == "ms" ? v / 1000 : (unit.empty() || unit == "s") ? v : -1;
  if (used == 0 || !(s >= 0.05 && s <= 3600)) {
    throw InvalidArgument("--interval " + text + ": expected a duration from 50ms to 3600s, such as 1s or 500ms");
  }
  return s;
}

nlohmann::json to_json(const profile::MonitorSample& s, const profile::Monitor& m) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : s.gpus) {
    nlohmann::json procs = nlohmann::json::array();
    for (const auto& p : g.processes) {
      procs.push_back({{"pid", p.pid}, {"command", p.command}, {"used_bytes", p.used_bytes}});
    }
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"utilization_percent", g.utilization_percent},
                    {"memory_utilization_percent", g.memory_utilization_percent},
                    {"memory_used_bytes", g.memory_used_bytes},
                    {"memory_total_bytes", g.memory_total_bytes},
                    {"processes", procs}});
  }
  return {{"time", s.unix_seconds},
          {"host",
           {{"cpu_percent", s.host.cpu_percent},
            {"cores", s.host.cores},
            {"load_average_1m", s.host.load_average_1m},
            {"ram_used_bytes", s.host.ram_used_bytes},
            {"ram_total_bytes", s.host.ram_total_bytes}}},
          {"gpus", gpus},
          {"gpu_status", m.gpu_status()},
          {"driver_version", m.driver_version()}};
}

void print_text(const profile::MonitorSample& s) {
  std::printf("host: CPU %5.1f%% of %d cores (load %.2f), RAM %s / %s\n", s.host.cpu_percent, s.host.cores,
              s.host.load_average_1m, format_bytes(s.host.ram_used_bytes).c_str(),
              format_bytes(s.host.ram_total_bytes).c_str());
  for (const auto& g : s.gpus) {
    std::printf("gpu %u %s: util %s, memory %s / %s\n", g.index, g.name.c_str(),
                g.utilization_percent < 0 ? "n/a" : (std::to_string(g.utilization_percent) + "%").c_str(),
                format_bytes(g.memory_used_bytes).c_str(), format_bytes(g.memory_total_bytes).c_str());
    for (const auto& p : g.processes) {
      std::printf("    pid %u %-20s %s\n", p.pid, p.command.empty() ? "?" : p.command.c_str(),
                  p.used_bytes < 0 ? "memory n/a" : format_bytes(p.used_bytes).c_str());
    }
  }
  std::fflush(stdout);
}

int run_monitor(const MonitorArgs& args) {
  const double interval = parse_interval(args.interval);
  std::signal(SIGINT, [](int) { g_stop = 1; });
  profile::Monitor monitor(args.nvml);
  if (!args.json) {
    if (monitor.gpu_status().empty()) {
      std::printf("NVIDIA driver %s\n", monitor.driver_version().c_str());
    } else {
      std::printf("%s\n", monitor.gpu_status().c_str());
    }
  }
  monitor.sample();  // the CPU figure needs a previous reading
  for (std::int64_t n = 0; (args.count == 0 || n < args.count) && !g_stop; ++n) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
    while (!g_stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_stop) break;
    const profile::MonitorSample s = monitor.sample();
    if (args.json) {
      std::printf("%s\n", to_json(s, monitor).dump().c_str());
      std::fflush(stdout);
    } else {
      print_text(s);
    }
  }
  return 0;
}

}  // namespace

Subcommand add_monitor_command(CLI::App& parent) {
  auto args = std::make_shared<MonitorArgs>();
  CLI::App* app = parent.add_subcommand(
      "monitor", "Show GPU utilization, GPU memory and the processes holding it, and host CPU and RAM, every interval");
  app->add_option("--interval", args->interval, "time between samples: 1s (default), 500ms, 2");
  app->add_option("--count", args->count, "stop after N samples (default: until Ctrl-C)")->check(kNonNegative);
  app->add_flag("--json", args->json, "one JSON object per sample, one per line (docs/cli.md)");
  app->add_option("--nvml", args->nvml, "the NVML library to load (default libnvidia-ml.so.1 through the loader)");
  return {app, [args] { return run_monitor(*args); }};
}

}  // namespace nnfit::cli
