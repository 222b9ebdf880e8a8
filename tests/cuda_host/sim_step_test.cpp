// A whole training step on cuda-sim (sim_device.h): a conv2d + dense classifier, its loss,
// the backward pass and Adam, planned with the sim's registry, run with every buffer in
// simulated device memory and data moved only by Backend::copy, matches the same graph
// on the CPU. And the two mistakes the sim exists to catch are caught: host code writing
// the arena directly, and a host buffer handed to a kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "cuda_host/sim_device.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/fusion.h"
#include "nnfit/graph/program.h"

namespace nnfit::testing {
namespace {

// Deterministic values in [-scale, scale).
Tensor values(Shape shape, float scale, std::uint32_t seed) {
  Tensor t = Tensor::zeros(std::move(shape));
  std::uint32_t s = seed * 2654435761u + 1;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = scale * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f);
  }
  return t;
}

// The initial host values of the step's variables, in the order Step binds them.
struct Init {
  std::vector<Tensor> params = {values(Shape{3, 3, 2, 3}, 0.4f, 1), values(Shape{3}, 0.1f, 2),
                                values(Shape{48, 5}, 0.2f, 3), values(Shape{5}, 0.1f, 4)};
  Tensor one = values(Shape{}, 0.0f, 0);  // filled with 1 below
  Tensor x = values(Shape{4, 6, 6, 2}, 1.0f, 5);
  Tensor y = Tensor::zeros(Shape{4}, DType::i32);
  Init() {
    one.data<float>()[0] = 1.0f;
    for (int i = 0; i < 4; ++i) y.data<std::int32_t>()[i] = (3 * i + 1) % 5;
  }
};

// x -> conv2d 3x3 -> bias -> relu -> flatten -> dense -> bias -> sparse CE (from logits);
// gradients of the four parameters; Adam updates with zero-initialized slots. `place`
// gives the tensor a variable is bound to: the host tensor on the CPU, a copy in device
// memory on the sim.
struct Step {
  Graph g;
  int x = -1, y = -1, loss = -1, logits = -1;
  std::vector<int> params;

  Step(const Init& init, const std::function<Tensor(const Tensor&)>& place) {
    x = g.add_input("x", {init.x.shape(), DType::f32});
    y = g.add_input("y", {init.y.shape(), DType::i32});
    for (std::size_t i = 0; i < init.params.size(); ++i) {
      params.push_back(g.add_variable("p" + std::to_string(i), place(init.params[i])));
    }
    Attrs conv;
    conv.set("strides", std::vector<std::int64_t>{1, 1});
    conv.set("padding", std::string("valid"));
    int h = g.add("conv2d", {x, params[0]}, conv, "conv/conv2d");
    h = g.add("bias_add", {h, params[1]}, {}, "conv/bias");
    h = g.add("activation", {h}, {{"kind", std::string("relu")}}, "conv/relu");
    Attrs flat;
    flat.set("shape", std::vector<std::int64_t>{4, 48});
    h = g.add("reshape", {h}, flat, "flatten");
    h = g.add("matmul", {h, params[2]}, {}, "dense/matmul");
    logits = g.add("bias_add", {h, params[3]}, {}, "dense/bias");
    Attrs la;
    la.set("kind", std::string("sparse_categorical_crossentropy"));
    la.set("from_logits", std::int64_t{1});
    loss = g.add("loss", {logits, y}, la, "loss");
    const std::vector<int> grads = gradients(g, loss, g.add_variable("one", place(init.one)), params);
    Attrs adam;
    adam.set("beta_1", 0.9);
    adam.set("beta_2", 0.999);
    adam.set("epsilon", 1e-7);
    adam.set("weight_decay", 0.0);
    adam.set("amsgrad", std::int64_t{0});
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Tensor zeros = Tensor::zeros(init.params[i].shape());
      const int m = g.add_variable("m" + std::to_string(i), place(zeros));
      const int v = g.add_variable("v" + std::to_string(i), place(zeros));
      g.add_node("adam_update", {params[i], grads[i], m, v}, adam, "adam" + std::to_string(i));
    }
    fuse_all(g);
  }
};

constexpr int kSteps = 3;

struct Result {
  std::vector<float> losses;
  Tensor logits;                // of the last step
  std::vector<Tensor> params;   // after the last step
  std::vector<std::string> impls;
};

StepContext context(int step) {
  StepContext ctx;
  ctx.step = step;
  ctx.learning_rate = 0.05f;
  return ctx;
}

Result run_on_cpu(const Init& init) {
  Step s(init, [](const Tensor& t) { return t.clone(); });
  Program p = plan(std::move(s.g), {DeviceType::cpu, {s.loss, s.logits}, 64});
  Tensor arena = Tensor::zeros(Shape{static_cast<std::int64_t>(p.arena_bytes())}, DType::u8);
  p.bind(arena.raw());
  Result r;
  for (int i = 0; i < kSteps; ++i) {
    std::memcpy(p.data(s.x), init.x.raw(), init.x.nbytes());
    std::memcpy(p.data(s.y), init.y.raw(), init.y.nbytes());
    p.run(context(i));
    r.losses.push_back(*static_cast<const float*>(p.data(s.loss)));
  }
  r.logits = Tensor::zeros(Shape{4, 5});
  std::memcpy(r.logits.raw(), p.data(s.logits), r.logits.nbytes());
  for (int v : s.params) r.params.push_back(p.graph().value(v).bound.clone());
  return r;
}

// Everything on the sim: variables and arena from its allocator, data only through copy().
class SimStep {
 public:
  explicit SimStep(const Init& init)
      : init_(init),
        sim_(make_cuda_sim_backend()),
        step_(init, [this](const Tensor& t) {
          Tensor d = allocate_tensor(sim_->allocator(), t.shape(), t.dtype());
          sim_->copy(d.raw(), t.raw(), t.nbytes(), CopyKind::host_to_device);
          return d;
        }),
        program_(plan(std::move(step_.g), {DeviceType::cuda, {step_.loss, step_.logits}, 64, sim_->kernels()})) {
    arena_ = sim_->allocator().allocate(program_.arena_bytes());
    program_.bind(arena_);
  }
  ~SimStep() { sim_->allocator().deallocate(arena_); }

  Backend& sim() { return *sim_; }
  Program& program() { return program_; }
  const Step& step() const { return step_; }

  Result run() {
    Result r;
    for (int i = 0; i < kSteps; ++i) {
      sim_->copy(program_.data(step_.x), init_.x.raw(), init_.x.nbytes(), CopyKind::host_to_device);
      sim_->copy(program_.data(step_.y), init_.y.raw(), init_.y.nbytes(), CopyKind::host_to_device);
      program_.run(context(i));
      sim_->synchronize();
      float loss = 0;
      sim_->copy(&loss, program_.data(step_.loss), sizeof loss, CopyKind::device_to_host);
      r.losses.push_back(loss);
    }
    r.logits = Tensor::zeros(Shape{4, 5});
    sim_->copy(r.logits.raw(), program_.data(step_.logits), r.logits.nbytes(), CopyKind::device_to_host);
    for (int v : step_.params) {
      const Tensor& d = program_.graph().value(v).bound;
      Tensor host = Tensor::zeros(d.shape());
      sim_->copy(host.raw(), d.raw(), d.nbytes(), CopyKind::device_to_host);
      r.params.push_back(host);
    }
    for (const PlannedStep& s : program_.steps()) r.impls.push_back(s.impl);
    return r;
  }

 private:
  const Init& init_;
  std::unique_ptr<Backend> sim_;  // declared before step_ and program_: destroyed after them
  Step step_;
  Program program_;
  void* arena_ = nullptr;
};

void expect_near_all(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    EXPECT_NEAR(g, w, 1e-5f + 1e-4f * std::fabs(w)) << what << " [" << i << "]";
  }
}

TEST(CudaSimStep, TrainingStepMatchesTheCpu) {
  const Init init;
  const Result cpu = run_on_cpu(init);
  SimStep sim(init);
  const Result got = sim.run();
  ASSERT_EQ(got.losses.size(), cpu.losses.size());
  for (std::size_t i = 0; i < cpu.losses.size(); ++i) {
    EXPECT_NEAR(got.losses[i], cpu.losses[i], 1e-5f + 1e-5f * std::fabs(cpu.losses[i])) << "step " << i;
  }
  EXPECT_LT(cpu.losses.back(), cpu.losses.front());  // the step trains: Adam lowers the loss
  expect_near_all(got.logits, cpu.logits, "logits");
  for (std::size_t i = 0; i < cpu.params.size(); ++i) {
    expect_near_all(got.params[i], cpu.params[i], "parameter " + std::to_string(i));
    // Adam moved every parameter away from its initial value.
    float moved = 0;
    for (std::int64_t j = 0; j < cpu.params[i].numel(); ++j) {
      moved = std::max(moved, std::fabs(cpu.params[i].data<float>()[j] - init.params[i].data<float>()[j]));
    }
    EXPECT_GT(moved, 1e-3f) << "parameter " << i;
  }
  // The own kernels' host-run bodies and the vendor stand-ins, nothing else.
  int own = 0, vendor = 0;
  std::string all;
  for (const std::string& impl : got.impls) {
    all += impl + " ";
    own += impl.rfind("cuda:", 0) == 0;
    vendor += impl.rfind("cuda-sim:ref:", 0) == 0;
  }
  EXPECT_GT(own, 0) << all;
  EXPECT_GT(vendor, 0) << all;
  EXPECT_EQ(own + vendor, static_cast<int>(got.impls.size())) << all;
  std::printf("cuda-sim step kernels: %s\n", all.c_str());
  // The arena and the variables came from the sim's allocator.
  EXPECT_GE(sim.sim().allocator().stats().in_use_bytes, static_cast<std::int64_t>(sim.program().arena_bytes()));
}

TEST(CudaSimStepDeathTest, StagingAnInputWithMemcpyIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Init init;
  SimStep sim(init);
  const int x = sim.step().x;
  EXPECT_DEATH(std::memcpy(sim.program().data(x), init.x.raw(), init.x.nbytes()),
               "nnfit cuda-sim: host access to simulated device memory at 0x[0-9a-f]+, region .*without Backend::copy");
}

TEST(CudaSimStep, AHostBufferGivenToAKernelIsCaught) {
  const Init init;
  SimStep sim(init);
  // The batch left in host memory (Program::set_input) instead of copied in.
  sim.program().set_input(sim.step().x, init.x.raw());
  sim.sim().copy(sim.program().data(sim.step().y), init.y.raw(), init.y.nbytes(), CopyKind::host_to_device);
  try {
    sim.program().run(context(0));
    ADD_FAILURE() << "a kernel ran on host memory";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("conv/"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not simulated device memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnfit::testing
