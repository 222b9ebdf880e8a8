// cuda-sim's queues (sim_device.h): DeviceQueues whose work runs as late as CUDA allows.
// Note [Lazy simulated queues]: on a GPU, work enqueued on a stream runs at some time
// after the call, in order on its stream, and the host sees its effects only after it
// waits for an event recorded after it; Backend::copy (cudaMemcpy on the legacy default
// stream) is not ordered with non-blocking streams at all. Here nothing enqueued runs
// until the host waits for an event (or the queues go), so host code that reads a
// step's results, or copies over a buffer a queued kernel still reads, without waiting
// first sees stale bytes, and a test comparing with the CPU fails; on a GPU the same
// mistake is a race that passes most of the time.
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <vector>

#include "cuda_host/sim_device.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/core/error.h"

namespace nnfit::testing {
namespace {

class SimQueues;

struct Live {
  std::mutex mu;
  std::set<SimQueues*> queues;
};
Live& live() {
  static Live l;
  return l;
}

class SimQueues final : public DeviceQueues {
 public:
  SimQueues() {
    std::lock_guard<std::mutex> lock(live().mu);
    live().queues.insert(this);
  }
  ~SimQueues() override {
    {
      std::lock_guard<std::mutex> lock(live().mu);
      live().queues.erase(this);
    }
    // As cudaStreamDestroy: the work already enqueued still runs.
    while (step(0) || step(1)) {
    }
  }
  int num_events() const override { return Backend::kQueueEvents; }
  void copy_to_device(Queue q, void* dst, const void* src, std::size_t bytes) override { copy(q, dst, src, bytes); }
  void copy_on_device(Queue q, void* dst, const void* src, std::size_t bytes) override { copy(q, dst, src, bytes); }
  void copy_to_host(Queue q, void* dst, const void* src, std::size_t bytes) override {
    // Counted when it runs, so a copy in a replayed graph counts at every replay.
    enqueue(q, {[this, dst, src, bytes] {
                  const CudaSimOpen open;
                  std::memcpy(dst, src, bytes);
                  bytes_to_host_ += static_cast<std::int64_t>(bytes);
                },
                nullptr});
  }
  void record(Queue q, int e) override {
    check(e);
    // A record on the copy queue ends a batch's staging (PinnedDoubleBuffer::stage).
    if (q == Queue::copy && capture_ < 0) {
      ++stagings_;
      if (!q_[0].empty()) ++stagings_behind_compute_;
    }
    const std::int64_t gen = ++issued_[e];
    enqueue(q, {[this, e, gen] { reached_[e] = gen; }, nullptr});
  }
  void wait(Queue q, int e) override {
    check(e);
    const std::int64_t gen = issued_[e];  // the most recent record at the time of the call
    enqueue(q, {nullptr, [this, e, gen] { return reached_[e] < gen; }});
  }
  void host_wait(int e) override {
    check(e);
    while (reached_[e] < issued_[e]) {
      NNFIT_CHECK(step(0) || step(1), BackendError, "cuda-sim: the host waits for event ", e,
                  " that no queue can reach (a deadlock)");
    }
  }
  void* native(Queue q) override { return reinterpret_cast<char*>(this) + index(q); }
  // A graph is the recorded list of what was enqueued on the capturing queue; a launch
  // enqueues copies of it (the kernels with the pointers and step values of the capture).
  bool supports_graphs() const override { return true; }
  void begin_capture(Queue q) override {
    NNFIT_CHECK(capture_ < 0, InvalidArgument, "cuda-sim: a capture is already under way");
    capture_ = index(q);
    recorded_.clear();
  }
  int end_capture(Queue q) override {
    NNFIT_CHECK(capture_ == index(q), InvalidArgument, "cuda-sim: end_capture on a queue that is not capturing");
    capture_ = -1;
    graphs_.push_back(std::move(recorded_));
    recorded_.clear();
    return static_cast<int>(graphs_.size()) - 1;
  }
  void launch_graph(Queue q, int g) override {
    NNFIT_CHECK(g >= 0 && g < static_cast<int>(graphs_.size()), InvalidArgument, "cuda-sim: graph ", g, " does not exist");
    for (const Op& op : graphs_[static_cast<std::size_t>(g)]) q_[index(q)].push_back(op);
    ++launches_;
  }
  void drop_graph(int g) override {
    if (g >= 0 && g < static_cast<int>(graphs_.size())) graphs_[static_cast<std::size_t>(g)].clear();
  }
  std::int64_t graph_launches() const { return launches_; }
  std::int64_t stagings() const { return stagings_; }
  std::int64_t stagings_behind_compute() const { return stagings_behind_compute_; }
  std::int64_t bytes_to_host() const { return bytes_to_host_; }

  // The queue whose native handle is `stream`, or null.
  static SimQueues* find(void* stream, Queue* which) {
    std::lock_guard<std::mutex> lock(live().mu);
    for (SimQueues* s : live().queues) {
      for (Queue q : {Queue::compute, Queue::copy}) {
        if (s->native(q) == stream) {
          *which = q;
          return s;
        }
      }
    }
    return nullptr;
  }
  void enqueue_work(Queue q, std::function<void()> work) { enqueue(q, {std::move(work), nullptr}); }
  void drain(Queue q) {
    while (!q_[index(q)].empty()) {
      NNFIT_CHECK(step(0) || step(1), BackendError, "cuda-sim: the host drains a queue that waits for an event no "
                  "queue can reach (a deadlock)");
    }
  }

 private:
  struct Op {
    std::function<void()> run;
    std::function<bool()> blocked;
  };
  static int index(Queue q) { return q == Queue::compute ? 0 : 1; }
  void check(int e) const {
    NNFIT_CHECK(e >= 0 && e < Backend::kQueueEvents, InvalidArgument, "cuda-sim: event ", e, " of ", Backend::kQueueEvents);
  }
  void copy(Queue q, void* dst, const void* src, std::size_t bytes) {
    enqueue(q, {[dst, src, bytes] {
                  const CudaSimOpen open;
                  std::memcpy(dst, src, bytes);
                },
                nullptr});
  }
  void enqueue(Queue q, Op op) {
    if (capture_ == index(q)) recorded_.push_back(std::move(op));
    else q_[index(q)].push_back(std::move(op));
  }
  bool step(int i) {
    if (q_[i].empty() || (q_[i].front().blocked && q_[i].front().blocked())) return false;
    Op op = std::move(q_[i].front());
    q_[i].pop_front();
    if (op.run) op.run();
    return true;
  }

  std::deque<Op> q_[2];  // compute, copy
  int capture_ = -1;     // the queue being captured
  std::vector<Op> recorded_;
  std::vector<std::vector<Op>> graphs_;
  std::int64_t launches_ = 0;
  std::int64_t stagings_ = 0, stagings_behind_compute_ = 0;
  std::int64_t bytes_to_host_ = 0;
  std::int64_t issued_[Backend::kQueueEvents] = {}, reached_[Backend::kQueueEvents] = {};
};

}  // namespace

std::unique_ptr<DeviceQueues> make_cuda_sim_queues() { return std::make_unique<SimQueues>(); }

std::int64_t cuda_sim_graph_launches(DeviceQueues& queues) {
  auto* s = dynamic_cast<SimQueues*>(&queues);
  return s ? s->graph_launches() : 0;
}

CudaSimStagings cuda_sim_stagings(DeviceQueues& queues) {
  auto* s = dynamic_cast<SimQueues*>(&queues);
  return s ? CudaSimStagings{s->stagings(), s->stagings_behind_compute()} : CudaSimStagings{};
}

std::int64_t cuda_sim_queue_bytes_to_host(DeviceQueues& queues) {
  auto* s = dynamic_cast<SimQueues*>(&queues);
  return s ? s->bytes_to_host() : 0;
}

bool enqueue_on_cuda_sim_stream(void* stream, std::function<void()> work) {
  Queue q = Queue::compute;
  SimQueues* s = SimQueues::find(stream, &q);
  if (!s) return false;
  s->enqueue_work(q, std::move(work));
  return true;
}

bool drain_cuda_sim_stream(void* stream) {
  Queue q = Queue::compute;
  SimQueues* s = SimQueues::find(stream, &q);
  if (!s) return false;
  s->drain(q);
  return true;
}

}  // namespace nnfit::testing
