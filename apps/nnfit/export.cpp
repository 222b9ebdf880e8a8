// `nnfit export MODEL OUT.onnx [--opset N] [--seed N] [--json]`: a model as an ONNX
// inference graph (nnfit/model/onnx_export.h), as Keras's model.export(path, format="onnx").
// MODEL is what the other commands take: a saved model (.keras, .h5), a Keras model JSON
// (model.to_json()), or an nnfit train config (its "model"). A JSON model holds no trained
// weights, so its export carries the initial weights of --seed, and the command says so.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/onnx_export.h"
#include "nnfit/model/saving.h"
#include "nnfit/config/train_config.h"

namespace nnfit::cli {
namespace {

struct ExportArgs {
  std::string model;
  std::string output;
  std::int64_t opset = 17;
  std::uint64_t seed = 0;
  bool json = false;
};

// The model MODEL names, built; `initial` says whether its weights are initial values.
std::unique_ptr<Model> open_for_export(const ExportArgs& args, bool& initial) {
  initial = false;
  const ModelFileKind kind = sniff_model_file(args.model);
  if (kind != ModelFileKind::json) {
    LoadOptions lo;
    lo.compile = false;
    lo.optimizer = false;
    return load_model(args.model, lo);
  }
  const nlohmann::json root = nlohmann::json::parse(io::read_file_bytes(args.model, "JSON file"), nullptr, false);
  std::string text, where = args.model;
  if (root.is_object() && root.contains("model")) {  // an nnfit train config
    const config::TrainConfig cfg = config::read_train_config(args.model);
    if (!cfg.model_file.empty()) {
      LoadOptions lo;
      lo.compile = false;
      lo.optimizer = false;
      return load_model(cfg.model_file, lo);
    }
    text = cfg.model_json;
    where = cfg.model_where;
  } else {
    NNFIT_CHECK(root.is_object() && root.contains("class_name"), InvalidArgument, args.model,
                ": neither a Keras model JSON (model.to_json(): \"class_name\", \"config\") nor an nnfit config (\"model\")");
    text = root.dump();
  }
  std::unique_ptr<Model> m = model_from_keras_json(text, where);
  m->set_seed(args.seed);
  m->build();
  initial = true;
  return m;
}

int run_export(const ExportArgs& args) {
  bool initial = false;
  const std::unique_ptr<Model> m = open_for_export(args, initial);
  OnnxExportOptions o;
  o.opset = args.opset;
  const OnnxExportSummary s = export_onnx(*m, args.output, o);
  if (args.json) {
    nlohmann::ordered_json out{{"path", args.output},     {"opset", args.opset},
                               {"inputs", s.input_names}, {"outputs", s.output_names},
                               {"nodes", s.nodes},        {"initializers", s.initializers},
                               {"bytes", s.bytes},        {"initial_weights", initial}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  if (initial) {
    std::fprintf(stderr, "nnfit: note: %s holds no trained weights; the ONNX file has the initial weights of seed %llu\n",
                 args.model.c_str(), static_cast<unsigned long long>(args.seed));
  }
  std::string ins, outs;
  for (const std::string& n : s.input_names) ins += (ins.empty() ? "" : ", ") + n;
  for (const std::string& n : s.output_names) outs += (outs.empty() ? "" : ", ") + n;
  std::printf("Saved artifact at '%s'. (ONNX opset %lld, %zu nodes, %zu initializers, %lld bytes; inputs: %s; outputs: %s)\n",
              args.output.c_str(), static_cast<long long>(args.opset), s.nodes, s.initializers,
              static_cast<long long>(s.bytes), ins.c_str(), outs.c_str());
  return 0;
}

}  // namespace

Subcommand add_export_command(CLI::App& parent) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* app = parent.add_subcommand("export", "Write a model as an ONNX inference graph (Keras's model.export(format=\"onnx\"))");
  app->add_option("model", args->model,
                  "A saved model (.keras, .h5), a Keras model JSON (model.to_json()) or an nnfit train config")
      ->required();
  app->add_option("output", args->output, "The ONNX file to write (OUT.onnx)")->required();
  app->add_option("--opset", args->opset, "ONNX opset, 17 (default) to 21")->check(CLI::Range(17, 21));
  app->add_option("--seed", args->seed, "Seed of the initial weights, for a JSON model (default 0)")->check(kFitsInt64);
  app->add_flag("--json", args->json, "Print one JSON object: path, opset, inputs, outputs, nodes, initializers, bytes");
  return {app, [args] { return run_export(*args); }};
}

}  // namespace nnfit::cli
