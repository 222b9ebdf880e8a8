// map: applies a user function to every element, on the consumer thread or on a pool of
// worker threads owned by the iterator. Note [Parallel map ordering]: workers take input
// elements under an input lock and tag them with a sequence number; results land in a map
// keyed by that number. Deterministic mode hands them out in sequence order; otherwise the
// earliest finished result goes first. At most window() = max(8, 4 x threads) elements
// are in flight, which bounds memory and keeps a slow element from letting the others run
// far ahead.
//
// Note [Parallel map handoff]. A thread wake-up (futex wake, then the scheduler) costs
// 5-30 us here, more than a cheap map function (normalizing a 28x28 image takes ~1 us).
// Handing elements over one at a time made such a map cost 35 us per element, since a
// consumer faster than the workers and workers faster than the consumer both woke the
// other for every element. So both sides wake in bulk: a consumer that finds nothing
// ready sleeps until half a window is ready (or the input has ended), and parked workers
// are woken once the outstanding elements are down to half a window. Each side stays
// busy for half a window between wake-ups. Workers read their CPU clock (a system call)
// when they park and every 2 ms, not per element.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "data/element_util.h"
#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"
#include "nnfit/data/autotune.h"

namespace nnfit::data {
namespace {

class SequentialMapIterator final : public Iterator {
 public:
  SequentialMapIterator(std::unique_ptr<Iterator> input, Dataset::MapFn fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::optional<Element> next() override {
    auto e = input_->next();
    if (!e) return std::nullopt;
    TraceRange range("map", "data");
    return fn_(std::move(*e));
  }

 private:
  std::unique_ptr<Iterator> input_;
  Dataset::MapFn fn_;
};

// CPU time this thread has used: what a worker really costs, without its blocked waits
// (for the input lock, for a slow upstream stage).
std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Owns its worker threads; the consumer side (next) is single-threaded like any iterator.
// With an Autotuner knob it starts knob->max workers, of which only the first
// knob->value take work (the others sleep until the knob grows), and reports its
// consumer's waits and its workers' busy time to the knob.
class ParallelMapIterator final : public Iterator {
 public:
  ParallelMapIterator(std::unique_ptr<Iterator> input, Dataset::MapFn fn, int threads, bool deterministic,
                      std::shared_ptr<AutotuneKnob> knob)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        deterministic_(deterministic),
        threads_(knob ? knob->max : threads),
        knob_(std::move(knob)) {
    if (knob_) knob_->active = true;
    for (int i = 0; i < threads_; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  ~ParallelMapIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    if (knob_) knob_->active = false;
  }

  std::optional<Element> next() override {
    if (!knob_) return take();
    AutotuneKnob::Wait wait(*knob_);
    std::optional<Element> e = take();
    if (e) ++knob_->elements;
    return e;
  }

 private:
  struct Result {
    std::optional<Element> value;
    std::exception_ptr error;
  };

  int allowed() const { return knob_ ? knob_->value.load(std::memory_order_relaxed) : threads_; }
  std::int64_t window() const { return std::max<std::int64_t>(8, 4 * std::int64_t{allowed()}); }

  // Under mu_: the next result the consumer may take, or done_.end().
  std::map<std::int64_t, Result>::iterator ready_result() {
    return deterministic_ ? done_.find(next_out_) : done_.begin();
  }
  // Under mu_: nothing more will arrive for the consumer.
  bool finished() const {
    return deterministic_ ? (input_end_ && next_out_ >= end_seq_) : (input_end_ && outstanding_ == 0);
  }
  // Under mu_: a waiting consumer goes on (Note [Parallel map handoff]).
  bool consumer_may_go() {
    if (finished()) return true;
    if (ready_result() == done_.end()) return false;
    return input_end_ || static_cast<std::int64_t>(done_.size()) >= window() / 2;
  }

  std::optional<Element> take() {
    std::unique_lock<std::mutex> lock(mu_);
    if (ready_result() == done_.end() && !finished()) {
      consumer_waiting_ = true;
      // A knob can shrink the window without a notification: look again every 20 ms.
      while (!consumer_may_go()) ready_cv_.wait_for(lock, std::chrono::milliseconds(20));
      consumer_waiting_ = false;
    }
    auto it = ready_result();
    if (it == done_.end()) return std::nullopt;  // finished
    Result r = std::move(it->second);
    done_.erase(it);
    ++next_out_;
    --outstanding_;
    const bool wake = parked_ > 0 && outstanding_ <= window() / 2;
    lock.unlock();
    if (wake) work_cv_.notify_all();
    if (r.error) std::rethrow_exception(r.error);
    return std::move(r.value);
  }

  void work(int index) {
    detail::start_pipeline_thread("data/map worker " + std::to_string(index));
    // Busy time for the tuner: thread CPU time, read at wake-up, when parking and every 2 ms.
    std::int64_t cpu_mark = knob_ ? thread_cpu_ns() : 0;
    auto wall_mark = std::chrono::steady_clock::now();
    auto account = [&] {
      if (!knob_) return;
      const std::int64_t now = thread_cpu_ns();
      knob_->busy_ns += now - cpu_mark;
      cpu_mark = now;
      wall_mark = std::chrono::steady_clock::now();
    };
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [&] {
          return cancelled_ || input_end_ || (index < allowed() && outstanding_ < window());
        };
        if (!ready()) {
          account();
          ++parked_;
          // A knob can grow without a notification: parked workers look again every 20 ms.
          while (!ready()) work_cv_.wait_for(lock, std::chrono::milliseconds(knob_ ? 20 : 1000));
          --parked_;
          if (knob_) cpu_mark = thread_cpu_ns();
        }
        if (cancelled_ || input_end_) {
          account();
          return;
        }
        ++outstanding_;
      }
      std::int64_t seq;
      Result r;
      bool end = false;
      {
        std::lock_guard<std::mutex> input_lock(input_mu_);
        seq = next_seq_++;
        try {
          TraceRange range("map/input", "data");
          r.value = input_->next();
          end = !r.value;
        } catch (...) {
          r.error = std::current_exception();
        }
      }
      if (end) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          input_end_ = true;
          end_seq_ = std::min(end_seq_, seq);
          --outstanding_;
        }
        ready_cv_.notify_all();
        work_cv_.notify_all();
        account();
        return;
      }
      if (!r.error) {
        try {
          TraceRange range("map", "data", seq);
          r.value = fn_(std::move(*r.value));
        } catch (...) {
          r.value.reset();
          r.error = std::current_exception();
        }
      }
      bool wake;
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_.emplace(seq, std::move(r));
        wake = consumer_waiting_ && consumer_may_go();
      }
      if (wake) ready_cv_.notify_one();  // the only waiter is the consumer
      if (knob_ && std::chrono::steady_clock::now() - wall_mark > std::chrono::milliseconds(2)) account();
    }
  }

  std::unique_ptr<Iterator> input_;  // guarded by input_mu_
  Dataset::MapFn fn_;
  const bool deterministic_;
  const int threads_;
  const std::shared_ptr<AutotuneKnob> knob_;
  std::mutex input_mu_;
  std::int64_t next_seq_ = 0;  // guarded by input_mu_

  std::mutex mu_;  // guards everything below
  std::condition_variable work_cv_, ready_cv_;
  std::map<std::int64_t, Result> done_;
  std::int64_t next_out_ = 0;     // deterministic: the sequence number handed out next
  std::int64_t outstanding_ = 0;  // taken from input, not yet handed to the consumer
  bool input_end_ = false;
  std::int64_t end_seq_ = INT64_MAX;
  bool cancelled_ = false;
  bool consumer_waiting_ = false;
  int parked_ = 0;  // workers waiting for room in the window
  std::vector<std::thread> workers_;  // last: started after every member is ready
};

class MapNode final : public DatasetNode {
 public:
  MapNode(Dataset input, Dataset::MapFn fn, MapOptions options, ElementSpec spec)
      : input_(std::move(input)), fn_(std::move(fn)), options_(options), spec_(std::move(spec)) {}
  const ElementSpec& element_spec() const override { return spec_; }
  std::int64_t cardinality() const override { return input_.cardinality(); }
  std::string name() const override { return "map"; }
  std::unique_ptr<Iterator> make_iterator() const override {
    if (options_.num_parallel_calls == 0) {
      return std::make_unique<SequentialMapIterator>(input_.make_iterator(), fn_);
    }
    std::shared_ptr<AutotuneKnob> knob;
    if (options_.num_parallel_calls == kAutotune && Autotuner::current()) {
      KnobRegistry& tuner = *Autotuner::current();
      knob = tuner.knob(this, AutotuneKnob::Kind::parallelism, options_.name, 1, tuner.cpu_budget());
    }
    const int threads = options_.num_parallel_calls == kAutotune ? detail::autotune_threads()
                                                                 : options_.num_parallel_calls;
    return std::make_unique<ParallelMapIterator>(input_.make_iterator(), fn_, threads, options_.deterministic,
                                                 std::move(knob));
  }

 private:
  Dataset input_;
  Dataset::MapFn fn_;
  MapOptions options_;
  ElementSpec spec_;
};

}  // namespace

Dataset Dataset::map(MapFn fn, MapOptions options, std::optional<ElementSpec> out_spec) const {
  NNFIT_CHECK(fn != nullptr, InvalidArgument, "map: null function");
  NNFIT_CHECK(options.num_parallel_calls >= 0 || options.num_parallel_calls == kAutotune,
              InvalidArgument, "map: num_parallel_calls must be >= 0 or kAutotune, got ",
              options.num_parallel_calls);
  ElementSpec spec = out_spec ? std::move(*out_spec) : element_spec();
  return Dataset(std::make_shared<MapNode>(*this, std::move(fn), options, std::move(spec)));
}

}  // namespace nnfit::data
