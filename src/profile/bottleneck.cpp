// The bottleneck of a training run from its --logdir (bottleneck.h): the step's breakdown,
// the verdict and its evidence, against ceilings measured here.
#include "nnfit/profile/bottleneck.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "log_dir_inputs.h"
#include "nnfit/core/error.h"
#include "nnfit/profile/bandwidth.h"

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// Note [Profile verdict]: the shares are of the mean step (the sum of its parts). Input
// (waiting for a batch, plus the host-to-device copy) at or above kInputBound of the step
// makes the run input-bound, as TF's profiler calls a run "highly input-bound" past 20%;
// else all-reduce at or above the same share makes it synchronization-bound. Otherwise the
// step is in its kernels, and the question is what bounds them: when the ops whose cost is
// arithmetic (matmul, convolution and their gradients) take at least half of the kernel
// time it is compute-bound, else memory-bound (elementwise ops, reductions, optimizer
// updates: bandwidth, not FLOPs, sets their speed). The evidence for memory-bound names the
// heaviest of those ops with the bytes they move per step (ops.json `bytes`) at what rate,
// against the host's bandwidth measured over arrays past the last-level cache; an op whose
// data stays in cache can exceed it, and one under kSlowOp of it is said to be held back
// by something else (its arithmetic, OpenMP's fork and join on small tensors).
constexpr double kInputBound = 0.20;
constexpr double kSyncBound = 0.20;
constexpr double kFlopOpsShare = 0.50;
constexpr double kSlowOp = 0.50;
constexpr std::size_t kMemoryEvidenceOps = 3;

}  // namespace

double measure_sgemm_gflops(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
  const dnnl_dim_t n = 1024;
  std::vector<float> a(static_cast<std::size_t>(n * n), 0.5f), b(a.size(), 0.25f), c(a.size(), 0.0f);
  auto gemm = [&] {
    if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n) != dnnl_success) {
      throw BackendError("oneDNN sgemm failed while measuring the peak");
    }
  };
  for (int i = 0; i < 2; ++i) gemm();
  double best = 0;
  for (int round = 0; round < 3; ++round) {  // the best of 3: the machine may be shared
    const auto t0 = std::chrono::steady_clock::now();
    const int reps = 4;
    for (int i = 0; i < reps; ++i) gemm();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 2.0 * n * n * n * reps / s / 1e9);
  }
  return best;
}

namespace {

// "1.6 MB": decimal units, as GB/s is.
std::string format_bytes(double bytes) {
  char buf[32];
  if (bytes < 1e3) std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else if (bytes < 1e6) std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  else if (bytes < 1e9) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

// What to change when stage `name` is the slowest (pipeline stage names as nnfit train
// gives them: "source: idx", "map(normalize)", "batch", "prefetch", ...).
std::string stage_advice(const std::string& name) {
  if (name.rfind("map", 0) == 0) {
    return "run it on more threads (num_parallel_calls: \"AUTOTUNE\" or a larger number), cache() its output "
           "if it is deterministic, or make the function cheaper";
  }
  if (name.rfind("source", 0) == 0) {
    return "cache() right after the source (in memory or to a file), read from faster storage, or split the "
           "files and interleave them";
  }
  if (name == "shuffle") return "use a smaller shuffle buffer, or shuffle file names and a smaller buffer";
  if (name == "batch" || name == "padded_batch") return "batch before costly per-element maps (vectorize them)";
  if (name == "prefetch") return "raise buffer_size (or \"AUTOTUNE\") and check the stage before it";
  return "move it off the training thread (map with num_parallel_calls, then prefetch) or cache before it";
}

struct Part {
  const char* key;
  double mean_us;
};

}  // namespace

ordered_json analyze_log_dir(const BottleneckOptions& args, const std::vector<StepRecord>& all) {
  const fs::path dir = args.log_dir;
  // The first step plans kernels and touches memory for the first time: left out when
  // there are others.
  const std::size_t skip = all.size() >= 3 ? 1 : 0;
  const double used = static_cast<double>(all.size() - skip);
  std::vector<Part> parts = {{"input_wait_us", 0}, {"h2d_us", 0},    {"forward_us", 0},   {"backward_us", 0},
                             {"allreduce_us", 0},  {"update_us", 0}, {"callbacks_us", 0}};
  std::int64_t memory_max = 0;
  for (std::size_t i = skip; i < all.size(); ++i) {
    const StepRecord& r = all[i];
    const std::int64_t v[] = {r.input_wait_us, r.h2d_us, r.forward_us, r.backward_us, r.allreduce_us, r.update_us, r.callbacks_us};
    for (std::size_t k = 0; k < parts.size(); ++k) parts[k].mean_us += static_cast<double>(v[k]) / used;
    memory_max = std::max(memory_max, r.memory_in_use_bytes);
  }
  double step_us = 0;
  for (const Part& p : parts) step_us += p.mean_us;
  auto share = [&](double us) { return step_us > 0 ? us / step_us : 0.0; };
  const double input_share = share(parts[0].mean_us + parts[1].mean_us);
  const double sync_share = share(parts[4].mean_us);
  const double kernel_us = parts[2].mean_us + parts[3].mean_us + parts[5].mean_us;

  ordered_json out;
  out["log_dir"] = args.log_dir;
  out["steps"] = all.size();
  out["steps_used"] = all.size() - skip;
  out["mean_step_us"] = step_us;
  ordered_json breakdown = ordered_json::object(), fractions = ordered_json::object();
  for (const Part& p : parts) {
    breakdown[p.key] = p.mean_us;
    fractions[std::string(p.key).substr(0, std::string(p.key).size() - 3)] = share(p.mean_us);
  }
  out["breakdown_us"] = breakdown;
  out["fractions"] = fractions;
  out["memory_in_use_bytes_max"] = memory_max;

  // Per-op figures (ops.json) and the pipeline's stages (pipeline.json), when present.
  ordered_json ops_doc, pipe_doc;
  if (fs::exists(dir / "ops.json")) {
    ops_doc = read_json(dir / "ops.json");
    check_ops_json(dir / "ops.json", ops_doc);
  }
  if (fs::exists(dir / "pipeline.json")) {
    pipe_doc = read_json(dir / "pipeline.json");
    check_pipeline_json(dir / "pipeline.json", pipe_doc);
  }
  double flop_op_seconds = 0, op_seconds = 0;
  std::vector<ordered_json> ops;
  std::int64_t op_steps = 0;
  int threads = 0;
  bool ops_have_bytes = false;  // ops.json from before `bytes` has none
  if (ops_doc.is_object()) {
    try {
      op_steps = ops_doc.at("steps").get<std::int64_t>();
      threads = ops_doc.at("threads").get<int>();
      for (const auto& o : ops_doc.at("ops")) {
        const double s = o.at("seconds").get<double>();
        op_seconds += s;
        if (o.at("flops").get<double>() > 0) flop_op_seconds += s;
        if (o.contains("bytes")) {
          (void)o.at("bytes").get<double>();  // a number, or the catch below names the file
          ops_have_bytes = true;
        }
        ops.push_back(o);
      }
    } catch (const nlohmann::json::exception& e) {
      throw DataError((dir / "ops.json").string(), -1, std::string("unexpected content: ") + e.what());
    }
  }
  const double flop_share = op_seconds > 0 ? flop_op_seconds / op_seconds : 0.0;

  std::string verdict;
  std::vector<std::string> evidence;
  char buf[512];
  auto pct = [](double f) { return 100.0 * f; };
  if (input_share >= kInputBound && input_share >= sync_share) {
    verdict = "input-bound";
    std::snprintf(buf, sizeof buf, "the training loop waited for input %.1f%% of the step (%.3f ms of %.3f ms; input-bound from %.0f%%)",
                  pct(input_share), (parts[0].mean_us + parts[1].mean_us) / 1e3, step_us / 1e3, pct(kInputBound));
    evidence.push_back(buf);
  } else if (sync_share >= kSyncBound) {
    verdict = "synchronization-bound";
    std::snprintf(buf, sizeof buf, "gradient all-reduce took %.1f%% of the step (%.3f ms)", pct(sync_share),
                  parts[4].mean_us / 1e3);
    evidence.push_back(buf);
  } else {
    verdict = op_seconds <= 0 || flop_share >= kFlopOpsShare ? "compute-bound" : "memory-bound";
    std::snprintf(buf, sizeof buf, "kernels took %.1f%% of the step (forward %.3f ms, backward %.3f ms, update %.3f ms); input wait %.1f%%",
                  pct(share(kernel_us)), parts[2].mean_us / 1e3, parts[3].mean_us / 1e3, parts[5].mean_us / 1e3,
                  pct(input_share));
    evidence.push_back(buf);
    if (op_seconds > 0) {
      std::snprintf(buf, sizeof buf, "matmul and convolution kernels are %.1f%% of kernel time (%s from %.0f%%)",
                    pct(flop_share), verdict == "compute-bound" ? "compute-bound" : "memory-bound below", pct(kFlopOpsShare));
      evidence.push_back(buf);
    } else {
      evidence.push_back("no ops.json in the log directory: kernels are not split by op");
    }
  }

  // Input-bound evidence: the slowest pipeline stage by its own time in next() (its
  // measure point's time minus the one before it, which includes the stages upstream).
  ordered_json slowest = nullptr;
  if (verdict == "input-bound") {
    if (pipe_doc.is_object() && pipe_doc.contains("stages") && !pipe_doc["stages"].empty()) {
      double before = 0, best = -1, total_own = 0;
      ordered_json stages = ordered_json::array();
      for (const auto& st : pipe_doc["stages"]) {
        const double cum = st.value("next_seconds", 0.0);
        const double own = std::max(0.0, cum - before);
        before = cum;
        total_own += own;
        const std::int64_t n = st.value("elements", std::int64_t{0});
        ordered_json s = {{"name", st.value("name", "?")}, {"own_seconds", own}, {"elements", n},
                          {"own_us_per_element", n > 0 ? own * 1e6 / static_cast<double>(n) : 0.0}};
        if (own > best) {
          best = own;
          slowest = s;
        }
        stages.push_back(s);
      }
      slowest["share_of_pipeline"] = total_own > 0 ? best / total_own : 0.0;
      slowest["advice"] = stage_advice(slowest["name"].get<std::string>());
      out["pipeline_stages"] = stages;
      std::snprintf(buf, sizeof buf, "slowest pipeline stage: %s, %.1f%% of the pipeline's own time (%.1f us per element it yields)",
                    slowest["name"].get<std::string>().c_str(), pct(slowest["share_of_pipeline"].get<double>()),
                    slowest["own_us_per_element"].get<double>());
      evidence.push_back(buf);
      evidence.push_back("change: " + slowest["advice"].get<std::string>());
    } else {
      evidence.push_back("no pipeline.json (in-memory data or an older run): per-stage figures are missing; train "
                         "from a data pipeline with --logdir to see which stage is slow");
    }
  }
  out["slowest_stage"] = slowest;

  // Compute and memory evidence: the heaviest ops, their achieved FLOP/s against the
  // measured peak and their bytes per second against the measured bandwidth.
  ordered_json heavy = ordered_json::array();
  if (!ops.empty() && (verdict == "compute-bound" || verdict == "memory-bound")) {
    std::sort(ops.begin(), ops.end(), [](const ordered_json& a, const ordered_json& b) {
      return a["seconds"].get<double>() > b["seconds"].get<double>();
    });
    double peak = args.peak_gflops;
    std::string peak_source = "given with --peak-gflops";
    if (peak <= 0) {
      peak = measure_sgemm_gflops(threads);
      peak_source = "measured now: oneDNN f32 sgemm 1024x1024x1024, best of 3, " + std::to_string(threads) + " thread(s)";
    }
    out["peak"] = {{"gflops_per_s", peak}, {"source", peak_source}};
    // The bandwidth: given, or measured when some op has bytes to compare with it.
    std::optional<double> bandwidth;
    std::string bandwidth_source;
    if (args.peak_gbps > 0) {
      bandwidth = args.peak_gbps;
      bandwidth_source = "given with --peak-gbps";
    } else if (ops_have_bytes) {
      const BandwidthMeasurement m = measure_host_bandwidth({std::max(1, threads), 0, 3});
      bandwidth = m.gbps;
      bandwidth_source = "measured now: STREAM triad over 3 arrays of " + std::to_string(m.array_bytes >> 20) +
                         " MiB, best of 3, " + std::to_string(m.threads) + " thread(s)";
    }
    out["peak_gbps"] = bandwidth ? ordered_json(*bandwidth) : ordered_json(nullptr);
    out["peak_gbps_source"] = bandwidth ? ordered_json(bandwidth_source) : ordered_json(nullptr);
    const double steps = static_cast<double>(std::max<std::int64_t>(1, op_steps));
    // GB/s of an op with bytes (null without), and its fraction of the bandwidth.
    auto rate = [&](const ordered_json& o) -> std::pair<ordered_json, ordered_json> {
      const double s = o["seconds"].get<double>(), b = o.value("bytes", 0.0);
      if (b <= 0 || s <= 0) return {nullptr, nullptr};
      const double gbps = b / s / 1e9;
      return {gbps, bandwidth ? ordered_json(gbps / *bandwidth) : ordered_json(nullptr)};
    };
    for (std::size_t i = 0; i < ops.size() && i < 5; ++i) {
      const ordered_json& o = ops[i];
      const double s = o["seconds"].get<double>(), f = o["flops"].get<double>();
      ordered_json h = {{"name", o["name"]}, {"op", o["op"]}, {"phase", o["phase"]},
                        {"us_per_step", s * 1e6 / steps}, {"share_of_kernels", op_seconds > 0 ? s / op_seconds : 0.0},
                        {"flops_per_step", f / steps}};
      if (f > 0 && s > 0) {
        h["gflops_per_s"] = f / s / 1e9;
        h["fraction_of_peak"] = f / s / 1e9 / peak;
      } else {
        h["gflops_per_s"] = nullptr;
        h["fraction_of_peak"] = nullptr;
      }
      h["bytes_per_step"] = o.contains("bytes") ? ordered_json(o["bytes"].get<double>() / steps) : ordered_json(nullptr);
      const auto [gbps, fraction] = rate(o);
      h["gbps"] = gbps;
      h["fraction_of_bandwidth"] = fraction;
      heavy.push_back(h);
    }
    if (verdict == "memory-bound") {
      // The heaviest ops without FLOPs, what they move and how fast.
      std::size_t named = 0;
      for (const ordered_json& o : ops) {
        if (named == kMemoryEvidenceOps) break;
        const auto [gbps, fraction] = rate(o);
        if (o["flops"].get<double>() > 0 || gbps.is_null() || fraction.is_null()) continue;
        const double f = fraction.get<double>();
        const char* note = f > 1         ? " (more than the memory's rate: its data stays in cache)"
                           : f < kSlowOp ? " (under half of it: arithmetic or threading overhead, not bandwidth, limits it)"
                                         : "";
        std::snprintf(buf, sizeof buf, "%s moves %s per step at %.1f GB/s = %.0f%% of the %.1f GB/s %s%s",
                      o["name"].get<std::string>().c_str(), format_bytes(o["bytes"].get<double>() / steps).c_str(),
                      gbps.get<double>(), pct(f), *bandwidth, args.peak_gbps > 0 ? "given with --peak-gbps" : "measured", note);
        evidence.push_back(buf);
        ++named;
      }
      if (!ops_have_bytes) {
        evidence.push_back("ops.json has no bytes per op (an older nnfit wrote it): train again to compare the bytes "
                           "each op moves with the memory bandwidth");
      }
    }
  }
  out["heaviest_ops"] = heavy;
  out["verdict"] = verdict;
  out["evidence"] = evidence;
  return out;
}

ReportVerdict report_verdict(const ordered_json& out) {
  ReportVerdict v;
  v.verdict = out["verdict"].get<std::string>();
  for (const auto& e : out["evidence"]) v.evidence.push_back(e.get<std::string>());
  v.steps = out["steps"].get<std::int64_t>();
  v.steps_used = out["steps_used"].get<std::int64_t>();
  v.mean_step_us = out["mean_step_us"].get<double>();
  v.memory_in_use_bytes_max = out["memory_in_use_bytes_max"].get<std::int64_t>();
  for (const auto& [key, mean_us] : out["breakdown_us"].items()) {
    const std::string name = key.substr(0, key.size() - 3);
    v.breakdown.push_back({name, mean_us.get<double>(), out["fractions"][name].get<double>()});
  }
  for (const auto& h : out["heaviest_ops"]) {
    ReportVerdict::Op op{h["name"].get<std::string>(), h["op"].get<std::string>(), h["phase"].get<std::string>(),
                                  h["us_per_step"].get<double>(), h["share_of_kernels"].get<double>(), {}, {}, {}, {}, {}};
    if (!h["gflops_per_s"].is_null()) op.gflops_per_s = h["gflops_per_s"].get<double>();
    if (!h["fraction_of_peak"].is_null()) op.fraction_of_peak = h["fraction_of_peak"].get<double>();
    if (!h["bytes_per_step"].is_null()) op.bytes_per_step = h["bytes_per_step"].get<double>();
    if (!h["gbps"].is_null()) op.gbps = h["gbps"].get<double>();
    if (!h["fraction_of_bandwidth"].is_null()) op.fraction_of_bandwidth = h["fraction_of_bandwidth"].get<double>();
    v.heaviest_ops.push_back(std::move(op));
  }
  if (out.contains("peak")) {
    v.peak_gflops_per_s = out["peak"]["gflops_per_s"].get<double>();
    v.peak_source = out["peak"]["source"].get<std::string>();
  }
  if (out.contains("peak_gbps") && !out["peak_gbps"].is_null()) {
    v.peak_gbps = out["peak_gbps"].get<double>();
    v.peak_gbps_source = out["peak_gbps_source"].get<std::string>();
  }
  if (out.contains("pipeline_stages")) {
    for (const auto& st : out["pipeline_stages"]) {
      v.pipeline_stages.push_back({st["name"].get<std::string>(), st["own_seconds"].get<double>(),
                                   st["own_us_per_element"].get<double>(), st["elements"].get<std::int64_t>()});
    }
  }
  if (out["slowest_stage"].is_object()) v.slowest_stage = out["slowest_stage"]["name"].get<std::string>();
  return v;
}

}  // namespace nnfit::profile
