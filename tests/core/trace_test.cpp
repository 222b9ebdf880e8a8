// Trace ranges: nothing recorded when off, nesting per thread, several threads with their
// names, capacity overflow counted (not crashing), ranges open across stop() and collect(),
// sessions that do not see each other's events, and bad use of start().
#include "nnfit/core/trace.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit {
namespace {

// Every range of one thread lies inside or after the ranges before it (a stack discipline).
void expect_nested(const std::vector<trace::Event>& events) {
  std::map<std::int64_t, std::vector<const trace::Event*>> stacks;
  for (const trace::Event& e : events) {
    ASSERT_LE(e.begin_ns, e.end_ns) << e.name;
    auto& stack = stacks[e.thread_id];
    while (!stack.empty() && stack.back()->end_ns <= e.begin_ns) stack.pop_back();
    if (!stack.empty()) {
      EXPECT_GE(e.begin_ns, stack.back()->begin_ns) << e.name << " in " << stack.back()->name;
      EXPECT_LE(e.end_ns, stack.back()->end_ns) << e.name << " in " << stack.back()->name;
    }
    stack.push_back(&e);
  }
}

TEST(Trace, OffRecordsNothing) {
  ASSERT_FALSE(trace::running());
  for (int i = 0; i < 1000; ++i) TraceRange r("before_start");
  trace::start();
  { TraceRange r("during", "test", 7); }
  trace::stop();
  for (int i = 0; i < 1000; ++i) TraceRange r("after_stop");
  EXPECT_FALSE(trace::enabled());
  trace::Collected c = trace::collect();
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_STREQ(c.events[0].name, "during");
  EXPECT_STREQ(c.events[0].category, "test");
  EXPECT_EQ(c.events[0].arg, 7);
  EXPECT_EQ(c.dropped_events, 0);
  EXPECT_LE(c.session_begin_ns, c.events[0].begin_ns);
  EXPECT_LE(c.events[0].end_ns, c.session_end_ns);
}

TEST(Trace, NestingOnOneThreadKeepsBeginOrder) {
  trace::start();
  {
    TraceRange a("a");
    { TraceRange b("b"); }
    {
      TraceRange c("c");
      TraceRange d("d", nullptr, 3);
    }
  }
  trace::stop();
  trace::Collected c = trace::collect();
  ASSERT_EQ(c.events.size(), 4u);
  const char* order[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) EXPECT_STREQ(c.events[i].name, order[i]);
  EXPECT_STREQ(c.events[3].category, "");
  const auto& e = c.events;
  EXPECT_LE(e[0].begin_ns, e[1].begin_ns);
  EXPECT_LE(e[1].end_ns, e[2].begin_ns);   // b closed before c opened
  EXPECT_LE(e[3].end_ns, e[2].end_ns);     // d inside c
  EXPECT_LE(e[2].end_ns, e[0].end_ns);     // c inside a
  for (const auto& ev : e) EXPECT_EQ(ev.thread_id, e[0].thread_id);
  expect_nested(c.events);
}

TEST(Trace, ThreadsRecordApartWithTheirNames) {
  constexpr int kThreads = 4, kOuter = 500;
  trace::start();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      trace::set_thread_name("worker " + std::to_string(t));
      for (int i = 0; i < kOuter; ++i) {
        TraceRange outer("outer", "test", t);
        TraceRange inner("inner", "test", i);
      }
    });
  }
  { TraceRange main_range("main"); }
  for (auto& th : threads) th.join();  // events outlive their threads
  trace::stop();
  trace::Collected c = trace::collect();
  EXPECT_EQ(c.dropped_events, 0);
  EXPECT_EQ(c.open_events, 0);
  ASSERT_EQ(c.events.size(), static_cast<std::size_t>(kThreads * kOuter * 2 + 1));
  std::map<std::int64_t, std::string> names;
  std::map<std::int64_t, int> counts;
  for (const auto& e : c.events) {
    auto [it, inserted] = names.emplace(e.thread_id, e.thread_name);
    EXPECT_EQ(it->second, e.thread_name);  // one name per thread id
    ++counts[e.thread_id];
    if (std::string(e.name) == "outer") EXPECT_EQ(e.thread_name, "worker " + std::to_string(e.arg));
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kThreads + 1));
  for (const auto& [id, n] : counts) {
    if (names[id].rfind("worker ", 0) == 0) EXPECT_EQ(n, 2 * kOuter) << names[id];
  }
  // Grouped by thread, in ascending id.
  for (std::size_t i = 1; i < c.events.size(); ++i) EXPECT_LE(c.events[i - 1].thread_id, c.events[i].thread_id);
  expect_nested(c.events);
}

TEST(Trace, CapacityOverflowIsCountedNotFatal) {
  trace::start({.capacity_events = 16, .chunk_events = 4});
  for (int i = 0; i < 100; ++i) TraceRange r("r", nullptr, i);
  std::thread other([] {
    for (int i = 0; i < 10; ++i) TraceRange r("other");
  });
  other.join();
  trace::stop();
  trace::Collected c = trace::collect();
  EXPECT_EQ(c.events.size(), 16u);
  EXPECT_EQ(c.dropped_events, 100 + 10 - 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(c.events[static_cast<std::size_t>(i)].arg, i);  // the first ones are kept
}

TEST(Trace, RangesOpenAcrossStopAndCollect) {
  trace::start();
  auto* spans_stop = new TraceRange("spans_stop");
  auto* open = new TraceRange("open");
  trace::Collected during = trace::collect();  // while recording: the open ones are left out
  EXPECT_EQ(during.events.size(), 0u);
  EXPECT_EQ(during.open_events, 2);
  trace::stop();
  delete open;
  delete spans_stop;
  trace::Collected after = trace::collect();
  ASSERT_EQ(after.events.size(), 2u);  // their ends still land once they close
  EXPECT_STREQ(after.events[0].name, "spans_stop");
  EXPECT_EQ(after.open_events, 0);
}

TEST(Trace, CollectWhileThreadsRecord) {
  trace::start({.capacity_events = 1 << 16, .chunk_events = 64});
  std::atomic<bool> go{true};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&go] {
      for (int i = 0; go.load() && i < 20000; ++i) {
        TraceRange outer("outer");
        TraceRange inner("inner");
      }
    });
  }
  std::size_t last = 0;
  for (int k = 0; k < 20; ++k) {
    trace::Collected c = trace::collect();
    EXPECT_GE(c.events.size(), last);  // a snapshot only grows while recording
    last = c.events.size();
    expect_nested(c.events);
  }
  go = false;
  for (auto& th : threads) th.join();
  trace::stop();
  EXPECT_EQ(trace::collect().open_events, 0);
}

TEST(Trace, ANewSessionForgetsTheLastOne) {
  trace::start({.capacity_events = 8, .chunk_events = 2});
  TraceRange* stale = new TraceRange("stale");  // open across stop() and the next start()
  trace::stop();
  trace::start({.capacity_events = 8, .chunk_events = 2});  // same geometry: the pool is reused
  { TraceRange r("second"); }                                // and takes the stale range's slot
  const trace::Collected before = trace::collect();
  delete stale;                                              // must not write into that slot
  trace::stop();
  trace::Collected c = trace::collect();
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_STREQ(c.events[0].name, "second");
  ASSERT_EQ(before.events.size(), 1u);
  EXPECT_EQ(c.events[0].end_ns, before.events[0].end_ns);
}

TEST(Trace, BadStartThrows) {
  trace::start();
  EXPECT_THROW(trace::start(), InvalidArgument);
  trace::stop();
  trace::stop();  // harmless
  EXPECT_THROW(trace::start({.capacity_events = 0}), InvalidArgument);
  EXPECT_THROW(trace::start({.capacity_events = 10, .chunk_events = -1}), InvalidArgument);
  EXPECT_FALSE(trace::running());
}

// Whether this build is instrumented: g++ says so with __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__, clang (the fuzz preset's sanitizer build) only through __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NNFIT_TEST_INSTRUMENTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NNFIT_TEST_INSTRUMENTED 1
#endif
#endif

TEST(Trace, OffCostsAboutALoad) {
  // Not a benchmark: a guard against the off path growing a clock read or a lock. A
  // steady_clock read alone is ~20 ns; 10 M ranges off take ~10 ms in release builds.
#if !defined(NDEBUG) || defined(NNFIT_TEST_INSTRUMENTED)
  GTEST_SKIP() << "timing guard only meaningful in optimized, uninstrumented builds";
#endif
  ASSERT_FALSE(trace::enabled());
  const std::int64_t t0 = trace::now_ns();
  for (int i = 0; i < 10'000'000; ++i) TraceRange r("off");
  const double ns_per_range = static_cast<double>(trace::now_ns() - t0) / 1e7;
  EXPECT_LT(ns_per_range, 15.0);
}

}  // namespace
}  // namespace nnfit
