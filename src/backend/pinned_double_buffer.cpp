// PinnedDoubleBuffer (nnfit/backend/pinned_double_buffer.h): the order of work of Note
// [Double buffer events], over any DeviceQueues; the CUDA plugin's streams run it on a
// GPU, simulated devices check it in tests/backend and tests/cuda_host.
#include "nnfit/backend/pinned_double_buffer.h"

#include <algorithm>
#include <cstring>

#include "nnfit/core/error.h"

namespace nnfit {

PinnedDoubleBuffer::PinnedDoubleBuffer(DeviceQueues& queues, Slot a, Slot b, std::size_t capacity_bytes,
                                       int first_event)
    : queues_(queues), slots_{a, b}, capacity_(capacity_bytes), first_event_(first_event) {
  NNFIT_CHECK(first_event >= 0 && queues.num_events() >= first_event + kEvents, InvalidArgument,
              "the double buffer needs events ", first_event, "..", first_event + kEvents - 1, ", the queues have ",
              queues.num_events());
  for (const Slot& s : slots_) {
    NNFIT_CHECK(s.device, InvalidArgument, "the double buffer needs a device buffer per slot");
  }
}

void PinnedDoubleBuffer::await_host(std::int64_t n) {
  if (n < 2 || host_ready_ >= n) return;
  queues_.host_wait(copied(static_cast<int>(n % 2)));
  host_ready_ = n;
}

void PinnedDoubleBuffer::check_stage(std::int64_t n, std::size_t bytes) const {
  NNFIT_CHECK(n == staged_, InvalidArgument, "batch ", n, " staged, but batch ", staged_, " is next");
  NNFIT_CHECK(bytes <= capacity_, InvalidArgument, "batch ", n, " has ", bytes, " bytes, the staging buffers ",
              capacity_);
  // Slot n % 2 still holds batch n-2 until a step has taken it.
  NNFIT_CHECK(n < 2 || consumed_ >= n - 1, InvalidArgument, "batch ", n, " staged before batch ", n - 2,
              " was consumed: the double buffer holds two batches");
}

void PinnedDoubleBuffer::stage(std::int64_t n, const void* src, std::size_t bytes) {
  check_stage(n, bytes);
  const int s = static_cast<int>(n % 2);
  NNFIT_CHECK(slots_[s].pinned, InvalidArgument, "batch ", n, " staged from the double buffer's own pinned memory, ",
              "which it was made without");
  // The copy of batch n-2 reads the pinned buffer when it runs: let it finish first.
  await_host(n);
  if (bytes) std::memcpy(slots_[s].pinned, src, bytes);
  const In part{slots_[s].pinned, 0, bytes};
  stage(n, std::span<const In>(&part, 1));
}

void PinnedDoubleBuffer::stage(std::int64_t n, std::span<const In> parts) {
  std::size_t end = 0;
  for (const In& p : parts) end = std::max(end, p.offset + p.bytes);
  check_stage(n, end);
  const int s = static_cast<int>(n % 2);
  // The step that took batch n-2 must have copied it out of the device buffer.
  if (n >= 2) queues_.wait(Queue::copy, consumed_event(s));
  char* device = static_cast<char*>(slots_[s].device);
  for (const In& p : parts) {
    if (p.bytes) queues_.copy_to_device(Queue::copy, device + p.offset, p.host, p.bytes);
  }
  queues_.record(Queue::copy, copied(s));
  bytes_[s] = end;
  ++staged_;
}

void PinnedDoubleBuffer::consume(std::int64_t n, void* input) {
  const int s = static_cast<int>(n % 2);
  const Out part{input, 0, n >= 0 && n < staged_ ? bytes_[s] : 0};
  consume(n, std::span<const Out>(&part, 1));
}

void PinnedDoubleBuffer::consume(std::int64_t n, std::span<const Out> parts) {
  NNFIT_CHECK(n == consumed_ && n < staged_, InvalidArgument, "step ", n, " asked for its batch, but ",
              consumed_, " batch(es) were consumed and ", staged_, " staged");
  const int s = static_cast<int>(n % 2);
  queues_.wait(Queue::compute, copied(s));
  const char* device = static_cast<const char*>(slots_[s].device);
  for (const Out& p : parts) {
    NNFIT_CHECK(p.offset + p.bytes <= bytes_[s], InvalidArgument, "step ", n, " reads bytes [", p.offset, ", ",
                p.offset + p.bytes, ") of a batch of ", bytes_[s]);
    if (p.bytes) queues_.copy_on_device(Queue::compute, p.input, device + p.offset, p.bytes);
  }
  queues_.record(Queue::compute, consumed_event(s));
  ++consumed_;
}

void PinnedDoubleBuffer::discard(std::int64_t n) {
  NNFIT_CHECK(n + 1 == staged_ && n == consumed_, InvalidArgument, "discarding batch ", n, ", but ", staged_,
              " batch(es) were staged and ", consumed_, " consumed");
  queues_.host_wait(copied(static_cast<int>(n % 2)));
  // The slot's events stay as recorded: batch n staged again waits for the same consumed
  // event (batch n-2's), and the host's next await_host(n) finds the copy done.
  --staged_;
  host_ready_ = std::min(host_ready_, n - 1);
}

void PinnedDoubleBuffer::end_step(std::int64_t n) {
  NNFIT_CHECK(n == ended_ && n < consumed_, InvalidArgument, "step ", n, " ended, but ", ended_,
              " step(s) ended and ", consumed_, " consumed");
  queues_.record(Queue::compute, first_event_ + kStepDone);
  ++ended_;
}

void PinnedDoubleBuffer::wait_step(std::int64_t n) {
  NNFIT_CHECK(n + 1 == ended_, InvalidArgument, "waiting for step ", n, ", but the last step ended is ", ended_ - 1);
  queues_.host_wait(first_event_ + kStepDone);
}

}  // namespace nnfit
