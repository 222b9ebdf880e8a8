// prefetch: a background thread owned by the iterator pulls elements from the input into
// a bounded queue, so producing element i+1.. overlaps with the consumer using element i.
// Errors are queued like elements and rethrown to the consumer in order. With kAutotune
// under an Autotuner the buffer size is its knob (it starts at 1; the tuner grows it
// within its RAM budget, and this stage reports its consumer's waits and element sizes);
// without one, the buffer starts at 1 and doubles (up to kMaxAutotuneBuffer) whenever
// the consumer finds it empty, as tf.data's PrefetchAutotuner does. Without a tuner the
// queued elements count against the pipelines' RAM budget (ram_budget.h): a static
// prefetch(N) that would pass it fails with OutOfMemory naming the buffer and ends the
// stream there, and the doubling stops where the next doubling would not fit.
//
// Note [Prefetch handoff]. Waking a sleeping thread costs 10-20 us of the waker's time
// here (a futex wake and an inter-processor interrupt, both dearer in a VM). A consumer
// that uses elements much faster than they are made (it spends less than half the
// producer's time per element between calls: a benchmark, an evaluation loop) would
// otherwise find the queue empty and sleep on every element, and the producer would pay
// a wake-up per element. Such a consumer waits for up to 8 elements (at most half the
// buffer) instead, so both sides pay one wake-up per several elements; the producer
// never stops meanwhile, so throughput is the producer's. A consumer slower than that
// (a training step) resumes at the first element, as latency matters there.
//
// Note [Prefetch inline]. A prefetch overlaps making the next element with the consumer's
// work on this one; if the consumer does (almost) no work between elements, there is
// nothing to overlap and the thread handoff is pure cost: the Fashion-MNIST pipeline
// read by a loop that does nothing ran at 0.72-0.86x of the same pipeline without the
// prefetch. So under a tuner (prefetch(AUTOTUNE)), when the consumer's own time per
// element is under 20 us and under an eighth of the producer's, the stage goes inline:
// the producer thread finishes its element and parks, and the consumer makes elements
// itself, timed as waits, until its own time per element reaches a quarter of the
// producer's (a training loop, which needs the overlap). Static prefetch(N) always
// keeps its thread: it is what the user asked for.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "data/element_util.h"
#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"
#include "nnfit/data/autotune.h"
#include "nnfit/data/ram_budget.h"

namespace nnfit::data {
namespace {

constexpr std::size_t kMaxAutotuneBuffer = 64;
constexpr std::size_t kMaxBulkWait = 8;  // Note [Prefetch handoff]
constexpr std::int64_t kInlineBelowNs = 20000;  // Note [Prefetch inline]

using trace::now_ns;

// A moving average over about the last 8 samples; the first sample starts it.
std::int64_t ewma(std::int64_t average, std::int64_t sample) {
  return average == 0 ? sample : average + (sample - average) / 8;
}

std::int64_t element_bytes(const Element& e) {
  std::int64_t n = 0;
  for (const Tensor& t : e) n += static_cast<std::int64_t>(t.nbytes());
  return n;
}

// The consumer side is single-threaded; the producer thread is joined on destruction.
class PrefetchIterator final : public Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Iterator> in, int buffer_size, std::shared_ptr<AutotuneKnob> knob)
      : in_(std::move(in)),
        autotune_(buffer_size == kAutotune && !knob),
        knob_(std::move(knob)),
        ram_(buffer_size == kAutotune ? "prefetch(AUTOTUNE) buffer (no autotuner)"
                                      : "prefetch(" + std::to_string(buffer_size) + ") buffer"),
        ram_hint_(buffer_size == kAutotune
                      ? "run the pipeline under fit() or an Autotuner, which sizes the buffer within its own RAM "
                        "budget; or raise NNFIT_PIPELINE_RAM_LIMIT"
                      : "use a smaller prefetch buffer than " + std::to_string(buffer_size) +
                            " elements (prefetch(1) already overlaps the next element with this one) or "
                            "prefetch(AUTOTUNE), which the autotuner sizes within its RAM budget; or raise "
                            "NNFIT_PIPELINE_RAM_LIMIT"),
        capacity_(knob_ ? static_cast<std::size_t>(knob_->value.load()) : autotune_ ? 1 : static_cast<std::size_t>(buffer_size)) {
    if (knob_) knob_->active = true;
    producer_ = std::thread([this] { produce(); });
  }
  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    space_cv_.notify_all();
    producer_.join();
    if (knob_) knob_->active = false;
  }

  std::optional<Element> next() override {
    const std::int64_t entered = now_ns();
    // The whole call is this stage's cost to its consumer, the wake-up it may send the
    // producer included (10-20 us in a VM): with a small buffer that wake-up comes every
    // other element and is most of the consumer's wait, and the tuner then deepens the
    // buffer (one wake-up per half buffer).
    std::optional<AutotuneKnob::Wait> wait;
    if (knob_) wait.emplace(*knob_);
    if (last_return_ns_ > 0) consume_ns_ = ewma(consume_ns_, entered - last_return_ns_);
    std::unique_lock<std::mutex> lock(mu_);
    if (knob_ && capacity_ != static_cast<std::size_t>(knob_->value.load())) {
      capacity_ = static_cast<std::size_t>(knob_->value.load());
      space_cv_.notify_one();
    }
    // The queue is empty, so this buffer holds nothing: double only if twice as many
    // elements of the last one's size fit beside what the other buffers hold.
    if (queue_.empty() && !end_ && autotune_ && capacity_ < kMaxAutotuneBuffer &&
        pipeline_ram_in_use() + 2 * static_cast<std::int64_t>(capacity_) * last_bytes_ <= pipeline_ram_limit()) {
      capacity_ *= 2;
      space_cv_.notify_one();
    }
    if (queue_.empty() && !end_ && knob_) {
      // Note [Prefetch inline]: decided whenever the consumer finds nothing queued.
      const bool want = inline_ ? consume_ns_ * 4 < produce_ns_
                                : consume_ns_ * 8 < produce_ns_ && consume_ns_ < kInlineBelowNs;
      if (want != inline_) {
        inline_ = want;
        knob_->inline_now = want;
        if (!want) space_cv_.notify_one();
      }
    }
    if (queue_.empty() && !end_) {
      if (inline_) {
        // The producer finishes (and queues) the element it may be making, then parks.
        consumer_waiting_ = true;
        ready_cv_.wait(lock, [&] { return !producing_ || !queue_.empty() || end_; });
        consumer_waiting_ = false;
        if (queue_.empty() && !end_) return produce_inline(lock);
      } else {
        // Note [Prefetch handoff]: a consumer much faster than the producer waits for
        // several elements at once.
        wanted_ = consume_ns_ * 2 < produce_ns_ ? std::clamp<std::size_t>(capacity_ / 2, 1, kMaxBulkWait) : 1;
        consumer_waiting_ = true;
        ready_cv_.wait(lock, [&] { return queue_.size() >= wanted_ || end_; });
        consumer_waiting_ = false;
        wanted_ = 1;
      }
    }
    if (queue_.empty()) return std::nullopt;
    Slot s = std::move(queue_.front());
    queue_.pop_front();
    ram_.sub(s.bytes);
    if (s.bytes > 0) last_bytes_ = s.bytes;
    // Wake the producer once the buffer is down to half, not for every element: it then
    // refills in one run, and a cheap pipeline does not pay a thread wake-up per element.
    const bool wake = queue_.size() <= capacity_ / 2;
    lock.unlock();
    if (knob_ && s.value) {
      ++knob_->elements;
      knob_->element_bytes = element_bytes(*s.value);
    }
    if (wake) space_cv_.notify_one();
    last_return_ns_ = now_ns();
    if (s.error) std::rethrow_exception(s.error);
    return std::move(s.value);
  }

  std::size_t buffer_size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return capacity_;
  }

 private:
  // The next element made on the consumer's thread while the producer is parked
  // (Note [Prefetch inline]); called with the lock held and the queue empty.
  std::optional<Element> produce_inline(std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    const std::int64_t start = now_ns();
    std::optional<Element> e;
    try {
      TraceRange range("prefetch/inline", "data");
      e = in_->next();
    } catch (...) {
      last_return_ns_ = now_ns();
      throw;
    }
    const std::int64_t end = now_ns();
    lock.lock();
    produce_ns_ = ewma(produce_ns_, end - start);
    if (!e) end_ = true;
    lock.unlock();
    if (e) {
      ++knob_->elements;
      knob_->element_bytes = element_bytes(*e);
    }
    last_return_ns_ = now_ns();
    return e;
  }

  struct Slot {
    std::optional<Element> value;
    std::exception_ptr error;
    std::int64_t bytes = 0;  // reserved against the RAM budget while queued
  };

  void produce() {
    detail::start_pipeline_thread("data/prefetch");
    bool consumer_was_waiting = false;  // when the last element was queued
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto room = [&] { return cancelled_ || (!inline_ && queue_.size() < capacity_); };
        // A full buffer is the tuner's evidence that the buffer limits; not when the
        // consumer was already waiting for the last element (that wait is its wake-up).
        if (knob_ && !room() && !inline_ && !consumer_was_waiting) {
          const std::int64_t full_since = now_ns();
          space_cv_.wait(lock, room);
          knob_->full_ns += now_ns() - full_since;
        }
        space_cv_.wait(lock, room);
        if (cancelled_) return;
        producing_ = true;
      }
      Slot s;
      const std::int64_t start = now_ns();
      try {
        TraceRange range("prefetch/produce", "data");
        s.value = in_->next();
      } catch (...) {
        s.error = std::current_exception();
      }
      const std::int64_t took = now_ns() - start;
      bool end = !s.value && !s.error;
      bool wake;
      {
        std::lock_guard<std::mutex> lock(mu_);
        produce_ns_ = ewma(produce_ns_, took);
        if (s.value && !knob_) {
          // Under a tuner the tuner's RAM budget bounds the buffer instead.
          try {
            const std::int64_t b = element_bytes(*s.value);
            ram_.add(b, ram_hint_);
            s.bytes = b;
          } catch (...) {
            // The budget is a standing condition, not a bad element: the stream ends
            // with the error rather than skip the element.
            s.value.reset();
            s.error = std::current_exception();
            end = true;
          }
        }
        if (s.value || s.error) queue_.push_back(std::move(s));
        if (end) end_ = true;
        producing_ = false;
        wake = consumer_waiting_ && (queue_.size() >= wanted_ || end_ || inline_);
        consumer_was_waiting = consumer_waiting_;
      }
      if (wake) ready_cv_.notify_one();
      if (end) return;
    }
  }

  // Used by the producer thread, or by the consumer while inline_ and !producing_.
  std::unique_ptr<Iterator> in_;
  const bool autotune_;                       // doubling on empty reads (no tuner)
  const std::shared_ptr<AutotuneKnob> knob_;  // the tuner's knob, or null
  mutable std::mutex mu_;  // guards the members below
  std::condition_variable space_cv_, ready_cv_;
  RamReservation ram_;         // the queued elements' bytes (no tuner)
  const std::string ram_hint_;
  std::size_t capacity_;
  std::int64_t last_bytes_ = 0;  // the last element's size: what a doubling would add per slot
  std::deque<Slot> queue_;
  std::int64_t produce_ns_ = 0;  // the producer's time per element (moving average)
  std::size_t wanted_ = 1;       // a waiting consumer's wake-up threshold, in elements
  bool consumer_waiting_ = false;
  bool inline_ = false;    // the consumer makes the elements; the producer parks (knob only)
  bool producing_ = false;  // the producer is inside in_->next()
  bool end_ = false;
  bool cancelled_ = false;
  // Consumer side only: its own time per element between next() calls.
  std::int64_t consume_ns_ = 0, last_return_ns_ = 0;
  std::thread producer_;  // last: starts after the members it uses
};

class PrefetchNode final : public DatasetNode {
 public:
  PrefetchNode(Dataset input, int buffer_size) : input_(std::move(input)), buffer_size_(buffer_size) {}
  const ElementSpec& element_spec() const override { return input_.element_spec(); }
  std::int64_t cardinality() const override { return input_.cardinality(); }
  std::string name() const override { return "prefetch"; }
  std::unique_ptr<Iterator> make_iterator() const override {
    std::shared_ptr<AutotuneKnob> knob;
    if (buffer_size_ == kAutotune && Autotuner::current()) {
      knob = Autotuner::current()->knob(this, AutotuneKnob::Kind::buffer, "prefetch", 1,
                                        static_cast<int>(kMaxAutotuneBuffer));
    }
    return std::make_unique<PrefetchIterator>(input_.make_iterator(), buffer_size_, std::move(knob));
  }

 private:
  Dataset input_;
  int buffer_size_;
};

}  // namespace

Dataset Dataset::prefetch(int buffer_size) const {
  NNFIT_CHECK(buffer_size >= 1 || buffer_size == kAutotune, InvalidArgument,
              "prefetch: buffer_size must be >= 1 or kAutotune, got ", buffer_size);
  return Dataset(std::make_shared<PrefetchNode>(*this, buffer_size));
}

}  // namespace nnfit::data
