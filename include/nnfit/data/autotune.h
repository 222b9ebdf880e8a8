// The Autotuner sets every AUTOTUNE knob of a pipeline (a map's num_parallel_calls, a
// prefetch's buffer size) while it runs: it measures, per knob, how long the stage's
// consumer waited and how busy the stage's threads were, and climbs (Note [Autotune
// policy] in src/data/autotune.cpp) toward zero consumer wait within a CPU budget (the
// threads all parallel maps may use together) and a RAM budget (the bytes prefetch
// buffers may hold). Knobs keep their values across epochs: each epoch's iterator starts
// where the last one ended. See docs/design/data.md.
//
// Use: Autotuner tuner(options); auto it = tuner.make_iterator(dataset); ... The knobs
// are registered in the tuner's KnobRegistry while make_iterator builds the iterator
// tree. Iterators that build more iterators later, inside next() (repeat's passes,
// interleave's inputs, concatenate's second input), capture the registry when they are
// made and re-enter it then, so those stages are tuned too. Without a tuner AUTOTUNE
// stages use static defaults (a map: one thread per free core; a prefetch: doubling on
// every empty read).
//
// Thread safety: make_iterator from one thread at a time; everything else is safe from
// any thread (knob values are atomics, the log is guarded).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nnfit/data/dataset.h"

namespace nnfit::data {

struct AutotuneOptions {
  // Threads all AUTOTUNE maps may run together; 0: the cores this process may use minus
  // compute_threads, at least 1.
  int cpu_budget = 0;
  int compute_threads = 0;
  // Bytes AUTOTUNE prefetch buffers may hold together; 0: half of MemAvailable.
  std::int64_t ram_budget_bytes = 0;
  double interval_seconds = 0.05;  // the longest window between decisions (they start at 10 ms)
  // Called with one line per decision ("map(normalize): num_parallel_calls 1 -> 2 ...").
  std::function<void(const std::string&)> log;
};

// One AUTOTUNE knob. The stage that owns it reports what it measured; the tuner sets
// `value`. Iterators hold knobs by shared_ptr, so a knob outlives its tuner if needed.
struct AutotuneKnob {
  enum class Kind { parallelism, buffer };
  Kind kind = Kind::parallelism;
  std::string name;                   // "map", "prefetch"; the node's label when known
  int min = 1, max = 1;
  std::atomic<int> value{1};
  // Measurements, accumulated by the stage (the tuner reads differences between ticks).
  std::atomic<std::int64_t> consumer_wait_ns{0};  // time the stage's consumer blocked in next()
  std::atomic<std::int64_t> busy_ns{0};           // worker time spent producing elements
  std::atomic<std::int64_t> elements{0};          // elements handed to the consumer
  std::atomic<std::int64_t> element_bytes{0};     // bytes of the last element (buffer knobs)
  std::atomic<std::int64_t> full_ns{0};           // buffer knobs: time the producer waited for space
  std::atomic<bool> active{false};                // an iterator is using it now
  std::atomic<std::int64_t> waiting_since_ns{0};  // a wait in progress (0: none)
  // A prefetch that produces on its consumer's thread for now (Note [Prefetch inline]):
  // its buffer is unused, so the tuner leaves it alone.
  std::atomic<bool> inline_now{false};

  // Times one consumer wait; a wait still in progress counts toward the tuner's window.
  class Wait {
   public:
    explicit Wait(AutotuneKnob& k);
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

   private:
    AutotuneKnob& k_;
    std::int64_t start_;
  };
  // consumer_wait_ns plus the part of a wait in progress, at `now_ns`.
  std::int64_t wait_ns_at(std::int64_t now_ns) const;
};

// The AUTOTUNE knobs of one tuned pipeline, and the budgets they share. Shared by the
// Autotuner (which sets the knobs) and by every iterator that builds iterators lazily
// (which registers more), so it outlives whichever goes first.
class KnobRegistry {
 public:
  KnobRegistry(int cpu_budget, std::int64_t ram_budget_bytes);
  // The knob for (node, kind): created on first use with value `initial` (clamped to
  // [1, max]), then reused so its value carries over to the next epoch's iterator.
  std::shared_ptr<AutotuneKnob> knob(const void* node, AutotuneKnob::Kind kind, const std::string& name, int initial,
                                     int max);
  int cpu_budget() const { return cpu_budget_; }
  std::int64_t ram_budget_bytes() const { return ram_budget_; }

  // The registry of the iterator tree being built on this thread, or null.
  static const std::shared_ptr<KnobRegistry>& current();
  // Makes `registry` (null: none) current on this thread for the scope's lifetime.
  class Scope {
   public:
    explicit Scope(std::shared_ptr<KnobRegistry> registry);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::shared_ptr<KnobRegistry> saved_;
  };

 private:
  friend class Autotuner;
  struct Tracked {
    const void* node;
    std::shared_ptr<AutotuneKnob> knob;
    std::int64_t last_wait = 0, last_busy = 0, last_elements = 0;
    std::int64_t last_full = 0;
    bool filled_since_change = false;  // a window since the last change had the buffer full
    int quiet_rounds = 0;
  };
  const int cpu_budget_;
  const std::int64_t ram_budget_;
  mutable std::mutex mu_;       // guards knobs_
  std::vector<Tracked> knobs_;  // [0] is the root: the training loop's own wait
};

// An iterator's hold on the registry current when it was made: lazily built inputs are
// built inside it, so they join the same tuner. Holds nothing without a tuner.
class AutotuneContext {
 public:
  AutotuneContext() : registry_(KnobRegistry::current()) {}
  std::unique_ptr<Iterator> make_iterator(const Dataset& dataset) const {
    KnobRegistry::Scope scope(registry_);
    return dataset.make_iterator();
  }

 private:
  std::shared_ptr<KnobRegistry> registry_;
};

class Autotuner {
 public:
  explicit Autotuner(AutotuneOptions options = {});
  ~Autotuner();
  Autotuner(const Autotuner&) = delete;
  Autotuner& operator=(const Autotuner&) = delete;

  // Builds the iterator with this tuner receiving the AUTOTUNE knobs it creates.
  std::unique_ptr<Iterator> make_iterator(const Dataset& dataset);

  // The registry collecting knobs on this thread (inside make_iterator, or inside an
  // AutotuneContext), or null. Stages call knob() on it from their make_iterator.
  static KnobRegistry* current() { return KnobRegistry::current().get(); }
  // registry().knob(...), for tests.
  std::shared_ptr<AutotuneKnob> knob(const void* node, AutotuneKnob::Kind kind, const std::string& name, int initial,
                                     int max) {
    return registry_->knob(node, kind, name, initial, max);
  }

  int cpu_budget() const { return registry_->cpu_budget(); }
  std::int64_t ram_budget_bytes() const { return registry_->ram_budget_bytes(); }
  // "map(normalize) num_parallel_calls=2, prefetch buffer_size=4": the current choices.
  std::string summary() const;
  // Every decision so far, oldest first.
  std::vector<std::string> decisions() const;
  // One decision round now (the background thread calls it every interval; tests too).
  void tick();

 private:
  void loop();
  void record(const std::string& line);

  AutotuneOptions options_;
  std::shared_ptr<KnobRegistry> registry_;
  mutable std::mutex mu_;  // guards decisions_, last_tick_ns_, stop_; taken before registry_->mu_
  std::vector<std::string> decisions_;
  std::int64_t last_tick_ns_ = 0;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace nnfit::data
