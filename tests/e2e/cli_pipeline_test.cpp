// `nnfit train` with input pipelines in data.train / data.validation, `nnfit data bench`
// and `--logdir`: a full pipeline trains and reports input_wait_fraction; every malformed
// pipeline is one error line naming the key (exit 2), and bad data met while training is
// a runtime failure (exit 1).
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli_fixture.h"
#include "nnfit/profile/event_file_reader.h"

namespace {

using namespace nnfit_test;
namespace fs = std::filesystem;

std::string idx_source(const std::string& images = "images.idx", const std::string& labels = "labels.idx") {
  return R"({"format": "idx", "images": ")" + images + R"(", "labels": ")" + labels + R"("})";
}

std::string pipeline(const std::string& stages, const std::string& source = idx_source()) {
  return R"({"source": )" + source + R"(, "pipeline": [)" + stages + "]}";
}

const char* const kFull =
    R"({"map": "normalize", "scale": 0.00392156862745098, "num_parallel_calls": "AUTOTUNE"}, {"cache": ""},)"
    R"( {"shuffle": 6}, {"batch": true}, {"prefetch": "AUTOTUNE"})";

TEST_F(CliTest, FullPipelineTrainsAndReportsInputWait) {
  const fs::path metrics = dir_ / "metrics.json";
  const std::string train = pipeline(kFull);
  const std::string val = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098}, {"batch": 3})");
  const Result r = run("train " + config_with_data(model(), train, val).string() + " --threads 1 --metrics-json " +
                       metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string m = slurp(metrics);
  for (const char* key : {"\"batch_size\": 4", "\"epoch\": 2", "\"input_wait_fraction\"", "\"val_accuracy\""}) {
    EXPECT_NE(m.find(key), std::string::npos) << key << " not in:\n" << m;
  }
}

TEST_F(CliTest, PipelineWithoutBatchIsBatchedWithFitsBatchSize) {
  const fs::path metrics = dir_ / "metrics.json";
  const std::string train = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098}, {"repeat": 2})");
  const Result r = run("train " + config_with_data(model(), train, train).string() +
                       " --quiet --epochs 1 --batch-size 5 --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string m = slurp(metrics);
  EXPECT_NE(m.find("\"batch_size\": 5"), std::string::npos) << m;
  // 12 samples (6, repeated twice) trained in the epoch.
  EXPECT_NE(m.find("\"epoch\": 1"), std::string::npos) << m;
}

TEST_F(CliTest, AugmentingPipelineRuns) {
  const std::string train = pipeline(
      R"({"map": "normalize", "scale": 0.00392156862745098}, {"map": "reshape", "shape": [4, 4, 1]},)"
      R"( {"map": "random_flip_left_right", "seed": 3, "num_parallel_calls": 2},)"
      R"( {"map": "random_brightness", "max_delta": 0.1}, {"batch": 2})");
  const Result r = run("train " + config_with_data(model(), train, train).string() + " --quiet --epochs 1");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(CliTest, UnknownTransformationIsAConfigError) {
  const std::string train = pipeline(R"({"map": "normalize"}, {"shuffel": 10})");
  expect_error(config_with_data(model(), train, train), 2, {"config.json", "data.train.pipeline[1]", "transformation"});
}

TEST_F(CliTest, UnknownMapFunctionIsAConfigError) {
  const std::string train = pipeline(R"({"map": "normalise"})");
  expect_error(config_with_data(model(), train, train), 2, {"data.train.pipeline[0].map", "normalise"});
}

TEST_F(CliTest, BadPipelineValuesAreConfigErrors) {
  expect_error(config_with_data(model(), pipeline(R"({"prefetch": "AUTO"})"), pipeline("")), 2,
               {"data.train.pipeline[0].prefetch", "AUTOTUNE"});
  expect_error(config_with_data(model(), pipeline(""), pipeline(R"({"shuffle": 0})")), 2,
               {"data.validation.pipeline[0].shuffle", ">= 1"});
  expect_error(config_with_data(model(), pipeline(R"({"batch": 4, "drop": true})"), pipeline("")), 2,
               {"data.train.pipeline[0].drop", "unknown key"});
  expect_error(config_with_data(model(), pipeline(R"({"map": "normalize", "scale": "big"})"), pipeline("")), 2,
               {"data.train.pipeline[0].scale", "number"});
  expect_error(config_with_data(model(), pipeline(R"({"take": 2, "skip": 1})"), pipeline("")), 2,
               {"data.train.pipeline[0]", "one transformation per entry"});
  expect_error(config_with_data(model(), pipeline("", R"({"format": "parquet", "path": "x"})"), pipeline("")), 2,
               {"data.train.source.format", "parquet"});
  expect_error(config_with_data(model(), pipeline("", R"({"format": "idx", "images": "images.idx"})"), pipeline("")),
               2, {"data.train.source", "labels"});
  // Values kept in an int are bounded, never truncated (2^32 became 0: issue 39).
  expect_error(config_with_data(model(), pipeline(R"({"prefetch": 4294967296})"), pipeline("")), 2,
               {"data.train.pipeline[0].prefetch", "at most 2147483647"});
  expect_error(config_with_data(model(), pipeline(R"({"map": "normalize", "component": 4294967296})"), pipeline("")), 2,
               {"data.train.pipeline[0].component", "<= 2147483647"});
  expect_error(config_with_data(model(), pipeline("", R"({"format": "image_folder", "directory": ".", "channels": 4294967299})"),
                                pipeline("")),
               2, {"data.train.source.channels", "<= 4"});
}

TEST_F(CliTest, PipelineOfUint8ImagesFeedsTheModelAsStored) {
  // uint8 images reach the model as stored and are cast there (as Keras's model casts its
  // inputs; a Rescaling layer would scale them): no map is needed to train.
  const std::string train = pipeline(R"({"batch": 2})");
  const Result r = run("train " + config_with_data(model(), train, train).string() + " --quiet --epochs 1");
  ASSERT_EQ(r.code, 0) << r.err;
}

TEST_F(CliTest, PipelineLabelOutOfRangeIsARuntimeError) {
  write_file(dir_ / "labels7.idx", idx_u8({6}, {0, 1, 7, 0, 1, 2}));
  const std::string train = pipeline(R"({"map": "normalize"}, {"batch": 2})", idx_source("images.idx", "labels7.idx"));
  expect_error(config_with_data(model(), train, train), 1, {"training batch 2", "class id 7", "[0, 3)"});
}

TEST_F(CliTest, PipelineMissingFileNamesThePath) {
  const std::string train = pipeline(R"({"batch": 2})", idx_source("nope.idx"));
  expect_error(config_with_data(model(), train, train), 1, {(dir_ / "nope.idx").string()});
}

}  // namespace

namespace {

TEST_F(CliTest, DataBenchPrintsStagesAndAutotuneChoices) {
  const std::string train = pipeline(kFull);
  const fs::path cfg = config_with_data(model(), train, train);
  Result r = run("data bench " + cfg.string() + " --epochs 2");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"epoch 1:", "epoch 2:", "source: idx", "map(normalize)", "cache", "shuffle", "batch",
                        "prefetch(AUTOTUNE)", "autotune: "}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " not in:\n" << r.out;
  }
  r = run("data bench " + cfg.string() + " --epochs 1 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"\"config\"", "\"split\": \"train\"", "\"cpu_budget\"", "\"ram_budget_bytes\"", "\"epochs\"",
                        "\"samples\": 6", "\"stages\"", "\"elements_per_s\"", "\"next_seconds\"", "\"autotune\"",
                        "\"summary\"", "\"decisions\""}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " not in:\n" << r.out;
  }
}

TEST_F(CliTest, DataBenchOfTheShorthandSaysHowToDescribeAPipeline) {
  expect_error_of("data bench " + config(model()).string(), 2, {"data.train", "shorthand"});
}

}  // namespace

namespace {

// --logdir: TensorBoard event files in LOGDIR/train and LOGDIR/validation with Keras's
// tags at step = epoch, including the pipeline's input wait.
TEST_F(CliTest, LogdirWritesTensorBoardEventFiles) {
  const std::string train = pipeline(kFull);
  const fs::path logdir = dir_ / "logs";
  const Result r = run("train " + config_with_data(model(), train, train).string() + " --quiet --logdir " +
                       logdir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* run : {"train", "validation"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(logdir / run)) files.push_back(e.path());
    ASSERT_EQ(files.size(), 1u) << run;
    EXPECT_EQ(files[0].filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];
    const auto contents = nnfit::profile::read_event_file(files[0].string());
    EXPECT_EQ(contents.file_version, "brain.Event:2");
    std::map<std::string, std::vector<std::int64_t>> steps;
    for (const auto& s : contents.scalars) steps[s.tag].push_back(s.step);
    const std::vector<std::int64_t> two{0, 1};
    EXPECT_EQ(steps["epoch_loss"], two) << run;
    EXPECT_EQ(steps["epoch_accuracy"], two) << run;
    if (std::string(run) == "train") {
      EXPECT_EQ(steps["epoch_learning_rate"], two);
      EXPECT_EQ(steps["epoch_input_wait_fraction"], two);
      EXPECT_EQ(steps["epoch_samples_per_s"], two);
    }
  }
}

}  // namespace

namespace {

// fit.steps_per_epoch: an infinite pipeline ({"repeat": -1}) trains that many batches per
// epoch (the metrics JSON's steps), --steps-per-epoch overrides it, and without it the
// error names the key; a bad value is a config error.
TEST_F(CliTest, StepsPerEpochTrainsAnInfinitePipeline) {
  const fs::path metrics = dir_ / "metrics.json";
  const std::string train = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098}, {"batch": 3}, {"repeat": -1})");
  const std::string val = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098}, {"batch": 3})");
  const fs::path cfg = config_with_data(model(), train, val, R"({"epochs": 2, "steps_per_epoch": 5, "seed": 1})");
  Result r = run("train " + cfg.string() + " --quiet --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto m = nlohmann::json::parse(slurp(metrics));
  ASSERT_EQ(m["epochs"].size(), 2u) << m.dump();
  EXPECT_EQ(m["steps_per_epoch"], 5) << m.dump();
  r = run("train " + cfg.string() + " --quiet --steps-per-epoch 7 --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  m = nlohmann::json::parse(slurp(metrics));
  EXPECT_EQ(m["steps_per_epoch"], 7) << m.dump();
  expect_error(config_with_data(model(), train, val, R"({"epochs": 1})"), 2, {"repeats forever", "fit.steps_per_epoch"});
  expect_error(config_with_data(model(), train, val, R"({"steps_per_epoch": 0})"), 2, {"fit.steps_per_epoch"});
  expect_error(config_with_data(model(), train, val, R"({"steps_per_epoch": "5"})"), 2, {"fit.steps_per_epoch"});
}

// fit.validation_freq (every Nth epoch, or Keras's list), validation_batch_size and
// validation_steps: the metrics JSON has val_ keys only after the epochs that validated, and
// a validation of one batch of 2 of the 6 samples gives an accuracy in halves; bad values
// are config errors naming the key.
TEST_F(CliTest, ValidationFreqStepsAndBatchSizeReachFit) {
  const fs::path metrics = dir_ / "metrics.json";
  const std::string train = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098}, {"batch": 3})");
  const std::string val = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098})");  // fit's batch size
  const auto epochs_validated = [&](const std::string& fit) {
    const Result r = run("train " + config_with_data(model(), train, val, fit).string() + " --quiet --metrics-json " +
                         metrics.string());
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<int> out;
    const auto m = nlohmann::json::parse(slurp(metrics));
    for (const auto& e : m["epochs"]) {
      if (e.contains("val_accuracy")) {
        out.push_back(e["epoch"].get<int>());
        const double acc = e["val_accuracy"].get<double>();
        EXPECT_EQ(acc * 2, std::round(acc * 2)) << "not a validation of 2 samples: " << e.dump();
      }
    }
    return out;
  };
  EXPECT_EQ(epochs_validated(R"({"epochs": 4, "seed": 1, "validation_freq": 2, "validation_steps": 1,)"
                             R"( "validation_batch_size": 2})"),
            (std::vector<int>{2, 4}));
  EXPECT_EQ(epochs_validated(R"({"epochs": 3, "seed": 1, "validation_freq": [1, 3], "validation_steps": 1,)"
                             R"( "validation_batch_size": 2})"),
            (std::vector<int>{1, 3}));
  expect_error(config_with_data(model(), train, val, R"({"validation_freq": 0})"), 2,
               {"fit.validation_freq", "expected an integer >= 1"});
  expect_error(config_with_data(model(), train, val, R"({"validation_freq": [2, 0]})"), 2,
               {"fit.validation_freq", "Keras counts epochs from 1"});
  expect_error(config_with_data(model(), train, val, R"({"validation_freq": []})"), 2,
               {"fit.validation_freq", "never validates"});
  expect_error(config_with_data(model(), train, val, R"({"validation_steps": 0})"), 2, {"fit.validation_steps"});
  expect_error(config_with_data(model(), train, val, R"({"validation_batch_size": "2"})"), 2,
               {"fit.validation_batch_size"});
  const std::string forever = pipeline(R"({"map": "normalize", "scale": 0.00392156862745098}, {"repeat": -1})");
  expect_error(config_with_data(model(), train, forever, R"({"epochs": 1})"), 2,
               {"data.validation's pipeline repeats forever", "fit.validation_steps"});
}

// fit.on_oom = "reduce_batch" under a --memory-limit between the plans for batch 3 and 6:
// training goes on in micro-batches and says so on stderr; a bad value is a config error.
TEST_F(CliTest, OnOomReduceBatchTrainsInMicroBatchesAndSaysSo) {
  const std::string fit = R"({"epochs": 1, "batch_size": 6, "seed": 1, "on_oom": "reduce_batch"})";
  const std::string files = R"({"images": "images.idx", "labels": "labels.idx"})";
  const fs::path cfg = config_with_data(model(), files, files, fit);
  Result r = run("plan " + cfg.string() + " --batch-sizes 3,6 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  const std::int64_t p3 = plan["batches"][0]["peak_bytes"], p6 = plan["batches"][1]["peak_bytes"];
  ASSERT_LT(p3, p6);
  const std::string limit = std::to_string((p3 + p6) / 2);
  r = run("train " + cfg.string() + " --quiet --memory-limit " + limit);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nnfit: note: training batch 6 does not fit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("micro-batches of 3"), std::string::npos) << r.err;
  // Without the option the same limit is an out-of-memory failure naming what fits.
  const fs::path strict = config_with_data(model(), files, files, R"({"epochs": 1, "batch_size": 6})");
  expect_error(strict, 1, {"out of memory", "batch size 6"}, "--memory-limit " + limit);
  expect_error(config_with_data(model(), files, files, R"({"on_oom": "shrink"})"), 2, {"fit.on_oom", "reduce_batch"});
}

// fit.class_weight: Keras's dict with string keys; it trains, and a bad key or weight is a
// config error naming it.
TEST_F(CliTest, ClassWeightTrainsAndBadEntriesAreNamed) {
  const std::string files = R"({"images": "images.idx", "labels": "labels.idx"})";
  const fs::path cfg =
      config_with_data(model(), files, files, R"({"epochs": 1, "batch_size": 6, "class_weight": {"0": 2.0, "3": 0.5}})");
  const Result r = run("train " + cfg.string() + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  expect_error(config_with_data(model(), files, files, R"({"class_weight": {"zero": 1.0}})"), 2,
               {"fit.class_weight", "\"zero\" is not a class id"});
  expect_error(config_with_data(model(), files, files, R"({"class_weight": {"1": -1}})"), 2,
               {"fit.class_weight", "class 1's weight must be a non-negative number"});
  expect_error(config_with_data(model(), files, files, R"({"class_weight": [1, 2]})"), 2,
               {"fit.class_weight", "expected an object of class id -> weight"});

  // compile.weighted_metrics: counted by the class weights, logged as Keras names them.
  const std::string weighted_fit = R"({"epochs": 1, "batch_size": 6, "class_weight": {"0": 2.0}})";
  const auto with_weighted = [&](const std::string& entry) {
    return config_with_metrics(model(), R"("metrics": ["accuracy"], "weighted_metrics": )" + entry, weighted_fit);
  };
  const fs::path metrics = dir_ / "metrics.json";
  const Result w = run("train " + with_weighted(R"(["accuracy"])").string() + " --quiet --metrics-json " +
                       metrics.string());
  ASSERT_EQ(w.code, 0) << w.err;
  const auto m = nlohmann::json::parse(slurp(metrics));
  EXPECT_TRUE(m["epochs"][0].contains("weighted_accuracy")) << m.dump();
  EXPECT_TRUE(m["epochs"][0].contains("val_weighted_accuracy")) << m.dump();
  expect_error(with_weighted(R"("accuracy")"), 2, {"compile.weighted_metrics", "expected a list"});
  expect_error(with_weighted(R"(["acuracy"])"), 2, {"weighted_metrics[0]: unknown metric 'acuracy'"});
}

// compile.metrics takes Keras metric objects with their arguments, and a list per output;
// a bad one is a config error naming its place in the list.
TEST_F(CliTest, MetricObjectsTrainAndBadOnesAreNamed) {
  const auto with_metrics = [&](const std::string& metrics) {
    return config_with_metrics(model(), R"("metrics": )" + metrics, R"({"epochs": 1, "batch_size": 6})");
  };
  const fs::path metrics = dir_ / "m.json";
  const Result r = run("train " +
                       with_metrics(R"(["accuracy", {"class_name": "SparseTopKCategoricalAccuracy", "config": {"name": "top2", "k": 2}}])")
                           .string() +
                       " --quiet --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(metrics).find("\"top2\""), std::string::npos) << slurp(metrics);
  expect_error(with_metrics(R"(["accuracy", {"class_name": "AUC", "config": {"multi_label": true}}])"), 2,
               {"compile.metrics[1]", "\"multi_label\" = true"});
  expect_error(with_metrics(R"([7])"), 2, {"compile.metrics", "expected a metric name or object, got 7"});

  // Keras's per-output form, a list per output: this model has one output.
  const Result one = run("train " + with_metrics(R"([["accuracy"]])").string() + " --quiet --metrics-json " +
                         metrics.string());
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_TRUE(nlohmann::json::parse(slurp(metrics))["epochs"][0].contains("accuracy"));
  expect_error(with_metrics(R"([["accuracy"], ["mae"]])"), 2, {"1 outputs but metrics has 2 per-output lists"});
  expect_error(with_metrics(R"([["accuracy"], "mae"])"), 2, {"compile.metrics", "expected one list per output"});
}

// --dtype-policy on train and plan, compile.dtype_policy; bad names are config errors.
TEST_F(CliTest, DtypePolicyTrainsAndPlansAndBadNamesAreNamed) {
  const std::string files = R"({"images": "images.idx", "labels": "labels.idx"})";
  const fs::path cfg = config_with_data(model(), files, files, R"({"epochs": 1, "batch_size": 6})");
  const fs::path metrics = dir_ / "m16.json";
  const Result r = run("train " + cfg.string() + " --quiet --dtype-policy mixed_float16 --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(metrics).find("\"loss_scale\": 32768"), std::string::npos) << slurp(metrics);
  const Result p = run("plan " + cfg.string() + " --dtype-policy mixed_bfloat16 --batch-sizes 64 --json");
  ASSERT_EQ(p.code, 0) << p.err;
  const auto j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["dtype_policy"], "mixed_bfloat16");
  EXPECT_LT(j["batches"][0]["activations_bytes"].get<std::int64_t>(), j["batches"][0]["float32_peak_bytes"].get<std::int64_t>());
  expect_error(cfg, 2, {"unknown dtype policy \"mixed_half\"", "mixed_bfloat16"}, "--dtype-policy mixed_half");
  std::string text = slurp(cfg);
  text.replace(text.find(R"("metrics")"), 9, R"("dtype_policy": "float64", "metrics")");
  write_file(cfg, text);
  expect_error(cfg, 2, {"compile.dtype_policy", "float64"});
}

}  // namespace
