// Data-parallel training (docs/design/distributed.md): each rank trains on its slice of
// the global batch; the replicated step runs the gradient program on the slice, sums the
// gradients across ranks in buckets while the backward pass goes on, and applies their
// global mean with the update program (the Mode::grads / Mode::apply pair that micro-batch
// accumulation uses too). Also: the sharding rule, the state broadcast and the exact
// reduction of loss and metric sums.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "model/model_impl.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/buckets.h"
#include "nnfit/dist/communicator.h"
#include "nnfit/dist/nccl_communicator.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/memory/allocator.h"
#include "nnfit/nn/lr_schedule.h"

namespace nnfit {

void Model::set_communicator(std::shared_ptr<dist::Communicator> comm, DataParallelOptions options) {
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

void Model::set_strategy(std::shared_ptr<dist::Strategy> strategy) {
  NNFIT_CHECK(!compiled_, InvalidArgument, "model '", name_, "': set_strategy() after compile(); choose the ",
              "strategy before compile, as Keras builds a model in strategy.scope()");
  if (strategy) {
    const std::vector<Device> devices = strategy->devices();
    NNFIT_CHECK(std::find(devices.begin(), devices.end(), device()) != devices.end(), InvalidArgument, "model '",
                name_, "': ", strategy->name(), " runs on devices the model is not on (the model is on ",
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

bool Model::replicated() const { return comm_ && comm_->size() > 1; }

int Model::replica_count() const { return comm_ ? comm_->size() : 1; }

// Note [Replica slices]: a global batch of `rows` is split into contiguous slices of
// floor/ceil sizes, rank r taking [rows*r/N, rows*(r+1)/N). A full batch splits evenly
// (check_replicable); a last partial batch may leave a rank fewer rows, or none: its
// gradient seed is its share of the rows (Note [Replica gradient seed]), so the sum over
// ranks is the global batch's.
std::pair<std::int64_t, std::int64_t> Model::replica_slice(std::int64_t rows) const {
  if (!replicated()) return {0, rows};
  const std::int64_t n = comm_->size(), r = comm_->rank();
  return {rows * r / n, rows * (r + 1) / n};
}

void Model::check_replicable(std::int64_t batch_size) const {
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
void Model::agree_on_micro_batches(std::int64_t batch_size) {
  if (!replicated() || !reduce_on_oom_) return;
  const auto [lo, hi] = replica_slice(batch_size);
  const std::int64_t slice = std::max<std::int64_t>(hi - lo, 1);
  Entry& e = entry_mode(training_mode(), slice, /*bind=*/false);
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
// (A template only because Model::Replicas is private: R is that.)
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
void Model::choose_gradient_sums() {
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
                "model '", name_, "': data-parallel gradients on ", device().to_string(), " over NCCL: ", reason,
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
Model::Replicas& Model::replica_state() {
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

std::int64_t Model::gradient_buckets_bytes() const {
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

void Model::reserve_replica_update() {
  replica_state();
  reserve_update_arena("data-parallel");
}

bool Model::run_replica_step(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) {
  Programs& p = *programs_;
  Replicas& rp = replica_state();
  const std::size_t n_buckets = rp.buckets.size();
  float* flat = rp.flat.data<float>();  // device memory when rp.on_device
  // The buckets' communicator: NCCL's on a device (Note [Device gradient sums]), else comm_.
  dist::Communicator& sums = rp.on_device ? *device_comm_ : *comm_;
  DeviceQueues* queues = rp.on_device ? backend_->queues() : nullptr;
  // A rank sums zeros where it made no gradient (no rows); every gradient it made is
  // written over, and on the device the gaps between buckets hold zeros from the start.
  if (!rp.on_device) std::memset(flat, 0, rp.flat.nbytes());
  else if (rows == 0) {
    p.host_scratch.assign(static_cast<std::size_t>(rp.flat.numel()), 0.0f);
    write_buffer(flat, p.host_scratch.data(), rp.flat.nbytes());
  }
  comm_->set_step(ctx.step + 1);
  sums.set_step(ctx.step + 1);

  // Note [Replica gradient seed]: the slice's loss is the mean over its b rows, the
  // global batch's over B. Seeding the slice's backward pass (dL/dL) with b / B makes its
  // gradient (1/B) * sum over its rows, so the ranks' gradients add up to the global
  // batch's mean, and every row's gradient in the backward pass is the one a single
  // process computes: what makes float16's overflows (loss scaling) the same. A split
  // slice seeds each micro-batch of r rows with 1/B and weights it by r, which is the same
  // sum. Under loss scaling the seed is also times the scale; the sum is unscaled below.
  const double scale = loss_scaling() ? loss_scale_ : 1.0;
  const double global_rows = static_cast<double>(std::max<std::int64_t>(replica_global_rows_, 1));
  // On a device the seed is copied in on the compute queue, before the step's work, from
  // host memory that stays as it is until the step's wait (no wait for the device here).
  p.seed_host = static_cast<float>(scale * (e.split ? 1.0 : static_cast<double>(rows)) / global_rows);
  struct SeedWrite {
    const Model& model;
    Tensor& one;
    void operator()(const float* value) const {
      DeviceQueues* q = model.backend_->queues();
      if (q) q->copy_to_device(Queue::compute, one.raw(), value, sizeof(float));
      else model.write_buffer(one.raw(), value, sizeof(float));
    }
    ~SeedWrite() {
      static const float kUnit = 1.0f;  // back to 1 after the step (ordered after it on a device)
      try {
        (*this)(&kUnit);
      } catch (const Error&) {  // the step failed already (its error is the one to report)
      }
    }
  } seed_write{*this, p.one};
  seed_write(&p.seed_host);
  // A loss-scaled slice on a device unscales and checks its gradients before their sums
  // (Note [Loss scale across ranks]): its unscale_gradient nodes divide by Programs::scale,
  // as do a split slice's accumulate_gradient nodes (Note [Micro-batches on the device];
  // the seed carries the 1/B).
  const bool split_on_device = e.split && e.split->mode == Mode::accumulate;
  const bool unscaled = (e.mode == Mode::scaled && !e.split) || split_on_device;
  if (unscaled) {
    p.scale_host = static_cast<float>(scale);
    backend_->queues()->copy_to_device(Queue::compute, p.scale.raw(), &p.scale_host, sizeof p.scale_host);
  }
  // Random ops (Dropout) draw the global batch's numbers for this slice's rows, so the
  // masks are one process's (Note [Random draws by global row]).
  StepContext slice_ctx = ctx;
  slice_ctx.row_offset = replica_slice(replica_global_rows_).first;
  slice_ctx.rows = rows;
  // Gradients this rank still owes each bucket; a rank without rows owes none (zeros).
  std::vector<int> owed(n_buckets, 0);
  if (rows > 0 && !e.split) {
    for (std::size_t k : e.gradient_weights) ++owed[static_cast<std::size_t>(rp.bucket_of[k])];
  }
  std::size_t started = 0;
  auto start_complete = [&] {
    for (; started < n_buckets && owed[started] == 0; ++started) {
      const Replicas::Bucket& b = rp.buckets[started];
      sums.start_all_reduce_sum(flat + b.begin, b.end - b.begin, b.what.c_str());
    }
  };
  // Each gradient, of (1/B) * the slice's summed loss (the seed above), as it is.
  auto finish = [&](std::size_t j) {
    const std::size_t k = e.gradient_weights[j];
    const std::size_t bytes = static_cast<std::size_t>(p.trainable[k]->value.numel()) * sizeof(float);
    if (queues) queues->copy_on_device(Queue::compute, flat + rp.offset[k], e.program.data(e.gradient_values[j]), bytes);
    else read_buffer(flat + rp.offset[k], e.program.data(e.gradient_values[j]), bytes);
    --owed[static_cast<std::size_t>(rp.bucket_of[k])];
  };
  if (rows > 0 && e.split) {
    // A slice that does not fit (Note [Micro-batches across ranks]): its micro-batches'
    // gradients are summed on this rank first, already weighted by their rows; their
    // buckets start after the last one (no overlap).
    run_micro_batch_programs(e, rows, ctx, before_run);
    for (std::size_t k = 0; k < p.trainable.size(); ++k) {
      const Tensor& g = split_on_device ? p.device_grad_sums[k] : e.split->grad_sums[k];
      if (split_on_device && rp.on_device) queues->copy_on_device(Queue::compute, flat + rp.offset[k], g.raw(), g.nbytes());
      else if (split_on_device) read_buffer(flat + rp.offset[k], g.raw(), g.nbytes());  // host buckets
      else if (rp.on_device) write_buffer(flat + rp.offset[k], g.raw(), g.nbytes());
      else std::memcpy(flat + rp.offset[k], g.raw(), g.nbytes());
    }
  } else if (rows > 0) {
    if (before_run) before_run(e.program, false);
    if (e.staged) e.upload(*backend_);
    // The program with each gradient's copy and its bucket's sum enqueued as it completes;
    // on the device also the sums left and the compute stream's join, so that a capture
    // holds the whole step (Note [Captured gradient sums]).
    const auto body = [&](const StepContext& c) {
      if (data_parallel_.overlap) {
        auto it = rp.finals.find(&e.program);
        if (it == rp.finals.end()) {
          std::vector<std::vector<std::size_t>> per_step(std::max<std::size_t>(e.program.steps().size(), 1));
          for (std::size_t j = 0; j < e.gradient_values.size(); ++j) {
            const int s = e.program.producer_step(e.gradient_values[j]);
            per_step[s >= 0 ? static_cast<std::size_t>(s) : per_step.size() - 1].push_back(j);
          }
          it = rp.finals.emplace(&e.program, std::move(per_step)).first;
        }
        const auto& per_step = it->second;
        e.program.run(c, [&](std::size_t step) {
          if (per_step[step].empty()) {
            sums.progress();
            return;
          }
          for (std::size_t j : per_step[step]) finish(j);
          start_complete();
        });
      } else {
        e.program.run(c);
        for (std::size_t j = 0; j < e.gradient_values.size(); ++j) finish(j);
      }
      if (rp.on_device) {
        start_complete();
        sums.join();
      }
    };
    if (rp.on_device) {
      if (!sums.capturable()) e.graph.uncapturable = true;  // kernel by kernel, its sums between
      run_on_queues(e, slice_ctx, *queues, body);
      started = n_buckets;  // every sum is enqueued: by the body, or in the graph launched
    } else {
      body(slice_ctx);
    }
    if (e.staged) e.download(*backend_);
  }
  // The next batch staged while the device runs this slice's step and its sums (Note
  // [Input double buffer]); fit's lookahead sets replica_global_rows_, read above.
  run_lookahead();
  // What the step waits for the sums after its backward pass (steps.jsonl's allreduce_us):
  // the communication the overlap did not hide. (A timed step's kernels, the only ones
  // logged, have run by now; on a device the results' copies follow the sums, so they are
  // read after the watchdog's wait.)
  const auto wait_start = std::chrono::steady_clock::now();
  start_complete();
  NNFIT_CHECK(started == n_buckets, InvalidArgument, "internal: ", n_buckets - started,
              " gradient bucket(s) never completed");
  sums.wait_all();
  replica_allreduce_us_ = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - wait_start).count();
  if (rows > 0 && !e.split && e.staged) e.finish_download(*backend_);

  // The update runs in an arena of its own: the shared one still holds this step's loss
  // and predictions, which the epoch's sums read after the step. (A split step copied
  // them out: its update runs in the shared arena, as in one process, where make_split
  // planned it, so a rank short of memory needs no second arena.)
  Entry* update = nullptr;
  if (e.split) {
    Entry& shared = entry_mode(static_cast<int>(Mode::apply), 0, /*bind=*/false);
    if (shared.program.arena() != p.arena.raw()) shared.bound = false;  // bound below, its graph dropped
    update = &entry_mode(static_cast<int>(Mode::apply), 0);
  } else {
    reserve_replica_update();  // made when the slice was planned; here if it was planned before
    update = &update_in_own_arena();
  }
  Entry& apply = *update;
  const float inv = static_cast<float>(1.0 / scale);
  bool finite = true;
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    void* input = apply.program.data(apply.gradient_inputs[k]);
    const float* src = flat + rp.offset[k];
    const std::int64_t n = p.trainable[k]->value.numel();
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    if (!loss_scaling() || unscaled) {  // the sum as it is: the seed made it the global mean
      if (queues) queues->copy_on_device(Queue::compute, input, src, bytes);  // after the sums (wait_all)
      else write_buffer(input, src, bytes);
      continue;
    }
    if (!backend_->host_addressable()) p.host_scratch.resize(static_cast<std::size_t>(n));  // on a device: copied in below
    float* dst = backend_->host_addressable() ? static_cast<float*>(input) : p.host_scratch.data();
    if (rp.on_device) read_buffer(dst, src, bytes);  // the device's sums, for the finite check
    const float* sum = rp.on_device ? dst : src;
    bool ok = true;
#pragma omp simd reduction(&& : ok)
    for (std::int64_t i = 0; i < n; ++i) {
      dst[i] = sum[i] * inv;
      ok = ok && std::isfinite(dst[i]);
    }
    finite = finite && ok;
    write_buffer(input, dst, bytes);
  }
  // Note [Loss scale across ranks]: every rank must skip the same steps and keep the same
  // scale, or the replicas drift apart (and the next step's scale differs). The summed
  // gradients are the same on every rank in practice, but MPI does not promise the same
  // bits everywhere (an algorithm may add in a different order per rank, and a sum near
  // the float range may overflow on one rank only), so the ranks agree on the verdict:
  // one sum of a double, only under loss scaling. Any rank's non-finite skips the step.
  // On a device (Mode::scaled) each rank unscales its own gradients in its gradient
  // program, u = g / scale (Programs::scale; the seed `one` is scale · b / B), flags a
  // non-finite element there, and the buckets sum the u: no gradient goes to host memory
  // for the check, only the flags' count with the loss. The verdict is then whether any
  // rank's gradients were non-finite (a NaN or an infinity in one makes every sum so);
  // the sum of finite u cannot overflow in practice (it would take |u| near 3e38 / ranks).
  // Dividing before or after the sum gives the same floats when the scale is a power of
  // two (a dynamic scale always is), else the same within rounding.
  if (unscaled) finite = rows == 0 || (split_on_device ? e.split->nonfinite : e.staged->nonfinite) == 0.0f;
  if (loss_scaling()) {
    double non_finite = finite ? 0.0 : 1.0;
    comm_->all_reduce_sum(&non_finite, 1, "allreduce of the loss scale's finite check");
    if (!update_loss_scale(non_finite == 0.0)) return false;
  }
  if (before_run) before_run(apply.program, true);
  run_program(apply, ctx);  // on a device with queues captured and replayed (Note [Captured steps])
  return true;
}

void Model::broadcast_state(std::int64_t& start_epoch, std::int64_t& skip) {
  if (!replicated()) return;
  comm_->set_step(iterations_);
  // On a device through host copies (host_view is the tensor itself on the CPU).
  for (Weight* w : weights()) {
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

void Model::reduce_totals(Totals& t, const char* what) {
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
void Model::average_moving_statistics() {
  if (!replicated()) return;
  auto is_moving = [](const Weight* w) {
    auto ends = [&](const std::string& tail) {
      return w->name.size() >= tail.size() && w->name.compare(w->name.size() - tail.size(), tail.size(), tail) == 0;
    };
    return !w->trainable && !w->frozen && w->value.dtype() == DType::f32 && (ends("moving_mean") || ends("moving_variance"));
  };
  std::vector<Weight*> moving;
  std::int64_t n = 0;
  for (Weight* w : weights()) {
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

void Model::agree_on_callbacks() {
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
