// PinnedDoubleBuffer: the input batches' way onto the device (docs/design/cuda.md, "The
// pinned double buffer"). Two slots, each a pinned host buffer and a device buffer of one
// batch; batch n uses slot n % 2. stage(n) writes the batch into the pinned buffer and
// enqueues its copy to the device on the copy queue; consume(n) makes the compute queue
// wait for that copy and copies the slot into the step's input (device to device, on the
// compute queue), so the Program's arena offsets never change (and a captured CUDA graph
// reads one fixed address). So the copy of batch n+1 overlaps step n.
//
// Note [Double buffer events]: three events per slot order the work, and nothing else
// synchronizes:
//   copied[s]   recorded on the copy queue after slot s's host-to-device copy: the compute
//               queue waits on it before reading the slot; the host waits on it before it
//               writes the slot's pinned buffer again (the copy reads that buffer when it
//               runs, not when it is enqueued);
//   consumed[s] recorded on the compute queue after the slot has been copied into the
//               step's input: the copy queue waits on it before it overwrites the slot's
//               device buffer with batch n+2;
//   step_done   recorded on the compute queue by end_step(): whoever reads the step's
//               outputs on the host (the loss) waits on it.
// The host never waits for the compute queue to stage a batch: only for the copy of the
// batch two back, which the copy queue finished long before in steady state.
//
// Thread safety: none; used from the training loop's thread.
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/backend/device_queues.h"

namespace nnfit {

class PinnedDoubleBuffer {
 public:
  static constexpr int kEvents = 5;  // copied[2], consumed[2], step_done
  static constexpr int kStepDone = 4;

  struct Slot {
    void* pinned = nullptr;  // host memory the device can read asynchronously
    void* device = nullptr;
  };
  // requires: queues has at least kEvents events; every buffer holds `capacity_bytes`;
  // queues and buffers outlive this object.
  PinnedDoubleBuffer(DeviceQueues& queues, Slot a, Slot b, std::size_t capacity_bytes);

  // Batch `n` (0, 1, 2, ... in order) into slot n % 2: the host copies `bytes` from `src`
  // into its pinned buffer (after the copy of batch n-2 has read it) and the copy to the
  // device is enqueued. throws: InvalidArgument when batches come out of order or
  // `bytes` exceeds the capacity.
  void stage(std::int64_t n, const void* src, std::size_t bytes);
  // Step n's input: the compute queue waits for batch n's copy, then copies it into
  // `input` (the step's arena slot). requires: stage(n) came first. throws:
  // InvalidArgument naming the batches when it did not.
  void consume(std::int64_t n, void* input);
  // After step n's kernels are enqueued: marks its end (the event step_done).
  void end_step(std::int64_t n);
  // Blocks until step n's kernels have run (before reading its loss on the host).
  void wait_step(std::int64_t n);

  std::int64_t staged() const { return staged_; }      // batches staged so far
  std::int64_t consumed() const { return consumed_; }  // batches consumed so far

 private:
  static int copied(int slot) { return slot; }
  static int consumed_event(int slot) { return 2 + slot; }
  DeviceQueues& queues_;
  Slot slots_[2];
  std::size_t capacity_;
  std::size_t bytes_[2] = {0, 0};
  std::int64_t staged_ = 0, consumed_ = 0, ended_ = 0;
};

}  // namespace nnfit
