// `mpirun -np N nnfit train` against one process (issue 18): the weights after the first
// step and the losses after two epochs, every sample once per epoch, rank 0 alone writing
// files, and the watchdog ending the job when a rank is stopped, killed or out of memory.
// Skipped (with the reason) where nnfit was built without MPI or mpirun is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "e2e/cli_fixture.h"
#include "nnfit/model/saving.h"

namespace nnfit_test {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class MpiTrainTest : public CliTest {
 protected:
  void SetUp() override {
#if !NNFIT_TEST_WITH_MPI
    GTEST_SKIP() << "nnfit was built without MPI (install libopenmpi-dev openmpi-bin and reconfigure)";
#else
    if (!fs::exists(NNFIT_MPIEXEC)) GTEST_SKIP() << "mpirun not found at " << NNFIT_MPIEXEC;
    CliTest::SetUp();
    // n samples of 4x4 "images" (distinct pixels) and labels in [0, 3).
    const std::uint32_t n = 48;
    std::vector<std::uint8_t> pixels(n * 16), labels(n);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * 37 + i / 16 * 11) % 256);
    for (std::uint32_t i = 0; i < n; ++i) labels[i] = static_cast<std::uint8_t>((i * 7 + 1) % 3);
    write_file(dir_ / "images.idx", idx_u8({n, 4, 4}, pixels));
    write_file(dir_ / "labels.idx", idx_u8({n}, labels));
    write_file(dir_ / "first12_images.idx", idx_u8({12, 4, 4}, {pixels.begin(), pixels.begin() + 12 * 16}));
    write_file(dir_ / "first12_labels.idx", idx_u8({12}, {labels.begin(), labels.begin() + 12}));
#endif
  }

  static std::string mlp() {
    return R"({"module": "keras", "class_name": "Sequential", "config": {"name": "mlp", "layers": [)"
           R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1], "dtype": "float32", "name": "in"}},)"
           R"({"class_name": "Flatten", "config": {"name": "flatten"}},)"
           R"({"class_name": "Dense", "config": {"name": "hidden", "units": 8, "activation": "relu"}},)"
           R"({"class_name": "Dense", "config": {"name": "out", "units": 3, "activation": "linear"}}]}})";
  }

  // A config training on `images`/`labels` (validated on the whole set) with `optimizer`.
  fs::path make_config(const std::string& images, const std::string& labels, const std::string& optimizer,
                       const std::string& fit, const std::string& extra = "") {
    const std::string train = R"({"images": ")" + (dir_ / images).string() + R"(", "labels": ")" +
                              (dir_ / labels).string() + R"("})";
    const std::string val = R"({"images": ")" + (dir_ / "images.idx").string() + R"(", "labels": ")" +
                            (dir_ / "labels.idx").string() + R"("})";
    const std::string text = R"({"model": )" + mlp() + R"(, "data": {"train": )" + train + R"(, "validation": )" +
                             val + R"(}, "compile": {"optimizer": )" + optimizer +
                             R"(, "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}, )"
                             R"("metrics": ["accuracy"]}, "fit": )" + fit + extra + "}";
    const fs::path p = dir_ / "config.json";
    write_file(p, text);
    return p;
  }

  // `mpirun -np N <launch>` (launch: what each rank runs), with a wall-clock limit so a
  // hang fails the test instead of blocking CI. Returns the result and sets seconds_.
  Result mpirun(int ranks, const std::string& launch, int limit_s = 120) {
    const fs::path out = dir_ / "mpi_stdout.txt", err = dir_ / "mpi_stderr.txt";
    // Root in containers and CI: Open MPI refuses root unless told.
    const std::string cmd = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                            "timeout -s KILL " + std::to_string(limit_s) + " " + NNFIT_MPIEXEC + " --oversubscribe -np " +
                            std::to_string(ranks) + " " + launch + " >" + out.string() + " 2>" + err.string();
    const double t0 = now_s();
    const int status = std::system(cmd.c_str());
    seconds_ = now_s() - t0;
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  static std::string nnfit() { return std::string(NNFIT_CLI); }

  static std::vector<nnfit::Tensor> weights_of(const fs::path& saved) {
    return nnfit::load_model(saved.string())->get_weights();
  }

  // Max |a - b| over max |b|, tensor by tensor; the largest.
  static double max_relative_difference(const std::vector<nnfit::Tensor>& a, const std::vector<nnfit::Tensor>& b) {
    EXPECT_EQ(a.size(), b.size());
    double worst = 0;
    for (std::size_t t = 0; t < std::min(a.size(), b.size()); ++t) {
      EXPECT_EQ(a[t].numel(), b[t].numel());
      double diff = 0, scale = 0;
      for (std::int64_t i = 0; i < a[t].numel(); ++i) {
        diff = std::max(diff, std::abs(double(a[t].data<float>()[i]) - double(b[t].data<float>()[i])));
        scale = std::max(scale, std::abs(double(b[t].data<float>()[i])));
      }
      worst = std::max(worst, diff / std::max(scale, 1e-30));
    }
    return worst;
  }

  static nlohmann::json last_epoch(const fs::path& metrics) {
    return nlohmann::json::parse(slurp(metrics)).at("epochs").back();
  }

  double seconds_ = 0;
};

constexpr const char* kSgd = R"({"class_name": "SGD", "config": {"learning_rate": 0.1}})";
constexpr const char* kAdam = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";

TEST_F(MpiTrainTest, WeightsAfterTheFirstStepMatchOneProcess) {
  // 12 samples, a global batch of 12: one step, split 6+6 and 4+4+4.
  const fs::path cfg = make_config("first12_images.idx", "first12_labels.idx", kSgd,
                                   R"({"epochs": 1, "batch_size": 12, "seed": 3})");
  const Result one = run("train " + cfg.string() + " -q --threads 1 --save " + (dir_ / "one.keras").string());
  ASSERT_EQ(one.code, 0) << one.err;
  const auto reference = weights_of(dir_ / "one.keras");
  // One process twice gives the same weights, so a difference below is the ranks'.
  const Result again = run("train " + cfg.string() + " -q --threads 1 --save " + (dir_ / "again.keras").string());
  ASSERT_EQ(again.code, 0) << again.err;
  ASSERT_EQ(max_relative_difference(weights_of(dir_ / "again.keras"), reference), 0.0);
  for (int ranks : {2, 3}) {
    const fs::path saved = dir_ / ("ranks" + std::to_string(ranks) + ".keras");
    const Result r = mpirun(ranks, nnfit() + " train " + cfg.string() + " -q --threads 1 --save " + saved.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto w = weights_of(saved);
    EXPECT_LE(max_relative_difference(w, reference), 1e-6) << ranks << " ranks";
  }
  // Buckets (one per weight here) and the overlap change when the sums run, not what they
  // add: on 2 ranks (a + b, whatever the algorithm) the weights are the same bits.
  const auto two = weights_of(dir_ / "ranks2.keras");
  for (const std::string flags : {"--bucket-size 64", "--no-overlap"}) {
    const fs::path saved = dir_ / "variant.keras";
    const Result r = mpirun(2, nnfit() + " train " + cfg.string() + " -q --threads 1 " + flags + " --save " + saved.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(max_relative_difference(weights_of(saved), two), 0.0) << flags;
  }
}

TEST_F(MpiTrainTest, LossesAfterTwoEpochsFollowOneProcess) {
  // 48 samples in global batches of 12 (4 steps an epoch), Adam, shuffled by the seed.
  const fs::path cfg = make_config("images.idx", "labels.idx", kAdam, R"({"epochs": 2, "batch_size": 12, "seed": 5})");
  const Result one = run("train " + cfg.string() + " -q --threads 1 --metrics-json " + (dir_ / "one.json").string());
  ASSERT_EQ(one.code, 0) << one.err;
  const auto ref = last_epoch(dir_ / "one.json");
  for (int ranks : {2, 3}) {
    const fs::path metrics = dir_ / ("ranks" + std::to_string(ranks) + ".json");
    const Result r = mpirun(ranks, nnfit() + " train " + cfg.string() + " -q --threads 1 --metrics-json " + metrics.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto json = nlohmann::json::parse(slurp(metrics));
    EXPECT_EQ(json.at("ranks").get<int>(), ranks);
    EXPECT_EQ(json.at("batch_size").get<int>(), 12);
    const auto e = json.at("epochs").back();
    for (const char* key : {"loss", "val_loss", "accuracy", "val_accuracy"}) {
      const double want = ref.at(key).get<double>(), got = e.at(key).get<double>();
      EXPECT_LE(std::abs(got - want), 1e-2 * std::abs(want) + 1e-6) << key << " on " << ranks << " ranks";
    }
    EXPECT_GT(e.at("samples_per_s").get<double>(), 0);
  }
}

// Dropout (Note [Random draws by global row]): each rank draws the single process's mask
// for its rows, so the weights after the first step are one process's. Dense(5) makes the
// ranks' first elements (rows 6, 4 and 8 times 5) fall inside the mask's groups of four.
TEST_F(MpiTrainTest, DropoutMasksAreOneProcesss) {
  const std::string model =
      R"({"module": "keras", "class_name": "Sequential", "config": {"name": "drop", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1], "dtype": "float32", "name": "in"}},)"
      R"({"class_name": "Flatten", "config": {"name": "flatten"}},)"
      R"({"class_name": "Dense", "config": {"name": "hidden", "units": 5, "activation": "relu"}},)"
      R"({"class_name": "Dropout", "config": {"name": "dropout", "rate": 0.5, "seed": 4}},)"
      R"({"class_name": "Dense", "config": {"name": "out", "units": 3}}]}})";
  const std::string files = R"({"images": ")" + (dir_ / "first12_images.idx").string() + R"(", "labels": ")" +
                            (dir_ / "first12_labels.idx").string() + R"("})";
  write_file(dir_ / "config.json", R"({"model": )" + model + R"(, "data": {"train": )" + files +
                                       R"(}, "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.1}}, )"
                                       R"("loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}}, )"
                                       R"("fit": {"epochs": 1, "batch_size": 12, "seed": 3}})");
  const std::string args = " train " + (dir_ / "config.json").string() + " -q --threads 1 --save ";
  ASSERT_EQ(run(args + (dir_ / "one.keras").string()).code, 0);
  const auto reference = weights_of(dir_ / "one.keras");
  for (int ranks : {2, 3}) {
    const fs::path saved = dir_ / ("ranks" + std::to_string(ranks) + ".keras");
    const Result r = mpirun(ranks, nnfit() + args + saved.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_LE(max_relative_difference(weights_of(saved), reference), 1e-6) << ranks << " ranks";
  }
}

// BatchNormalization: after the first step (weights still equal everywhere) the moving
// mean averaged over the ranks is the one-process moving mean of the global batch (Note
// [Moving statistics across ranks]); without the averaging it would be rank 0's slice's.
TEST_F(MpiTrainTest, MovingMeansAreTheGlobalBatchs) {
  const std::string model =
      R"({"module": "keras", "class_name": "Sequential", "config": {"name": "bn", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1], "dtype": "float32", "name": "in"}},)"
      R"({"class_name": "Flatten", "config": {"name": "flatten"}},)"
      R"({"class_name": "Dense", "config": {"name": "hidden", "units": 8}},)"
      R"({"class_name": "BatchNormalization", "config": {"name": "bn", "momentum": 0.5}},)"
      R"({"class_name": "Dense", "config": {"name": "out", "units": 3}}]}})";
  const std::string files = R"({"images": ")" + (dir_ / "first12_images.idx").string() + R"(", "labels": ")" +
                            (dir_ / "first12_labels.idx").string() + R"("})";
  write_file(dir_ / "config.json", R"({"model": )" + model + R"(, "data": {"train": )" + files +
                                       R"(}, "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.1}}, )"
                                       R"("loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}}, )"
                                       R"("fit": {"epochs": 1, "batch_size": 12, "seed": 3}})");
  const std::string args = " train " + (dir_ / "config.json").string() + " -q --threads 1 --save ";
  ASSERT_EQ(run(args + (dir_ / "one.keras").string()).code, 0);
  const Result r = mpirun(2, nnfit() + args + (dir_ / "two.keras").string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto moving_mean = [](const fs::path& p) {
    const auto m = nnfit::load_model(p.string());
    for (nnfit::Weight* w : m->weights()) {
      if (w->name.find("moving_mean") != std::string::npos) return w->value.clone();
    }
    return nnfit::Tensor();
  };
  const nnfit::Tensor one = moving_mean(dir_ / "one.keras"), two = moving_mean(dir_ / "two.keras");
  ASSERT_TRUE(one.defined() && two.defined());
  EXPECT_LE(max_relative_difference({two}, {one}), 1e-5);
}

// Loss scaling (mixed_float16) across ranks (Note [Loss scale across ranks]): at an
// initial scale of 2^20 the float16 gradients overflow, the step is skipped and the scale
// halves; growth after every 2 finite steps overflows again, so every epoch skips steps.
// The 2-rank job must skip the same steps and end each epoch on the same scale as one
// process (Note [Replica gradient seed]), and follow its losses and weights.
TEST_F(MpiTrainTest, LossScalingSkipsTheStepsOneProcessSkips) {
  const std::string optimizer =
      R"({"class_name": "LossScaleOptimizer", "config": {"inner_optimizer": {"class_name": "SGD", "config": )"
      R"({"learning_rate": 0.1}}, "initial_scale": 1048576, "dynamic_growth_steps": 2}})";
  const fs::path cfg = make_config("images.idx", "labels.idx", optimizer, R"({"epochs": 3, "batch_size": 12, "seed": 6})");
  const std::string args = " train " + cfg.string() + " -q --threads 1 --dtype-policy mixed_float16 --metrics-json ";
  const Result one = run(args + (dir_ / "one.json").string() + " --save " + (dir_ / "one.keras").string());
  ASSERT_EQ(one.code, 0) << one.err;
  const Result r = mpirun(2, nnfit() + args + (dir_ / "two.json").string() + " --save " + (dir_ / "two.keras").string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ref = nlohmann::json::parse(slurp(dir_ / "one.json")).at("epochs");
  const auto got = nlohmann::json::parse(slurp(dir_ / "two.json")).at("epochs");
  ASSERT_EQ(ref.size(), 3u);
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(got[i].at("loss_scale").get<double>(), ref[i].at("loss_scale").get<double>()) << "epoch " << i + 1;
    EXPECT_EQ(got[i].at("skipped_steps").get<double>(), ref[i].at("skipped_steps").get<double>()) << "epoch " << i + 1;
    const double want = ref[i].at("loss").get<double>();
    EXPECT_LE(std::abs(got[i].at("loss").get<double>() - want), 1e-2 * std::abs(want)) << "epoch " << i + 1;
    // The case must exercise the skips, and apply some steps (4 an epoch).
    EXPECT_GE(ref[i].at("skipped_steps").get<double>(), 1) << ref.dump();
    EXPECT_LT(ref[i].at("skipped_steps").get<double>(), 4) << ref.dump();
  }
  EXPECT_LE(max_relative_difference(weights_of(dir_ / "two.keras"), weights_of(dir_ / "one.keras")), 1e-3);
}

// on_oom "reduce_batch" across ranks (Note [Micro-batches across ranks]): rank 1 alone has
// a memory limit its slice of 24 rows does not fit (a wide hidden layer: activations
// dominate), so it runs micro-batches; rank 0 agrees to run the same ones and notes it.
// The one step on the global batch of 48 is one process's step on the whole batch.
TEST_F(MpiTrainTest, ReduceBatchSplitsEveryRanksSliceWhenOneRunsOutOfMemory) {
  const std::string model =
      R"({"module": "keras", "class_name": "Sequential", "config": {"name": "wide", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1], "dtype": "float32", "name": "in"}},)"
      R"({"class_name": "Flatten", "config": {"name": "flatten"}},)"
      R"({"class_name": "Dense", "config": {"name": "hidden", "units": 2048, "activation": "relu"}},)"
      R"({"class_name": "Dense", "config": {"name": "out", "units": 3}}]}})";
  const std::string files = R"({"images": ")" + (dir_ / "images.idx").string() + R"(", "labels": ")" +
                            (dir_ / "labels.idx").string() + R"("})";
  write_file(dir_ / "config.json", R"({"model": )" + model + R"(, "data": {"train": )" + files +
                                       R"(}, "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.1}}, )"
                                       R"("loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}}, )"
                                       R"("fit": {"epochs": 1, "batch_size": 48, "seed": 3, "on_oom": "reduce_batch"}})");
  const std::string args = " train " + (dir_ / "config.json").string() + " -q --threads 1";
  const Result one = run(args + " --save " + (dir_ / "one.keras").string());
  ASSERT_EQ(one.code, 0) << one.err;
  // Planned: 0.74 MiB for 24 rows, 0.46 MiB for 12 (`nnfit plan`), and a rank holds the
  // 160 KiB gradient buckets beside them (and, whole, an update arena): 700 KiB fits 12.
  const Result r = mpirun(1, nnfit() + args + " --save " + (dir_ / "two.keras").string() + " : -np 1 " + nnfit() +
                                 args + " --memory-limit 700KiB");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nnfit: note: training batch 24 (each rank's slice of the global batch 48) does not fit "
                       "(rank 1 ran out of memory); training on micro-batches of 12 on every rank"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the effective batch stays 48"), std::string::npos) << r.err;
  EXPECT_LE(max_relative_difference(weights_of(dir_ / "two.keras"), weights_of(dir_ / "one.keras")), 1e-6);
}

// The C++ API (examples/data_parallel.cpp: MultiWorkerMirroredStrategy chosen before
// compile, a model with Dropout): the program run alone and on 2 and 3 ranks prints the
// same replica count it runs, and the same final loss and weights to float rounding.
TEST_F(MpiTrainTest, TheCppStrategyExampleFollowsOneProcess) {
  const std::string example = (fs::path(NNFIT_CLI).parent_path() / "example_data_parallel").string();
  auto value = [](const std::string& out, const std::string& key) {
    const std::size_t at = out.find(key + " ");
    return at == std::string::npos ? NAN : std::atof(out.c_str() + at + key.size() + 1);
  };
  const Result one = mpirun(1, example);
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("replicas 1 (MultiWorkerMirroredStrategy)"), std::string::npos) << one.out;
  for (int ranks : {2, 3}) {
    const Result r = mpirun(ranks, example);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("replicas " + std::to_string(ranks) + " (MultiWorkerMirroredStrategy)"), std::string::npos)
        << r.out;
    for (const char* key : {"loss", "weight_abs_sum"}) {
      const double want = value(one.out, key), got = value(r.out, key);
      EXPECT_LE(std::abs(got - want), 1e-5 * std::abs(want)) << key << " on " << ranks << " ranks\n" << r.out;
    }
  }
}

// Targets are the sample indices and the model predicts 0 (zero weights, no learning):
// the epoch's loss (MSE) is the mean of i^2 and its MAE the mean of i over the samples
// the ranks trained on. Both match 0..n-1 exactly once only if the slices cover every
// sample once; 3 ranks and batches of 6 over 20 samples leave a last batch of 2 (a rank
// with no rows).
TEST_F(MpiTrainTest, EverySampleOncePerEpoch) {
  const std::uint32_t n = 20;
  std::vector<std::uint8_t> pixels(n * 16, 1), labels(n);
  for (std::uint32_t i = 0; i < n; ++i) labels[i] = static_cast<std::uint8_t>(i);
  write_file(dir_ / "idx_images.idx", idx_u8({n, 4, 4}, pixels));
  write_file(dir_ / "idx_labels.idx", idx_u8({n}, labels));
  const std::string model =
      R"({"module": "keras", "class_name": "Sequential", "config": {"name": "zero", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1], "dtype": "float32", "name": "in"}},)"
      R"({"class_name": "Flatten", "config": {"name": "flatten"}},)"
      R"({"class_name": "Dense", "config": {"name": "out", "units": 1, "kernel_initializer": {"class_name": "Zeros", "config": {}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}})";
  const std::string files = R"({"images": ")" + (dir_ / "idx_images.idx").string() + R"(", "labels": ")" +
                            (dir_ / "idx_labels.idx").string() + R"("})";
  const std::string text = R"({"model": )" + model + R"(, "data": {"train": )" + files + R"(, "validation": )" + files +
                           R"(}, "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 1e-20}}, )"
                           R"("loss": "mse", "metrics": ["mae"]}, "fit": {"epochs": 2, "batch_size": 6, "seed": 2}})";
  write_file(dir_ / "config.json", text);
  double sum = 0, squares = 0;
  for (std::uint32_t i = 0; i < n; ++i) sum += i, squares += double(i) * i;
  for (int ranks : {2, 3}) {
    const fs::path metrics = dir_ / "m.json";
    const Result r = mpirun(ranks, nnfit() + " train " + (dir_ / "config.json").string() +
                                       " -q --threads 1 --metrics-json " + metrics.string());
    ASSERT_EQ(r.code, 0) << r.err;
    for (const auto& e : nlohmann::json::parse(slurp(metrics)).at("epochs")) {
      EXPECT_NEAR(e.at("loss").get<double>(), squares / n, 1e-4) << ranks << " ranks";
      EXPECT_NEAR(e.at("mae").get<double>(), sum / n, 1e-5) << e.dump();
      EXPECT_NEAR(e.at("val_loss").get<double>(), squares / n, 1e-4) << ranks << " ranks";
      EXPECT_NEAR(e.at("val_mae").get<double>(), sum / n, 1e-5) << e.dump();
    }
  }
}

TEST_F(MpiTrainTest, RankZeroAloneWritesFiles) {
  // Each rank runs in its own directory and is given relative paths: rank 1's must stay empty.
  const fs::path cfg = make_config("images.idx", "labels.idx", kAdam,
                                   R"({"epochs": 2, "batch_size": 12, "seed": 1, "callbacks": [)"
                                   R"({"class_name": "CSVLogger", "config": {"filename": "log.csv"}},)"
                                   R"({"class_name": "ModelCheckpoint", "config": {"filepath": "ckpt.keras"}},)"
                                   R"({"class_name": "EarlyStopping", "config": {"monitor": "val_loss", "patience": 5}}]})");
  fs::create_directories(dir_ / "r0");
  fs::create_directories(dir_ / "r1");
  const std::string args = nnfit() + " train " + cfg.string() +
                           " --threads 1 --metrics-json m.json --logdir tb --save model.keras --backup-dir backup";
  const Result r = mpirun(1, "--wdir " + (dir_ / "r0").string() + " " + args + " : -np 1 --wdir " +
                                 (dir_ / "r1").string() + " " + args);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* f : {"m.json", "tb", "model.keras", "log.csv", "ckpt.keras"}) EXPECT_TRUE(fs::exists(dir_ / "r0" / f)) << f;
  EXPECT_TRUE(fs::is_empty(dir_ / "r1")) << "rank 1 wrote " << fs::directory_iterator(dir_ / "r1")->path();
  // One progress output: rank 0's.
  EXPECT_EQ(r.out.find("data-parallel: 2 ranks"), r.out.rfind("data-parallel: 2 ranks")) << r.out;
  EXPECT_NE(r.out.find("data-parallel: 2 ranks"), std::string::npos) << r.out;
}

// Rank 0 alone reads the backup; the broadcast after its restore gives rank 1 the weights,
// optimizer state, resume epoch and learning rate (which ReduceLROnPlateau lowered before
// the backup). Two epochs, then a run of four resumes at epoch 2: its losses follow one
// process doing the same.
TEST_F(MpiTrainTest, AResumedJobContinuesFromRankZerosBackup) {
  auto config = [&](int epochs) {
    return make_config("images.idx", "labels.idx", kAdam,
                       R"({"epochs": )" + std::to_string(epochs) + R"(, "batch_size": 12, "seed": 4, "callbacks": [)"
                       R"({"class_name": "BackupAndRestore", "config": {"backup_dir": ")" + (dir_ / "backup").string() +
                       R"(", "delete_checkpoint": false}},)"
                       // Halves the rate after every epoch; rank 0 alone restores its state.
                       R"({"class_name": "ReduceLROnPlateau", "config": {"monitor": "loss", "factor": 0.5, )"
                       R"("patience": 0, "min_delta": 10, "min_lr": 1e-9}}]})");
  };
  std::vector<nlohmann::json> last;
  for (int ranks : {1, 2}) {
    fs::remove_all(dir_ / "backup");
    const fs::path metrics = dir_ / "resumed.json";
    for (int epochs : {2, 4}) {
      const std::string args = " train " + config(epochs).string() + " -q --threads 1 --metrics-json " +
                               metrics.string() + " --save " + (dir_ / ("resumed" + std::to_string(ranks) + ".keras")).string();
      const Result r = ranks == 1 ? run(args) : mpirun(ranks, nnfit() + args);
      ASSERT_EQ(r.code, 0) << r.err;
    }
    const auto json = nlohmann::json::parse(slurp(metrics));
    EXPECT_EQ(json.at("initial_epoch").get<int>(), 2) << ranks << " ranks";
    ASSERT_EQ(json.at("epochs").size(), 2u);
    last.push_back(json.at("epochs").back());
  }
  for (const char* key : {"loss", "val_loss"}) {
    const double want = last[0].at(key).get<double>(), got = last[1].at(key).get<double>();
    EXPECT_LE(std::abs(got - want), 1e-2 * std::abs(want)) << key;
  }
  // The weights too: ranks that resumed with different learning rates would drift apart.
  EXPECT_LE(max_relative_difference(weights_of(dir_ / "resumed2.keras"), weights_of(dir_ / "resumed1.keras")), 1e-4);
}

TEST_F(MpiTrainTest, BatchSizeThatDoesNotSplitIsAClearError) {
  const fs::path cfg = make_config("images.idx", "labels.idx", kAdam, R"({"epochs": 1, "batch_size": 10, "seed": 1})");
  const Result r = mpirun(3, nnfit() + " train " + cfg.string() + " -q --threads 1");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("batch_size 10 does not split evenly across 3 replicas"), std::string::npos) << r.err;
}

// The MPI communicator is a plugin: where it cannot be loaded (here: NNFIT_PLUGIN_DIR names
// an empty directory), every rank fails with the same line, and none trains alone.
TEST_F(MpiTrainTest, WithoutTheMpiPluginEveryRankFailsAndNoneTrains) {
  const fs::path cfg = make_config("images.idx", "labels.idx", kAdam, R"({"epochs": 1, "batch_size": 12, "seed": 1})");
  fs::create_directories(dir_ / "no_plugins");
  const fs::path saved = dir_ / "model.keras";
  const Result r = mpirun(2, "-x NNFIT_PLUGIN_DIR=" + (dir_ / "no_plugins").string() + " " + nnfit() + " train " +
                                 cfg.string() + " --threads 1 --save " + saved.string());
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(r.out.find("Epoch"), std::string::npos) << "a rank trained alone:\n" << r.out;
  EXPECT_FALSE(fs::exists(saved));
  const std::string line = "nnfit: error: started by an MPI launcher with 2 ranks, but cannot load the MPI communicator: "
                           "its plugin libnnfit_mpi.so is in none of " + (dir_ / "no_plugins").string();
  std::size_t lines = 0;
  for (std::size_t at = r.err.find(line); at != std::string::npos; at = r.err.find(line, at + 1)) ++lines;
  EXPECT_EQ(lines, 2u) << r.err;
}

// The watchdog: rank 1 is stopped, killed or out of memory; rank 0 must exit non-zero
// within the timeout (5 s) plus the grace and launch time, with its line naming rank 1.
class MpiWatchdogTest : public MpiTrainTest {
 protected:
  // Rank 1 of `ranks` sends itself `signal` after `after_s` seconds of training.
  Result run_with_fault(const std::string& signal, double after_s, int ranks = 2) {
    const fs::path cfg = make_config("images.idx", "labels.idx", kAdam,
                                     R"({"epochs": 100000, "batch_size": 12, "seed": 1})");
    const std::string rank_cmd = "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep " + std::to_string(after_s) +
                                 "; kill -" + signal + " $$) & fi; exec " + nnfit() + " train " + cfg.string() +
                                 " -q --threads 1 --collective-timeout 5s";
    write_file(dir_ / "rank.sh", rank_cmd);
    return mpirun(ranks, "sh " + (dir_ / "rank.sh").string(), 60);
  }
  static std::string line_of(const std::string& err, const std::string& prefix) {
    const std::size_t at = err.find(prefix);
    return at == std::string::npos ? "" : err.substr(at, err.find('\n', at) - at);
  }
};

TEST_F(MpiWatchdogTest, AStoppedRankEndsTheJobNamingIt) {
  // Three ranks: both that still run must say so.
  const Result r = run_with_fault("STOP", 2, 3);
  EXPECT_NE(r.code, 0);
  EXPECT_LT(seconds_, 2 + 5 + 15) << r.err;
  for (const char* rank : {"nnfit: error: rank 0: ", "nnfit: error: rank 2: "}) {
    const std::string line = line_of(r.err, rank);
    EXPECT_NE(line.find("rank 1 did not reach allreduce"), std::string::npos) << rank << "\n" << r.err;
    EXPECT_NE(line.find("at step "), std::string::npos) << line;
    EXPECT_NE(line.find("timeout of 5s"), std::string::npos) << line;
  }
}

TEST_F(MpiWatchdogTest, AKilledRankEndsTheJobNamingIt) {
  const Result r = run_with_fault("KILL", 2);
  EXPECT_NE(r.code, 0);
  EXPECT_LT(seconds_, 2 + 5 + 15) << r.err;
  // Open MPI sees the death at once and ends the job (Note [Launcher termination]); rank 0
  // names the rank that no longer answers and says where it was.
  const std::string line = line_of(r.err, "nnfit: error: rank 0: ");
  EXPECT_NE(line.find("rank 1 failed"), std::string::npos) << r.err;
  EXPECT_NE(line.find("at step "), std::string::npos) << r.err;
  EXPECT_NE(line.find("allreduce"), std::string::npos) << line;
}

TEST_F(MpiWatchdogTest, ARankOutOfMemoryEndsTheJobWithItsError) {
  const fs::path cfg = make_config("images.idx", "labels.idx", kAdam, R"({"epochs": 100, "batch_size": 12, "seed": 1})");
  const std::string args = " train " + cfg.string() + " -q --threads 1 --collective-timeout 5s";
  const Result r = mpirun(1, nnfit() + args + " : -np 1 " + nnfit() + args + " --memory-limit 4KiB");
  EXPECT_NE(r.code, 0);
  EXPECT_LT(seconds_, 5 + 15) << r.err;
  const std::string own = line_of(r.err, "nnfit: error: rank 1: ");
  EXPECT_NE(own.find("OutOfMemory"), std::string::npos) << r.err;
  const std::string peer = line_of(r.err, "nnfit: error: rank 0: ");
  EXPECT_NE(peer.find("rank 1 failed at step"), std::string::npos) << r.err;
  EXPECT_NE(peer.find("OutOfMemory"), std::string::npos) << peer;
  EXPECT_NE(peer.find("stopped in broadcast"), std::string::npos) << peer;
}

}  // namespace
}  // namespace nnfit_test
