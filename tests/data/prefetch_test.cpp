// prefetch's handoff (Notes [Prefetch handoff] and [Prefetch inline] in
// src/data/prefetch_dataset.cpp): under a tuner, a consumer that does nothing between
// elements gets them made on its own thread, in order, errors included; a consumer that
// works keeps the producer thread, and one that starts working gets it back; a static
// prefetch(N) always keeps its thread; a bulk wait still delivers every element.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include <sched.h>
#include <stdlib.h>

#include "dataset_test_util.h"
#include "nnfit/core/error.h"
#include "nnfit/data/autotune.h"

namespace nnfit::data {
namespace {

using testing::value;

// Which thread made each element, by value.
struct Makers {
  std::mutex mu;
  std::vector<std::thread::id> by_value;
  explicit Makers(std::size_t n) : by_value(n) {}
  void made(std::int64_t v) {
    std::lock_guard<std::mutex> lock(mu);
    by_value[static_cast<std::size_t>(v)] = std::this_thread::get_id();
  }
  int on(std::thread::id id, std::size_t from, std::size_t to) {
    std::lock_guard<std::mutex> lock(mu);
    int n = 0;
    for (std::size_t i = from; i < to; ++i) n += by_value[i] == id;
    return n;
  }
};

// range(0, n) whose elements each take `us` to make, recording the thread; element
// `fail_at` throws a DataError instead.
Dataset slow_source(std::int64_t n, int us, Makers& makers, std::int64_t fail_at = -1) {
  return Dataset::range(0, n).map([us, &makers, fail_at](Element e) {
    const std::int64_t v = value(e[0]);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
    while (std::chrono::steady_clock::now() < until) {
    }
    makers.made(v);
    if (v == fail_at) throw DataError("element.bin", v, "bad element");
    return e;
  });
}

void busy_for(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(Prefetch, AConsumerThatDoesNothingGetsItsElementsMadeInline) {
  Makers makers(300);
  Autotuner tuner;
  auto it = tuner.make_iterator(slow_source(300, 200, makers).prefetch(kAutotune));
  std::int64_t expect = 0;
  while (auto e = it->next()) ASSERT_EQ(value((*e)[0]), expect++);
  EXPECT_EQ(expect, 300);
  const auto me = std::this_thread::get_id();
  EXPECT_GE(makers.on(me, 100, 300), 190) << "elements after the first few are made on the consumer's thread";
  EXPECT_NE(tuner.summary().find("(inline)"), std::string::npos) << tuner.summary();
}

TEST(Prefetch, AConsumerThatWorksKeepsTheProducerThread) {
  Makers makers(150);
  Autotuner tuner;
  auto it = tuner.make_iterator(slow_source(150, 200, makers).prefetch(kAutotune));
  std::int64_t expect = 0;
  while (auto e = it->next()) {
    ASSERT_EQ(value((*e)[0]), expect++);
    busy_for(600);
  }
  EXPECT_EQ(makers.on(std::this_thread::get_id(), 0, 150), 0);
  EXPECT_EQ(tuner.summary().find("(inline)"), std::string::npos) << tuner.summary();
}

TEST(Prefetch, AConsumerThatStartsWorkingGetsTheProducerThreadBack) {
  Makers makers(400);
  Autotuner tuner;
  auto it = tuner.make_iterator(slow_source(400, 200, makers).prefetch(kAutotune));
  std::int64_t expect = 0;
  while (auto e = it->next()) {
    ASSERT_EQ(value((*e)[0]), expect++);
    if (expect > 200) busy_for(1000);
  }
  EXPECT_EQ(expect, 400);
  const auto me = std::this_thread::get_id();
  EXPECT_GE(makers.on(me, 50, 200), 100) << "inline while the consumer did nothing";
  EXPECT_EQ(makers.on(me, 300, 400), 0) << "back on the producer thread once it works";
  EXPECT_EQ(tuner.summary().find("(inline)"), std::string::npos) << tuner.summary();
}

TEST(Prefetch, AnErrorMadeInlineReachesTheConsumerInOrder) {
  Makers makers(300);
  Autotuner tuner;
  auto it = tuner.make_iterator(slow_source(300, 200, makers, /*fail_at=*/250).prefetch(kAutotune));
  std::int64_t expect = 0;
  try {
    while (auto e = it->next()) ASSERT_EQ(value((*e)[0]), expect++);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("element.bin"), std::string::npos) << e.what();
  }
  EXPECT_EQ(expect, 250);
  EXPECT_EQ(makers.by_value[250], std::this_thread::get_id()) << "the failing element was made inline";
}

TEST(Prefetch, AStaticBufferAlwaysKeepsItsThread) {
  Makers makers(200);
  Autotuner tuner;
  auto it = tuner.make_iterator(slow_source(200, 200, makers).prefetch(4));
  std::int64_t n = 0;
  while (auto e = it->next()) ASSERT_EQ(value((*e)[0]), n++);
  EXPECT_EQ(n, 200);
  EXPECT_EQ(makers.on(std::this_thread::get_id(), 0, 200), 0);
}

TEST(Prefetch, BulkWaitsDeliverEveryElementInOrderWithoutATuner) {
  // prefetch(AUTOTUNE) without a tuner doubles its buffer and, for a consumer this much
  // faster than the producer, waits for several elements at a time.
  Makers makers(500);
  auto it = slow_source(500, 50, makers).prefetch(kAutotune).make_iterator();
  std::int64_t n = 0;
  while (auto e = it->next()) ASSERT_EQ(value((*e)[0]), n++);
  EXPECT_EQ(n, 500);
  EXPECT_EQ(makers.on(std::this_thread::get_id(), 0, 500), 0);
}

// Note [Pipeline thread policy]: prefetch producers and map workers run under
// SCHED_BATCH unless NNFIT_PIPELINE_SCHED=normal; the consumer's thread is untouched.
int policy_of_threads_making(const Dataset& ds, std::vector<int>* policies) {
  std::mutex mu;
  const Dataset probe = ds.map(
      [&](Element e) {
        std::lock_guard<std::mutex> lock(mu);
        policies->push_back(sched_getscheduler(0));
        return e;
      },
      MapOptions{2, true});
  int n = 0;
  for (auto it = probe.prefetch(2).make_iterator(); it->next();) ++n;
  return n;
}

TEST(Prefetch, PipelineThreadsRunUnderSchedBatchUnlessAskedNotTo) {
  const int before = sched_getscheduler(0);
  std::vector<int> policies;
  ASSERT_EQ(policy_of_threads_making(Dataset::range(0, 20), &policies), 20);
  for (int p : policies) EXPECT_EQ(p, SCHED_BATCH);
  EXPECT_EQ(sched_getscheduler(0), before) << "the consumer's own thread keeps its policy";

  ::setenv("NNFIT_PIPELINE_SCHED", "normal", 1);
  policies.clear();
  ASSERT_EQ(policy_of_threads_making(Dataset::range(0, 20), &policies), 20);
  ::unsetenv("NNFIT_PIPELINE_SCHED");
  for (int p : policies) EXPECT_EQ(p, SCHED_OTHER);
}

}  // namespace
}  // namespace nnfit::data
