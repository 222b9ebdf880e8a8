// PinnedDoubleBuffer: the input batches' way onto the device (docs/design/cuda.md, "The
// pinned double buffer"). Two slots, each a device buffer of one batch (and, for callers
// that do not keep their own, a pinned host buffer); batch n uses slot n % 2. stage(n)
// enqueues batch n's copies from pinned host memory into the slot's device buffer on the
// copy queue; consume(n) makes the compute queue wait for them and copies the slot into
// the step's inputs (device to device, on the compute queue), so the Program's arena
// offsets never change (and a captured CUDA graph reads one fixed address). So the copy
// of batch n+1 overlaps step n.
//
// A batch may be several parts (a model's inputs, targets and sample weights): each part
// is a pinned host buffer copied to an offset of the slot, and copied from there into its
// own input. The host memory batch n's copies read has parity n % 2: the slot's own pinned
// buffer, or the caller's buffers of that parity (the model keeps two sets per program).
//
// Note [Double buffer events]: three events per slot order the work, and nothing else
// synchronizes:
//   copied[s]   recorded on the copy queue after slot s's host-to-device copies: the
//               compute queue waits on it before reading the slot; the host waits on it
//               (await_host) before it writes host memory of that parity again (the copy
//               reads its source when it runs, not when it is enqueued);
//   consumed[s] recorded on the compute queue after the slot has been copied into the
//               step's inputs: the copy queue waits on it before it overwrites the slot's
//               device buffer with batch n+2;
//   step_done   recorded on the compute queue by end_step(): whoever reads the step's
//               outputs on the host (the loss) waits on it.
// The host never waits for the compute queue to stage a batch: only for the copy of the
// batch two back, which the copy queue finished long before in steady state.
//
// Thread safety: none; used from the training loop's thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "nnfit/backend/device_queues.h"

namespace nnfit {

class PinnedDoubleBuffer {
 public:
  static constexpr int kEvents = 5;  // copied[2], consumed[2], step_done
  static constexpr int kStepDone = 4;

  struct Slot {
    void* pinned = nullptr;  // host memory the device can read asynchronously (optional)
    void* device = nullptr;
  };
  // One part of a batch: `bytes` between host (pinned) or input memory and `offset` in the
  // slot's device buffer.
  struct In {
    const void* host;
    std::size_t offset, bytes;
  };
  struct Out {
    void* input;
    std::size_t offset, bytes;
  };
  // requires: queues has events first_event .. first_event + kEvents - 1, which nothing
  // else records; every device buffer (and pinned one, if given) holds `capacity_bytes`;
  // queues and buffers outlive this object.
  PinnedDoubleBuffer(DeviceQueues& queues, Slot a, Slot b, std::size_t capacity_bytes, int first_event = 0);

  // Blocks until host memory of batch n's parity may be written: the copies of batch
  // n-2 have read it. Cheap when called again for the same n.
  void await_host(std::int64_t n);
  // Batch `n` (0, 1, 2, ... in order) into slot n % 2: the host copies `bytes` from `src`
  // into the slot's pinned buffer (after the copy of batch n-2 has read it) and the copy
  // to the device is enqueued. throws: InvalidArgument when batches come out of order,
  // the slots have no pinned buffers, or `bytes` exceeds the capacity.
  void stage(std::int64_t n, const void* src, std::size_t bytes);
  // Batch `n` from the caller's pinned memory (written after await_host(n)): each part's
  // copy to its offset in slot n % 2 is enqueued. throws: InvalidArgument as stage().
  void stage(std::int64_t n, std::span<const In> parts);
  // Step n's input: the compute queue waits for batch n's copy, then copies it into
  // `input` (the step's arena slot). requires: stage(n) came first. throws:
  // InvalidArgument naming the batches when it did not.
  void consume(std::int64_t n, void* input);
  // As consume(n, input), each part into its own input.
  void consume(std::int64_t n, std::span<const Out> parts);
  // Forgets batch n, staged and never to be consumed (training stopped after it was
  // staged ahead): after its copies have run, batch n is next again. requires: n is the
  // last batch staged and was not consumed.
  void discard(std::int64_t n);
  // After step n's kernels are enqueued: marks its end (the event step_done).
  void end_step(std::int64_t n);
  // Blocks until step n's kernels have run (before reading its loss on the host).
  void wait_step(std::int64_t n);

  std::int64_t staged() const { return staged_; }      // batches staged so far
  std::int64_t consumed() const { return consumed_; }  // batches consumed so far
  std::size_t capacity() const { return capacity_; }

 private:
  int copied(int slot) const { return first_event_ + slot; }
  int consumed_event(int slot) const { return first_event_ + 2 + slot; }
  void check_stage(std::int64_t n, std::size_t bytes) const;
  DeviceQueues& queues_;
  Slot slots_[2];
  std::size_t capacity_;
  int first_event_;
  std::size_t bytes_[2] = {0, 0};
  std::int64_t staged_ = 0, consumed_ = 0, ended_ = 0;
  std::int64_t host_ready_ = -1;  // the last n await_host waited for
};

}  // namespace nnfit
