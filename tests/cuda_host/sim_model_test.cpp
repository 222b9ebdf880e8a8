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
#include "nnfit/core/error.h"
#include "nnfit/data/dataset.h"
#include "nnfit/model/model.h"
#include "nnfit/model/saving.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/merge_layers.h"
#include "nnfit/profile/step_log.h"

namespace nnfit::testing {
namespace {

using Build = std::function<void(Sequential&)>;

// The model `build` adds layers to, on the sim (sim = true) or the CPU, compiled with Adam
// and sparse cross-entropy from logits.
// The sim backend's queues of the last model make() built on the sim (for counting the
// graphs it replayed).
DeviceQueues* g_last_queues = nullptr;
Backend* g_last_backend = nullptr;  // and its backend (owned by the model), for its copy counts

// The optimizer make() compiles with (Adam unless a test says otherwise).
OptimizerOptions g_optimizer = [] {
  OptimizerOptions o;
  o.name = "adam";
  o.learning_rate = std::make_shared<ConstantLearningRate>(0.01);
  return o;
}();

std::unique_ptr<Sequential> make(bool sim, const Build& build, const std::string& policy = "float32",
                                 const MemoryPolicy& memory = {}) {
  auto m = std::make_unique<Sequential>("m");
  if (sim) {
    std::unique_ptr<Backend> backend = make_cuda_sim_backend(memory);
    g_last_queues = backend->queues();
    g_last_backend = backend.get();
    m->set_backend(std::move(backend));
  }
  else if (memory.limit_bytes > 0) m->set_memory_policy(memory);
  m->set_seed(5);
  build(*m);
  CompileOptions c;
  c.optimizer = g_optimizer;
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  c.metrics = {"accuracy"};
  c.dtype_policy = DTypePolicy::from_name(policy);
  m->compile(c);
  return m;
}

std::pair<Tensor, Tensor> data(std::int64_t n, const Shape& shape, std::uint32_t seed) { return sim_data(n, shape, seed); }

// The optimizer slots share the model's buffers (device memory on the sim): host copies.
std::vector<Tensor> slots(const Model& m) {
  std::vector<Tensor> out;
  for (const Tensor& t : m.optimizer_slots()) out.push_back(m.host_view(t));
  return out;
}

void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, float tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << what << " " << i;
    ASSERT_EQ(got[i].device().type, DeviceType::cpu) << what << " " << i << ": not a host tensor";
    const float* g = got[i].data<float>();
    const float* w = want[i].data<float>();
    for (std::int64_t j = 0; j < got[i].numel(); ++j) {
      ASSERT_NEAR(g[j], w[j], tol * (1.0f + std::fabs(w[j]))) << what << " " << i << " element " << j;
    }
  }
}

// Trains the model `build` makes on the sim and on the CPU (3 epochs, validation, a last
// partial batch) and compares the epoch logs, the weights, evaluate and predict.
// `launches`: the graphs fit launches (Note [Captured steps]: a program whose kernels are all
// capturable is captured at its first run and every run launches it), so the replays carry
// the steps' values: 3 epochs of 5 training batches (4 of 64, one of 44) and 2 validation
// batches (64, 6) give 21 where every program is captured.
void expect_trains_like_the_cpu(const Build& build, const Shape& shape, std::int64_t launches,
                                const std::string& policy = "float32",
                                float tol = 2e-4f) {
  auto [x, y] = data(300, shape, 3);
  auto [vx, vy] = data(70, shape, 4);
  FitOptions f;
  f.epochs = 3;
  f.batch_size = 64;  // 4 batches of 64 and one of 44
  f.validation_data = std::make_pair(vx, vy);
  auto sim = make(true, build, policy);
  auto cpu = make(false, build, policy);
  ASSERT_EQ(sim->device().type, DeviceType::cuda);
  expect_close(sim->get_weights(), cpu->get_weights(), 0.0f, "initial weights");
  DeviceQueues* queues = g_last_queues;
  const History hs = sim->fit(x, y, f);
  const History hc = cpu->fit(x, y, f);
  ASSERT_EQ(hs.epochs.size(), 3u);
  EXPECT_EQ(cuda_sim_graph_launches(*queues), launches);
  // Every batch reached the device through the input ring's copy queue: 15 training and 6
  // validation batches. A step stages the next batch while it runs (Note [Input double
  // buffer]): 4 of each epoch's 5 training batches (the first waits for the epoch's
  // start), a loss-scaled step's too (its Mode::scaled program is a staged entry like
  // any), and the second of each epoch's 2 validation batches. A loss-scaled step's
  // update program, enqueued after the host read the finite check, is also still queued
  // when the first validation batch of each epoch is staged: 3 more.
  const CudaSimStagings staged = cuda_sim_stagings(*queues);
  EXPECT_EQ(staged.total, 21);
  EXPECT_EQ(staged.behind_compute, policy == "mixed_float16" ? 12 + 3 + 3 : 12 + 3);
  for (std::size_t e = 0; e < hs.epochs.size(); ++e) {
    for (const char* key : {"loss", "accuracy", "val_loss", "val_accuracy", "loss_scale", "skipped_steps"}) {
      if (policy != "mixed_float16" && std::string(key).find("_s") != std::string::npos) continue;  // no loss scale
      const double want = log_value(hc.epochs[e], key, -1);
      EXPECT_NEAR(log_value(hs.epochs[e], key, 1e9), want, 1e-3 * (1 + std::fabs(want))) << key << " epoch " << e;
    }
  }
  EXPECT_LT(log_value(hs.epochs.back(), "loss"), log_value(hs.epochs.front(), "loss")) << "the sim did not learn";
  expect_close(sim->get_weights(), cpu->get_weights(), tol, "trained weights");
  expect_close(slots(*sim), slots(*cpu), tol, "optimizer slots");
  const Logs es = sim->evaluate(vx, vy, 32), ec = cpu->evaluate(vx, vy, 32);
  EXPECT_NEAR(log_value(es, "loss"), log_value(ec, "loss"), 1e-3);
  expect_close({sim->predict(vx, 32)}, {cpu->predict(vx, 32)}, 1e-3f, "predictions");
  // Everything the model keeps is in the sim's memory (the allocator counts it).
  EXPECT_GT(sim->memory_stats().in_use_bytes, 0);
}

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

// The memory plan holds on a device as on the CPU: the measured peak of the simulated
// device's allocator is the planned peak, counting the input double buffer's slots, the
// step's values and (loss scaling) the update's arena (MemoryPlan::staging_bytes).
TEST(CudaSimModel, MeasuredPeakIsThePlannedPeak) {
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{16});
    m.add(std::make_unique<Dense>("dense", DenseOptions{32, "relu"}));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [x, y] = data(128, Shape{16}, 15);
  for (const char* policy : {"float32", "mixed_float16"}) {
    auto sim = make(true, build, policy);
    const MemoryPlan plan = sim->plan_memory(32);
    EXPECT_GT(plan.staging_bytes, 2 * 32 * (16 + 1) * 4) << policy << ": two slots of a batch's inputs and targets";
    EXPECT_EQ(plan.weights_bytes + plan.gradients_bytes + plan.optimizer_bytes + plan.activations_bytes +
                  plan.workspace_bytes + plan.staging_bytes,
              plan.peak_bytes);
    FitOptions f;
    f.batch_size = 32;
    f.epochs = 1;
    sim->fit(x, y, f);
    EXPECT_EQ(sim->memory_stats().peak_bytes, plan.peak_bytes) << policy;
    EXPECT_EQ(sim->planned_peak_bytes(), plan.peak_bytes) << policy;
    EXPECT_EQ(make(false, build, policy)->plan_memory(32).staging_bytes, 0) << policy << ": nothing staged on the CPU";
  }
}

// A weight the loss does not reach: "gate" feeds only a NotEqual (no gradient flows
// through a comparison), so a loss-scaled step on the device gives its update a zero
// gradient from a buffer the size of its kernel (Programs::zero_gradient), which the plan
// counts too. The gate's weights stay as initialized, as on the CPU.
TEST(CudaSimModel, AWeightTheLossDoesNotReachIsPlannedAndKeptAsOnTheCpu) {
  const auto make_gated = [](bool sim) {
    LayerGraph g;
    TensorRef x = g.add_input("x", Shape{16});
    TensorRef gate = g.call(g.add_layer(std::make_unique<Dense>("gate", DenseOptions{16})), {x})[0];
    TensorRef mask = g.call(g.add_layer(std::make_unique<LogicalOp>("not_equal", LogicalOpKind::not_equal, 0.0)), {gate})[0];
    TensorRef kept = g.call(g.add_layer(std::make_unique<Merge>("multiply", MergeOp::multiply)), {x, mask})[0];
    TensorRef h = g.call(g.add_layer(std::make_unique<Dense>("dense", DenseOptions{32, "relu"})), {kept})[0];
    g.set_outputs({g.call(g.add_layer(std::make_unique<Dense>("dense_1", DenseOptions{4})), {h})[0]});
    auto m = std::make_unique<Model>("gated", std::move(g));
    if (sim) m->set_backend(make_cuda_sim_backend());
    m->set_seed(5);
    CompileOptions c;
    c.optimizer = g_optimizer;
    c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
    c.dtype_policy = DTypePolicy::from_name("mixed_float16");
    m->compile(c);
    return m;
  };
  auto sim = make_gated(true);
  auto cpu = make_gated(false);
  const std::vector<Tensor> initial = cpu->get_weights();
  const MemoryPlan plan = sim->plan_memory(32);
  auto [x, y] = data(128, Shape{16}, 15);
  FitOptions f;
  f.batch_size = 32;
  f.epochs = 2;
  const History hs = sim->fit(x, y, f);
  const History hc = cpu->fit(x, y, f);
  EXPECT_EQ(sim->memory_stats().peak_bytes, plan.peak_bytes) << "the gate's zero gradient is not planned";
  EXPECT_NEAR(log_value(hs.epochs[1], "loss"), log_value(hc.epochs[1], "loss"), 2e-3);
  const std::vector<Tensor> trained = sim->get_weights();
  expect_close(trained, cpu->get_weights(), 2e-3f, "weights");
  expect_close({trained[0], trained[1]}, {initial[0], initial[1]}, 0.0f, "the gate (no gradient)");
}

TEST(CudaSimModel, GruWithoutBiasTakesItsZeroConstantToTheDevice) {
  // A GRU without use_bias adds a host constant to its graph (the recurrent bias of zeros):
  // the model must place it in device memory, or the sim's kernel check refuses it. With
  // recurrent dropout, captured and replayed.
  expect_trains_like_the_cpu(
      [](Sequential& m) {
        m.set_input_shape(Shape{5, 4});
        RecurrentOptions r;
        r.units = 6;
        r.use_bias = false;
        r.recurrent_dropout = 0.25;  // its factors drawn from the step values in device memory
        m.add(std::make_unique<GRU>("gru", r));
        m.add(std::make_unique<Dense>("dense", DenseOptions{4}));
      },
      Shape{5, 4}, 21);
}

const Build kScaledMlp = [](Sequential& m) {
  m.set_input_shape(Shape{16});
  m.add(std::make_unique<Dense>("dense", DenseOptions{32, "relu"}));
  m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
};

TEST(CudaSimModel, MixedFloat16WithLossScalingTrainsLikeTheCpu) {
  // Loss scaling on the device (Note [Loss scaling on the device]): each step runs its
  // Mode::scaled program (gradients unscaled and checked on the device) and, when finite,
  // the update program fed by device-to-device copies; both are captured. The CPU runs
  // the host's split path, and the two agree on the losses, weights, the scale and the
  // skipped steps (none here: the initial 2^15 does not overflow this model's float16
  // gradients). Launches: 15 scaled programs + 15 updates + 6 validation batches = 36.
  expect_trains_like_the_cpu(kScaledMlp, Shape{16}, 15 + 15 + 6, "mixed_float16", 2e-3f);
}

// Trains kScaledMlp under mixed_float16 from `initial_scale` on the sim and the CPU (3
// epochs of 5 batches, no validation) and checks that they skip the same steps and keep
// the same scale; returns the steps skipped.
std::int64_t expect_scales_like_the_cpu(double initial_scale) {
  const OptimizerOptions saved = g_optimizer;
  g_optimizer.loss_scale.initial_scale = initial_scale;
  auto sim = make(true, kScaledMlp, "mixed_float16");
  DeviceQueues* queues = g_last_queues;
  auto cpu = make(false, kScaledMlp, "mixed_float16");
  g_optimizer = saved;
  auto [x, y] = data(300, Shape{16}, 3);
  FitOptions f;
  f.epochs = 3;
  f.batch_size = 64;
  const History hs = sim->fit(x, y, f);
  const History hc = cpu->fit(x, y, f);
  std::int64_t skipped = 0;
  for (std::size_t e = 0; e < 3; ++e) {
    for (const char* key : {"loss_scale", "skipped_steps"}) {
      EXPECT_EQ(log_value(hs.epochs[e], key, -1), log_value(hc.epochs[e], key, -2)) << key << " epoch " << e;
    }
    const double want = log_value(hc.epochs[e], "loss");
    EXPECT_NEAR(log_value(hs.epochs[e], "loss"), want, 1e-3 * (1 + std::fabs(want))) << "epoch " << e;
    skipped += static_cast<std::int64_t>(log_value(hs.epochs[e], "skipped_steps"));
  }
  EXPECT_EQ(sim->iterations(), cpu->iterations());
  EXPECT_EQ(sim->iterations(), 15 - skipped) << "a skipped step does not count";
  expect_close(sim->get_weights(), cpu->get_weights(), 2e-3f, "weights after skipped steps");
  // A skipped step launches its scaled program and no update.
  EXPECT_EQ(cuda_sim_graph_launches(*queues), 15 + (15 - skipped));
  return skipped;
}

TEST(CudaSimModel, LossScaledStepsOverflowAndAreSkippedOnTheDeviceAsOnTheCpu) {
  // From 2^28 the float16 gradients overflow (infinities in the backward pass), as in
  // LossScaling.OverflowSkipsStepsAndBacksOffWithoutNaNInTheWeights (tests/model): the
  // device's unscale_gradient flags them, the step is skipped and the scale halves until
  // the gradients fit float16, as the CPU's host check decides.
  const std::int64_t skipped = expect_scales_like_the_cpu(268435456.0);
  EXPECT_GT(skipped, 0) << "no step overflowed: the test no longer checks a skip";
  EXPECT_LT(skipped, 15) << "every step overflowed: the test no longer checks an update after skips";
}

TEST(CudaSimModel, ALossScaledStepCopiesBackOnlyItsResults) {
  // No gradient goes through host memory: a loss-scaled step copies back its predictions
  // (64 rows of 4 float32), its loss and its non-finite count, 1032 bytes, where the
  // gradients alone are (16·32 + 32 + 32·4 + 4) · 4 = 2704 bytes.
  auto sim = make(true, kScaledMlp, "mixed_float16");
  Backend& backend = *g_last_backend;
  auto [x, y] = data(256, Shape{16}, 11);
  FitOptions f;
  f.epochs = 1;
  f.batch_size = 64;
  const std::int64_t before = cuda_sim_bytes_to_host(backend);
  const History h = sim->fit(x, y, f);
  ASSERT_EQ(log_value(h.epochs[0], "skipped_steps"), 0.0);
  EXPECT_EQ(cuda_sim_bytes_to_host(backend) - before, 4 * (64 * 4 * 4 + 4 + 4));
}

TEST(CudaSimModel, ABatchThatDoesNotFitRunsAsMicroBatches) {
  const Build build = [](Sequential& m) {
    m.set_input_shape(Shape{64});
    m.add(std::make_unique<Dense>("dense", DenseOptions{256, "relu"}));
    m.add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  };
  auto [x, y] = data(256, Shape{64}, 7);
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 256;
  f.shuffle = false;
  f.on_oom = "reduce_batch";
  // The weights and slots (~270 KB) fit; the batch of 256's arena (~600 KB) does not.
  MemoryPolicy limited;
  limited.limit_bytes = 600 * 1024;
  auto sim = make(true, build, "float32", limited);
  DeviceQueues* queues = g_last_queues;
  auto cpu = make(false, build, "float32");
  const History hs = sim->fit(x, y, f);
  ASSERT_FALSE(hs.notes.empty()) << "the batch was not split; the limit no longer bites";
  const std::size_t at = hs.notes[0].find("micro-batches of ");
  ASSERT_NE(at, std::string::npos) << hs.notes[0];
  const std::int64_t micro = std::atoll(hs.notes[0].c_str() + at + 17);
  ASSERT_GT(micro, 0);
  // Each micro-batch's gradient program and the update are captured graphs: per step
  // (one per epoch) 256 / micro launches and the update's.
  EXPECT_EQ(cuda_sim_graph_launches(*queues), 2 * (256 / micro + 1)) << "micro-batches of " << micro;
  const History hc = cpu->fit(x, y, f);
  ASSERT_TRUE(hc.notes.empty());
  for (std::size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(log_value(hs.epochs[e], "loss"), log_value(hc.epochs[e], "loss"), 1e-4) << "epoch " << e;
  }
  expect_close(sim->get_weights(), cpu->get_weights(), 2e-4f, "weights after micro-batches");
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
