// The model's device path (Note [The model's device path]): copies between the host and
// the model's memory, and the staging of a program's inputs and outputs on a device the
// host cannot address.
#include <algorithm>
#include <cstring>

#include "engine/engine_types.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/memory/allocator.h"

namespace nnfit {

namespace {
// The model's events on a backend's queues: a step's results copied back; a full sync;
// the input ring's (PinnedDoubleBuffer::kEvents from kRingEvents).
constexpr int kResults = 0, kSync = 1, kRingEvents = 2;
static_assert(kRingEvents + PinnedDoubleBuffer::kEvents <= Backend::kQueueEvents);
}  // namespace

// Note [The model's device path]: on a device the host cannot address (a GPU's), the
// weights, optimizer slots, the autodiff seed and every program's arena live in the
// device's memory (the backend's BfcAllocator under the model's memory policy), and the
// host moves data only by copies: weights once after the layers fill them (build), slots
// once at compile, a batch's inputs, targets and sample weights into the program's input
// slots before each run (Entry::upload) and its loss and predictions back after it
// (Entry::download), both on the backend's compute queue where it has one (in order with
// the step's kernels, one wait per step), else Backend::copy; get_weights/set_weights,
// saving and loading go through host_view and write_tensor (Backend::copy after a sync).
// The split steps sum their micro-batches' gradients on the host from copies; a
// loss-scaled step that fits keeps them on the device (Note [Loss scaling on the device]).
// On the CPU each of these is the plain memory access it was, with no extra copy.
// tests/cuda_host/sim_device.h checks the discipline: its simulated device's memory faults
// on any host access outside a kernel or a copy.
void StepEngine::sync_device() const {
  DeviceQueues* q = backend_->queues();
  if (!q) return;
  q->record(Queue::compute, kSync);
  q->host_wait(kSync);
}

std::function<void()> StepEngine::timing_wait() const {
  if (!backend_->queues()) return {};
  return [this] { sync_device(); };
}

StepContext StepEngine::step_context() const {
  StepContext ctx;
  if (DeviceQueues* q = backend_->queues()) ctx.stream = q->native(Queue::compute);
  return ctx;
}

// Backend::copy is not ordered with the queues (CUDA's cudaMemcpy runs on the legacy
// default stream, which non-blocking streams do not wait for): sync them first.
void StepEngine::read_buffer(void* host, const void* buffer, std::size_t bytes) const {
  if (bytes == 0 || host == buffer) return;
  if (backend_->host_addressable()) {
    std::memcpy(host, buffer, bytes);
    return;
  }
  sync_device();
  backend_->copy(host, buffer, bytes, CopyKind::device_to_host);
}

void StepEngine::write_buffer(void* buffer, const void* host, std::size_t bytes) const {
  if (bytes == 0 || host == buffer) return;
  if (backend_->host_addressable()) {
    std::memcpy(buffer, host, bytes);
    return;
  }
  sync_device();
  backend_->copy(buffer, host, bytes, CopyKind::host_to_device);
}

Tensor StepEngine::on_backend(const Tensor& host) const {
  if (backend_->host_addressable()) return host;
  Tensor t = allocate_tensor(backend_->allocator(), host.shape(), host.dtype());
  write_buffer(t.raw(), host.raw(), host.nbytes());
  return t;
}

void StepEngine::place_constants(Graph& g) const {
  if (backend_->host_addressable()) return;
  for (int v = 0; v < g.num_values(); ++v) {
    Value& value = g.value(v);
    if (value.kind == ValueKind::variable && value.bound.device().type == DeviceType::cpu) {
      value.bound = on_backend(value.bound);
    }
  }
}

Tensor StepEngine::host_view(const Tensor& t) const {
  if (backend_->host_addressable() || t.device().type == DeviceType::cpu) return t;
  Tensor out = Tensor::uninitialized(t.shape(), t.dtype());
  read_buffer(out.raw(), t.raw(), t.nbytes());
  return out;
}

void StepEngine::write_tensor(const Tensor& dst, const Tensor& src) const {
  NNFIT_CHECK(dst.nbytes() == src.nbytes(), InvalidArgument, "model '", model_.name_, "': writing ", src.nbytes(),
              " bytes into a tensor of ", dst.nbytes());
  if (dst.raw() == src.raw()) return;
  if (dst.device().type == DeviceType::cpu) std::memcpy(dst.raw(), src.raw(), src.nbytes());
  else write_buffer(dst.raw(), src.raw(), src.nbytes());
}

void StepEngine::run_lookahead() {
  if (!lookahead_) return;
  const std::function<void()>* next = lookahead_;
  lookahead_ = nullptr;
  (*next)();
}

// Note [Input double buffer]: on a device with queues a batch reaches the program's input
// slots in two copies (PinnedDoubleBuffer, Note [Double buffer events]): the feed writes it
// into the entry's pinned set of the batch's parity, stage() enqueues its copy into a ring
// slot on the copy queue, and the step's upload() makes the compute queue wait for that
// copy and copy the slot into the arena's input slots. fit's step enqueues its work and
// then, before waiting for its results, takes the next batch from the pipeline and stages
// it (StepEngine::lookahead_; evaluate and predict likewise, StepEngine::run_batches): the
// pipeline's hand-over, the host's writes and the host-to-device copy of batch n+1
// overlap step n on the device, and the metrics read batch n's targets from the other set. The ring is the model's (one batch count across
// entries, so the events stay in order when the last partial batch switches programs),
// sized to the largest entry; the sets are each entry's, so a batch's targets outlive
// the next batch's staging. Growing the ring, or the arena, waits for the queues first.
// A batch staged ahead and never run (training stopped, or an error) is discarded
// (StepEngine::drop_lookahead); so is one another program's run comes before (a callback's
// evaluate between fit's steps; InputRing::pending says whose it is), and its program
// stages it again when it runs, moving it to the set of its new number's parity first.
// A data-parallel step calls the lookahead once its backward pass and sums are enqueued.
// Without queues the batch is copied in by Backend::copy from set 0 at the run.
StepEngine::InputRing* StepEngine::input_ring(std::size_t bytes) {
  DeviceQueues* q = backend_->queues();
  if (!q) return nullptr;
  Programs& p = *programs_;
  if (!p.ring) p.ring = std::make_unique<InputRing>();
  InputRing& r = *p.ring;
  if (r.buffer && r.buffer->capacity() >= bytes) return &r;
  r.drop_pending();  // a batch staged ahead is staged again by its program (from its sets)
  sync_device();
  r.buffer.reset();
  for (Tensor& slot : r.device) slot = Tensor();
  const std::size_t capacity = std::max<std::size_t>(bytes, 64);
  for (Tensor& slot : r.device) {
    slot = allocate_tensor(backend_->allocator(), Shape{static_cast<std::int64_t>(capacity)}, DType::u8);
  }
  r.buffer = std::make_unique<PinnedDoubleBuffer>(*q, PinnedDoubleBuffer::Slot{nullptr, r.device[0].raw()},
                                                  PinnedDoubleBuffer::Slot{nullptr, r.device[1].raw()}, capacity,
                                                  kRingEvents);
  return &r;
}

void StepEngine::drop_lookahead() {
  lookahead_ = nullptr;
  if (programs_ && programs_->ring) programs_->ring->drop_pending();
}

void StepEngine::InputRing::drop_pending() {
  if (!buffer || buffer->staged() == buffer->consumed()) return;
  if (pending) pending->pending = false;
  pending = nullptr;
  buffer->discard(buffer->staged() - 1);
}

void StepEngine::Entry::make_staging(Allocator* pinned) {
  const Graph& g = program.graph();
  const auto host = [pinned](const TensorDesc& d) {
    if (!pinned) return Tensor::zeros(d.shape, d.dtype);
    Tensor t = allocate_tensor(*pinned, d.shape, d.dtype);
    std::memset(t.raw(), 0, t.nbytes());
    return t;
  };
  auto s = std::make_unique<Staging>();
  const auto place = [&s](std::size_t bytes) {
    s->offsets.push_back(s->bytes);
    s->bytes += static_cast<std::size_t>(round64(static_cast<std::int64_t>(bytes)));
  };
  for (Staging::Set& set : s->in) {
    for (int x : xs) set.xs.push_back(host(g.desc(x)));
    for (int y : ys) set.ys.push_back(host(g.desc(y)));
    if (sample_weight >= 0) set.sample_weight = host({g.desc(sample_weight).shape, DType::f32});
  }
  for (int x : xs) place(g.desc(x).bytes());
  for (int y : ys) place(g.desc(y).bytes());
  if (sample_weight >= 0) place(s->in[0].sample_weight.nbytes());
  s->in_parts.reserve(s->offsets.size());
  s->out_parts.reserve(s->offsets.size());
  s->x_ext.assign(xs.size(), nullptr);
  for (int pr : preds) s->preds.push_back(host(g.desc(pr)));
  s->output_losses.assign(output_losses.size(), 0.0f);
  staged = std::move(s);
}

void StepEngine::Entry::stage(Backend&) {
  Staging& s = *staged;
  if (!s.ring || s.pending) return;
  PinnedDoubleBuffer& ring = *s.ring->buffer;
  // The batch goes out from the set of the ring's next batch. A batch staged ahead and
  // dropped (another program ran between: a callback's evaluate) is staged again under a
  // later number, whose set may be the other one: the batch moves there first.
  const int from = s.written;
  Staging::Set& set = s.write();
  const Graph& g = program.graph();
  if (from >= 0 && from != s.written) {
    const Staging::Set& old = s.in[from];
    for (std::size_t i = 0; i < xs.size(); ++i) std::memcpy(set.xs[i].raw(), old.xs[i].raw(), set.xs[i].nbytes());
    for (std::size_t i = 0; i < ys.size(); ++i) std::memcpy(set.ys[i].raw(), old.ys[i].raw(), set.ys[i].nbytes());
    if (sample_weight >= 0) std::memcpy(set.sample_weight.raw(), old.sample_weight.raw(), set.sample_weight.nbytes());
  }
  std::vector<PinnedDoubleBuffer::In>& parts = s.in_parts;  // reserved at make_staging: no allocation
  parts.clear();
  std::size_t k = 0;
  for (std::size_t i = 0; i < xs.size(); ++i, ++k) {
    // An input read where the pipeline made it: into the pinned set, which the copy reads
    // when it runs (the pipeline's buffer may be reused by then).
    if (s.x_ext[i]) std::memcpy(set.xs[i].raw(), s.x_ext[i], g.desc(xs[i]).bytes());
    s.x_ext[i] = nullptr;
    parts.push_back({set.xs[i].raw(), s.offsets[k], g.desc(xs[i]).bytes()});
  }
  for (std::size_t i = 0; i < ys.size(); ++i, ++k) parts.push_back({set.ys[i].raw(), s.offsets[k], set.ys[i].nbytes()});
  if (sample_weight >= 0) parts.push_back({set.sample_weight.raw(), s.offsets[k], set.sample_weight.nbytes()});
  ring.stage(ring.staged(), parts);
  s.pending = true;
  s.ring->pending = &s;
}

// On a backend with queues the copies are enqueued on the compute queue, in order with the
// step's kernels, and finish_download waits for them before the host reads the results;
// without queues (cuda-sim without them, a device whose copies synchronize) they are
// Backend::copy.
void StepEngine::Entry::upload(Backend& backend) {
  Staging& s = *staged;
  const Graph& g = program.graph();
  if (!s.ring) {
    const Staging::Set& set = s.in[0];
    const auto in = [&](void* dst, const void* src, std::size_t bytes) {
      backend.copy(dst, src, bytes, CopyKind::host_to_device);
    };
    for (std::size_t i = 0; i < xs.size(); ++i) {
      in(program.data(xs[i]), s.x_ext[i] ? s.x_ext[i] : set.xs[i].raw(), g.desc(xs[i]).bytes());
      s.x_ext[i] = nullptr;
    }
    for (std::size_t i = 0; i < ys.size(); ++i) in(program.data(ys[i]), set.ys[i].raw(), set.ys[i].nbytes());
    if (sample_weight >= 0) in(program.data(sample_weight), set.sample_weight.raw(), set.sample_weight.nbytes());
    s.read = 0;
    return;
  }
  // Another program's batch staged ahead (this one runs between, from a callback): dropped;
  // its program stages it again when it runs.
  if (s.ring->pending && s.ring->pending != &s) s.ring->drop_pending();
  stage(backend);
  PinnedDoubleBuffer& ring = *s.ring->buffer;
  std::vector<PinnedDoubleBuffer::Out>& parts = s.out_parts;
  parts.clear();
  std::size_t k = 0;
  for (std::size_t i = 0; i < xs.size(); ++i, ++k) parts.push_back({program.data(xs[i]), s.offsets[k], g.desc(xs[i]).bytes()});
  for (std::size_t i = 0; i < ys.size(); ++i, ++k) parts.push_back({program.data(ys[i]), s.offsets[k], g.desc(ys[i]).bytes()});
  if (sample_weight >= 0) parts.push_back({program.data(sample_weight), s.offsets[k], g.desc(sample_weight).bytes()});
  const std::int64_t n = ring.consumed();
  ring.consume(n, parts);
  s.read = static_cast<int>(n % 2);
  s.pending = false;
  s.ring->pending = nullptr;
  s.written = -1;
}

void StepEngine::Entry::download(Backend& backend) {
  Staging& s = *staged;
  DeviceQueues* q = backend.queues();
  const auto out = [&](void* dst, const void* src, std::size_t bytes) {
    if (q) q->copy_to_host(Queue::compute, dst, src, bytes);
    else backend.copy(dst, src, bytes, CopyKind::device_to_host);
  };
  for (std::size_t i = 0; i < preds.size(); ++i) out(s.preds[i].raw(), program.data(preds[i]), s.preds[i].nbytes());
  if (loss >= 0) out(&s.loss, program.data(loss), sizeof(float));
  if (nonfinite >= 0) out(&s.nonfinite, program.data(nonfinite), sizeof(float));
  for (std::size_t i = 0; i < output_losses.size(); ++i) {
    out(&s.output_losses[i], program.data(output_losses[i]), sizeof(float));
  }
  if (q) q->record(Queue::compute, kResults);
}

void StepEngine::Entry::finish_download(Backend& backend) {
  if (DeviceQueues* q = backend.queues()) q->host_wait(kResults);
}

}  // namespace nnfit
