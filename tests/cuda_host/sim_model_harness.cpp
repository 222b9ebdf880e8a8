// The cuda-sim model tests' harness (sim_model_harness.h).
#include "cuda_host/sim_model_harness.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cuda_host/sim_data.h"
#include "cuda_host/sim_device.h"
#include "nnfit/nn/lr_schedule.h"

namespace nnfit::testing::sim_model {

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

std::unique_ptr<Sequential> make(bool sim, const Build& build, const std::string& policy, const MemoryPolicy& memory) {
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
void expect_trains_like_the_cpu(const Build& build, const Shape& shape, std::int64_t launches, const std::string& policy,
                                float tol) {
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

}  // namespace nnfit::testing::sim_model
