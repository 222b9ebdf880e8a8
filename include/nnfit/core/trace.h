// Trace ranges: RAII markers any module places around work worth seeing on a timeline
// (kernels, pipeline stages, copies, all-reduce, callbacks). When tracing is off a range
// costs one relaxed atomic load and a branch: no clock read, no allocation, no lock. When
// on, each thread appends to its own chunks taken from a pool allocated by trace::start(),
// so recording takes no lock and allocates nothing (Note [Trace buffers] in trace.cpp).
// profile/ consumes what trace::collect() returns (Chrome trace export, step breakdown).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit {

namespace trace {

struct Options {
  // Events the session can hold over all threads; past it events are dropped and counted.
  std::int64_t capacity_events = std::int64_t{1} << 18;  // 256 Ki events of 48 bytes: 12 MiB
  // Events per chunk; a thread takes one chunk at a time from the session's pool.
  std::int64_t chunk_events = 1024;
};

// One closed range as collect() returns it.
struct Event {
  std::int64_t thread_id = 0;  // nnfit's id: 1, 2, ... in the order threads first recorded
  std::string thread_name;     // set_thread_name(), else the OS thread name
  const char* name = "";       // static strings, as given to TraceRange
  const char* category = "";   // "" when none was given
  std::int64_t arg = 0;
  std::int64_t begin_ns = 0;   // steady clock (trace::now_ns())
  std::int64_t end_ns = 0;
};

struct Collected {
  // Grouped by thread (ascending thread_id), within a thread in the order ranges began,
  // so a parent comes before the ranges nested in it.
  std::vector<Event> events;
  std::int64_t dropped_events = 0;  // ranges lost because the capacity was exhausted
  std::int64_t open_events = 0;     // ranges begun but not ended when collect() ran (left out)
  std::int64_t session_begin_ns = 0, session_end_ns = 0;  // end 0 while still running
};

namespace detail {
// The only state the off path reads. Relaxed: a range that misses a start() or stop() by
// a few nanoseconds is harmless.
extern std::atomic<bool> g_enabled;
struct Slot;
// Null when the range is not recorded (off, capacity exhausted); *generation is the session.
Slot* begin(const char* name, const char* category, std::int64_t arg, std::uint64_t* generation) noexcept;
void end(Slot* slot, std::uint64_t generation) noexcept;
}  // namespace detail

inline bool enabled() noexcept { return detail::g_enabled.load(std::memory_order_relaxed); }

// Starts a session: allocates the pool and enables recording. Events of an earlier session
// are discarded. throws: InvalidArgument when a session is already running or the options
// are not positive.
void start(const Options& options = {});
// Disables recording. Ranges still open keep writing their end into the session (so they
// show in collect() once closed). No-op when not running.
void stop();
bool running();
// Snapshot of every closed range of the current (or last) session. Safe to call while
// recording (ranges closing concurrently may or may not be included) and after stop().
Collected collect();
// Names the calling thread in traces (copied; call at thread start, not in a hot loop).
void set_thread_name(std::string_view name);
// The steady clock traces use, in nanoseconds.
std::int64_t now_ns() noexcept;

}  // namespace trace

// Records [construction, destruction) on the calling thread when tracing is on.
// requires: name and category point to storage that outlives the session (string
// literals). Not copyable or movable: a range belongs to the scope and thread that made it.
//
//   { TraceRange r("conv2d_fwd", "kernel", batch); ... }
class TraceRange {
 public:
  explicit TraceRange(const char* name, const char* category = nullptr, std::int64_t arg = 0) noexcept {
    if (trace::enabled()) [[unlikely]] slot_ = trace::detail::begin(name, category, arg, &generation_);
  }
  ~TraceRange() {
    if (slot_ != nullptr) [[unlikely]] trace::detail::end(slot_, generation_);
  }
  TraceRange(const TraceRange&) = delete;
  TraceRange& operator=(const TraceRange&) = delete;

 private:
  trace::detail::Slot* slot_ = nullptr;
  std::uint64_t generation_ = 0;
};

}  // namespace nnfit
