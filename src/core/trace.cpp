// Trace sessions: the global collector, per-thread records and the chunk pool behind
// TraceRange. The hot path (detail::begin / detail::end) takes no lock and allocates
// nothing; a thread takes the collector's mutex once per session, on its first range.
#include "nnfit/core/trace.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <new>

#include "nnfit/core/error.h"

// Note [Trace buffers]
// start() allocates one pool of fixed-size chunks for the whole session. A thread's first
// range of the session registers its ThreadRecord with the collector (under the mutex);
// from then on the thread owns a singly linked list of chunks it takes from the pool with
// one atomic fetch_add, and fills them in order, so a thread's events stay in begin order
// and a parent range precedes its children. A slot is published by a release store of the
// chunk's `used` count, its end by a release store of `end_ns` (0 = still open), which is
// all collect() needs to read concurrently with recording. When the pool is empty the
// event is counted in the thread's `dropped` and not recorded.
//
// Memory is never handed back while the process runs: ThreadRecords live as long as the
// collector (one per thread that ever traced, about 100 bytes), and a pool is reused by the
// next session of the same geometry or kept (retired) when the geometry changes. So a range
// that is still open across stop() and start() never writes into freed memory; its slot
// carries the session's generation and end() drops the write when the slot has since been
// reused. The collector is process-global on purpose: a range must be placeable anywhere
// (kernels, pipeline threads) without threading a handle through every signature, as TF's
// TraceMe and PyTorch's RECORD_FUNCTION do.

namespace nnfit::trace {
namespace detail {

std::atomic<bool> g_enabled{false};

struct Slot {
  const char* name = "";
  const char* category = "";
  std::int64_t arg = 0;
  std::int64_t begin_ns = 0;
  std::atomic<std::int64_t> end_ns{0};
  std::atomic<std::uint64_t> generation{0};
};

}  // namespace detail

namespace {

using detail::Slot;

struct Chunk {
  Slot* slots = nullptr;
  std::atomic<std::int64_t> used{0};
  std::atomic<Chunk*> next{nullptr};
};

struct Pool {
  Pool(std::int64_t chunk_count, std::int64_t chunk_events)
      : chunk_count(chunk_count), chunk_events(chunk_events),
        slots(new Slot[static_cast<std::size_t>(chunk_count * chunk_events)]),
        chunks(new Chunk[static_cast<std::size_t>(chunk_count)]) {
    for (std::int64_t i = 0; i < chunk_count; ++i) chunks[i].slots = &slots[i * chunk_events];
  }
  const std::int64_t chunk_count, chunk_events;
  std::unique_ptr<Slot[]> slots;
  std::unique_ptr<Chunk[]> chunks;
  std::atomic<std::int64_t> next_chunk{0};
};

// One per thread that ever recorded; owned by the collector, never freed. Fields marked
// "owner" are touched only by the thread itself; the rest under the collector's mutex or
// through atomics.
struct ThreadRecord {
  std::int64_t id = 0;
  std::string name;                          // mutex
  std::uint64_t generation = 0;              // owner writes under the mutex; owner reads
  Pool* pool = nullptr;                      // owner
  std::atomic<Chunk*> head{nullptr};
  Chunk* tail = nullptr;                     // owner
  std::int64_t tail_used = 0;                // owner
  bool exhausted = false;                    // owner: the pool ran dry this session
  std::atomic<std::int64_t> dropped{0};
};

struct Collector {
  std::mutex mu;
  std::atomic<std::uint64_t> generation{0};  // 0: no session yet
  bool running = false;
  std::unique_ptr<Pool> pool;
  std::vector<std::unique_ptr<Pool>> retired_pools;
  std::deque<ThreadRecord> records;          // every thread ever seen; stable addresses
  std::vector<ThreadRecord*> session_threads;
  std::int64_t begin_ns = 0, end_ns = 0;
};

Collector& collector() {
  static Collector* c = new Collector;  // never destroyed: threads may trace during exit
  return *c;
}

thread_local ThreadRecord* t_record = nullptr;
thread_local std::string t_name;

std::string os_thread_name() {
  char buf[64] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) == 0 && buf[0] != '\0') return buf;
  return {};
}

// Registers the calling thread with session `gen`; null if that session is over.
ThreadRecord* join_session(std::uint64_t gen) noexcept {
  Collector& c = collector();
  try {
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.running || c.generation.load(std::memory_order_relaxed) != gen) return nullptr;
    ThreadRecord* r = t_record;
    if (r == nullptr) {
      r = &c.records.emplace_back();
      r->id = static_cast<std::int64_t>(c.records.size());
      r->name = !t_name.empty() ? t_name : os_thread_name();
      if (r->name.empty()) r->name = "thread " + std::to_string(r->id);
      t_record = r;
    }
    c.session_threads.push_back(r);
    r->generation = gen;
    r->pool = c.pool.get();
    r->head.store(nullptr, std::memory_order_relaxed);
    r->tail = nullptr;
    r->tail_used = 0;
    r->exhausted = false;
    r->dropped.store(0, std::memory_order_relaxed);
    return r;
  } catch (...) {  // bad_alloc: tracing must never take the program down
    return nullptr;
  }
}

}  // namespace

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace detail {

Slot* begin(const char* name, const char* category, std::int64_t arg, std::uint64_t* generation) noexcept {
  // Acquire pairs with start()'s release of g_enabled, so the generation read next is the
  // new session's, not the one before.
  if (!g_enabled.load(std::memory_order_acquire)) return nullptr;
  Collector& c = collector();
  const std::uint64_t gen = c.generation.load(std::memory_order_acquire);
  ThreadRecord* r = t_record;
  if (r == nullptr || r->generation != gen) {
    r = join_session(gen);
    if (r == nullptr) return nullptr;
  }
  Pool& pool = *r->pool;
  if (r->tail == nullptr || r->tail_used == pool.chunk_events) {
    const std::int64_t k = r->exhausted ? pool.chunk_count : pool.next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (k >= pool.chunk_count) {
      r->exhausted = true;
      r->dropped.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    Chunk* ch = &pool.chunks[k];
    ch->used.store(0, std::memory_order_relaxed);
    ch->next.store(nullptr, std::memory_order_relaxed);
    if (r->tail != nullptr) r->tail->next.store(ch, std::memory_order_release);
    else r->head.store(ch, std::memory_order_release);
    r->tail = ch;
    r->tail_used = 0;
  }
  const std::int64_t i = r->tail_used++;
  Slot& s = r->tail->slots[i];
  s.name = name;
  s.category = category != nullptr ? category : "";
  s.arg = arg;
  s.generation.store(gen, std::memory_order_relaxed);
  s.end_ns.store(0, std::memory_order_relaxed);
  s.begin_ns = now_ns();
  r->tail->used.store(i + 1, std::memory_order_release);
  *generation = gen;
  return &s;
}

void end(Slot* slot, std::uint64_t generation) noexcept {
  const std::int64_t t = now_ns();
  if (slot->generation.load(std::memory_order_relaxed) != generation) return;  // reused by a later session
  slot->end_ns.store(std::max<std::int64_t>(t, slot->begin_ns), std::memory_order_release);
}

}  // namespace detail

void start(const Options& options) {
  NNFIT_CHECK(options.capacity_events > 0 && options.chunk_events > 0, InvalidArgument,
              "trace::start: capacity_events and chunk_events must be positive (got ", options.capacity_events, ", ",
              options.chunk_events, ")");
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  NNFIT_CHECK(!c.running, InvalidArgument, "trace::start: a trace session is already running; call trace::stop() first");
  const std::int64_t chunk_events = std::min(options.chunk_events, options.capacity_events);
  const std::int64_t chunks = (options.capacity_events + chunk_events - 1) / chunk_events;
  if (c.pool == nullptr || c.pool->chunk_count != chunks || c.pool->chunk_events != chunk_events) {
    if (c.pool != nullptr) c.retired_pools.push_back(std::move(c.pool));
    c.pool = std::make_unique<Pool>(chunks, chunk_events);
  }
  c.pool->next_chunk.store(0, std::memory_order_relaxed);
  c.session_threads.clear();
  c.begin_ns = now_ns();
  c.end_ns = 0;
  c.running = true;
  c.generation.store(c.generation.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  detail::g_enabled.store(true, std::memory_order_release);
}

void stop() {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.running) return;
  detail::g_enabled.store(false, std::memory_order_release);
  c.running = false;
  c.end_ns = now_ns();
}

bool running() {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.running;
}

Collected collect() {
  Collector& c = collector();
  std::lock_guard<std::mutex> lock(c.mu);
  Collected out;
  out.session_begin_ns = c.begin_ns;
  out.session_end_ns = c.end_ns;
  std::vector<ThreadRecord*> threads = c.session_threads;
  std::sort(threads.begin(), threads.end(), [](const ThreadRecord* a, const ThreadRecord* b) { return a->id < b->id; });
  const std::uint64_t gen = c.generation.load(std::memory_order_relaxed);
  for (ThreadRecord* r : threads) {
    out.dropped_events += r->dropped.load(std::memory_order_relaxed);
    for (Chunk* ch = r->head.load(std::memory_order_acquire); ch != nullptr; ch = ch->next.load(std::memory_order_acquire)) {
      const std::int64_t used = ch->used.load(std::memory_order_acquire);
      for (std::int64_t i = 0; i < used; ++i) {
        const Slot& s = ch->slots[i];
        const std::int64_t end = s.end_ns.load(std::memory_order_acquire);
        if (end == 0 || s.generation.load(std::memory_order_relaxed) != gen) {
          ++out.open_events;
          continue;
        }
        Event e;
        e.thread_id = r->id;
        e.thread_name = r->name;
        e.name = s.name;
        e.category = s.category;
        e.arg = s.arg;
        e.begin_ns = s.begin_ns;
        e.end_ns = end;
        out.events.push_back(std::move(e));
      }
    }
  }
  return out;
}

void set_thread_name(std::string_view name) {
  t_name.assign(name);
  if (t_record != nullptr) {
    Collector& c = collector();
    std::lock_guard<std::mutex> lock(c.mu);
    t_record->name = t_name;
  }
}

}  // namespace nnfit::trace
