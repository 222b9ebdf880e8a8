// The model's device path (Note [The model's device path]) on cuda-sim (sim_device.h): whole
// fit/evaluate/predict calls, saving and loading, with the weights, optimizer slots and
// arena in simulated device memory that faults on any host access outside a kernel or a
// Backend::copy, and the CUDA backend's own kernels (their host-run bodies) doing the
// arithmetic. Each model trains the same on the sim as on the CPU: the same seed gives the
// same initial weights and the same dropout masks, so the losses and weights after
// training agree to float rounding (the two backends' kernels sum in different orders).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <unistd.h>

#include "cuda_host/sim_data.h"
#include "cuda_host/sim_device.h"
#include "cuda_host/sim_model_harness.h"
#include "nnfit/core/error.h"
#include "nnfit/data/dataset.h"
#include "nnfit/model/model.h"
#include "nnfit/model/saving.h"
#include "nnfit/nn/layers.h"
#include "nnfit/profile/step_log.h"

namespace nnfit::testing {
namespace {

using namespace sim_model;  // NOLINT: the harness is these tests' vocabulary

TEST(CudaSimModel, MlpWithDropoutTrainsLikeTheCpu) {
  expect_trains_like_the_cpu(
      [](Sequential& m) {
        m.set_input_shape(Shape{16});
        m.add(std::make_unique<Dense>("dense", DenseOptions{32, "relu"}));
        m.add(std::make_unique<Dropout>("dropout", 0.25));
        m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
      },
      Shape{16}, 21);
}

TEST(CudaSimModel, AdamaxWithEmaAndNoiseIsCapturedAndTrainsLikeTheCpu) {
  // A slot-update rule, use_ema's average (with overwrites every 4 steps) and GaussianDropout:
  // their step values come from device memory, so the step is captured and its replays are
  // right.
  const OptimizerOptions saved = g_optimizer;
  g_optimizer.name = "adamax";
  g_optimizer.use_ema = true;
  g_optimizer.ema_overwrite_frequency = 4;
  expect_trains_like_the_cpu(
      [](Sequential& m) {
        m.set_input_shape(Shape{16});
        m.add(std::make_unique<NoiseLayer>("gaussian_dropout", NoiseKind::gaussian_dropout, 0.2));
        m.add(std::make_unique<Dense>("dense", DenseOptions{32, "relu"}));
        m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
      },
      Shape{16}, 21);
  g_optimizer = saved;
}

TEST(CudaSimModel, NadamAndResizingAreCapturedAndTrainLikeTheCpu) {
  // Nadam's momentum product is a function of the step its SlotStepFn reads from device
  // memory (Note [Nadam's schedule without state]), and resize computes its taps on the
  // device (resize_kernels.h): both are captured, and each replay must use its own step.
  // The resizes follow a convolution, so the step has their gradients (resize_grad) too.
  const OptimizerOptions saved = g_optimizer;
  g_optimizer.name = "nadam";
  expect_trains_like_the_cpu(
      [](Sequential& m) {
        m.set_input_shape(Shape{6, 6, 1});
        Conv2DOptions c;
        c.filters = 3;
        c.activation = "relu";
        m.add(std::make_unique<Conv2D>("conv2d", c));  // 4x4x3
        ResizingOptions up;
        up.height = 9;
        up.width = 7;
        up.interpolation = "bicubic";
        m.add(std::make_unique<Resizing>("resizing", up));
        ResizingOptions down;
        down.height = 5;
        down.width = 4;
        down.interpolation = "lanczos3";
        down.antialias = true;
        m.add(std::make_unique<Resizing>("resizing_1", down));
        m.add(std::make_unique<Flatten>("flatten"));
        m.add(std::make_unique<Dense>("dense", DenseOptions{4}));
      },
      Shape{6, 6, 1}, 21);
  g_optimizer = saved;
}

TEST(CudaSimModel, ConvNetWithBatchNormTrainsLikeTheCpu) {
  // RandomFlip (a random augmentation layer), Conv2D through the cuDNN stand-in,
  // BatchNormalization's moving statistics (variables the program updates), max pooling,
  // and the fused conv/matmul epilogues.
  expect_trains_like_the_cpu(
      [](Sequential& m) {
        m.set_input_shape(Shape{8, 8, 1});
        m.add(std::make_unique<RandomFlip>("random_flip", RandomFlipOptions{}));
        Conv2DOptions c;
        c.filters = 4;
        c.activation = "relu";
        m.add(std::make_unique<Conv2D>("conv2d", c));
        m.add(std::make_unique<BatchNormalization>("batch_normalization", BatchNormalizationOptions{}));
        m.add(std::make_unique<MaxPooling2D>("max_pooling2d", Pooling2DOptions{}));
        m.add(std::make_unique<Flatten>("flatten"));
        m.add(std::make_unique<Dense>("dense", DenseOptions{4}));
      },
      Shape{8, 8, 1}, 21);
}

// A fit with a log dir times each kernel (steps.jsonl). The sim's kernels run only when
// the host waits, as a GPU's run after their launch: the timed program waits after each
// kernel, so the kernels' parts hold their runs, most of the step's wall time, and the
// losses still match the CPU's. Each step's h2d_us is its batch's staging.
TEST(CudaSimModel, ATimedFitTimesTheKernelsRunsNotTheirLaunches) {
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16, 16, 3});
    Conv2DOptions c;
    c.filters = 16;
    c.activation = "relu";
    m.add(std::make_unique<Conv2D>("conv2d", c));
    m.add(std::make_unique<Flatten>("flatten"));
    m.add(std::make_unique<Dense>("dense", DenseOptions{4}));
  };
  auto [x, y] = data(256, Shape{16, 16, 3}, 8);
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("nnfit_sim_timed_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  FitOptions f;
  f.epochs = 1;
  f.batch_size = 64;
  f.log_dir = dir.string();
  auto sim = make(true, build);
  auto cpu = make(false, build);
  const History hs = sim->fit(x, y, f);
  f.log_dir.clear();
  const History hc = cpu->fit(x, y, f);
  EXPECT_NEAR(log_value(hs.epochs[0], "loss"), log_value(hc.epochs[0], "loss"), 1e-3);
  const std::vector<profile::StepRecord> steps = profile::read_step_log((dir / "steps.jsonl").string());
  ASSERT_EQ(steps.size(), 4u);
  double kernels_us = 0;
  for (const profile::StepRecord& r : steps) kernels_us += static_cast<double>(r.forward_us + r.backward_us + r.update_us);
  const double train_us = log_value(hs.epochs[0], "train_seconds") * 1e6;
  EXPECT_GT(kernels_us, 0.5 * train_us) << "the kernels' times are their launches: " << kernels_us << " us of "
                                        << train_us << " us";
  std::filesystem::remove_all(dir);
}

// A callback that stops training mid-epoch leaves the next batch staged ahead (Note
// [Input double buffer]): fit drops it before the epoch's validation, so what runs next
// (validation, evaluate, another fit) gets its own batches in order and the model goes on
// as on the CPU.
TEST(CudaSimModel, StoppingMidEpochDropsTheBatchStagedAhead) {
  struct StopAt final : Callback {
    std::int64_t batch;
    explicit StopAt(std::int64_t b) : batch(b) {}
    void on_train_batch_end(std::int64_t b, const Logs&) override {
      if (b == batch) model()->set_stop_training(true);
    }
  };
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16});
    m.add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [x, y] = data(300, Shape{16}, 13);
  auto [vx, vy] = data(70, Shape{16}, 14);
  auto sim = make(true, build);
  auto cpu = make(false, build);
  DeviceQueues* queues = g_last_queues;
  StopAt stop(1);  // after the second of five batches: the third is staged ahead
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 64;
  f.shuffle = false;
  f.callbacks = {&stop};
  f.validation_data = std::make_pair(vx, vy);  // the stopped epoch still validates
  const History hs = sim->fit(x, y, f);
  const History hc = cpu->fit(x, y, f);
  EXPECT_EQ(cuda_sim_stagings(*queues).total, 3 + 2) << "batches 0 and 1, 2 ahead, and validation's 2";
  ASSERT_EQ(hs.epochs.size(), hc.epochs.size());
  ASSERT_EQ(hs.epochs.size(), 1u);
  for (const char* key : {"loss", "val_loss", "val_accuracy"}) {
    EXPECT_NEAR(log_value(hs.epochs[0], key, 1e9), log_value(hc.epochs[0], key, -1), 1e-3) << key;
  }
  f.validation_data.reset();
  EXPECT_NEAR(log_value(sim->evaluate(vx, vy, 32), "loss"), log_value(cpu->evaluate(vx, vy, 32), "loss"), 1e-3);
  f.callbacks.clear();
  sim->fit(x, y, f);
  cpu->fit(x, y, f);
  expect_close(sim->get_weights(), cpu->get_weights(), 2e-4f, "weights after a stop and another fit");
}

// Weighted validation and evaluation (Mode::infer_weighted: a sample-weight input staged
// with the batch), validation_freq and steps run through the device path as on the CPU.
TEST(CudaSimModel, WeightedValidationAndStepsRunAsOnTheCpu) {
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16});
    m.add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [x, y] = data(200, Shape{16}, 13);
  auto [vx, vy] = data(70, Shape{16}, 14);
  Tensor vw = Tensor::zeros(Shape{70});
  for (std::int64_t i = 0; i < 70; ++i) vw.data<float>()[i] = static_cast<float>(i % 4);
  auto sim = make(true, build);
  auto cpu = make(false, build);
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 64;
  f.shuffle = false;
  f.validation_data = std::make_pair(vx, vy);
  f.validation_sample_weight = vw;
  f.validation_batch_size = 24;
  f.validation_freq = 2;
  const History hs = sim->fit(x, y, f);
  const History hc = cpu->fit(x, y, f);
  ASSERT_EQ(hs.epochs.size(), 2u);
  EXPECT_EQ(log_value(hs.epochs[0], "val_loss", -1), -1);  // validation_freq 2: none after epoch 1
  for (const char* key : {"loss", "val_loss", "val_accuracy"}) {
    EXPECT_NEAR(log_value(hs.epochs[1], key, 1e9), log_value(hc.epochs[1], key, -1), 1e-3) << key;
  }
  InferenceOptions io;
  io.batch_size = 32;
  io.steps = 2;
  io.sample_weight = vw;
  const double weighted = log_value(sim->evaluate(vx, vy, io), "loss", 1e9);
  EXPECT_NEAR(weighted, log_value(cpu->evaluate(vx, vy, io), "loss", -1), 1e-3);
  io.sample_weight = Tensor();
  EXPECT_GT(std::fabs(weighted - log_value(sim->evaluate(vx, vy, io), "loss", 1e9)), 1e-3);  // the weights count
  const Tensor ps = sim->predict(vx, io), pc = cpu->predict(vx, io);
  ASSERT_EQ(ps.shape(), (Shape{64, 4}));
  for (std::int64_t i = 0; i < ps.numel(); ++i) EXPECT_NEAR(ps.data<float>()[i], pc.data<float>()[i], 1e-4) << i;
}

// A callback that evaluates at each batch end runs other programs while fit's next batch is
// staged ahead: that batch is dropped and staged again when its step comes (from the set
// it was written to, into the ring's next), and both the evaluations and the training
// follow the CPU's. The evaluation's batch size (100) is larger than the training's, so
// the ring grows in the middle of fit too; its odd number of batches moves the dropped
// batch to the other set.
TEST(CudaSimModel, ACallbackEvaluatingBetweenStepsGetsItsOwnBatches) {
  struct EvaluateEachBatch final : Callback {
    const Tensor *x, *y;
    std::vector<double> losses;
    void on_train_batch_end(std::int64_t, const Logs&) override {
      losses.push_back(log_value(model()->evaluate(*x, *y, 100), "loss"));
    }
  };
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16});
    m.add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
    m.add(std::make_unique<Dropout>("dropout", 0.2));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [x, y] = data(300, Shape{16}, 16);
  auto [vx, vy] = data(250, Shape{16}, 17);  // 3 batches: the dropped batch's number changes parity
  std::vector<double> losses[2];
  std::vector<Tensor> weights[2];
  for (int sim : {1, 0}) {
    auto m = make(sim == 1, build);
    EvaluateEachBatch cb;
    cb.x = &vx;
    cb.y = &vy;
    FitOptions f;
    f.epochs = 2;
    f.batch_size = 64;
    f.callbacks = {&cb};
    m->fit(x, y, f);
    losses[sim] = cb.losses;
    weights[sim] = m->get_weights();
  }
  ASSERT_EQ(losses[1].size(), 10u);
  ASSERT_EQ(losses[0].size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_NEAR(losses[1][i], losses[0][i], 1e-3) << "evaluation " << i;
  expect_close(weights[1], weights[0], 2e-4f, "weights after evaluations between the steps");
}


TEST(CudaSimModel, APipelineFeedsItLikeTheCpu) {
  // fit and evaluate fed by a data::Dataset (the CLI's path): prefetched batches, a last
  // partial batch, validation from a dataset.
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16});
    m.add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [xf, y] = data(200, Shape{16}, 12);
  Tensor x = Tensor::zeros(xf.shape(), DType::u8);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(std::clamp(128.0f + 40.0f * xf.data<float>()[i], 0.0f, 255.0f));
  }
  // Training reads uint8 (cast into the staging), validation float32 (read where the
  // pipeline made it: Entry::set_x).
  const auto pipeline = [&](std::int64_t from, std::int64_t to) {
    const Tensor& in = from == 0 ? x : xf;
    return data::Dataset::from_tensor_slices({in.slice_rows(from, to), y.slice_rows(from, to)}).batch(48).prefetch(2);
  };
  FitOptions f;
  f.epochs = 2;
  f.validation_dataset = pipeline(150, 200);
  auto sim = make(true, build);
  auto cpu = make(false, build);
  const History hs = sim->fit(pipeline(0, 150), f);
  const History hc = cpu->fit(pipeline(0, 150), f);
  for (std::size_t e = 0; e < 2; ++e) {
    for (const char* key : {"loss", "accuracy", "val_loss"}) {
      const double want = log_value(hc.epochs[e], key, -1);
      EXPECT_NEAR(log_value(hs.epochs[e], key, 1e9), want, 1e-3 * (1 + std::fabs(want))) << key << " epoch " << e;
    }
  }
  expect_close(sim->get_weights(), cpu->get_weights(), 2e-4f, "weights after a pipeline");
  EXPECT_NEAR(log_value(sim->evaluate(pipeline(150, 200)), "loss"), log_value(cpu->evaluate(pipeline(150, 200)), "loss"),
              1e-3);
}

TEST(CudaSimModel, SavedAndLoadedThroughHostCopies) {
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16});
    m.add(std::make_unique<Dense>("dense", DenseOptions{8, "relu"}));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [x, y] = data(128, Shape{16}, 9);
  FitOptions f;
  f.epochs = 1;
  auto sim = make(true, build);
  sim->fit(x, y, f);
  const std::string dir = ::testing::TempDir() + "/nnfit_sim_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  // A .keras file written from device memory loads on the CPU with the same weights and
  // optimizer state.
  save_model(*sim, dir + "/m.keras");
  auto loaded = load_model(dir + "/m.keras");
  expect_close(loaded->get_weights(), sim->get_weights(), 0.0f, ".keras weights");
  expect_close(slots(*loaded), slots(*sim), 0.0f, ".keras optimizer slots");
  // And weights read from a file go into device memory.
  auto other = make(true, build);
  load_weights(*other, dir + "/m.keras");
  expect_close(other->get_weights(), sim->get_weights(), 0.0f, "loaded into the sim");
  std::vector<Tensor> w = sim->get_weights();
  for (Tensor& t : w) t.data<float>()[0] += 1.0f;
  other->set_weights(w);
  expect_close(other->get_weights(), w, 0.0f, "set_weights");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nnfit::testing
