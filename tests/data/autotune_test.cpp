// The Autotuner: it grows the parallelism of a map that starves its consumer, within the
// CPU budget (CPU time, not threads); grows prefetch buffers within the RAM budget; gives threads back when the
// consumer is the slow side; keeps a deterministic map's order while it retunes; and
// carries its choices into the next epoch's iterator.
#include "nnfit/data/autotune.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

Element scalar(std::int64_t v) {
  Tensor t = Tensor::zeros(Shape{}, DType::i64);
  *t.data<std::int64_t>() = v;
  return {t};
}

std::int64_t value_of(const Element& e) { return *e[0].data<std::int64_t>(); }

Dataset slow_map(Dataset in, int ms, const std::string& name = "map(slow)") {
  MapOptions mo;
  mo.num_parallel_calls = kAutotune;
  mo.name = name;
  return in.map(
      [ms](Element e) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        return e;
      },
      mo);
}

AutotuneOptions fast_ticks(int cpu_budget) {
  AutotuneOptions o;
  o.cpu_budget = cpu_budget;
  o.interval_seconds = 0.01;
  return o;
}

TEST(Autotune, GrowsAStarvingMapWithinTheCpuBudgetAndKeepsOrder) {
  Autotuner tuner(fast_ticks(3));
  const Dataset ds = slow_map(Dataset::range(0, 300), 2);
  auto it = tuner.make_iterator(ds);
  std::int64_t expect = 0;
  while (auto e = it->next()) EXPECT_EQ(value_of(*e), expect++);  // deterministic order throughout
  EXPECT_EQ(expect, 300);
  const std::string summary = tuner.summary();
  EXPECT_NE(summary.find("map(slow) num_parallel_calls=3"), std::string::npos) << summary;
  const auto decisions = tuner.decisions();
  ASSERT_FALSE(decisions.empty());
  EXPECT_NE(decisions.front().find("map(slow) num_parallel_calls 1 -> 2"), std::string::npos) << decisions.front();
  for (const std::string& d : decisions) EXPECT_EQ(d.find("-> 4"), std::string::npos) << "over budget: " << d;
}

// A map that keeps its thread busy for `ms` per element (CPU time, unlike slow_map).
Dataset burning_map(Dataset in, int ms, const std::string& name) {
  MapOptions mo;
  mo.num_parallel_calls = kAutotune;
  mo.name = name;
  return in.map(
      [ms](Element e) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        volatile std::uint64_t x = 0;
        while (std::chrono::steady_clock::now() < end) x = x + 1;
        return e;
      },
      mo);
}

TEST(Autotune, TheBudgetCountsCpuTimeNotThreads) {
  {
    // Maps that wait (on I/O, say) use no CPU: each may grow to the budget.
    Autotuner tuner(fast_ticks(2));
    auto it = tuner.make_iterator(slow_map(slow_map(Dataset::range(0, 200), 2, "map(a)"), 2, "map(b)"));
    while (it->next()) {
    }
    const std::string s = tuner.summary();
    EXPECT_NE(s.find("map(a) num_parallel_calls=2"), std::string::npos) << s;
    EXPECT_NE(s.find("map(b) num_parallel_calls=2"), std::string::npos) << s;
  }
  {
    // Two maps burning a core each already use more than a one-core budget: no growth.
    Autotuner tuner(fast_ticks(1));
    auto it = tuner.make_iterator(burning_map(burning_map(Dataset::range(0, 150), 1, "map(a)"), 1, "map(b)"));
    while (it->next()) {
    }
    const std::string s = tuner.summary();
    EXPECT_NE(s.find("map(a) num_parallel_calls=1"), std::string::npos) << s;
    EXPECT_NE(s.find("map(b) num_parallel_calls=1"), std::string::npos) << s;
  }
}

TEST(Autotune, ChoicesCarryOverToTheNextEpoch) {
  Autotuner tuner(fast_ticks(2));
  const Dataset ds = slow_map(Dataset::range(0, 150), 2);
  for (auto it = tuner.make_iterator(ds); it->next();) {
  }
  const std::string after_first = tuner.summary();
  ASSERT_NE(after_first.find("num_parallel_calls=2"), std::string::npos) << after_first;
  const std::size_t decisions = tuner.decisions().size();
  for (auto it = tuner.make_iterator(ds); it->next();) {
  }
  EXPECT_EQ(tuner.summary(), after_first);
  EXPECT_EQ(tuner.decisions().size(), decisions) << "the second epoch started tuned";
}

TEST(Autotune, GrowsPrefetchWithinTheRamBudget) {
  // 1 KiB elements produced slowly and in bursts; a consumer that finds the buffer empty.
  AutotuneOptions o = fast_ticks(1);
  o.ram_budget_bytes = 4 * 1024;
  Autotuner tuner(o);
  const Dataset ds = Dataset::range(0, 400)
                         .map([](Element e) {
                           if (value_of(e) % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(15));
                           return Element{Tensor::zeros(Shape{256}, DType::f32)};
                         })
                         .prefetch(kAutotune);
  // The consumer works a little per element, as training does: a consumer that does
  // nothing gets an inline prefetch instead (Note [Prefetch inline]).
  for (auto it = tuner.make_iterator(ds); it->next();) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const std::string s = tuner.summary();
  ASSERT_NE(s.find("prefetch buffer_size="), std::string::npos) << s;
  const int buffer = std::stoi(s.substr(s.find("buffer_size=") + 12));
  EXPECT_GE(buffer, 2) << s;
  EXPECT_LE(buffer * 1024, o.ram_budget_bytes) << s;
}

TEST(Autotune, LeavesABufferItsProducerNeverFillsAlone) {
  // A producer slower than its consumer at every element: the consumer waits all the time,
  // but the buffer is never full, so a deeper one could not help (Note [Autotune policy]).
  Autotuner tuner(fast_ticks(1));
  const Dataset ds = Dataset::range(0, 25)
                         .map([](Element e) {
                           std::this_thread::sleep_for(std::chrono::milliseconds(10));
                           return e;
                         })
                         .prefetch(kAutotune);
  for (auto it = tuner.make_iterator(ds); it->next();) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const std::string s = tuner.summary();
  EXPECT_NE(s.find("prefetch buffer_size=1"), std::string::npos) << s;
  EXPECT_TRUE(tuner.decisions().empty()) << tuner.decisions().front();
}

TEST(Autotune, GivesThreadsBackWhenTheConsumerIsTheSlowSide) {
  Autotuner tuner(fast_ticks(4));
  const Dataset ds = slow_map(Dataset::range(0, 100000), 0);
  // Start the knob high, as an earlier epoch might have left it.
  auto it = tuner.make_iterator(ds);
  auto knob = tuner.knob(ds.node().get(), AutotuneKnob::Kind::parallelism, "map(slow)", 1, 4);
  knob->value = 4;
  const auto t0 = std::chrono::steady_clock::now();
  // Until a thread is given back (10 quiet windows), or 4 s on a very busy machine.
  while (knob->value.load() == 4 && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(4000)) {
    ASSERT_TRUE(it->next());
    std::this_thread::sleep_for(std::chrono::milliseconds(8));  // the training step
  }
  EXPECT_LT(knob->value.load(), 4) << tuner.summary();
  bool gave_back = false;
  for (const std::string& d : tuner.decisions()) gave_back |= d.find("4 -> 3") != std::string::npos;
  EXPECT_TRUE(gave_back);
}

TEST(Autotune, WithoutATunerAutotuneFallsBackToStaticDefaults) {
  const Dataset ds = slow_map(Dataset::range(0, 20), 0).prefetch(kAutotune);
  auto it = ds.make_iterator();
  std::int64_t n = 0;
  while (auto e = it->next()) EXPECT_EQ(value_of(*e), n++);
  EXPECT_EQ(n, 20);
  EXPECT_EQ(Autotuner::current(), nullptr);
}

TEST(Autotune, BudgetsDefaultFromTheMachine) {
  AutotuneOptions o;
  o.compute_threads = 1000;
  Autotuner tuner(o);
  EXPECT_EQ(tuner.cpu_budget(), 1) << "at least one pipeline thread";
  EXPECT_GT(tuner.ram_budget_bytes(), 0);
}

}  // namespace
}  // namespace nnfit::data

namespace nnfit::data {
namespace {

int knob_value(const std::string& summary, const std::string& label) {
  const std::size_t at = summary.find(label + " num_parallel_calls=");
  return at == std::string::npos ? 0 : std::stoi(summary.substr(at + label.size() + 20));
}

TEST(Autotune, StagesBuiltInsideNextJoinTheTuner) {
  // repeat builds each pass's iterators inside next(), concatenate its second input's and
  // interleave its inputs': all of them get knobs from the tuner they run under.
  Autotuner tuner(fast_ticks(3));
  const Dataset first = slow_map(Dataset::range(0, 60), 2, "map(repeated)").repeat(3);
  const Dataset second = slow_map(Dataset::range(0, 60), 2, "map(second)");
  const Dataset files = Dataset::range(0, 2).interleave(
      [](const Element&) { return slow_map(Dataset::range(0, 60), 2, "map(file)"); }, first.element_spec(), 2, 1);
  auto it = tuner.make_iterator(first.concatenate(second).concatenate(files));
  std::int64_t n = 0;
  while (it->next()) ++n;
  EXPECT_EQ(n, 60 * 3 + 60 + 2 * 60);
  const std::string s = tuner.summary();
  EXPECT_GE(knob_value(s, "map(repeated)"), 2) << s;
  EXPECT_GE(knob_value(s, "map(second)"), 2) << s;
  EXPECT_GE(knob_value(s, "map(file)"), 2) << s;
}

TEST(Autotune, AnIteratorOutlivingItsTunerKeepsWorking) {
  std::unique_ptr<Iterator> it;
  {
    Autotuner tuner(fast_ticks(2));
    it = tuner.make_iterator(slow_map(Dataset::range(0, 5), 0).repeat(4));
    ASSERT_TRUE(it->next());
  }
  std::int64_t n = 1;
  while (it->next()) ++n;  // later passes register knobs with the registry the tuner left behind
  EXPECT_EQ(n, 20);
}

}  // namespace
}  // namespace nnfit::data
