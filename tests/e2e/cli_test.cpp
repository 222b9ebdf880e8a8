// End-to-end tests of the `nnfit` binary: a tiny training run, and every kind of bad input
// giving exactly one `nnfit: error:` line (plus at most one hint) that names the file or
// key, with exit code 2 for usage/config errors and 1 for data/runtime failures.
#include "cli_fixture.h"

namespace {

using namespace nnfit_test;
namespace fs = std::filesystem;

TEST_F(CliTest, HelpAndVersionExitZero) {
  Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("train"), std::string::npos);
  r = run("train --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--metrics-json"), std::string::npos);
  r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("nnfit "), std::string::npos);
}

TEST_F(CliTest, TrainsAndWritesMetricsJson) {
  const fs::path metrics = dir_ / "metrics.json";
  const Result r = run("train " + config(model()).string() + " --threads 1 --metrics-json " + metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("Epoch 2/2"), std::string::npos) << r.out;  // progress bar
  EXPECT_NE(r.out.find("dense (Dense)"), std::string::npos) << r.out;  // summary
  const std::string m = slurp(metrics);
  for (const char* key : {"\"threads\": 1", "\"batch_size\": 4", "\"planned_peak_bytes\"", "\"peak_memory_bytes\"",
                          "\"peak_rss_bytes\"", "\"epoch\": 1", "\"epoch\": 2", "\"train_seconds\"", "\"samples_per_s\"",
                          "\"loss\"", "\"accuracy\"", "\"val_loss\"", "\"val_accuracy\""}) {
    EXPECT_NE(m.find(key), std::string::npos) << key << " not in:\n" << m;
  }
  EXPECT_FALSE(fs::exists(metrics.string() + ".tmp"));
}

TEST_F(CliTest, QuietPrintsNothingAndFlagsOverrideFit) {
  const fs::path metrics = dir_ / "metrics.json";
  const Result r = run("train " + config(model()).string() + " --quiet --epochs 1 --batch-size 3 --metrics-json " +
                       metrics.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string m = slurp(metrics);
  EXPECT_NE(m.find("\"batch_size\": 3"), std::string::npos) << m;
  EXPECT_EQ(m.find("\"epoch\": 2"), std::string::npos) << m;
}

TEST_F(CliTest, UnknownLayerClassIsAConfigError) {
  const std::string lstm = R"({"class_name": "ConvLSTM2D", "config": {"name": "lstm", "filters": 4}},)";
  expect_error(config(model("[null, 4, 4, 1]", lstm)), 2,
               {"config.json", "model.config.layers[1] (lstm)", "unknown layer class \"ConvLSTM2D\""});
}

TEST_F(CliTest, UnknownFitKeyIsAConfigError) {
  expect_error(config(model(), "images.idx", "labels.idx", R"({"epochz": 3})"), 2, {"config.json", "fit.epochz"});
}

TEST_F(CliTest, BadValueIsAConfigError) {
  expect_error(config(model(), "images.idx", "labels.idx", R"({"batch_size": 0})"), 2, {"fit.batch_size"});
}

TEST_F(CliTest, ModelThatDoesNotFitItsInputIsAConfigError) {
  // A 5x5 convolution on (4, 4, 1) images.
  const std::string conv = R"({"class_name": "Conv2D", "config": {"name": "big", "filters": 2, "kernel_size": 5}},)";
  expect_error(config(model("[null, 4, 4, 1]", conv)), 2, {"config.json", "layers[1] (big)", "does not fit"});
}

// Issue 20's sweep: a Dense `units` whose kernel size overflows 64 bits wrapped into a
// small allocation (SIGSEGV); every shape product is checked where it is computed. And
// null epochs in the config, or too many on the command line, are refused, not defaulted
// or clamped.
TEST_F(CliTest, SizesPast64BitsAreAConfigError) {
  const std::string dense = R"({"class_name": "Dense", "config": {"name": "huge", "units": 4611686018427387904}},)";
  expect_error(config(model("[null, 4, 4, 1]", std::string(R"({"class_name": "Flatten", "config": {"name": "flatten"}},)") + dense)), 2,
               {"shape (16, 4611686018427387904) has more elements than 64 bits can count"});
  expect_error(config(model(), "images.idx", "labels.idx", R"({"epochs": null})"), 2, {"fit.epochs: expected an integer >= 1, got null"});
  // CLI11 saturated this at int64's maximum and trained forever.
  expect_error(config(model()), 2, {"--epochs: more than a 64-bit integer holds"}, "--epochs 100000000000000000000");
  // OpenMP would try to make every thread asked for (100,000 crashed inside libgomp).
  expect_error(config(model()), 2, {"100000 compute threads: at most", "cores this process may use"}, "--threads 100000");
}

TEST_F(CliTest, ImagesThatDoNotFitTheModelAreADataError) {
  expect_error(config(model("[null, 5, 5, 1]")), 1, {"images.idx", "(5, 5, 1)"});
}

TEST_F(CliTest, LabelCountMismatchIsADataError) {
  write_file(dir_ / "labels5.idx", idx_u8({5}, {0, 1, 2, 0, 1}));
  expect_error(config(model(), "images.idx", "labels5.idx"), 1, {"labels5.idx", "5 labels", "6 images"});
}

TEST_F(CliTest, LabelOutOfRangeIsADataError) {
  write_file(dir_ / "labels7.idx", idx_u8({6}, {0, 1, 7, 0, 1, 2}));
  expect_error(config(model(), "images.idx", "labels7.idx"), 1, {"labels7.idx", "offset 10", "label 7"});
}

TEST_F(CliTest, MissingDataFileNamesThePath) {
  expect_error(config(model(), "no-such-images.idx.gz"), 1, {(dir_ / "no-such-images.idx.gz").string()});
}

TEST_F(CliTest, TruncatedIdxNamesTheFile) {
  std::string bytes = idx_u8({6, 4, 4}, std::vector<std::uint8_t>(6 * 16, 1));
  write_file(dir_ / "truncated.idx", bytes.substr(0, bytes.size() - 10));
  expect_error(config(model(), "truncated.idx"), 1, {"truncated.idx"});
}

TEST_F(CliTest, WrongMagicNamesTheFile) {
  std::string bytes = idx_u8({6, 4, 4}, std::vector<std::uint8_t>(6 * 16, 1));
  bytes[0] = 'P';
  bytes[1] = 'K';
  write_file(dir_ / "wrong-magic.idx", bytes);
  expect_error(config(model(), "wrong-magic.idx"), 1, {"wrong-magic.idx"});
}

TEST_F(CliTest, InvalidJsonGivesLineAndColumn) {
  write_file(dir_ / "broken.json", "{\n  \"model\": {\n    \"class_name\": \"Sequential\",,\n  }\n}\n");
  expect_error_of("train " + (dir_ / "broken.json").string(), 2, {"broken.json", "line 3, column 32"});
}

TEST_F(CliTest, UsageErrors) {
  expect_error_of("train " + config(model()).string() + " --epochs 0", 2, {"--epochs", "must be positive, got 0"});
  // Not CLI11's "Value -3 not in range 0.000000 to 17976931348623157...(309 digits)".
  expect_error_of("train " + config(model()).string() + " --epochs -3", 2, {"--epochs", "must be positive, got -3"});
  expect_error_of("train " + config(model()).string() + " --seed -1", 2, {"--seed", "must be 0 or more, got -1"});
  expect_error_of("train " + config(model()).string() + " --batch-size x", 2, {"--batch-size", "expected a number, got x"});
  expect_error_of("train " + config(model()).string() + " --bogus", 2, {"--bogus"});
  expect_error_of("", 2, {"subcommand"});
  expect_error_of("train " + (dir_ / "absent.json").string(), 2, {"absent.json"});
  expect_error(config(model(), "${NO_SUCH_DIR}/x.idx"), 2, {"data.train.images", "${NO_SUCH_DIR}"});
}

TEST_F(CliTest, FashionMnistDirVariableExpands) {
  fs::create_directories(dir_ / "fm");
  fs::copy_file(dir_ / "images.idx", dir_ / "fm" / "images.idx");
  const fs::path cfg = config(model(), "${FASHION_MNIST_DIR}/images.idx");
  const Result r = run("train " + cfg.string() + " --quiet --epochs 1");
  EXPECT_NE(r.code, 0);  // the default directory holds no images.idx ...
  const std::string env = "FASHION_MNIST_DIR=" + (dir_ / "fm").string() + " ";
  const fs::path out = dir_ / "o.txt";
  const int status = std::system((env + NNFIT_CLI + " train " + cfg.string() + " --quiet --epochs 1 >" + out.string() + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(out);  // ... the variable's does
}

// The shipped examples run end to end on six fake 28x28 images (raw IDX under the .gz
// names: the reader detects gzip by content).
TEST_F(CliTest, ExamplesTrainOnTinyData) {
  const fs::path fm = dir_ / "fm";
  fs::create_directories(fm);
  std::vector<std::uint8_t> pixels(6 * 28 * 28);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 13 % 256);
  for (const char* split : {"train", "t10k"}) {
    write_file(fm / (std::string(split) + "-images-idx3-ubyte.gz"), idx_u8({6, 28, 28}, pixels));
    write_file(fm / (std::string(split) + "-labels-idx1-ubyte.gz"), idx_u8({6}, {0, 1, 2, 3, 9, 5}));
  }
  for (const char* example : {"fashion_mnist_mlp.json", "fashion_mnist_cnn.json"}) {
    const fs::path out = dir_ / "o.txt";
    const std::string cmd = "FASHION_MNIST_DIR=" + fm.string() + " " + NNFIT_CLI + " train " + NNFIT_SOURCE_DIR +
                            "/examples/" + example + " --epochs 1 >" + out.string() + " 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 0) << example << ":\n" << slurp(out);
    EXPECT_NE(slurp(out).find("Epoch 1/1"), std::string::npos) << example;
  }
}

// A Keras 3 file saved after compile, before training (its Adam unbuilt: only iterations and
// learning_rate in the file; tests/model/fixtures/make_unbuilt_optimizer_keras.py):
// `nnfit evaluate` gives Keras's loss (it never reads the optimizer), and `nnfit train`
// trains it on from the file's compile config, the slots built at the first step.
TEST_F(CliTest, AKerasFileWithAnUnbuiltOptimizerEvaluatesAndTrains) {
  const std::string base = std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/unbuilt_adam_keras3";
  const Result e = run("evaluate " + base + ".keras --input " + base + "_x.npy --labels " + base + "_y.npy --json");
  ASSERT_EQ(e.code, 0) << e.err;
  const std::size_t at = e.out.find("\"loss\":");
  ASSERT_NE(at, std::string::npos) << e.out;
  EXPECT_NEAR(std::stod(e.out.substr(at + 7)), 1.8777085, 1e-5) << e.out;  // Keras's evaluate
  const std::string text = R"({"model": ")" + base + R"(.keras", "data": {"train": {"source": {"format": "npy", "x": ")" +
                           base + R"(_x.npy", "y": ")" + base +
                           R"(_y.npy"}}}, "fit": {"epochs": 3, "batch_size": 4, "seed": 1}})";
  write_file(dir_ / "resume.json", text);
  const fs::path metrics = dir_ / "metrics.json";
  const Result t = run("train " + (dir_ / "resume.json").string() + " -q --metrics-json " + metrics.string());
  ASSERT_EQ(t.code, 0) << t.err;
  const std::string m = slurp(metrics);
  EXPECT_NE(m.find("\"loss\""), std::string::npos) << m;
}

}  // namespace

// ---- memory: nnfit plan, --memory-limit, fit.memory, the metrics record (issue 4) ----

namespace {

std::int64_t json_int(const std::string& text, const std::string& key, std::size_t from = 0) {
  const std::size_t at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + key.size() + 4));
}

class CliMemoryTest : public CliTest {};

TEST_F(CliMemoryTest, PlanPrintsTheBreakdownAndTheLargestBatch) {
  const Result t = run("plan " + config(model()).string() + " --batch-sizes 1,4 --memory-limit 1GiB");
  ASSERT_EQ(t.code, 0) << t.err;
  for (const char* s : {"batch", "peak", "weights", "gradients", "optimizer", "activations", "workspace",
                        "Memory limit 1.00 GiB: the largest batch size that fits is 4"}) {
    EXPECT_NE(t.out.find(s), std::string::npos) << s << " not in:\n" << t.out;
  }
  const Result j = run("plan " + config(model()).string() + " --batch-sizes 2 --json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(json_int(j.out, "batch_size"), 2);
  EXPECT_EQ(json_int(j.out, "peak_bytes"), json_int(j.out, "weights_bytes") + json_int(j.out, "gradients_bytes") +
                                               json_int(j.out, "optimizer_bytes") + json_int(j.out, "activations_bytes") +
                                               json_int(j.out, "workspace_bytes"));
  EXPECT_NE(j.out.find("\"memory_limit_bytes\": null"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"largest_batch_size\": null"), std::string::npos) << j.out;
}

// A model whose input has a None dimension (sequences of any length) is planned at each
// --input-shape given, and without one the error says to give it (Note [Shapes known per batch]).
TEST_F(CliMemoryTest, PlanAtEachInputShapeOfAModelWithNoneDimensions) {
  const std::string seq = model("[null, null, 4]", R"({"class_name": "GlobalAveragePooling1D", "config": {"name": "pool"}},)");
  const Result none = run("plan " + config(seq).string() + " --batch-sizes 8");
  EXPECT_NE(none.code, 0);
  EXPECT_NE(none.err.find("known only per batch"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("--input-shape"), std::string::npos) << none.err;
  const Result j = run("plan " + config(seq).string() + " --batch-sizes 8 --input-shape 5,4 --input-shape 50,4 --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const std::size_t second = j.out.find("\"batch_size\"", j.out.find("\"batch_size\"") + 1);
  ASSERT_NE(second, std::string::npos) << j.out;
  EXPECT_GT(json_int(j.out, "peak_bytes", second), json_int(j.out, "peak_bytes")) << j.out;  // 50 steps need more
  EXPECT_EQ(json_int(j.out, "weights_bytes", second), json_int(j.out, "weights_bytes")) << j.out;
  const Result bad = run("plan " + config(seq).string() + " --input-shape 5,3");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("does not fit the input shape (None, 4)"), std::string::npos) << bad.err;
}

// The planner's figure against the allocator: a limit equal to the plan's peak at batch 3
// lets batch 3 train (using exactly that much) and makes batch 4 fail with an OOM.
TEST_F(CliMemoryTest, PlanPredictsWhatTrainingUnderALimitCanDo) {
  const fs::path cfg = config(model());
  const Result p3 = run("plan " + cfg.string() + " --batch-sizes 3,4 --json");
  ASSERT_EQ(p3.code, 0) << p3.err;
  const std::int64_t peak3 = json_int(p3.out, "peak_bytes");
  ASSERT_LT(peak3, json_int(p3.out, "peak_bytes", p3.out.find("\"batch_size\": 4")));
  const std::string limit = std::to_string(peak3);
  const Result fit = run("plan " + cfg.string() + " --batch-sizes 1,8 --json --memory-limit " + limit);
  EXPECT_EQ(json_int(fit.out, "largest_batch_size"), 3) << fit.out;

  const fs::path metrics = dir_ / "metrics.json";
  const Result ok = run("train " + cfg.string() + " -q --batch-size 3 --memory-limit " + limit + " --metrics-json " +
                        metrics.string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  const std::string m = slurp(metrics);
  EXPECT_EQ(json_int(m, "peak_memory_bytes"), peak3) << m;
  EXPECT_EQ(json_int(m, "planned_peak_bytes"), peak3) << m;
  for (const char* key : {"\"memory\": {", "\"cpu:0\": {", "\"in_use_bytes\"", "\"reserved_bytes\"", "\"allocations\"",
                          "\"frees\"", "\"largest_free_block_bytes\"", "\"fragmentation\"", "\"ooms\": 0"}) {
    EXPECT_NE(m.find(key), std::string::npos) << key << " not in:\n" << m;
  }
  EXPECT_LE(json_int(m, "reserved_bytes"), peak3);

  expect_error(cfg, 1, {"cpu:0: out of memory", "limit", "largest free block", "batch size 4"},
               "--batch-size 4 --memory-limit " + limit);
  const Result oom = run("train " + cfg.string() + " -q --batch-size 4 --memory-limit " + limit);
  EXPECT_NE(oom.err.find("hint: batch size 3 is the largest that fits the memory limit"), std::string::npos) << oom.err;
}

TEST_F(CliMemoryTest, ConfigMemoryWinsOverTheFlagAndSaysSo) {
  const fs::path cfg = config(model(), "images.idx", "labels.idx",
                              R"({"epochs": 1, "batch_size": 4, "memory": {"limit": "1KiB"}})");
  const Result r = run("train " + cfg.string() + " -q --memory-limit 1GiB");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("note: --memory-limit 1GiB is overridden by fit.memory.limit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("limit 1.00 KiB"), std::string::npos) << r.err;
}

TEST_F(CliMemoryTest, BadMemorySettingsAreUsageErrors) {
  expect_error(config(model()), 2, {"--memory-limit: invalid size \"lots\""}, "--memory-limit lots");
  expect_error(config(model()), 2, {"--memory-preallocate: invalid fraction \"150%\""}, "--memory-preallocate 150%");
  expect_error(config(model(), "images.idx", "labels.idx", R"({"memory": {"preallocate": 2}})"), 2,
               {"config.json: fit.memory.preallocate: invalid fraction"});
  expect_error(config(model(), "images.idx", "labels.idx", R"({"memory": {"limt": 2}})"), 2,
               {"fit.memory.limt: unknown key"});
}

}  // namespace
