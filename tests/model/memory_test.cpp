// Sequential's memory: the policy (API and environment), plan_memory's breakdown and that
// it allocates nothing, the planned peak against the allocator's measured peak, OOM
// errors with context, and 100 models built and destroyed without growth.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <random>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

std::unique_ptr<Sequential> small_mlp(const std::string& name = "mlp") {
  auto m = std::make_unique<Sequential>(name);
  m->set_input_shape(Shape{8});
  m->add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
  m->add(std::make_unique<Dense>("dense_1", DenseOptions{3}));
  return m;
}

CompileOptions adam() {
  CompileOptions c;
  c.optimizer.name = "adam";
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  return c;
}

std::pair<Tensor, Tensor> data(std::int64_t n) {
  Tensor x = Tensor::zeros(Shape{n, 8}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(1);
  for (std::int64_t i = 0; i < n * 8; ++i) x.data<float>()[i] = static_cast<float>(rng() % 100) / 100.0f;
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % 3);
  return {x, y};
}

TEST(SequentialMemory, PlanPartsAddUpAndPlanningAllocatesNothing) {
  auto m = small_mlp();
  m->compile(adam());
  const MemoryStats before = m->memory_stats();
  for (std::int64_t b : {1, 32, 4096}) {
    MemoryPlan p = m->plan_memory(b);
    EXPECT_EQ(p.weights_bytes + p.gradients_bytes + p.optimizer_bytes + p.activations_bytes + p.workspace_bytes,
              p.peak_bytes)
        << b;
    EXPECT_EQ(p.weights_bytes, 512 + 64 + 192 + 64);   // (8x16, 16, 16x3, 3) f32, 64-byte rounded
    EXPECT_EQ(p.optimizer_bytes, 2 * p.weights_bytes);         // Adam's m and v
    EXPECT_GT(p.gradients_bytes, 0);
    EXPECT_GT(p.activations_bytes, 0);
  }
  EXPECT_GT(m->plan_memory(4096).activations_bytes, 100 * m->plan_memory(32).activations_bytes / 2);
  EXPECT_EQ(m->memory_stats().in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(m->memory_stats().allocations, before.allocations);
  EXPECT_THROW(m->plan_memory(0), InvalidArgument);
}

TEST(SequentialMemory, MeasuredPeakIsThePlannedPeak) {
  auto m = small_mlp();
  m->compile(adam());
  const std::int64_t planned = m->plan_memory(16).peak_bytes;
  auto [x, y] = data(64);
  FitOptions fo;
  fo.batch_size = 16;
  m->fit(x, y, fo);
  EXPECT_EQ(m->memory_stats().peak_bytes, planned);
  EXPECT_EQ(m->planned_peak_bytes(), planned);
}

TEST(SequentialMemory, HardLimitFailsWithContextAndAPlanThatFitsRuns) {
  auto m = small_mlp();
  MemoryPolicy policy;
  policy.limit_bytes = 64 * 1024;
  m->set_memory_policy(policy);
  EXPECT_EQ(m->memory_policy(), policy);
  m->compile(adam());
  ASSERT_GT(m->plan_memory(2048).peak_bytes, policy.limit_bytes);
  auto [x, y] = data(2048);
  FitOptions fo;
  fo.batch_size = 2048;
  try {
    m->fit(x, y, fo);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("limit 64.00 KiB"), std::string::npos) << what;
    EXPECT_NE(what.find("training arena of model 'mlp' at batch size 2048"), std::string::npos) << what;
    const std::int64_t fits = m->largest_batch_size_within(policy.limit_bytes, 2047);
    ASSERT_GT(fits, 1);
    EXPECT_LE(m->plan_memory(fits).peak_bytes, policy.limit_bytes);
    EXPECT_GT(m->plan_memory(fits + 1).peak_bytes, policy.limit_bytes);
    EXPECT_EQ(e.hint(), "batch size " + std::to_string(fits) +
                            " is the largest that fits the memory limit of 64.00 KiB; use it or raise the limit");
    // The allocator's figures survive the context Sequential adds to the message.
    const OutOfMemoryDetails* d = e.details();
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->device, m->device());
    EXPECT_EQ(d->limit_bytes, policy.limit_bytes);
    EXPECT_GT(d->request_bytes, d->limit_bytes - d->stats.in_use_bytes);
    EXPECT_EQ(d->stats.in_use_bytes, m->memory_stats().in_use_bytes);
    EXPECT_EQ(d->stats.ooms, 1);
  }
  EXPECT_EQ(m->memory_stats().ooms, 1);
  fo.batch_size = 16;  // the same model recovers at a batch that fits
  EXPECT_NO_THROW(m->fit(x.slice_rows(0, 64), y.slice_rows(0, 64), fo));
  EXPECT_LE(m->memory_stats().reserved_bytes, policy.limit_bytes);
}

TEST(SequentialMemory, PolicyComesFromTheEnvironmentAndMustPrecedeCompile) {
  ::setenv("NNFIT_MEMORY_LIMIT", "1MiB", 1);
  auto m = small_mlp();
  ::unsetenv("NNFIT_MEMORY_LIMIT");
  EXPECT_EQ(m->memory_policy().limit_bytes, 1 << 20);
  MemoryPolicy contradictory;
  contradictory.limit_bytes = 1024;
  contradictory.preallocate_fraction = 1.0;  // all of RAM, above a 1 KiB limit
  EXPECT_THROW(m->set_memory_policy(contradictory), InvalidArgument);
  EXPECT_EQ(m->memory_policy(), MemoryPolicy{});  // left usable, with the default
  m->compile(adam());
  EXPECT_THROW(m->set_memory_policy(MemoryPolicy{}), InvalidArgument);
}

// The "memory is not released between models" complaint: building, training and
// destroying 100 models leaves what nnfit holds where it started.
std::int64_t process_heap_bytes() {
  const struct mallinfo2 mi = ::mallinfo2();
  return static_cast<std::int64_t>(mi.uordblks + mi.hblkhd);  // small blocks + mmapped blocks
}

TEST(SequentialMemory, HundredModelsInALoopGiveEverythingBack) {
  auto [x, y] = data(32);
  FitOptions fo;
  fo.batch_size = 8;
  std::int64_t first_peak = -1, heap_after_first = 0;
  for (int i = 0; i < 100; ++i) {
    if (i == 1) heap_after_first = process_heap_bytes();  // after one-time caches (oneDNN, registry)
    auto m = small_mlp("mlp_" + std::to_string(i));
    m->compile(adam());
    m->fit(x, y, fo);
    const MemoryStats s = m->memory_stats();
    if (first_peak < 0) first_peak = s.peak_bytes;
    EXPECT_EQ(s.peak_bytes, first_peak) << "model " << i;  // nothing carried over
    m.reset();  // the model's allocator hands every region back to the host
  }
  // The whole process's heap (nnfit's regions, graphs, kernels) is back where it was
  // after the first model; a leak of one arena per model would show up as 99 of them.
  EXPECT_LT(process_heap_bytes() - heap_after_first, 64 * 1024);
  auto m = small_mlp();
  EXPECT_EQ(m->memory_stats().reserved_bytes, 0);
  EXPECT_EQ(m->memory_stats().in_use_bytes, 0);
}

}  // namespace
}  // namespace nnfit
