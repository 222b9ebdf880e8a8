// Data-parallel training (docs/design/distributed.md): each rank trains on its slice of
// the global batch with the replicated step (ReplicatedStep, replicated_step.cpp: the
// gradient program on the slice, bucket sums across ranks while the backward pass goes on,
// the update from their global mean). Here: the communicator and strategy, the sharding
// rule, the choice of where gradients are summed, the gradient buckets, the state
// broadcast and the exact reduction of loss and metric sums.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "engine/engine_types.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/buckets.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/dist/nccl_communicator.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/memory/allocator.h"
#include "nnfit/nn/lr_schedule.h"

namespace nnfit {

void StepEngine::set_communicator(std::shared_ptr<dist::Communicator> comm, DataParallelOptions options) {
  NNFIT_CHECK(options.bucket_bytes >= 0, InvalidArgument, "bucket_bytes must be >= 0, got ", options.bucket_bytes);
  // strategy() names what this is: one replica per process (set_strategy overrides it).
  if (comm) {
    dist::CommunicationOptions co;
    co.bytes_per_pack = options.bucket_bytes;
    co.overlap = options.overlap;
    co.implementation = options.implementation;
    co.timeout_seconds = options.collective_timeout_s;
    strategy_ = std::make_shared<dist::MultiWorkerMirroredStrategy>(comm, co);
  } else {
    strategy_.reset();
  }
  comm_ = std::move(comm);
  device_comm_.reset();
  data_parallel_ = options;
  replicas_.reset();
  drop_lookahead();  // a batch staged ahead belongs to an entry about to go
  if (programs_) programs_->entries.clear();  // training programs become gradient programs
}

void StepEngine::set_strategy(std::shared_ptr<dist::Strategy> strategy) {
  NNFIT_CHECK(!model_.compiled_, InvalidArgument, "model '", model_.name_, "': set_strategy() after compile(); choose the ",
              "strategy before compile, as Keras builds a model in strategy.scope()");
  if (strategy) {
    const std::vector<Device> devices = strategy->devices();
    NNFIT_CHECK(std::find(devices.begin(), devices.end(), device()) != devices.end(), InvalidArgument, "model '",
                model_.name_, "': ", strategy->name(), " runs on devices the model is not on (the model is on ",
                device().to_string(), ")");
    const dist::CommunicationOptions& co = strategy->communication_options();
    DataParallelOptions options;
    options.bucket_bytes = co.bytes_per_pack;
    options.overlap = co.overlap;
    options.implementation = co.implementation;
    options.collective_timeout_s = co.timeout_seconds;
    set_communicator(strategy->communicator(), options);
  } else {
    set_communicator(nullptr);
  }
  strategy_ = std::move(strategy);
}

bool StepEngine::replicated() const { return comm_ && comm_->size() > 1; }

int StepEngine::replica_count() const { return comm_ ? comm_->size() : 1; }

// Note [Replica slices]: a global batch of `rows` is split into contiguous slices of
// floor/ceil sizes, rank r taking [rows*r/N, rows*(r+1)/N). A full batch splits evenly
// (check_replicable); a last partial batch may leave a rank fewer rows, or none: its
// gradient seed is its share of the rows (Note [Replica gradient seed]), so the sum over
// ranks is the global batch's.
std::pair<std::int64_t, std::int64_t> StepEngine::replica_slice(std::int64_t rows) const {
  if (!replicated()) return {0, rows};
  const std::int64_t n = comm_->size(), r = comm_->rank();
  return {rows * r / n, rows * (r + 1) / n};
}

void StepEngine::check_replicable(std::int64_t batch_size) const {
  if (!replicated()) return;
  const int n = comm_->size();
  NNFIT_CHECK(batch_size % n == 0, InvalidArgument, "batch_size ", batch_size, " does not split evenly across ",
              n, " replicas (batch_size is the global batch, as in Keras's distribution strategies); ",
              "use a batch_size that is a multiple of ", n, ", e.g. ", (batch_size / n + 1) * n);
}

// Note [Micro-batches across ranks]: under on_oom="reduce_batch" a rank whose slice of
// the global batch does not fit runs it as micro-batches (entry_or_split, as one process
// does) and sums their gradients, weighted by their rows, before the sum across ranks:
// the global batch stays batch_size and the update is its mean gradient. Nothing forces
// the other ranks to split too, but they agree to (one sum of a vector of N sizes, once
// per fit, after the full slice is planned): every rank runs micro-batches of the same
// size, the smallest any needs, so the global micro-batch N * micro splits evenly, the
// ranks' steps take about as long (a rank with one slice would wait for the split one
// anyway), and rank 0, which alone prints, makes the note even when rank 1 ran out of
// memory. A ragged last batch's slice is smaller; it is planned when it first comes and
// splits alone if it does not fit (no collective there; the sum is the same).
void StepEngine::agree_on_micro_batches(std::int64_t batch_size, const SampleShapes& samples) {
  if (!replicated() || !reduce_on_oom_) return;
  const auto [lo, hi] = replica_slice(batch_size);
  const std::int64_t slice = std::max<std::int64_t>(hi - lo, 1);
  Entry& e = entry_mode(training_mode(), slice, /*bind=*/false, samples);
  const std::int64_t own = e.split ? e.split->micro : slice;
  std::vector<double> micro(static_cast<std::size_t>(comm_->size()), 0.0);
  micro[static_cast<std::size_t>(comm_->rank())] = static_cast<double>(own);
  comm_->all_reduce_sum(micro.data(), comm_->size(), "allreduce of the ranks' micro-batch sizes");
  const auto least = std::min_element(micro.begin(), micro.end());
  if (static_cast<std::int64_t>(*least) >= own) return;
  make_split(e, true, slice, static_cast<std::int64_t>(*least),
             "rank " + std::to_string(least - micro.begin()) + " ran out of memory");
}

namespace {

// Note [Gradient buckets]: the buckets follow the reverse of the layer order, the order
// in which the backward pass finishes the gradients, so the first bucket's sum starts
// while the gradients of the early layers are still being computed. Buckets start in
// index order on every rank (MPI matches collectives by order), a bucket waiting for its
// predecessors even when it is complete first.
// (A template only because StepEngine::Replicas is private: R is that.)
// On a device (Note [Device gradient sums]) each bucket starts at a multiple of 64 floats
// (Note [Device gradient buckets]); on the CPU they are packed tight.
dist::BucketLayout bucket_layout(const std::vector<Weight*>& trainable, std::int64_t bucket_bytes, bool on_device) {
  std::vector<std::int64_t> counts;
  for (const Weight* w : trainable) counts.push_back(w->value.numel());
  return dist::plan_buckets(counts, bucket_bytes, on_device ? 64 : 1);
}

template <typename R>
dist::BucketLayout make_buckets(R& rp, const std::vector<Weight*>& trainable, std::int64_t bucket_bytes) {
  dist::BucketLayout layout = bucket_layout(trainable, bucket_bytes, rp.on_device);
  rp.offset = layout.offset;
  rp.bucket_of = layout.bucket_of;
  rp.buckets = layout.buckets;
  return layout;
}

}  // namespace

// Note [Device gradient sums]: a model on a GPU trained by several ranks sums its gradient
// buckets where they are made, on the device, with NCCL (device_comm_, made over the host
// communicator comm_, which keeps every other collective: the state broadcast, the loss
// and metric sums, the agreements, all on host memory). Each gradient is copied (device
// to device, on the compute queue, right after the kernel that finished it) into the flat
// buffer of buckets, in device memory; a complete bucket's sum starts on NCCL's stream
// after the compute queue's work so far, and wait_all makes the compute queue wait for
// the sums; the update's inputs are copied from the sums on the compute queue, so the step
// never goes through host memory (a loss-scaled step unscales and checks its gradients
// before the sums: Note [Loss scale across ranks]). The update program runs in
// Programs::update_arena, captured like any program. Every rank must choose alike, or
// one would enter NCCL's bootstrap alone: so each says whether it can load NCCL and they
// sum the answers. With implementation
// automatic a rank that cannot makes all of them sum in host memory over comm_ (copies to
// and from the device, as before NCCL), with a note naming why; with nccl it is an error;
// with ring they always sum in host memory.
void StepEngine::choose_gradient_sums() {
  if (!replicated() || !queued_device() || data_parallel_.implementation == dist::CommunicationImplementation::ring) {
    if (device_comm_) replicas_.reset();
    device_comm_.reset();
    return;
  }
  if (device_comm_ && device_comm_device_ == device()) return;
  device_comm_.reset();
  replicas_.reset();
  std::string why_not;  // this rank's reason it cannot sum on the device
  if (!data_parallel_.make_device_communicator) {
    const dist::CommunicatorInfo nccl = dist::nccl_info();
    if (!nccl.available) why_not = nccl.detail;
  }
  double missing = why_not.empty() ? 0.0 : 1.0;
  comm_->all_reduce_sum(&missing, 1, "allreduce of the ranks' NCCL availability");
  if (missing > 0) {
    const std::string reason =
        why_not.empty() ? std::to_string(static_cast<int>(missing)) + " other rank(s) cannot load NCCL" : why_not;
    NNFIT_CHECK(data_parallel_.implementation != dist::CommunicationImplementation::nccl, Unsupported,
                "model '", model_.name_, "': data-parallel gradients on ", device().to_string(), " over NCCL: ", reason,
                "; install NCCL beside the CUDA toolkit and rebuild, or let nnfit sum them in host memory ",
                "(implementation auto or ring)");
    if (notes_) {
      notes_->push_back("data-parallel on " + device().to_string() + ": the gradients are summed in host memory over " +
                        comm_->name() + ", not on the device over NCCL (" + reason + ")");
      if (on_note_) on_note_(notes_->back());
    }
    return;
  }
  const dist::DeviceCommunicatorFactory make =
      data_parallel_.make_device_communicator
          ? data_parallel_.make_device_communicator
          : [timeout = data_parallel_.collective_timeout_s](std::shared_ptr<dist::Communicator> host, int index,
                                                            void* stream) {
              dist::CommunicatorOptions o;
              o.timeout_s = timeout;
              return dist::make_nccl_communicator(std::move(host), index, stream, o);
            };
  device_comm_ = make(comm_, device().index, backend_->queues()->native(Queue::compute));
  device_comm_device_ = device();
  if (notes_) {
    notes_->push_back("data-parallel on " + device().to_string() + ": the gradients are summed on the device over " +
                      device_comm_->name());
    if (on_note_) on_note_(notes_->back());
  }
}

// Note [Captured gradient sums]: on a device whose gradients NCCL sums, a data-parallel
// step's gradient program is captured with its sums (Note [Captured steps]). The capture
// of the compute stream holds the program's kernels, each gradient's copy into the bucket
// buffer right after the kernel that made it, each bucket's ncclAllReduce once complete
// (NCCL's stream joins the capture through the event the compute stream records before it;
// NCCL captures collectives from 2.9.6 on) and, last, the join: the compute stream waits
// for NCCL's (Communicator::join), as a capture must end. Each later step launches that
// one graph, sums included. The host cannot poll an event inside a graph, so the watchdog
// (Note [NCCL watchdog]) polls one the compute stream records after the launch
// (Communicator::wait_all), which the step's results' copies also follow: the host reads
// the loss after the watchdog's wait, so a dead peer is a CollectiveTimeout, never a hang
// in the results' wait. The seed is copied into `one` on the compute queue, so nothing
// waits for the device before the launch. A step run kernel by kernel (timed by the
// profiler, NNFIT_CUDA_GRAPHS=0, a communicator that cannot capture) enqueues the same work
// in the same order. A rank without rows starts its sums of zeros directly; NCCL lets direct
// and captured launches mix on one communicator (NCCL_GRAPH_MIXING_SUPPORT, on by default).
// On cuda-sim the simulated communicator enqueues its sums on the compute queue, so the
// capture records them and every launch runs them again: CudaSimRanks.* train as one CPU
// process with the sums replayed.
StepEngine::Replicas& StepEngine::replica_state() {
  if (!replicas_) {
    replicas_ = std::make_unique<Replicas>();
    Replicas& rp = *replicas_;
    rp.on_device = device_comm_ != nullptr;
    const dist::BucketLayout layout = make_buckets(rp, programs_->trainable, data_parallel_.bucket_bytes);
    // Where the sums run: the backend's memory on the CPU and for NCCL on a device (so the
    // memory plan and the measured peak count it; zeros: on a device the gaps between
    // buckets sum as zeros), host memory where a device's gradients are summed over MPI.
    const std::int64_t floats = std::max<std::int64_t>(layout.total_floats, 1);
    if (rp.on_device || backend_->host_addressable()) {
      reserve_buffer(rp.flat, static_cast<std::size_t>(floats) * sizeof(float), "gradient buckets", "data-parallel",
                     DType::f32);
      const std::vector<float> zeros(static_cast<std::size_t>(floats), 0.0f);
      write_buffer(rp.flat.raw(), zeros.data(), rp.flat.nbytes());
    } else {
      rp.flat = Tensor::zeros(Shape{floats}, DType::f32);
    }
  }
  return *replicas_;
}

std::int64_t StepEngine::gradient_buckets_bytes() const {
  const bool device_model = !backend_->host_addressable();
  // On a device the buckets are its memory when NCCL sums them: once fit has chosen, as
  // it chose; before, unless implementation ring says host memory.
  const bool in_backend = !device_model || (replicas_ ? replicas_->on_device
                                                      : data_parallel_.implementation !=
                                                            dist::CommunicationImplementation::ring);
  if (!in_backend || !programs_) return 0;
  const dist::BucketLayout layout = bucket_layout(programs_->trainable, data_parallel_.bucket_bytes, device_model);
  return std::max<std::int64_t>(layout.total_floats, 1) * static_cast<std::int64_t>(sizeof(float));
}

void StepEngine::reserve_replica_update() {
  replica_state();
  reserve_update_arena("data-parallel");
}

void StepEngine::broadcast_state(std::int64_t& start_epoch, std::int64_t& skip) {
  if (!replicated()) return;
  comm_->set_step(iterations_);
  // On a device through host copies (host_view is the tensor itself on the CPU).
  for (Weight* w : model_.weights()) {
    Tensor h = host_view(w->value);
    comm_->broadcast(h.raw(), static_cast<std::int64_t>(h.nbytes()), 0, "broadcast of the weights from rank 0");
    write_tensor(w->value, h);
  }
  for (auto& slots : programs_->slots) {
    for (Tensor& t : slots) {
      Tensor h = host_view(t);
      comm_->broadcast(h.raw(), static_cast<std::int64_t>(h.nbytes()), 0,
                       "broadcast of the optimizer state from rank 0");
      write_tensor(t, h);
    }
  }
  agree_on_callbacks();  // rank 0's learning rate (a restored ReduceLROnPlateau's)
  // Where rank 0 resumes (its BackupAndRestore read the backup): every rank starts there.
  // And the dynamic loss scale with its finite-step count (a restored backup's).
  std::int64_t where[4] = {iterations_, start_epoch, skip, loss_scale_good_steps_};
  comm_->broadcast(where, sizeof(where), 0, "broadcast of the iteration count from rank 0");
  iterations_ = where[0];
  start_epoch = where[1];
  skip = where[2];
  loss_scale_good_steps_ = where[3];
  comm_->broadcast(&loss_scale_, sizeof(loss_scale_), 0, "broadcast of the loss scale from rank 0");
}

void StepEngine::reduce_totals(Totals& t, const char* what) {
  if (!replicated()) return;
  std::vector<double> sums{t.loss_sum, static_cast<double>(t.seen)};
  sums.insert(sums.end(), t.output_loss_sums.begin(), t.output_loss_sums.end());
  for (const auto& m : t.metrics) sums.insert(sums.end(), m.metric.sums().begin(), m.metric.sums().end());
  comm_->all_reduce_sum(sums.data(), static_cast<std::int64_t>(sums.size()), what);
  std::size_t at = 0;
  t.loss_sum = sums[at++];
  t.seen = static_cast<std::int64_t>(sums[at++]);
  for (double& s : t.output_loss_sums) s = sums[at++];
  for (auto& m : t.metrics) {
    const std::size_t n = m.metric.sums().size();
    m.metric.set_sums(std::vector<double>(sums.begin() + static_cast<std::ptrdiff_t>(at),
                                          sums.begin() + static_cast<std::ptrdiff_t>(at + n)));
    at += n;
  }
}

// Note [Moving statistics across ranks]: each rank's BatchNormalization updates its moving
// mean and variance from its own slice. The moving average is linear, so the mean over
// ranks of their moving means is the moving average of the global batches' means (equal
// slices), the same whenever it is taken: once per epoch, before validation reads them and
// callbacks save them, suffices. For the variance it is the mean of the slices' variances,
// which misses the spread between slices (as Keras's MirroredStrategy without
// SyncBatchNormalization does). Frozen layers do not update theirs and are left alone.
void StepEngine::average_moving_statistics() {
  if (!replicated()) return;
  auto is_moving = [](const Weight* w) {
    auto ends = [&](const std::string& tail) {
      return w->name.size() >= tail.size() && w->name.compare(w->name.size() - tail.size(), tail.size(), tail) == 0;
    };
    return !w->trainable && !w->frozen && w->value.dtype() == DType::f32 && (ends("moving_mean") || ends("moving_variance"));
  };
  std::vector<Weight*> moving;
  std::int64_t n = 0;
  for (Weight* w : model_.weights()) {
    if (is_moving(w)) {
      moving.push_back(w);
      n += w->value.numel();
    }
  }
  if (moving.empty()) return;
  std::vector<double> sums;
  sums.reserve(static_cast<std::size_t>(n));
  for (Weight* w : moving) {
    const Tensor h = host_view(w->value);
    sums.insert(sums.end(), h.data<float>(), h.data<float>() + h.numel());
  }
  comm_->all_reduce_sum(sums.data(), n, "allreduce of the BatchNormalization moving statistics");
  const double inv = 1.0 / comm_->size();
  std::size_t at = 0;
  for (Weight* w : moving) {
    Tensor h = backend_->host_addressable() ? w->value : Tensor::uninitialized(w->value.shape(), DType::f32);
    float* v = h.data<float>();
    for (std::int64_t i = 0; i < h.numel(); ++i) v[i] = static_cast<float>(sums[at++] * inv);
    write_tensor(w->value, h);
  }
}

void StepEngine::agree_on_callbacks() {
  if (!replicated()) return;
  // One sum carries both: the stop flags, and rank 0's learning rate (the others add 0).
  const bool constant = dynamic_cast<const ConstantLearningRate*>(optimizer_->options().learning_rate.get());
  // And FitOptions::interrupt: the signal this rank got (0: none) and whether it got one;
  // any rank's stops all of them at the next step, with the signal they got.
  const int sig = fit_interrupt_ ? fit_interrupt_->load() : 0;
  double agreed[4] = {stop_training_ ? 1.0 : 0.0, constant && comm_->rank() == 0 ? learning_rate() : 0.0,
                      static_cast<double>(sig), sig != 0 ? 1.0 : 0.0};
  comm_->all_reduce_sum(agreed, 4, "allreduce of the stop_training flag");
  stop_training_ = agreed[0] > 0;
  if (constant && agreed[1] != learning_rate()) set_learning_rate(agreed[1]);
  if (agreed[3] > 0) agreed_interrupt_ = sig != 0 ? sig : static_cast<int>(agreed[2] / agreed[3] + 0.5);
}

}  // namespace nnfit
