// PinnedDoubleBuffer (nnfit/backend/pinned_double_buffer.h): the order of work of Note
// [Double buffer events], over any DeviceQueues; the CUDA plugin's streams run it on a
// GPU, a simulated device checks it in tests/backend.
#include "nnfit/backend/pinned_double_buffer.h"

#include <cstring>

#include "nnfit/core/error.h"

namespace nnfit {

PinnedDoubleBuffer::PinnedDoubleBuffer(DeviceQueues& queues, Slot a, Slot b, std::size_t capacity_bytes)
    : queues_(queues), slots_{a, b}, capacity_(capacity_bytes) {
  NNFIT_CHECK(queues.num_events() >= kEvents, InvalidArgument, "the double buffer needs ", kEvents,
              " events, the queues have ", queues.num_events());
  for (const Slot& s : slots_) {
    NNFIT_CHECK(s.pinned && s.device, InvalidArgument, "the double buffer needs a pinned and a device buffer per slot");
  }
}

void PinnedDoubleBuffer::stage(std::int64_t n, const void* src, std::size_t bytes) {
  NNFIT_CHECK(n == staged_, InvalidArgument, "batch ", n, " staged, but batch ", staged_, " is next");
  NNFIT_CHECK(bytes <= capacity_, InvalidArgument, "batch ", n, " has ", bytes, " bytes, the staging buffers ",
              capacity_);
  // Slot n % 2 still holds batch n-2 until a step has taken it.
  NNFIT_CHECK(n < 2 || consumed_ >= n - 1, InvalidArgument, "batch ", n, " staged before batch ", n - 2,
              " was consumed: the double buffer holds two batches");
  const int s = static_cast<int>(n % 2);
  // The copy of batch n-2 reads the pinned buffer when it runs: let it finish first.
  if (n >= 2) queues_.host_wait(copied(s));
  if (bytes) std::memcpy(slots_[s].pinned, src, bytes);
  // The step that took batch n-2 must have copied it out of the device buffer.
  if (n >= 2) queues_.wait(Queue::copy, consumed_event(s));
  queues_.copy_to_device(Queue::copy, slots_[s].device, slots_[s].pinned, bytes);
  queues_.record(Queue::copy, copied(s));
  bytes_[s] = bytes;
  ++staged_;
}

void PinnedDoubleBuffer::consume(std::int64_t n, void* input) {
  NNFIT_CHECK(n == consumed_ && n < staged_, InvalidArgument, "step ", n, " asked for its batch, but ",
              consumed_, " batch(es) were consumed and ", staged_, " staged");
  const int s = static_cast<int>(n % 2);
  queues_.wait(Queue::compute, copied(s));
  queues_.copy_on_device(Queue::compute, input, slots_[s].device, bytes_[s]);
  queues_.record(Queue::compute, consumed_event(s));
  ++consumed_;
}

void PinnedDoubleBuffer::end_step(std::int64_t n) {
  NNFIT_CHECK(n == ended_ && n < consumed_, InvalidArgument, "step ", n, " ended, but ", ended_,
              " step(s) ended and ", consumed_, " consumed");
  queues_.record(Queue::compute, kStepDone);
  ++ended_;
}

void PinnedDoubleBuffer::wait_step(std::int64_t n) {
  NNFIT_CHECK(n + 1 == ended_, InvalidArgument, "waiting for step ", n, ", but the last step ended is ", ended_ - 1);
  queues_.host_wait(kStepDone);
}

}  // namespace nnfit
