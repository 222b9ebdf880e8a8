// The host RAM the input pipelines' buffers may hold together: in-memory caches, shuffle
// buffers and prefetch queues (a static prefetch(N), or AUTOTUNE without an Autotuner)
// reserve what they keep and release it when they drop it, so a pipeline fails with a
// clear message instead of pushing the process into the OS's OOM killer. The limit is
// set_pipeline_ram_limit() if called, else NNFIT_PIPELINE_RAM_LIMIT (a SIZE such as
// 8GiB), else half of the MemAvailable seen at first use. (A prefetch(AUTOTUNE) under an
// Autotuner is bounded by the Autotuner's own RAM budget instead; batches in flight
// between stages are not counted.)
//
// Thread safety: all functions and RamReservation's methods may be called from any
// thread (one atomic counter).
#pragma once
#include <cstdint>
#include <string>

namespace nnfit::data {

std::int64_t pipeline_ram_limit();
// bytes > 0 sets the limit; 0 goes back to the environment / default.
void set_pipeline_ram_limit(std::int64_t bytes);
std::int64_t pipeline_ram_in_use();

// Bytes one buffer holds against the budget; released on destruction.
class RamReservation {
 public:
  explicit RamReservation(std::string who) : who_(std::move(who)) {}
  ~RamReservation() { release(); }
  RamReservation(const RamReservation&) = delete;
  RamReservation& operator=(const RamReservation&) = delete;

  // Reserves `bytes` more. throws: OutOfMemory naming the buffer, its size, the budget and
  // what else holds it, with `hint` (what the user can change).
  void add(std::int64_t bytes, const std::string& hint);
  void sub(std::int64_t bytes);
  void release() { sub(bytes_); }
  std::int64_t bytes() const { return bytes_; }

 private:
  std::string who_;
  std::int64_t bytes_ = 0;  // owned by one buffer; the buffer's own lock guards it
};

}  // namespace nnfit::data
