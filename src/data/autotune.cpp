// The Autotuner: knob registry, the decision loop and the root iterator that measures
// the training loop's own wait.
//
// Note [Autotune policy]. Every interval the tuner looks at the window since its last
// decision. The signal is the root consumer's wait (the training loop blocked in next()):
//   * Above 1% of the window, the pipeline is too slow. The bottleneck is the knob whose
//     own consumer waited the largest share of the window: a parallel map gains one
//     thread (up to the CPU budget for one map) if its workers and the other maps'
//     together used less than the budget minus a quarter core of CPU time in the window
//     (thread CPU time, so workers blocked on a slow upstream stage or on the input lock
//     do not count as busy); failing that, a
//     prefetch buffer doubles if all buffers stay within the RAM budget (estimated from
//     the size of the last element through it) and it has been full at its present size
//     (its producer waited for space more than 5% of a window since it last grew): a
//     buffer its producer never fills cannot be what the consumer waits for. One change per window, so the effect of
//     each is measured before the next.
//   * Below 0.5% for 10 windows running (windows lengthen from 10 ms to the interval while
//     nothing changes), the pipeline keeps up with room to spare, and a
//     map whose threads were busy less than half the time gives one back (never below
//     one) so the compute threads get the core. Buffers never shrink (memory is cheap,
//     a burst is not).
// This is tf.data's hill climb on output latency, simplified to greedy single steps
// driven by measured waits instead of an analytical model; docs/design/data.md.
#include "nnfit/data/autotune.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "data/element_util.h"
#include "nnfit/core/trace.h"

namespace nnfit::data {
namespace {

thread_local std::shared_ptr<KnobRegistry> tls_registry;

using trace::now_ns;

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

std::int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return std::int64_t{1} << 30;  // unknown: assume 1 GiB
}

std::string knob_label(const AutotuneKnob& k) {
  return k.name + (k.kind == AutotuneKnob::Kind::parallelism ? " num_parallel_calls" : " buffer_size");
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

}  // namespace

AutotuneKnob::Wait::Wait(AutotuneKnob& k) : k_(k), start_(now_ns()) { k_.waiting_since_ns = start_; }

AutotuneKnob::Wait::~Wait() {
  k_.consumer_wait_ns += now_ns() - start_;
  k_.waiting_since_ns = 0;
}

std::int64_t AutotuneKnob::wait_ns_at(std::int64_t now) const {
  const std::int64_t since = waiting_since_ns;
  return consumer_wait_ns + (since > 0 ? std::max<std::int64_t>(0, now - since) : 0);
}

namespace {

// The root of a tuned pipeline: times the consumer's waits into the tuner's root knob.
class RootIterator final : public Iterator {
 public:
  RootIterator(std::unique_ptr<Iterator> in, std::shared_ptr<AutotuneKnob> root)
      : in_(std::move(in)), root_(std::move(root)) {
    root_->active = true;
  }
  ~RootIterator() override { root_->active = false; }
  std::optional<Element> next() override {
    AutotuneKnob::Wait wait(*root_);
    auto e = in_->next();
    if (e) ++root_->elements;
    return e;
  }

 private:
  std::unique_ptr<Iterator> in_;
  std::shared_ptr<AutotuneKnob> root_;
};

}  // namespace

KnobRegistry::KnobRegistry(int cpu_budget, std::int64_t ram_budget_bytes)
    : cpu_budget_(cpu_budget), ram_budget_(ram_budget_bytes) {
  knobs_.push_back(Tracked{this, std::make_shared<AutotuneKnob>()});  // the root
  knobs_.back().knob->name = "input";
}

const std::shared_ptr<KnobRegistry>& KnobRegistry::current() { return tls_registry; }

KnobRegistry::Scope::Scope(std::shared_ptr<KnobRegistry> registry) : saved_(std::move(tls_registry)) {
  tls_registry = std::move(registry);
}

KnobRegistry::Scope::~Scope() { tls_registry = std::move(saved_); }

std::shared_ptr<AutotuneKnob> KnobRegistry::knob(const void* node, AutotuneKnob::Kind kind, const std::string& name,
                                                 int initial, int max) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Tracked& t : knobs_) {
    if (t.node == node && t.knob->kind == kind) return t.knob;
  }
  auto k = std::make_shared<AutotuneKnob>();
  k->kind = kind;
  k->name = name;
  k->min = 1;
  k->max = std::max(1, max);
  k->value = std::clamp(initial, 1, k->max);
  knobs_.push_back(Tracked{node, k});
  return k;
}

Autotuner::Autotuner(AutotuneOptions options)
    : options_(std::move(options)),
      registry_(std::make_shared<KnobRegistry>(
          options_.cpu_budget > 0 ? options_.cpu_budget
                                  : std::max(1, available_cores() - std::max(0, options_.compute_threads)),
          options_.ram_budget_bytes > 0 ? options_.ram_budget_bytes : mem_available_bytes() / 2)) {
  last_tick_ns_ = now_ns();
  thread_ = std::thread([this] { loop(); });
}

Autotuner::~Autotuner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

std::unique_ptr<Iterator> Autotuner::make_iterator(const Dataset& dataset) {
  std::unique_ptr<Iterator> it;
  {
    KnobRegistry::Scope scope(registry_);
    it = dataset.make_iterator();
  }
  std::shared_ptr<AutotuneKnob> root;
  {
    std::lock_guard<std::mutex> lock(registry_->mu_);
    root = registry_->knobs_.front().knob;
  }
  return std::make_unique<RootIterator>(std::move(it), root);
}

void Autotuner::record(const std::string& line) {
  decisions_.push_back(line);
  if (options_.log) options_.log(line);
}

void Autotuner::tick() {
  std::lock_guard<std::mutex> lock(mu_);
  std::lock_guard<std::mutex> registry_lock(registry_->mu_);
  std::vector<KnobRegistry::Tracked>& knobs = registry_->knobs_;
  const int cpu_budget = registry_->cpu_budget_;
  const std::int64_t ram_budget = registry_->ram_budget_;
  const std::int64_t now = now_ns();
  const double window = static_cast<double>(std::max<std::int64_t>(1, now - last_tick_ns_));
  last_tick_ns_ = now;
  // Shares of the window, per knob, since the last tick.
  struct Seen {
    KnobRegistry::Tracked* t;
    double wait, busy_per_thread;
  };
  std::vector<Seen> seen;
  for (KnobRegistry::Tracked& t : knobs) {
    AutotuneKnob& k = *t.knob;
    const std::int64_t wait = k.wait_ns_at(now), busy = k.busy_ns, elements = k.elements;
    // A wait that ended between reading its start and its sum can count twice; clamp.
    Seen s{&t, std::clamp(static_cast<double>(wait - t.last_wait) / window, 0.0, 1.0),
           static_cast<double>(busy - t.last_busy) / window / std::max(1, k.value.load())};
    const bool moved = elements != t.last_elements;
    // Full for more than 5% of a window: the producer outran its consumer there.
    const std::int64_t full = k.full_ns;
    if (static_cast<double>(full - t.last_full) > 0.05 * window) t.filled_since_change = true;
    t.last_full = full;
    t.last_wait = std::max(wait, t.last_wait);
    t.last_busy = busy;
    t.last_elements = elements;
    if (k.active && (moved || s.wait > 0)) seen.push_back(s);
  }
  KnobRegistry::Tracked& root = knobs.front();
  const auto root_seen = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.t == &root; });
  if (root_seen == seen.end()) return;  // nothing consumed in this window
  const double root_wait = root_seen->wait;
  // CPU in use by the maps' workers (their thread CPU time over the window) and bytes the
  // prefetch buffers may hold.
  double busy_cores = 0;
  for (const Seen& s : seen) {
    if (s.t != &root && s.t->knob->kind == AutotuneKnob::Kind::parallelism) busy_cores += s.busy_per_thread * s.t->knob->value;
  }
  std::int64_t buffered = 0;
  for (const KnobRegistry::Tracked& t : knobs) {
    if (t.knob->active && &t != &root && t.knob->kind == AutotuneKnob::Kind::buffer) {
      buffered += t.knob->value * t.knob->element_bytes;
    }
  }

  if (root_wait >= 0.005) root.quiet_rounds = 0;
  if (root_wait > 0.01) {
    // The bottleneck: the knob whose consumer waited the most, among those that can grow.
    const Seen* best = nullptr;
    for (const Seen& s : seen) {
      AutotuneKnob& k = *s.t->knob;
      if (s.t == &root || s.wait <= 0.01 || k.value >= k.max || k.inline_now) continue;
      // Another thread only where the budget has a quarter core left unused.
      if (k.kind == AutotuneKnob::Kind::parallelism && busy_cores > cpu_budget - 0.25) continue;
      if (k.kind == AutotuneKnob::Kind::buffer && buffered + k.value * k.element_bytes > ram_budget) continue;
      // A buffer that never filled at its size since it last grew is not what the consumer
      // waits for: its producer is simply slower (or still starting), and a deeper buffer
      // would only hold more batches out of the cache.
      if (k.kind == AutotuneKnob::Kind::buffer && !s.t->filled_since_change) continue;
      // Threads before buffers: a map that cannot keep up is not helped by a deeper queue.
      auto rank = [](const Seen& x) { return std::make_pair(x.t->knob->kind == AutotuneKnob::Kind::parallelism, x.wait); };
      if (!best || rank(s) > rank(*best)) best = &s;
    }
    if (!best) return;
    AutotuneKnob& k = *best->t->knob;
    const int from = k.value;
    const int to = k.kind == AutotuneKnob::Kind::parallelism ? from + 1 : std::min(k.max, from * 2);
    k.value = to;
    best->t->filled_since_change = false;
    record(knob_label(k) + " " + std::to_string(from) + " -> " + std::to_string(to) + " (training waited " +
           percent(root_wait) + " of the last " + std::to_string(static_cast<int>(window / 1e6)) + " ms; its consumer " +
           percent(best->wait) + ")");
    return;
  }
  if (root_wait < 0.005 && ++root.quiet_rounds >= 10) {
    root.quiet_rounds = 0;
    for (const Seen& s : seen) {
      AutotuneKnob& k = *s.t->knob;
      if (k.kind != AutotuneKnob::Kind::parallelism || k.value <= 1 || s.busy_per_thread >= 0.5) continue;
      const int from = k.value;
      k.value = from - 1;
      record(knob_label(k) + " " + std::to_string(from) + " -> " + std::to_string(from - 1) + " (threads busy " +
             percent(s.busy_per_thread) + "; training did not wait)");
      return;
    }
  }
}

// Windows start short (10 ms, or the configured interval if shorter) so a pipeline is
// tuned within its first tens of milliseconds, and double while nothing changes, up to
// the configured interval; a decision shortens them again to measure its effect quickly.
void Autotuner::loop() {
  const double longest = options_.interval_seconds;
  const double shortest = std::min(0.01, longest);
  double interval = shortest;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, std::chrono::duration<double>(interval), [&] { return stop_; })) {
    const std::size_t before = decisions_.size();
    lock.unlock();
    tick();
    lock.lock();
    interval = decisions_.size() != before ? shortest : std::min(longest, 2 * interval);
  }
}

std::string Autotuner::summary() const {
  std::lock_guard<std::mutex> lock(registry_->mu_);
  const std::vector<KnobRegistry::Tracked>& knobs = registry_->knobs_;
  std::ostringstream s;
  bool first = true;
  for (std::size_t i = 1; i < knobs.size(); ++i) {
    const AutotuneKnob& k = *knobs[i].knob;
    s << (first ? "" : ", ") << knob_label(k) << "=" << k.value.load() << (k.inline_now ? " (inline)" : "");
    first = false;
  }
  return s.str();
}

std::vector<std::string> Autotuner::decisions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return decisions_;
}

}  // namespace nnfit::data
