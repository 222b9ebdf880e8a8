// Loss scaling and memory on cuda-sim's device (sim_model_harness.h): mixed_float16's
// scaled steps unscaled and checked on the device, their skips as on the CPU, the bytes
// they copy back; the memory plan against the simulated device's measured peak; a batch
// that does not fit, run as micro-batches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "cuda_host/sim_data.h"
#include "cuda_host/sim_device.h"
#include "cuda_host/sim_model_harness.h"
#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/merge_layers.h"

namespace nnfit::testing {
namespace {

using namespace sim_model;  // NOLINT: the harness is these tests' vocabulary

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

// A batch that does not fit the memory limit trains as micro-batches whose gradients are
// summed on the device (Note [Micro-batches on the device]), as the CPU trains the whole
// batch; under mixed_float16 with loss scaling too (the sums divided by rows · scale, their
// finite check read back with each micro-batch's loss). Returns the micro-batch size.
std::int64_t expect_micro_batches_like_the_cpu(const std::string& policy, std::int64_t limit_kib, float tol) {
  SCOPED_TRACE(policy);
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
  MemoryPolicy limited;
  limited.limit_bytes = limit_kib * 1024;
  auto sim = make(true, build, policy, limited);
  DeviceQueues* queues = g_last_queues;
  Backend& backend = *g_last_backend;
  auto cpu = make(false, build, policy);
  const std::int64_t to_host_before = cuda_sim_bytes_to_host(backend);
  const History hs = sim->fit(x, y, f);
  const std::int64_t to_host = cuda_sim_bytes_to_host(backend) - to_host_before;
  EXPECT_FALSE(hs.notes.empty()) << "the batch was not split; the limit no longer bites";
  if (hs.notes.empty()) return 0;
  const std::size_t at = hs.notes[0].find("micro-batches of ");
  EXPECT_NE(at, std::string::npos) << hs.notes[0];
  if (at == std::string::npos) return 0;
  const std::int64_t micro = std::atoll(hs.notes[0].c_str() + at + 17);
  EXPECT_GT(micro, 0);
  if (micro <= 0) return 0;
  // Each micro-batch's gradient program and the update are captured graphs: per step
  // (one per epoch) 256 / micro launches and the update's.
  EXPECT_EQ(cuda_sim_graph_launches(*queues), 2 * (256 / micro + 1)) << "micro-batches of " << micro;
  // No gradient comes back: each micro-batch's predictions (4 float32 a row), its loss and
  // its non-finite count do (573,600 bytes here when the host summed the gradients).
  EXPECT_EQ(to_host, 2 * (256 * 16 + (256 / micro) * 8)) << "micro-batches of " << micro;
  // The sums are device memory the plan of what was taken counts.
  EXPECT_EQ(sim->memory_stats().peak_bytes, sim->planned_peak_bytes());
  const History hc = cpu->fit(x, y, f);
  EXPECT_TRUE(hc.notes.empty());
  for (std::size_t e = 0; e < 2; ++e) {
    for (const char* key : {"loss", "loss_scale", "skipped_steps"}) {
      if (policy == "float32" && std::string(key) != "loss") continue;  // no loss scale
      const double want = log_value(hc.epochs[e], key, -1);
      EXPECT_NEAR(log_value(hs.epochs[e], key, -2), want, tol * (1 + std::fabs(want))) << key << " epoch " << e;
    }
  }
  expect_close(sim->get_weights(), cpu->get_weights(), tol, "weights after micro-batches");
  return micro;
}

TEST(CudaSimModel, ABatchThatDoesNotFitRunsAsMicroBatches) {
  // The weights and slots (~270 KB) fit 600 KiB; the batch of 256's arena (~600 KB) does not.
  EXPECT_GT(expect_micro_batches_like_the_cpu("float32", 600, 2e-4f), 0);
}

TEST(CudaSimModel, ALossScaledBatchThatDoesNotFitRunsAsMicroBatches) {
  // Its whole batch's arena is ~870 KiB beside ~340 KiB already taken.
  EXPECT_GT(expect_micro_batches_like_the_cpu("mixed_float16", 700, 2e-3f), 0);
}

}  // namespace
}  // namespace nnfit::testing
