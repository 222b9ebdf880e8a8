// Data-parallel training of a model on a device (Note [Device gradient sums]) on cuda-sim:
// two ranks are two threads, each with a model on its own simulated device. The host
// communicator sums host memory between the threads (MPI's part); the device communicator
// sums device buffers in order on the compute queue (NCCL's part: its sums start after the
// compute queue's work so far and the work after wait_all() follows them; the simulated
// one simply runs them on the compute queue, which gives that order). The two ranks must
// train as one process on the CPU does (the global batch's mean gradient, dropout drawn
// by global row), and the gradients must go through the device communicator.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_host/sim_data.h"
#include "cuda_host/sim_device.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit::testing {
namespace {

// The ranks' meeting point: the k-th call of each rank meets the k-th call of the others
// and hands each every rank's bytes, in rank order.
class Rendezvous {
 public:
  explicit Rendezvous(int ranks) : ranks_(ranks), slots_(static_cast<std::size_t>(ranks)) {}
  std::vector<std::vector<char>> exchange(int rank, const void* data, std::size_t bytes) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !draining_; });  // the last round's readers are gone
    const char* p = static_cast<const char*>(data);
    slots_[static_cast<std::size_t>(rank)].assign(p, p + bytes);
    if (++arrived_ == ranks_) {
      draining_ = true;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return draining_; });
    }
    std::vector<std::vector<char>> all = slots_;
    if (++left_ == ranks_) {
      arrived_ = left_ = 0;
      draining_ = false;
      cv_.notify_all();
    }
    return all;
  }
  template <typename T>
  void sum(int rank, T* data, std::int64_t count) {
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    const std::vector<std::vector<char>> all = exchange(rank, data, bytes);
    for (std::int64_t i = 0; i < count; ++i) {
      T s = 0;
      for (const auto& slot : all) s += reinterpret_cast<const T*>(slot.data())[i];  // rank order, every rank alike
      data[i] = s;
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int ranks_;
  int arrived_ = 0, left_ = 0;
  bool draining_ = false;
  std::vector<std::vector<char>> slots_;
};

// MPI's part: host memory, one thread per rank.
class ThreadComm final : public dist::Communicator {
 public:
  ThreadComm(Rendezvous& r, int rank, int size) : r_(r), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return rank_; }
  std::string name() const override { return "threads"; }
  void all_reduce_sum(float* data, std::int64_t count, const char*) override {
    r_.sum(rank_, data, count);
    if (count > 1) ++float_sums;
  }
  void all_reduce_sum(double* data, std::int64_t count, const char*) override { r_.sum(rank_, data, count); }
  void broadcast(void* data, std::int64_t bytes, int root, const char*) override {
    const auto all = r_.exchange(rank_, data, static_cast<std::size_t>(bytes));
    std::memcpy(data, all[static_cast<std::size_t>(root)].data(), static_cast<std::size_t>(bytes));
  }
  void barrier(const char*) override { r_.exchange(rank_, nullptr, 0); }
  void start_all_reduce_sum(float* data, std::int64_t count, const char* what) override {
    all_reduce_sum(data, count, what);  // the ranks start the buckets in the same order
  }
  void progress() override {}
  void wait_all() override {}
  [[noreturn]] void abort_job(const std::string& message, int) override {
    ADD_FAILURE() << "abort_job: " << message;
    std::abort();
  }
  std::atomic<int> float_sums{0};  // sums of more than one float (gradient buckets)

 private:
  Rendezvous& r_;
  int rank_, size_;
};

// NCCL's part: sums of simulated device memory, run on the compute queue in order (and
// so captured with its work: Note [Captured gradient sums]).
class SimDeviceComm final : public dist::Communicator {
 public:
  SimDeviceComm(std::shared_ptr<dist::Communicator> host, Rendezvous& r, void* stream)
      : host_(std::move(host)), r_(r), stream_(stream) {}
  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  int local_rank() const override { return host_->local_rank(); }
  std::string name() const override { return "cuda-sim sums over " + host_->name(); }
  void all_reduce_sum(float*, std::int64_t, const char* what) override { unexpected(what); }
  void all_reduce_sum(double*, std::int64_t, const char* what) override { unexpected(what); }
  void broadcast(void*, std::int64_t, int, const char* what) override { unexpected(what); }
  void barrier(const char* what) override { host_->barrier(what); }
  void start_all_reduce_sum(float* data, std::int64_t count, const char* what) override {
    EXPECT_TRUE(in_cuda_sim_memory(data, static_cast<std::size_t>(count) * sizeof(float)))
        << what << ": not device memory";
    const int rank = host_->rank();
    const bool queued = enqueue_on_cuda_sim_stream(stream_, [this, data, count, rank] {
      ++device_sums;  // when it runs: a graph's sums count at every launch
      std::vector<float> local(static_cast<std::size_t>(count));
      {
        const CudaSimOpen open;
        std::memcpy(local.data(), data, local.size() * sizeof(float));
      }
      r_.sum(rank, local.data(), count);
      const CudaSimOpen open;
      std::memcpy(data, local.data(), local.size() * sizeof(float));
    });
    EXPECT_TRUE(queued) << "the model gave the device communicator no simulated compute stream";
  }
  void progress() override {}
  // As NCCL's: the host waits, under no watchdog here, for the compute queue's work so far,
  // which holds the sums (and a launched graph's).
  void wait_all() override { EXPECT_TRUE(drain_cuda_sim_stream(stream_)); }
  bool capturable() const override { return true; }  // the sums are recorded with the compute queue's work
  [[noreturn]] void abort_job(const std::string& message, int code) override {
    host_->abort_job(message, code);
    std::abort();  // not reached: the host's ends the job
  }
  static inline std::atomic<int> device_sums{0};

 private:
  [[noreturn]] static void unexpected(const char* what) {
    throw InvalidArgument(std::string("the device communicator was asked for ") + what + ": only the buckets' sums go through it");
  }
  std::shared_ptr<dist::Communicator> host_;
  Rendezvous& r_;
  void* stream_;
};

// `queues`: where to put the sim backend's queues (for their counts).
// The model of the ranks: 12 -> 16 (relu) -> Dropout -> 4, or (`wide`, for memory
// limits) 64 -> 256 (relu) -> 4 without Dropout, whose micro-batches sum to the whole
// batch's gradient. `memory`: the sim's policy.
struct Net {
  bool wide = false;
  MemoryPolicy memory;
};

std::unique_ptr<Sequential> mlp(bool sim, DeviceQueues** queues = nullptr, Backend** backend_out = nullptr,
                                const Net& net = {}) {
  auto m = std::make_unique<Sequential>("m");
  if (sim) {
    std::unique_ptr<Backend> backend = make_cuda_sim_backend(net.memory);
    if (queues) *queues = backend->queues();
    if (backend_out) *backend_out = backend.get();
    m->set_backend(std::move(backend));
  }
  m->set_seed(9);
  if (net.wide) {
    m->set_input_shape(Shape{64});
    m->add(std::make_unique<Dense>("dense", DenseOptions{256, "relu"}));
  } else {
    m->set_input_shape(Shape{12});
    m->add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
    m->add(std::make_unique<Dropout>("dropout", 0.25));
  }
  m->add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  return m;
}

void compile(Model& m, const std::string& policy) {
  CompileOptions c;
  c.dtype_policy = DTypePolicy::from_name(policy);  // mixed_float16: with loss scaling
  c.optimizer.name = "adam";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(0.01);
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  c.metrics = {"accuracy"};
  m.compile(c);
}

struct RankResult {
  History history;
  std::vector<Tensor> weights;
  std::string error;
  std::int64_t graph_launches = 0;
  CudaSimStagings stagings;
  std::int64_t planned_peak = 0, measured_peak = 0;  // plan_memory(32) before fit; the allocator's after
  std::int64_t steps_bytes_to_host = 0;  // from the first epoch's start to the last training batch's end
};

// Counts the bytes the simulated device copied to host memory during the training batches.
class BytesToHost final : public Callback {
 public:
  explicit BytesToHost(Backend& b) : backend_(b) {}
  void on_epoch_begin(std::int64_t) override {
    if (!started_) start_ = cuda_sim_bytes_to_host(backend_);
    started_ = true;
  }
  void on_train_batch_end(std::int64_t, const Logs&) override { end_ = cuda_sim_bytes_to_host(backend_); }
  std::int64_t bytes() const { return end_ - start_; }

 private:
  Backend& backend_;
  bool started_ = false;
  std::int64_t start_ = 0, end_ = 0;
};

// Two ranks on cuda-sim, each in a thread, summing on the device (implementation
// automatic with the simulated device communicator) or in host memory (ring).
std::vector<RankResult> train_two_ranks(dist::CommunicationImplementation impl, const std::string& policy,
                                        const FitOptions& f, const Tensor& x, const Tensor& y, const Net& net = {}) {
  Rendezvous host(2), device(2);
  std::vector<RankResult> out(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto comm = std::make_shared<ThreadComm>(host, rank, 2);
        DeviceQueues* queues = nullptr;
        Backend* backend = nullptr;
        auto m = mlp(true, &queues, &backend, net);
        BytesToHost bytes(*backend);
        FitOptions fo = f;
        fo.callbacks.push_back(&bytes);
        DataParallelOptions dp;
        dp.bucket_bytes = 256;  // several buckets
        dp.implementation = impl;
        dp.make_device_communicator = [&device](std::shared_ptr<dist::Communicator> h, int index, void* stream) {
          EXPECT_EQ(index, 0);
          return std::make_unique<SimDeviceComm>(std::move(h), device, stream);
        };
        m->set_communicator(comm, dp);
        compile(*m, policy);
        RankResult& r = out[static_cast<std::size_t>(rank)];
        r.planned_peak = m->plan_memory(f.batch_size / 2).peak_bytes;  // this rank's slice
        r.history = m->fit(x, y, fo);
        r.steps_bytes_to_host = bytes.bytes();
        r.weights = m->get_weights();
        r.graph_launches = cuda_sim_graph_launches(*queues);
        r.stagings = cuda_sim_stagings(*queues);
        r.measured_peak = m->memory_stats().peak_bytes;
        if (impl == dist::CommunicationImplementation::automatic) {
          EXPECT_EQ(comm->float_sums.load(), 0) << "rank " << rank << ": gradients were summed in host memory";
        } else {
          EXPECT_GT(comm->float_sums.load(), 0) << "rank " << rank << ": ring summed no gradient in host memory";
        }
      } catch (const std::exception& e) {
        out[static_cast<std::size_t>(rank)].error = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

// `samples`: 200 gives 3 batches of 64 and one of 8 (4 rows per rank); 193 a last batch
// of 1, which leaves rank 1 without rows.
void expect_like_one_cpu_process(dist::CommunicationImplementation impl, const std::string& policy = "float32",
                                 std::int64_t samples = 200) {
  auto [x, y] = sim_data(samples, Shape{12}, 21);
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 64;
  f.shuffle = false;
  SimDeviceComm::device_sums = 0;
  const std::vector<RankResult> ranks = train_two_ranks(impl, policy, f, x, y);
  for (const RankResult& r : ranks) ASSERT_EQ(r.error, "");
  auto one = mlp(false);
  compile(*one, policy);
  const float tol = policy == "float32" ? 2e-4f : 2e-3f;
  const History h = one->fit(x, y, f);
  const std::vector<Tensor> want = one->get_weights();
  for (int rank = 0; rank < 2; ++rank) {
    const std::vector<Tensor>& got = ranks[static_cast<std::size_t>(rank)].weights;
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      for (std::int64_t j = 0; j < got[i].numel(); ++j) {
        ASSERT_NEAR(got[i].data<float>()[j], want[i].data<float>()[j], tol * (1 + std::fabs(want[i].data<float>()[j])))
            << "rank " << rank << " weight " << i << " element " << j;
      }
    }
    const auto loss = [](const History& hist, std::size_t e) {
      for (const auto& [k, v] : hist.epochs[e]) {
        if (k == "loss") return v;
      }
      return -1.0;
    };
    for (std::size_t e = 0; e < 2; ++e) {
      EXPECT_NEAR(loss(ranks[static_cast<std::size_t>(rank)].history, e), loss(h, e), 1e-3) << "epoch " << e;
    }
  }
  // 2 epochs of 4 steps, each summing every bucket on each rank.
  if (impl == dist::CommunicationImplementation::automatic) EXPECT_GE(SimDeviceComm::device_sums.load(), 2 * 2 * 4);
  else EXPECT_EQ(SimDeviceComm::device_sums.load(), 0);
}

TEST(CudaSimRanks, TwoRanksSumOnTheDeviceAndTrainAsOneProcess) {
  expect_like_one_cpu_process(dist::CommunicationImplementation::automatic);
}

// Loss scaling: each rank unscales and checks its gradients on the device before their
// sums (Note [Loss scale across ranks]); the ranks skip the same steps as one process.
TEST(CudaSimRanks, LossScaledStepsSumOnTheDeviceAndTrainAsOneProcess) {
  expect_like_one_cpu_process(dist::CommunicationImplementation::automatic, "mixed_float16");
}

// No gradient goes to host memory in a loss-scaled data-parallel step on the device: a
// step copies back its predictions, its loss and its count of non-finite gradients.
TEST(CudaSimRanks, ALossScaledStepCopiesBackOnlyItsResults) {
  auto [x, y] = sim_data(200, Shape{12}, 21);  // per epoch, slices of 32, 32, 32 and 4 rows
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 64;
  f.shuffle = false;
  const std::vector<RankResult> ranks =
      train_two_ranks(dist::CommunicationImplementation::automatic, "mixed_float16", f, x, y);
  // Predictions of 4 classes in float32, the loss and the non-finite count: per epoch
  // (3 · 32 + 4) · 16 + 4 · 8 bytes. The gradients alone are (12·16 + 16 + 16·4 + 4) · 4
  // = 1104 bytes a step.
  for (int rank = 0; rank < 2; ++rank) {
    const RankResult& r = ranks[static_cast<std::size_t>(rank)];
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.steps_bytes_to_host, 2 * ((3 * 32 + 4) * 16 + 4 * 8)) << "rank " << rank;
  }
}

TEST(CudaSimRanks, RingSumsInHostMemoryAndTrainsAsOneProcess) {
  expect_like_one_cpu_process(dist::CommunicationImplementation::ring);
}

// A slice that does not fit the rank's memory runs as micro-batches summed on the device
// (Note [Micro-batches on the device]), the sums copied into the buckets unscaled: the
// ranks train as one process does on the whole batch, and no gradient comes back to
// the host, in float32 and under loss scaling.
TEST(CudaSimRanks, ASliceThatDoesNotFitSumsItsMicroBatchesOnTheDevice) {
  auto [x, y] = sim_data(512, Shape{64}, 23);  // 2 batches of 256: slices of 128
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 256;
  f.shuffle = false;
  f.on_oom = "reduce_batch";
  Net net;
  net.wide = true;
  net.memory.limit_bytes = 600 * 1024;  // the weights, slots, buckets and sums fit; a slice of 128's arena does not
  for (const char* policy : {"float32", "mixed_float16"}) {
    SCOPED_TRACE(policy);
    const std::vector<RankResult> ranks = train_two_ranks(dist::CommunicationImplementation::automatic, policy, f, x, y, net);
    auto one = mlp(false, nullptr, nullptr, net);
    compile(*one, policy);
    const History h = one->fit(x, y, f);
    const float tol = std::string(policy) == "float32" ? 2e-4f : 2e-3f;
    for (int rank = 0; rank < 2; ++rank) {
      const RankResult& r = ranks[static_cast<std::size_t>(rank)];
      ASSERT_EQ(r.error, "");
      ASSERT_FALSE(r.history.notes.empty());
      std::string notes;
      for (const std::string& n : r.history.notes) notes += n + "\n";
      const std::size_t at = notes.find("micro-batches of ");
      ASSERT_NE(at, std::string::npos) << notes;
      const std::int64_t micro = std::atoll(notes.c_str() + at + 17);
      ASSERT_GT(micro, 0);
      // Per step and rank: each micro-batch's predictions (4 float32 a row), loss and
      // non-finite count; 2 steps an epoch.
      EXPECT_EQ(r.steps_bytes_to_host, 2 * 2 * (128 * 16 + (128 / micro) * 8)) << "rank " << rank << ", micro " << micro;
      const std::vector<Tensor> want = one->get_weights();
      ASSERT_EQ(r.weights.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        for (std::int64_t j = 0; j < want[i].numel(); ++j) {
          ASSERT_NEAR(r.weights[i].data<float>()[j], want[i].data<float>()[j], tol * (1 + std::fabs(want[i].data<float>()[j])))
              << "rank " << rank << " weight " << i << " element " << j;
        }
      }
    }
  }
}

TEST(CudaSimRanks, ARankWithoutRowsInTheLastBatchSumsZeros) {
  expect_like_one_cpu_process(dist::CommunicationImplementation::automatic, "float32", 193);
}

// A data-parallel step on a device (Note [Device gradient sums]): the next batch is staged
// while the step's backward pass and sums run (Note [Input double buffer]), the gradient
// program with its sums and the update program are captured once and replayed (Note
// [Captured steps], Note [Captured gradient sums]), and the memory plan of a rank's slice,
// with the update's own arena and the gradient buckets, is the measured peak.
TEST(CudaSimRanks, AStepStagesTheNextBatchReplaysItsSumsAndUpdateAndIsPlanned) {
  auto [x, y] = sim_data(200, Shape{12}, 21);  // 3 batches of 64 and one of 8 per epoch
  FitOptions f;
  f.epochs = 2;
  f.batch_size = 64;
  f.shuffle = false;
  for (auto impl : {dist::CommunicationImplementation::automatic, dist::CommunicationImplementation::ring}) {
    const bool nccl = impl == dist::CommunicationImplementation::automatic;
    SCOPED_TRACE(nccl ? "summed on the device" : "summed in host memory");
    const std::vector<RankResult> ranks = train_two_ranks(impl, "float32", f, x, y);
    for (int rank = 0; rank < 2; ++rank) {
      const RankResult& r = ranks[static_cast<std::size_t>(rank)];
      ASSERT_EQ(r.error, "");
      EXPECT_EQ(r.stagings.total, 8) << "rank " << rank << ": 2 epochs of 4 batches";
      // Every batch but the fit's first is staged while the compute queue holds the step
      // before it (its results' copies at least, where the gradients went to host memory);
      // the second epoch's first, behind the first epoch's last update.
      EXPECT_EQ(r.stagings.behind_compute, 7) << "rank " << rank;
      // Summed on the device, a step is two graphs: its gradient program with the sums
      // (Note [Captured gradient sums]) and its update; in host memory, the update alone.
      EXPECT_EQ(r.graph_launches, nccl ? 16 : 8) << "rank " << rank << ": graph launches";
      // (summed in host memory, the buckets are not the device's)
      EXPECT_EQ(r.measured_peak, r.planned_peak) << "rank " << rank;
      EXPECT_GT(r.planned_peak, 0);
    }
  }
}

}  // namespace
}  // namespace nnfit::testing
