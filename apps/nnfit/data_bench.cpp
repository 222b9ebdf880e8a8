// `nnfit data bench CONFIG.json`: runs a config's input pipeline alone (no model), under
// the same Autotuner fit uses, and prints elements/s and time per stage and what AUTOTUNE
// chose. The pipeline gets the cores that --compute-threads would leave (default: all).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "cli_checks.h"
#include "nnfit/core/error.h"
#include "nnfit/data/autotune.h"
#include "nnfit/config/pipeline.h"
#include "nnfit/config/train_config.h"

namespace nnfit::cli {
namespace {

struct BenchArgs {
  std::string config;
  std::string split = "train";
  std::int64_t epochs = 2;
  int compute_threads = 0;
  bool json = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_bench(const BenchArgs& args) {
  const config::TrainConfig cfg = config::read_train_config(args.config);
  const config::DataSpec* spec = args.split == "train" ? &cfg.train : cfg.validation ? &*cfg.validation : nullptr;
  if (!spec) throw InvalidArgument(args.config + ": has no data.validation");
  if (!spec->pipeline) {
    throw InvalidArgument(args.config + ": data." + args.split + " is the IDX shorthand, not a pipeline",
                          "describe it as {\"source\": ..., \"pipeline\": [...]} (docs/config.md) to benchmark it");
  }
  config::PipelineProbe probe;
  const data::Dataset ds = config::build_pipeline(*spec->pipeline, cfg.batch_size, cfg.seed, &probe);
  data::AutotuneOptions ao;
  ao.compute_threads = args.compute_threads;
  if (!args.json) ao.log = [](const std::string& line) { std::printf("  autotune: %s\n", line.c_str()); };
  data::Autotuner tuner(ao);

  nlohmann::json out;
  out["config"] = args.config;
  out["split"] = args.split;
  out["cpu_budget"] = tuner.cpu_budget();
  out["ram_budget_bytes"] = tuner.ram_budget_bytes();
  out["epochs"] = nlohmann::json::array();
  if (!args.json) {
    std::printf("data.%s of %s: %lld epoch(s), pipeline threads budget %d\n", args.split.c_str(), args.config.c_str(),
                static_cast<long long>(args.epochs), tuner.cpu_budget());
  }
  for (std::int64_t epoch = 0; epoch < args.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t batches = 0, samples = 0;
    {
      auto it = tuner.make_iterator(ds);
      while (auto el = it->next()) {
        ++batches;
        samples += !el->empty() && (*el)[0].shape().rank() > 0 ? (*el)[0].shape()[0] : 1;
      }
    }
    const double s = seconds_since(t0);
    out["epochs"].push_back({{"epoch", epoch + 1}, {"seconds", s}, {"batches", batches}, {"samples", samples},
                             {"samples_per_s", s > 0 ? static_cast<double>(samples) / s : 0.0}});
    if (!args.json) {
      std::printf("epoch %lld: %.3f s, %lld batches, %lld samples, %.0f samples/s\n", static_cast<long long>(epoch + 1),
                  s, static_cast<long long>(batches), static_cast<long long>(samples),
                  s > 0 ? static_cast<double>(samples) / s : 0.0);
    }
  }
  out["stages"] = nlohmann::json::array();
  for (std::size_t i = 0; i < probe.names.size(); ++i) {
    const data::StageStats& st = *probe.stats[i];
    out["stages"].push_back({{"name", probe.names[i]},
                             {"elements", st.elements.load()},
                             {"elements_per_s", st.elements_per_second()},
                             {"next_seconds", static_cast<double>(st.wait_ns.load()) / 1e9}});
  }
  out["autotune"] = {{"summary", tuner.summary()}, {"decisions", tuner.decisions()}};
  if (args.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("\n%-34s %10s %13s %16s\n", "stage (output of)", "elements", "elements/s", "time in next() s");
  for (const auto& st : out["stages"]) {
    std::printf("%-34s %10lld %13.0f %16.3f\n", st["name"].get<std::string>().c_str(),
                static_cast<long long>(st["elements"].get<std::int64_t>()), st["elements_per_s"].get<double>(),
                st["next_seconds"].get<double>());
  }
  std::printf("(time in next(): what the next stage spent waiting for this one, its inputs included)\n");
  const std::string summary = tuner.summary();
  std::printf("autotune: %s\n", summary.empty() ? "no AUTOTUNE knobs" : summary.c_str());
  return 0;
}

}  // namespace

Subcommand add_data_bench_command(CLI::App& data) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* bench = data.add_subcommand(
      "bench", "Run a config's input pipeline alone: elements/s and time per stage, and the AUTOTUNE choices");
  bench->add_option("config", args->config, "an nnfit train config whose data.train (or --split) is a pipeline")
      ->required();
  bench->add_option("--split", args->split, "train (default) or validation")->check(CLI::IsMember({"train", "validation"}));
  bench->add_option("--epochs", args->epochs, "passes over the pipeline (default 2)")->check(kPositive);
  bench->add_option("--compute-threads", args->compute_threads,
                    "threads to leave to training when sizing the pipeline's CPU budget (default 0: all cores)")
      ->check(kNonNegative);
  bench->add_flag("--json", args->json, "print the figures as JSON (docs/cli.md)");
  return {bench, [args] { return run_bench(*args); }};
}

}  // namespace nnfit::cli
