// `nnfit profile LOGDIR [--json] [--peak-gflops X] [--peak-gbps X] [--html FILE]`: prints
// the bottleneck analysis of what a training run with --logdir left (profile/bottleneck.h:
// the mean step, its breakdown and exactly one of input-bound, compute-bound, memory-bound,
// synchronization-bound, with the evidence), as text or as its JSON object. `--html FILE`
// also writes the report page (profile/html_report.h) with that verdict.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "commands.h"
#include "cli_checks.h"
#include "nnfit/core/error.h"
#include "nnfit/profile/bottleneck.h"
#include "nnfit/profile/html_report.h"
#include "nnfit/profile/step_log.h"

namespace nnfit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct ProfileArgs {
  std::string log_dir;
  bool json = false;
  double peak_gflops = 0;  // 0: measure
  double peak_gbps = 0;    // 0: measure (when ops.json has bytes)
  std::string html;        // --html FILE; empty: no page
};

void print_summary(const ordered_json& out) {
  char buf[64];
  auto pct = [](double f) { return 100.0 * f; };
  std::printf("%s: %zu steps (%zu used; the first is warm-up)\n", out["log_dir"].get<std::string>().c_str(),
              out["steps"].get<std::size_t>(), out["steps_used"].get<std::size_t>());
  std::printf("mean step %.3f ms\n", out["mean_step_us"].get<double>() / 1e3);
  for (const auto& [key, mean_us] : out["breakdown_us"].items()) {
    const std::string name = key.substr(0, key.size() - 3);
    std::printf("  %-12s %9.3f ms %6.1f%%\n", name.c_str(), mean_us.get<double>() / 1e3,
                pct(out["fractions"][name].get<double>()));
  }
  std::printf("memory in use: up to %.1f MiB\n", static_cast<double>(out["memory_in_use_bytes_max"].get<std::int64_t>()) / (1 << 20));
  std::printf("\nverdict: %s\n", out["verdict"].get<std::string>().c_str());
  for (const auto& e : out["evidence"]) std::printf("  %s\n", e.get<std::string>().c_str());
  const ordered_json& heavy = out["heaviest_ops"];
  if (!heavy.empty()) {
    std::string bandwidth = "bandwidth not measured: no bytes in ops.json";
    if (!out["peak_gbps"].is_null()) {
      std::snprintf(buf, sizeof buf, "%.1f GB/s, ", out["peak_gbps"].get<double>());
      bandwidth = "bandwidth " + std::string(buf) + out["peak_gbps_source"].get<std::string>();
    }
    std::printf("\nheaviest ops (peak %.1f GFLOP/s, %s; %s):\n", out["peak"]["gflops_per_s"].get<double>(),
                out["peak"]["source"].get<std::string>().c_str(), bandwidth.c_str());
    int width = 2;
    for (const auto& h : heavy) width = std::max(width, static_cast<int>(h["name"].get<std::string>().size()));
    std::printf("  %-*s %-9s %10s %7s %10s %7s %9s %8s %7s\n", width, "op", "phase", "us/step", "share", "GFLOP/s", "peak",
                "MB/step", "GB/s", "bw");
    // "-" for a null figure, else `format` of it (a fraction as a percentage).
    auto cell = [&](const ordered_json& v, const char* format, double scale) {
      if (v.is_null()) return std::string("-");
      std::snprintf(buf, sizeof buf, format, v.get<double>() * scale);
      return std::string(buf);
    };
    for (const auto& h : heavy) {
      std::printf("  %-*s %-9s %10.1f %6.1f%% %10s %7s %9s %8s %7s\n", width, h["name"].get<std::string>().c_str(),
                  h["phase"].get<std::string>().c_str(), h["us_per_step"].get<double>(),
                  pct(h["share_of_kernels"].get<double>()), cell(h["gflops_per_s"], "%.1f", 1).c_str(),
                  cell(h["fraction_of_peak"], "%.1f%%", 100).c_str(), cell(h["bytes_per_step"], "%.3f", 1e-6).c_str(),
                  cell(h["gbps"], "%.1f", 1).c_str(), cell(h["fraction_of_bandwidth"], "%.1f%%", 100).c_str());
    }
  }
}

std::string local_time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

int run_profile(const ProfileArgs& args) {
  const fs::path dir = args.log_dir;
  if (!fs::is_directory(dir)) {
    throw DataError(args.log_dir, -1, "no such log directory", "give the --logdir of an 'nnfit train' run");
  }
  const bool html = !args.html.empty();
  if (html) {
    // Before the analysis (which may measure the peak): a path whose directory is missing
    // fails now, not after the work. Permissions are found when the page is written.
    const fs::path parent = fs::absolute(args.html).parent_path();
    if (fs::is_directory(args.html)) throw DataError(args.html, -1, "cannot write the report: it is a directory", "give --html a file path");
    if (!fs::is_directory(parent)) {
      throw DataError(args.html, -1, "cannot write the report: no directory " + parent.string(),
                      "give --html a path in an existing directory");
    }
  }
  // Without steps.jsonl there is no summary; the page is still written (curves, and
  // sentences saying what is missing).
  const fs::path steps_path = dir / "steps.jsonl";
  const bool steps_found = fs::exists(steps_path);
  if (!steps_found && !html) {
    throw DataError(steps_path.string(), -1, "no step log in this directory",
                    "train with 'nnfit train CONFIG --logdir " + args.log_dir + "' first; it writes steps.jsonl");
  }
  std::vector<profile::StepRecord> all;
  if (steps_found) all = profile::read_step_log(steps_path.string());
  if (all.empty() && !html) throw DataError(steps_path.string(), 0, "the step log has no steps");
  std::optional<ordered_json> out;
  if (!all.empty()) out = profile::analyze_log_dir({args.log_dir, args.peak_gflops, args.peak_gbps}, all);

  if (html) {
    profile::ReportInputs in = profile::load_report_events(args.log_dir);
    in.steps_found = steps_found;
    in.steps = std::move(all);
    if (out) in.verdict = profile::report_verdict(*out);
    profile::HtmlReportOptions options;
    options.generator = "nnfit " NNFIT_VERSION;
    options.generated_at = local_time_now();
    profile::write_html_report(args.html, profile::render_html_report(in, options));
    if (!out) {
      std::fprintf(stderr, "nnfit: note: %s %s: the report at %s has no step breakdown, memory chart or verdict\n",
                   steps_path.string().c_str(), steps_found ? "has no steps" : "does not exist", args.html.c_str());
    }
  }
  if (out && args.json) {
    std::printf("%s\n", out->dump(2).c_str());
  } else if (out) {
    print_summary(*out);
  }
  if (html && !args.json) std::printf("%sreport written to %s\n", out ? "\n" : "", args.html.c_str());
  return 0;
}

}  // namespace

Subcommand add_profile_command(CLI::App& parent) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* app = parent.add_subcommand(
      "profile", "Summarize a training run's --logdir: mean step, its breakdown and the bottleneck (docs/cli.md)");
  app->add_option("logdir", args->log_dir, "the --logdir of an 'nnfit train' run")->required();
  app->add_flag("--json", args->json, "print the summary as JSON (docs/cli.md)");
  app->add_option("--html", args->html,
                  "also write a self-contained HTML report (curves, step breakdown, memory, verdict) to this file");
  app->add_option("--peak-gflops", args->peak_gflops,
                  "the machine's compute ceiling in GFLOP/s (default: measured with oneDNN's sgemm)")
      ->check(kPositive);
  app->add_option("--peak-gbps", args->peak_gbps,
                  "the machine's memory bandwidth in GB/s (default: measured with a STREAM triad)")
      ->check(kPositive);
  return {app, [args] { return run_profile(*args); }};
}

}  // namespace nnfit::cli
