// `nnfit predict MODEL --input X.npy ... --output Y.npy|Y.npz` and `nnfit evaluate MODEL
// --input X.npy ... --labels Y.npy ... [--json]`: a saved Keras model (.keras, .h5) run on
// NumPy arrays. Inputs of any numeric dtype are converted to float32 as Keras converts
// them; several inputs come in the model's input order, several outputs go to an .npz
// keyed by Keras's model.output_names.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "cli_checks.h"
#include "nnfit/core/error.h"
#include "nnfit/io/npy.h"
#include "nnfit/model/saving.h"

namespace nnfit::cli {

namespace {

struct ModelArgs {
  std::string model;
  std::vector<std::string> inputs, labels;
  std::string output;
  std::int64_t batch_size = 32;
  int threads = 0;
  bool json = false;
};

// An array as the model's float32 input (Keras casts inputs to the input layer's dtype).
Tensor as_float(const Tensor& t, const std::string& file) {
  if (t.dtype() == DType::f32) return t;
  Tensor out = Tensor::zeros(t.shape(), DType::f32);
  float* dst = out.data<float>();
  const std::int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::u8: for (std::int64_t i = 0; i < n; ++i) dst[i] = t.data<std::uint8_t>()[i]; break;
    case DType::i32: for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(t.data<std::int32_t>()[i]); break;
    case DType::i64: for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(t.data<std::int64_t>()[i]); break;
    default:
      throw InvalidArgument(file + ": arrays of dtype " + std::string(dtype_name(t.dtype())) +
                            " are not supported as model inputs; save them as float32, an integer type or uint8");
  }
  return out;
}

std::unique_ptr<Model> open_model(const ModelArgs& args, bool compile) {
  LoadOptions lo;
  lo.compile = compile;
  lo.optimizer = false;  // evaluate needs the losses and metrics, never the optimizer
  lo.configure = [&](Model& m) {
    if (args.threads > 0) m.set_num_threads(args.threads);
  };
  return load_model(args.model, lo);
}

std::vector<Tensor> read_inputs(const ModelArgs& args, const Model& m) {
  if (args.inputs.size() != m.num_inputs()) {
    std::string names;
    for (const InputSpec& in : m.graph().inputs()) names += (names.empty() ? "" : ", ") + in.name;
    throw InvalidArgument(args.model + ": the model takes " + std::to_string(m.num_inputs()) + " input(s) (" + names +
                              "), got " + std::to_string(args.inputs.size()) + " --input",
                          "give --input once per model input, in that order");
  }
  std::vector<Tensor> xs;
  for (const std::string& f : args.inputs) xs.push_back(as_float(io::read_npy(f), f));
  return xs;
}

// A shape or dtype the model refuses is named with the files it came from ("inputs of
// shape (8, 784) do not match ..." alone names neither the model nor the array).
template <typename Fn>
auto naming_files(const ModelArgs& args, Fn&& fn) {
  try {
    return fn();
  } catch (const InvalidArgument& e) {
    std::string files;
    for (const std::string& f : args.inputs) files += (files.empty() ? "--input " : ", ") + f;
    for (const std::string& f : args.labels) files += ", --labels " + f;
    throw InvalidArgument(args.model + " on " + files + ": " + e.what(), e.hint());
  }
}

int run_predict(const ModelArgs& args) {
  std::unique_ptr<Model> m = open_model(args, /*compile=*/false);
  const std::vector<Tensor> xs = read_inputs(args, *m);
  const bool npz = args.output.ends_with(".npz");
  if (m->num_outputs() > 1 && !npz) {
    throw InvalidArgument("--output " + args.output + ": the model has " + std::to_string(m->num_outputs()) +
                              " outputs; give an .npz file (one array per output, keyed by output name)");
  }
  InferenceOptions io;
  io.batch_size = args.batch_size;
  const std::vector<Tensor> ys = naming_files(args, [&] { return m->predict(xs, io); });
  if (npz) {
    std::vector<std::pair<std::string, Tensor>> arrays;
    // Keras's output names; a name that repeats (a layer with several outputs, e.g.
    // MultiHeadAttention's scores) gets _1, _2, ... after its first use, as one archive
    // holds each name once.
    const std::vector<std::string> names = m->output_names();
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      const int n = seen[names[i]]++;
      arrays.emplace_back(n == 0 ? names[i] : names[i] + "_" + std::to_string(n), ys[i]);
    }
    io::write_npz(args.output, arrays);
  } else {
    io::write_npy(args.output, ys[0]);
  }
  return 0;
}

int run_evaluate(const ModelArgs& args) {
  std::unique_ptr<Model> m = open_model(args, /*compile=*/true);
  if (!m->compiled()) {
    throw InvalidArgument(args.model + ": the file has no compile config (loss, metrics), so there is nothing to evaluate",
                          "save the model after compile(), or train it with nnfit and --save");
  }
  const std::vector<Tensor> xs = read_inputs(args, *m);
  if (args.labels.size() != m->num_outputs()) {
    throw InvalidArgument(args.model + ": the model has " + std::to_string(m->num_outputs()) + " output(s), got " +
                              std::to_string(args.labels.size()) + " --labels",
                          "give --labels once per model output, in output order");
  }
  std::vector<Tensor> ys;
  for (const std::string& f : args.labels) ys.push_back(io::read_npy(f));
  InferenceOptions io;
  io.batch_size = args.batch_size;
  const Logs logs = naming_files(args, [&] { return m->evaluate(xs, ys, io); });
  if (args.json) {
    // Keras's evaluate(return_dict=True): the loss first, then the metrics.
    nlohmann::ordered_json out;
    out["loss"] = log_value(logs, "loss");
    for (const auto& [k, v] : logs) {
      if (k != "loss") out[k] = v;
    }
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::string line;
    for (const auto& [k, v] : logs) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.4f", v);
      line += (line.empty() ? "" : " - ") + k + ": " + buf;
    }
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

void add_common(CLI::App* app, ModelArgs& args) {
  app->add_option("model", args.model, "A saved model: .keras (Keras 3) or .h5 (legacy HDF5)")->required();
  app->add_option("--input", args.inputs, "An .npy array per model input, in the model's input order")->required();
  app->add_option("--batch-size", args.batch_size, "Rows per batch (default 32, as Keras)")->check(kPositive);
  app->add_option("--threads", args.threads, "Compute threads (default: all cores)")->check(CLI::Range(1, 4096));
}

}  // namespace

Subcommand add_predict_command(CLI::App& parent) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* app = parent.add_subcommand("predict", "Run a saved Keras model on .npy inputs");
  add_common(app, *args);
  app->add_option("--output", args->output,
                  "Where the predictions go: .npy (float32), or .npz with one array per output named as the outputs")
      ->required();
  return {app, [args] { return run_predict(*args); }};
}

Subcommand add_evaluate_command(CLI::App& parent) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* app = parent.add_subcommand("evaluate", "Loss and metrics of a saved Keras model on .npy data");
  add_common(app, *args);
  app->add_option("--labels", args->labels, "An .npy array of targets per model output, in output order")->required();
  app->add_flag("--json", args->json, "Print one JSON object: {\"loss\": ..., \"<metric>\": ...}");
  return {app, [args] { return run_evaluate(*args); }};
}

}  // namespace nnfit::cli
