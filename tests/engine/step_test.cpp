// The step engine's seams (src/engine/step.h): which way an entry's step runs
// (choose_step), and the steps a CPU runs checked against each other on a small model:
// the micro-batched step's accumulated update is the plain step's, and a loss-scaled
// micro-batched step with a non-finite gradient is skipped and halves the scale. The
// captured, device loss-scaled and replicated steps run in the CudaSim and dist suites.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/step.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

TEST(ChooseStep, PicksTheWayAnEntryRuns) {
  for (const bool queues : {false, true}) {
    const StepKind single = queues ? StepKind::captured : StepKind::plain;
    EXPECT_EQ(choose_step(Mode::train, false, false, queues), single);
    EXPECT_EQ(choose_step(Mode::infer, false, false, queues), single);
    EXPECT_EQ(choose_step(Mode::apply, false, false, queues), single);
    // A split entry runs its micro-batches, training or inference, when not replicated.
    EXPECT_EQ(choose_step(Mode::grads, true, false, queues), StepKind::micro_batched);
    EXPECT_EQ(choose_step(Mode::infer, true, false, queues), StepKind::micro_batched);
    EXPECT_EQ(choose_step(Mode::scaled, true, false, queues), StepKind::micro_batched);
    EXPECT_EQ(choose_step(Mode::scaled, false, false, queues), StepKind::loss_scaled);
    // Replicated: a gradient entry, split or not, runs as this rank's slice; inference
    // and a plain training step do not.
    for (const bool split : {false, true}) {
      EXPECT_EQ(choose_step(Mode::grads, split, true, queues), StepKind::replicated);
      EXPECT_EQ(choose_step(Mode::scaled, split, true, queues), StepKind::replicated);
    }
    EXPECT_EQ(choose_step(Mode::infer, false, true, queues), single);
    EXPECT_EQ(choose_step(Mode::infer, true, true, queues), StepKind::micro_batched);
  }
}

TEST(ChooseStep, NamesEveryKindApart) {
  std::set<std::string> names;
  for (StepKind k : {StepKind::plain, StepKind::captured, StepKind::micro_batched, StepKind::loss_scaled,
                     StepKind::replicated}) {
    names.insert(step_kind_name(k));
  }
  EXPECT_EQ(names.size(), 5u);
  EXPECT_STREQ(step_kind_name(StepKind::micro_batched), "micro-batched");
}

// A model (Dense(4, tanh) -> Dense(2), mean squared error, SGD) with an engine of the
// test's own; the model goes first, so its weights return to the engine's allocator.
struct Rig {
  std::unique_ptr<Sequential> model;
  std::unique_ptr<StepEngine> engine;
  explicit Rig(const OptimizerOptions::LossScale& loss_scale = {}) {
    model = std::make_unique<Sequential>("rig");
    model->set_input_shape(Shape{3});
    model->set_seed(11);
    model->add(std::make_unique<Dense>("dense", DenseOptions{4, "tanh"}));
    model->add(std::make_unique<Dense>("dense_1", DenseOptions{2}));
    engine = std::make_unique<StepEngine>(*model);
    CompileOptions c;
    c.optimizer.name = "sgd";
    c.optimizer.loss_scale = loss_scale;
    c.loss = Loss::from_name("mean_squared_error");
    engine->compile(c);
  }
  ~Rig() { model.reset(); }
  StepContext context() const {
    StepContext ctx = engine->step_context();
    ctx.training = true;
    ctx.learning_rate = static_cast<float>(engine->learning_rate());
    return ctx;
  }
  std::vector<float> weights() const {
    std::vector<float> out;
    for (const Tensor& t : engine->get_weights()) out.insert(out.end(), t.data<float>(), t.data<float>() + t.numel());
    return out;
  }
};

// Rows of 3 inputs and 2 targets, the same every call; `poison` puts a NaN in the inputs.
void stage(Entry& e, std::int64_t rows, bool poison = false) {
  std::vector<float> x(static_cast<std::size_t>(rows * 3)), y(static_cast<std::size_t>(rows * 2));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i));
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::cos(0.3f * static_cast<float>(i));
  if (poison) x[4] = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(e.x_data(0), x.data(), x.size() * sizeof(float));
  std::memcpy(e.y_data(0), y.data(), y.size() * sizeof(float));
}

TEST(MicroBatchedStep, AccumulatesThePlainStepsUpdate) {
  Rig plain, split;
  const std::vector<float> before = plain.weights();
  ASSERT_EQ(before, split.weights()) << "the same seed builds the same weights";

  Entry& whole = plain.engine->entry(true, 8);
  ASSERT_EQ(choose_step(whole.mode, whole.split != nullptr, false, false), StepKind::plain);
  stage(whole, 8);
  ASSERT_TRUE(plain.engine->step(StepKind::plain).run(whole, 8, plain.context(), {}));

  Entry& e = split.engine->entry_mode(static_cast<int>(Mode::train), 8, /*bind=*/false);
  split.engine->make_split(e, true, 8, 4, "test");
  ASSERT_EQ(choose_step(e.mode, e.split != nullptr, false, false), StepKind::micro_batched);
  stage(e, 8);
  int programs = 0, updates = 0;
  const BeforeRun count = [&](Program&, bool update_only) { update_only ? ++updates : ++programs; };
  ASSERT_TRUE(split.engine->step(StepKind::micro_batched).run(e, 8, split.context(), count));
  EXPECT_EQ(programs, 2) << "two micro-batches of 4";
  EXPECT_EQ(updates, 1) << "one update from their summed gradients";

  EXPECT_NEAR(whole.loss_value(), e.loss_value(), 1e-6f);
  const std::vector<float> a = plain.weights(), b = split.weights();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a, before) << "the step trained";
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6f) << "weight element " << i;
}

TEST(MicroBatchedStep, SkipsANonFiniteLossScaledStepAndHalvesTheScale) {
  Rig rig(OptimizerOptions::LossScale{true, true, 1024.0, 2000});
  // Loss scaling on the CPU: every training batch runs as one micro-batch of gradients,
  // then the update, so the step can be skipped.
  Entry& e = rig.engine->entry_or_split(true, 8, "training");
  ASSERT_TRUE(e.split);
  EXPECT_EQ(e.split->micro, 8);
  ASSERT_EQ(choose_step(e.mode, true, false, false), StepKind::micro_batched);
  const std::vector<float> before = rig.weights();

  stage(e, 8, /*poison=*/true);
  EXPECT_FALSE(rig.engine->step(StepKind::micro_batched).run(e, 8, rig.context(), {}));
  EXPECT_EQ(rig.engine->loss_scale_, 512.0);
  EXPECT_EQ(rig.engine->skipped_steps_, 1);
  EXPECT_EQ(rig.weights(), before) << "a skipped step leaves the weights";

  stage(e, 8);
  EXPECT_TRUE(rig.engine->step(StepKind::micro_batched).run(e, 8, rig.context(), {}));
  EXPECT_EQ(rig.engine->loss_scale_, 512.0);
  EXPECT_EQ(rig.engine->loss_scale_good_steps_, 1);
  EXPECT_NE(rig.weights(), before);
}

}  // namespace
}  // namespace nnfit
