// `nnfit plan CONFIG.json`: the planner's peak memory for training the config's model and
// optimizer, broken down into weights, gradients, optimizer state, activations and
// workspace, per batch size; with a memory limit, the largest batch size that fits (found
// exactly by bisection between the listed sizes). A model whose input has dimensions known
// only per batch (Keras's None) is planned at each --input-shape given: the range of lengths
// or image sizes its data brings. Nothing is trained and no data is read.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "commands.h"
#include "cli_checks.h"
#include "memory_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/saving.h"
#include "nnfit/config/train_config.h"

namespace nnfit::cli {
namespace {

struct PlanArgs {
  std::string config;
  std::vector<std::int64_t> batch_sizes;
  MemoryFlags memory;
  bool json = false;
  std::string dtype_policy;
  std::vector<std::string> input_shapes;  // "200" or "224,224,3", per --input-shape
};

// The per-sample shapes to plan at: the model's own (one empty entry) when it is static,
// else each --input-shape, which must fit the model's single input.
std::vector<std::vector<Shape>> shapes_to_plan(const Model& model, const std::vector<std::string>& given) {
  const std::vector<Shape> inputs = model.input_shapes();
  const bool known = std::all_of(inputs.begin(), inputs.end(), [](const Shape& s) { return s.is_static(); });
  if (given.empty()) {
    NNFIT_CHECK(known, InvalidArgument, "model '", model.name(), "' has input shape ", inputs[0].to_string(),
                ", known only per batch; give the shapes to plan at with --input-shape (e.g. --input-shape 50 ",
                "--input-shape 400 for sequences of 50 to 400 steps)");
    return {{}};
  }
  NNFIT_CHECK(inputs.size() == 1, InvalidArgument, "--input-shape: model '", model.name(), "' has ", inputs.size(),
              " inputs; the flag gives the shape of a single one");
  std::vector<std::vector<Shape>> out;
  for (const std::string& text : given) {
    std::vector<std::int64_t> dims;
    std::size_t at = 0;
    while (at <= text.size()) {
      const std::size_t comma = std::min(text.find(',', at), text.size());
      const std::string part = text.substr(at, comma - at);
      std::size_t used = 0;
      long long d = 0;
      try {
        d = std::stoll(part, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      NNFIT_CHECK(used == part.size() && !part.empty() && d > 0, InvalidArgument, "--input-shape \"", text,
                  "\": give positive sizes separated by commas, without the batch axis (\"200\", \"224,224,3\")");
      dims.push_back(d);
      at = comma + 1;
    }
    const Shape s(dims);
    NNFIT_CHECK(inputs[0].admits(s), InvalidArgument, "--input-shape ", s.to_string(), " does not fit the input shape ",
                inputs[0].to_string(), " of model '", model.name(), "'");
    out.push_back({s});
  }
  return out;
}

std::vector<std::int64_t> default_batch_sizes() {
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = 1; b <= 4096; b *= 2) sizes.push_back(b);
  return sizes;
}

// The largest batch whose planned peak fits `limit`: the largest listed size that fits,
// then bisection up to the next listed size (peaks grow with the batch). 0 if none fits.
std::int64_t largest_fitting(Model& model, const std::vector<MemoryPlan>& plans, std::int64_t limit,
                             const std::vector<Shape>& samples) {
  std::int64_t lo = 0, hi = 0;  // lo fits, hi does not (0: unknown)
  for (const MemoryPlan& p : plans) {
    if (p.peak_bytes <= limit) lo = std::max(lo, p.batch_size);
  }
  for (const MemoryPlan& p : plans) {
    if (p.peak_bytes > limit && p.batch_size > lo && (hi == 0 || p.batch_size < hi)) hi = p.batch_size;
  }
  if (hi == 0) return lo;  // every listed size fits: report the largest asked about
  if (lo == 0 && hi > 1) {
    if (model.plan_memory(1, samples).peak_bytes > limit) return 0;
    lo = 1;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (model.plan_memory(mid, samples).peak_bytes <= limit ? lo : hi) = mid;
  }
  return lo;
}

std::string mib(std::int64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(b) / (1 << 20));
  return buf;
}

// The config's model, compiled, under `policy` (none: the config's own).
std::unique_ptr<Model> compiled_model(const config::TrainConfig& cfg, const std::optional<DTypePolicy>& policy) {
  auto configure = [&](Model& m) {
    m.set_memory_policy(MemoryPolicy{});  // the budget is what we compare to, not a cap on planning
    m.set_seed(cfg.seed);
    if (policy) m.set_dtype_policy(*policy);
  };
  std::optional<CompileOptions> compile = cfg.compile;
  if (compile && policy) compile->dtype_policy = policy;
  std::unique_ptr<Model> model;
  try {
    if (!cfg.model_file.empty()) {
      LoadOptions lo;
      lo.compile = !compile;
      lo.configure = configure;
      model = load_model(cfg.model_file, lo);
    } else {
      model = model_from_keras_json(cfg.model_json, cfg.model_where);
      configure(*model);
    }
    if (compile) model->compile(*compile);
    NNFIT_CHECK(model->compiled(), InvalidArgument, "the model has no compile config; give a \"compile\" section");
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(cfg.model_where + ": " + e.what(), e.hint());
  }
  return model;
}

int run_plan(const PlanArgs& args) {
  const config::TrainConfig cfg = config::read_train_config(args.config);
  const MemoryPolicy budget = resolve_memory_policy(cfg.memory, cfg.path, args.memory);
  std::optional<DTypePolicy> policy;
  if (!args.dtype_policy.empty()) policy = DTypePolicy::from_name(args.dtype_policy);
  std::unique_ptr<Model> model = compiled_model(cfg, policy);
  // Under another policy than float32, the float32 plan beside it: what the policy saves.
  std::unique_ptr<Model> f32;
  if (model->dtype_policy().name != "float32") f32 = compiled_model(cfg, DTypePolicy::from_name("float32"));

  std::vector<std::int64_t> sizes = args.batch_sizes.empty() ? default_batch_sizes() : args.batch_sizes;
  const std::vector<std::vector<Shape>> shapes = shapes_to_plan(*model, args.input_shapes);
  const bool per_shape = !shapes.front().empty();
  // A batch size whose tensors 64 bits cannot count is named with the flag that gave it.
  const auto plan = [](Model& m, std::int64_t b, const std::vector<Shape>& samples) {
    try {
      return m.plan_memory(b, samples);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("--batch-sizes " + std::to_string(b) + ": " + e.what(), e.hint());
    }
  };
  nlohmann::ordered_json batches = nlohmann::ordered_json::array();
  std::optional<std::int64_t> largest;  // at the last shape given (the longest: what must fit)
  if (!args.json) {
    std::printf("Planned training memory of model '%s' (%lld parameters, optimizer %s, dtype policy %s) on %s, in MiB:\n",
                model->name().c_str(), static_cast<long long>(model->count_params()),
                model->compile_options().optimizer.name.c_str(), model->dtype_policy().name.c_str(),
                model->device().to_string().c_str());
  }
  for (const std::vector<Shape>& samples : shapes) {
    std::vector<MemoryPlan> plans, f32_plans;
    for (std::int64_t b : sizes) plans.push_back(plan(*model, b, samples));
    if (f32) {
      for (std::int64_t b : sizes) f32_plans.push_back(plan(*f32, b, samples));
    }
    largest.reset();
    if (budget.limit_bytes > 0) largest = largest_fitting(*model, plans, budget.limit_bytes, samples);
    if (args.json) {
      for (std::size_t i = 0; i < plans.size(); ++i) {
        const MemoryPlan& p = plans[i];
        nlohmann::ordered_json b;
        if (per_shape) b["input_shape"] = samples[0].dims();
        b["batch_size"] = p.batch_size;
        b["peak_bytes"] = p.peak_bytes;
        b["weights_bytes"] = p.weights_bytes;
        b["gradients_bytes"] = p.gradients_bytes;
        b["optimizer_bytes"] = p.optimizer_bytes;
        b["activations_bytes"] = p.activations_bytes;
        b["workspace_bytes"] = p.workspace_bytes;
        b["staging_bytes"] = p.staging_bytes;
        if (f32) b["float32_peak_bytes"] = f32_plans[i].peak_bytes;
        batches.push_back(std::move(b));
      }
      continue;
    }
    if (per_shape) std::printf("Input shape %s (without the batch axis):\n", samples[0].to_string().c_str());
    // On a device: the input double buffer and update arena, a column of their own.
    const bool staging = std::any_of(plans.begin(), plans.end(), [](const MemoryPlan& p) { return p.staging_bytes > 0; });
    std::printf("%10s %12s %10s %10s %10s %12s %10s%s%s\n", "batch", "peak", "weights", "gradients", "optimizer",
                "activations", "workspace", staging ? "    staging" : "", f32 ? "  float32 peak  saved" : "");
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const MemoryPlan& p = plans[i];
      std::string versus;
      if (f32) {
        const double saved =
            100.0 * (1.0 - static_cast<double>(p.peak_bytes) / static_cast<double>(f32_plans[i].peak_bytes));
        char buf[64];
        std::snprintf(buf, sizeof buf, "  %12s %5.0f%%", mib(f32_plans[i].peak_bytes).c_str(), saved);
        versus = buf;
      }
      const std::string staged =
          staging ? " " + std::string(10 - std::min<std::size_t>(10, mib(p.staging_bytes).size()), ' ') + mib(p.staging_bytes)
                  : "";
      std::printf("%10lld %12s %10s %10s %10s %12s %10s%s%s\n", static_cast<long long>(p.batch_size),
                  mib(p.peak_bytes).c_str(), mib(p.weights_bytes).c_str(), mib(p.gradients_bytes).c_str(),
                  mib(p.optimizer_bytes).c_str(), mib(p.activations_bytes).c_str(), mib(p.workspace_bytes).c_str(),
                  staged.c_str(), versus.c_str());
    }
    if (largest) {
      if (*largest == 0) {
        std::printf("Memory limit %s: even batch size 1 does not fit (it needs %s).\n",
                    format_bytes(budget.limit_bytes).c_str(), format_bytes(model->plan_memory(1, samples).peak_bytes).c_str());
      } else {
        std::printf("Memory limit %s: the largest batch size that fits is %lld (peak %s).\n",
                    format_bytes(budget.limit_bytes).c_str(), static_cast<long long>(*largest),
                    format_bytes(model->plan_memory(*largest, samples).peak_bytes).c_str());
      }
    }
  }
  if (args.json) {
    nlohmann::ordered_json out;
    out["batches"] = std::move(batches);
    out["dtype_policy"] = model->dtype_policy().name;
    out["memory_limit_bytes"] = budget.limit_bytes > 0 ? nlohmann::ordered_json(budget.limit_bytes) : nullptr;
    out["largest_batch_size"] = largest ? nlohmann::ordered_json(*largest) : nullptr;
    std::printf("%s\n", out.dump(2).c_str());
  }
  return 0;
}

}  // namespace

Subcommand add_plan_command(CLI::App& parent) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* app = parent.add_subcommand(
      "plan", "Print the planned training memory per batch size and the largest batch that fits a limit");
  app->add_option("config", args->config, "The config file (docs/config.md); its data is not read")->required();
  app->add_option("--batch-sizes", args->batch_sizes, "Comma-separated batch sizes (default: 1,2,4,...,4096)")
      ->delimiter(',')
      ->check(kFitsInt64)
      ->check(kPositive);
  add_memory_flags(*app, args->memory);
  app->add_option("--dtype-policy", args->dtype_policy,
                  "Plan under this Keras dtype policy (float32, mixed_bfloat16, mixed_float16, bfloat16, float16), "
                  "beside the float32 plan")
      ->check(kNotEmpty);
  app->add_flag("--json", args->json, "Print JSON: {batches: [...], memory_limit_bytes, largest_batch_size}");
  app->add_option("--input-shape", args->input_shapes,
                  "For a model whose input has None dimensions: a per-sample shape to plan at (\"200\", "
                  "\"224,224,3\"); give it once per shape, e.g. the shortest and longest lengths the data brings")
      ->check(kNotEmpty);
  return {app, [args] { return run_plan(*args); }};
}

}  // namespace nnfit::cli
