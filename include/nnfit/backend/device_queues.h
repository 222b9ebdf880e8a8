// DeviceQueues: the two in-order queues a model's step uses on a device, and the events
// that order them (docs/design/cuda.md, "Streams"). On CUDA a queue is a cudaStream_t and
// an event a cudaEvent_t (the CUDA plugin's cuda_queues.cpp); the interface exists so the
// order of work the training step asks for (pinned_double_buffer.h) is plain C++ that a
// simulated device checks here, where no GPU runs it.
//
// Semantics (CUDA's): work on one queue runs in the order enqueued; record(q, e) marks
// the point after everything enqueued on q so far; wait(q, e) makes later work on q wait
// until the most recent record of e (at the time of the wait call) has been reached; a
// wait on an event never recorded does not wait. host_wait(e) blocks the calling thread
// until e's most recent record has been reached.
//
// Thread safety: one DeviceQueues is used from one thread (the training loop's).
#pragma once
#include <cstddef>
#include <memory>

namespace nnfit {

enum class Queue {
  compute,  // every kernel of the step (StepContext::stream), and the device-side input copy
  copy,     // host-to-device copies of the next batch, overlapping the step
};

class DeviceQueues {
 public:
  virtual ~DeviceQueues() = default;
  // Events are numbered 0 .. num_events-1, made with the queues.
  virtual int num_events() const = 0;
  // Enqueues an asynchronous copy of `bytes` from host `src` (pinned) to device `dst`, or
  // between two device buffers, on `queue`. requires: src stays untouched until the
  // copy has run (an event recorded after it says when).
  virtual void copy_to_device(Queue queue, void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_on_device(Queue queue, void* dst, const void* src, std::size_t bytes) = 0;
  // Enqueues an asynchronous copy from device `src` to host `dst` (pinned, or pageable at
  // the cost of the overlap): `dst` holds the bytes once an event recorded after it has
  // been reached (host_wait).
  virtual void copy_to_host(Queue queue, void* dst, const void* src, std::size_t bytes) = 0;
  virtual void record(Queue queue, int event) = 0;
  virtual void wait(Queue queue, int event) = 0;
  virtual void host_wait(int event) = 0;
  // The native handle of `queue` (a cudaStream_t) for StepContext::stream; null on a device
  // without queues.
  virtual void* native(Queue queue) = 0;

  // Graphs (CUDA graphs; Note [Captured steps]): between begin_capture and end_capture the
  // work enqueued on `queue` is recorded, not run; end_capture returns an id whose
  // launch_graph enqueues all of it again, with the arguments it had when recorded.
  // end_capture throws BackendError when the capture failed (something enqueued cannot be
  // captured): the queue is then out of capture and nothing recorded has run. Queues
  // without graphs (the default) say so with supports_graphs() and throw Unsupported.
  virtual bool supports_graphs() const { return false; }
  virtual void begin_capture(Queue queue);
  virtual int end_capture(Queue queue);
  virtual void launch_graph(Queue queue, int graph);
  virtual void drop_graph(int graph);
};

// The queues of cuda:`device_index`: two non-blocking streams and `num_events` events
// made without timing (cudaEventDisableTiming). Loads the CUDA plugin. throws: Unsupported
// as make_backend does when CUDA cannot be used.
std::unique_ptr<DeviceQueues> make_cuda_queues(int device_index, int num_events);

}  // namespace nnfit
