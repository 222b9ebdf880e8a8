// PinnedDoubleBuffer against a simulated device (Note [Double buffer events]): two in-order
// queues whose work runs when a schedule says so, copies that read their source when they
// run (as cudaMemcpyAsync does), and CUDA's event semantics. Every schedule (each queue
// eager or lazy, and random ones) must hand step n exactly batch n; and removing any one of
// the buffer's waits must make some schedule hand a step the wrong batch, which shows the
// checks can fail.
#include "nnfit/backend/pinned_double_buffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <random>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit {
namespace {

enum class Run { eager, lazy, random };

// Two queues of deferred operations over host memory standing for device memory.
class SimulatedDevice final : public DeviceQueues {
 public:
  SimulatedDevice(Run copy, Run compute, unsigned seed) : policy_{compute, copy}, rng_(seed) {}
  int num_events() const override { return PinnedDoubleBuffer::kEvents; }
  void copy_to_device(Queue q, void* dst, const void* src, std::size_t bytes) override {
    enqueue(q, {[=] { std::memcpy(dst, src, bytes); }});
  }
  void copy_on_device(Queue q, void* dst, const void* src, std::size_t bytes) override { copy_to_device(q, dst, src, bytes); }
  void copy_to_host(Queue q, void* dst, const void* src, std::size_t bytes) override { copy_to_device(q, dst, src, bytes); }
  void record(Queue q, int e) override {
    const std::int64_t gen = ++issued_[e];
    enqueue(q, {[this, e, gen] { reached_[e] = gen; }});
  }
  void wait(Queue q, int e) override {
    const std::int64_t gen = issued_[e];  // the most recent record at the time of the call
    Op op{nullptr};
    op.blocked = [this, e, gen] { return reached_[e] < gen; };
    enqueue(q, op);
  }
  void host_wait(int e) override {
    while (reached_[e] < issued_[e]) {
      if (!step_any()) {
        ADD_FAILURE() << "deadlock: the host waits for event " << e << " that no queue can reach";
        return;
      }
    }
  }
  void* native(Queue) override { return nullptr; }
  // A kernel on `q`: runs `f` when the queue reaches it.
  void kernel(Queue q, std::function<void()> f) { enqueue(q, {std::move(f)}); }
  void drain() {
    while (step_any()) {
    }
    EXPECT_TRUE(q_[0].empty() && q_[1].empty()) << "work left blocked at the end";
  }

 private:
  struct Op {
    std::function<void()> run;
    std::function<bool()> blocked;
  };
  void enqueue(Queue q, Op op) {
    q_[static_cast<int>(q)].push_back(std::move(op));
    advance();
  }
  // Runs the front of queue i if it is not blocked.
  bool step(int i) {
    if (q_[i].empty() || (q_[i].front().blocked && q_[i].front().blocked())) return false;
    Op op = std::move(q_[i].front());
    q_[i].pop_front();
    if (op.run) op.run();
    return true;
  }
  bool step_any() {
    const int first = static_cast<int>(rng_() % 2);
    return step(first) || step(1 - first);
  }
  // What a queue does on its own between host calls, by its policy.
  void advance() {
    for (bool moved = true; moved;) {
      moved = false;
      for (int i = 0; i < 2; ++i) {
        const Run p = policy_[i];
        if (p == Run::eager || (p == Run::random && rng_() % 3 == 0)) moved = step(i) || moved;
      }
    }
  }
  std::deque<Op> q_[2];
  Run policy_[2];  // indexed by Queue: compute, copy
  std::int64_t issued_[PinnedDoubleBuffer::kEvents] = {}, reached_[PinnedDoubleBuffer::kEvents] = {};
  std::mt19937 rng_;
};

// Drops one kind of call, to show that the schedules catch its absence.
class Without final : public DeviceQueues {
 public:
  enum What { host_wait_on_copied, compute_wait_on_copied, copy_wait_on_consumed };
  Without(SimulatedDevice& d, What what) : d_(d), what_(what) {}
  int num_events() const override { return d_.num_events(); }
  void copy_to_device(Queue q, void* dst, const void* src, std::size_t n) override { d_.copy_to_device(q, dst, src, n); }
  void copy_on_device(Queue q, void* dst, const void* src, std::size_t n) override { d_.copy_on_device(q, dst, src, n); }
  void copy_to_host(Queue q, void* dst, const void* src, std::size_t n) override { d_.copy_to_host(q, dst, src, n); }
  void record(Queue q, int e) override { d_.record(q, e); }
  void wait(Queue q, int e) override {
    if (what_ == compute_wait_on_copied && q == Queue::compute) return;
    if (what_ == copy_wait_on_consumed && q == Queue::copy) return;
    d_.wait(q, e);
  }
  void host_wait(int e) override {
    if (what_ == host_wait_on_copied && e < 2) return;
    d_.host_wait(e);
  }
  void* native(Queue q) override { return d_.native(q); }

 private:
  SimulatedDevice& d_;
  What what_;
};

constexpr int kBatches = 24;
constexpr std::size_t kFloats = 64;

// Trains kBatches steps through the buffer; returns, per step, the batch id its kernel
// saw (-1 for a torn batch). `prefetch_first`: the loop stages batch n+1 before step n's
// kernels (the pipeline's order) instead of after.
std::vector<int> run_steps(SimulatedDevice& sim, DeviceQueues& queues, bool prefetch_first, bool wait_each_step) {
  std::vector<float> pinned[2], device[2], input(kFloats), host(kFloats);
  for (int s = 0; s < 2; ++s) pinned[s].assign(kFloats, -7), device[s].assign(kFloats, -7);
  PinnedDoubleBuffer buffer(queues, {pinned[0].data(), device[0].data()}, {pinned[1].data(), device[1].data()},
                            kFloats * sizeof(float));
  std::vector<int> seen(kBatches, -2);
  auto stage = [&](int n) {
    std::fill(host.begin(), host.end(), static_cast<float>(n));
    buffer.stage(n, host.data(), kFloats * sizeof(float));
    std::fill(host.begin(), host.end(), -9.0f);  // the pipeline reuses its buffer at once
  };
  stage(0);
  for (int n = 0; n < kBatches; ++n) {
    if (prefetch_first && n + 1 < kBatches) stage(n + 1);
    buffer.consume(n, input.data());
    sim.kernel(Queue::compute, [&seen, &input, n] {
      bool same = true;
      for (float v : input) same = same && v == input[0];
      seen[static_cast<std::size_t>(n)] = same ? static_cast<int>(input[0]) : -1;
    });
    buffer.end_step(n);
    if (!prefetch_first && n + 1 < kBatches) stage(n + 1);
    if (wait_each_step) buffer.wait_step(n);
  }
  sim.drain();
  return seen;
}

std::vector<int> expected() {
  std::vector<int> v(kBatches);
  for (int i = 0; i < kBatches; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

struct Schedule {
  Run copy, compute;
  unsigned seed;
};
std::vector<Schedule> schedules() {
  std::vector<Schedule> all;
  for (Run c : {Run::eager, Run::lazy, Run::random}) {
    for (Run k : {Run::eager, Run::lazy, Run::random}) {
      for (unsigned seed = 1; seed <= (c == Run::random || k == Run::random ? 20u : 1u); ++seed) all.push_back({c, k, seed});
    }
  }
  return all;
}

TEST(PinnedDoubleBuffer, EveryScheduleHandsStepNBatchN) {
  int runs = 0;
  for (const Schedule& s : schedules()) {
    for (bool prefetch_first : {true, false}) {
      for (bool wait_each : {true, false}) {
        SimulatedDevice sim(s.copy, s.compute, s.seed);
        EXPECT_EQ(run_steps(sim, sim, prefetch_first, wait_each), expected())
            << "copy " << static_cast<int>(s.copy) << ", compute " << static_cast<int>(s.compute) << ", seed " << s.seed;
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 100);
}

// Each of the three waits is needed: without it some schedule hands a step the wrong batch.
TEST(PinnedDoubleBuffer, EachWaitIsNeeded) {
  for (Without::What what : {Without::host_wait_on_copied, Without::compute_wait_on_copied, Without::copy_wait_on_consumed}) {
    bool caught = false;
    for (const Schedule& s : schedules()) {
      for (bool prefetch_first : {true, false}) {
        SimulatedDevice sim(s.copy, s.compute, s.seed);
        Without broken(sim, what);
        caught = caught || run_steps(sim, broken, prefetch_first, /*wait_each_step=*/false) != expected();
      }
    }
    EXPECT_TRUE(caught) << "dropping wait kind " << static_cast<int>(what) << " went unnoticed";
  }
}

TEST(PinnedDoubleBuffer, OutOfOrderUseIsAnError) {
  SimulatedDevice sim(Run::eager, Run::eager, 1);
  std::vector<float> p0(4), d0(4), p1(4), d1(4), in(4), src(4);
  PinnedDoubleBuffer buffer(sim, {p0.data(), d0.data()}, {p1.data(), d1.data()}, 4 * sizeof(float));
  EXPECT_THROW(buffer.consume(0, in.data()), InvalidArgument);  // nothing staged
  EXPECT_THROW(buffer.stage(1, src.data(), 16), InvalidArgument);  // batch 0 is next
  EXPECT_THROW(buffer.stage(0, src.data(), 17), InvalidArgument);  // past the capacity
  buffer.stage(0, src.data(), 16);
  buffer.stage(1, src.data(), 16);
  try {
    buffer.stage(2, src.data(), 16);
    FAIL() << "a third batch was staged before the first was consumed";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("batch 2 staged before batch 0 was consumed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(buffer.end_step(0), InvalidArgument);  // not consumed
  buffer.consume(0, in.data());
  buffer.end_step(0);
  EXPECT_THROW(buffer.wait_step(1), InvalidArgument);
  buffer.wait_step(0);
  EXPECT_EQ(buffer.staged(), 2);
  EXPECT_EQ(buffer.consumed(), 1);
}

// The model's use (Note [Input double buffer]): batches of several parts from the caller's
// own pinned sets of each parity, each part into its own input; events after the model's
// own; a batch staged ahead and then discarded is staged again as the same batch number.
constexpr int kFirst = 2;  // the model's first event for its buffer
TEST(PinnedDoubleBuffer, PartsFromTheCallersSetsAndADiscard) {
  for (const Schedule& sch : schedules()) {
    SimulatedDevice sim(sch.copy, sch.compute, sch.seed);
    // The events below kFirst belong to someone else: record them around the buffer's use.
    std::vector<float> device[2], host[2][2], input[2];
    for (int s = 0; s < 2; ++s) {
      device[s].assign(2 * kFloats, -7);
      for (int p = 0; p < 2; ++p) host[s][p].assign(kFloats, -7);
    }
    input[0].assign(kFloats, -7), input[1].assign(kFloats, -7);
    class Offset final : public DeviceQueues {  // the first kFirst events are not the buffer's
     public:
      explicit Offset(SimulatedDevice& d) : d_(d) {}
      int num_events() const override { return kFirst + PinnedDoubleBuffer::kEvents; }
      void copy_to_device(Queue q, void* dst, const void* src, std::size_t n) override { d_.copy_to_device(q, dst, src, n); }
      void copy_on_device(Queue q, void* dst, const void* src, std::size_t n) override { d_.copy_on_device(q, dst, src, n); }
      void copy_to_host(Queue q, void* dst, const void* src, std::size_t n) override { d_.copy_to_host(q, dst, src, n); }
      void record(Queue q, int e) override { d_.record(q, check(e)); }
      void wait(Queue q, int e) override { d_.wait(q, check(e)); }
      void host_wait(int e) override { d_.host_wait(check(e)); }
      void* native(Queue q) override { return d_.native(q); }

     private:
      static int check(int e) {
        EXPECT_GE(e, int{kFirst}) << "the buffer used an event below its first";
        return e - kFirst;
      }
      SimulatedDevice& d_;
    } queues(sim);
    PinnedDoubleBuffer buffer(queues, {nullptr, device[0].data()}, {nullptr, device[1].data()},
                              2 * kFloats * sizeof(float), kFirst);
    const std::size_t bytes = kFloats * sizeof(float);
    std::vector<int> seen;
    auto stage = [&](int batch) {
      const std::int64_t n = buffer.staged();
      buffer.await_host(n);
      for (int p = 0; p < 2; ++p) std::fill(host[n % 2][p].begin(), host[n % 2][p].end(), static_cast<float>(batch * 2 + p));
      const PinnedDoubleBuffer::In parts[2] = {{host[n % 2][0].data(), 0, bytes}, {host[n % 2][1].data(), bytes, bytes}};
      buffer.stage(n, parts);
    };
    auto step = [&] {
      const std::int64_t n = buffer.consumed();
      // The parts land swapped, to show each goes where its Out says.
      const PinnedDoubleBuffer::Out parts[2] = {{input[1].data(), 0, bytes}, {input[0].data(), bytes, bytes}};
      buffer.consume(n, parts);
      sim.kernel(Queue::compute, [&] {
        const bool whole = std::all_of(input[0].begin(), input[0].end(), [&](float v) { return v == input[0][0]; }) &&
                           std::all_of(input[1].begin(), input[1].end(), [&](float v) { return v == input[1][0]; });
        const int batch = static_cast<int>(input[1][0]) / 2;
        seen.push_back(whole && input[1][0] == batch * 2.0f && input[0][0] == batch * 2.0f + 1 ? batch : -1);
      });
      buffer.end_step(n);
    };
    // Batches 0..5 with one staged ahead; batch 6 is staged ahead, discarded, and the
    // next batch (7) takes its place and number.
    stage(0);
    for (int b = 0; b < 6; ++b) {
      step();
      stage(b + 1);
      buffer.wait_step(b);
    }
    step();  // batch 6
    stage(100);
    buffer.discard(buffer.staged() - 1);
    stage(7);
    step();
    sim.drain();
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}))
        << "copy " << static_cast<int>(sch.copy) << ", compute " << static_cast<int>(sch.compute) << ", seed " << sch.seed;
  }
}

TEST(PinnedDoubleBuffer, DiscardingAnythingButTheBatchStagedAheadIsAnError) {
  SimulatedDevice sim(Run::eager, Run::eager, 1);
  std::vector<float> d0(4), d1(4), in(4), src(4);
  PinnedDoubleBuffer buffer(sim, {nullptr, d0.data()}, {nullptr, d1.data()}, 4 * sizeof(float));
  EXPECT_THROW(buffer.discard(0), InvalidArgument);  // nothing staged
  EXPECT_THROW(buffer.stage(0, src.data(), 16), InvalidArgument);  // no pinned buffers of its own
  const PinnedDoubleBuffer::In part{src.data(), 0, 16};
  buffer.stage(0, std::span<const PinnedDoubleBuffer::In>(&part, 1));
  buffer.consume(0, in.data());
  EXPECT_THROW(buffer.discard(0), InvalidArgument);  // consumed
  const PinnedDoubleBuffer::Out past{in.data(), 8, 16};
  buffer.stage(1, std::span<const PinnedDoubleBuffer::In>(&part, 1));
  EXPECT_THROW(buffer.consume(1, std::span<const PinnedDoubleBuffer::Out>(&past, 1)), InvalidArgument);
}

TEST(PinnedDoubleBuffer, TooFewEventsIsAnError) {
  class Few final : public DeviceQueues {
   public:
    int num_events() const override { return 2; }
    void copy_to_device(Queue, void*, const void*, std::size_t) override {}
    void copy_on_device(Queue, void*, const void*, std::size_t) override {}
    void copy_to_host(Queue, void*, const void*, std::size_t) override {}
    void record(Queue, int) override {}
    void wait(Queue, int) override {}
    void host_wait(int) override {}
    void* native(Queue) override { return nullptr; }
  } few;
  float a = 0, b = 0, c = 0, d = 0;
  EXPECT_THROW(PinnedDoubleBuffer(few, {&a, &b}, {&c, &d}, 4), InvalidArgument);
  EXPECT_THROW(PinnedDoubleBuffer(few, {&a, &b}, {&c, &d}, 4, /*first_event=*/1), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
