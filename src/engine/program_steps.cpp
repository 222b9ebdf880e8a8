// Choosing how a step runs (choose_step, Note [Step kinds]) and the two steps that run
// one program: PlainStep (the host calls the program) and CapturedStep (on a device's
// queues, captured as a graph and replayed: Note [Captured steps]).
#include <functional>

#include "engine/step.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/memory/allocator.h"

namespace nnfit {

const char* step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::plain: return "plain";
    case StepKind::captured: return "captured";
    case StepKind::micro_batched: return "micro-batched";
    case StepKind::loss_scaled: return "loss-scaled";
    case StepKind::replicated: return "replicated";
  }
  return "unknown";
}

StepKind choose_step(Mode mode, bool split, bool replicated, bool queues) {
  if ((mode == Mode::grads || mode == Mode::scaled) && replicated) return StepKind::replicated;
  if (split) return StepKind::micro_batched;
  if (mode == Mode::scaled) return StepKind::loss_scaled;
  return queues ? StepKind::captured : StepKind::plain;
}

bool PlainStep::run(Entry& e, std::int64_t, const StepContext& ctx, const BeforeRun& before_run) {
  if (before_run) before_run(e.program, false);
  run_program(e, ctx);
  return true;
}

void PlainStep::run_program(Entry& e, const StepContext& ctx) {
  Backend& backend = *engine_.backend_;
  if (e.staged) e.upload(backend);  // a device without queues: Backend::copy
  e.program.run(ctx);
  if (e.staged) e.download(backend);
  engine_.run_lookahead();
  if (e.staged) e.finish_download(backend);
}

// Note [Captured steps]: a step's plan is static (the same kernels on the same arena
// offsets every time), so on queues that capture graphs (CUDA's) the program is captured
// at its first run and replayed with one launch after: every step's kernels then cost the
// device one launch instead of one per kernel. What changes from step to step reaches the
// replay through memory, not launch arguments: the batch is copied into the arena's input
// slots, and the step, learning rate, seed and row offset into the StepScalars buffer the
// kernels read (Note [Step values in device memory]), both enqueued before the launch. A
// program with a kernel that cannot be captured (Kernel::capturable: none of the CUDA
// backend's today; a kernel with host state or a copy from host memory would be one) runs
// kernel by kernel, as does a program being timed kernel by kernel (the profiler), with
// NNFIT_CUDA_GRAPHS=0, and where a capture fails (the graph is then not tried again for
// that program); so does, where its gradients are summed in host memory, a data-parallel
// step's gradient program (where NCCL sums them, its sums are captured with it: Note
// [Captured gradient sums]). A loss-scaled step on a device launches two graphs: its
// gradient program's and, when finite, its update's (Note [Loss scaling on the device]);
// a split step one per micro-batch and its update's.
// Rebinding the program to a grown arena drops its graph. cuda-sim's queues record and
// replay the same way, with each kernel's arguments as captured, so a kernel that read a
// step value from its launch arguments would replay the first step's: the CudaSimModel
// cases check the replays.
bool CapturedStep::run(Entry& e, std::int64_t, const StepContext& ctx, const BeforeRun& before_run) {
  if (before_run) before_run(e.program, false);
  run_program(e, ctx);
  return true;
}

void CapturedStep::run_program(Entry& e, const StepContext& ctx) {
  Backend& backend = *engine_.backend_;
  if (e.staged) e.upload(backend);
  launch(e, ctx, *backend.queues());
  if (e.staged) e.download(backend);
  engine_.run_lookahead();  // the next batch staged while the device runs this step
  if (e.staged) e.finish_download(backend);
}

void CapturedStep::launch(Entry& e, const StepContext& ctx, DeviceQueues& q,
                          const std::function<void(const StepContext&)>& body) {
  Programs& p = *engine_.programs_;
  if (!p.step_buffer.defined()) {
    p.step_buffer = allocate_tensor(engine_.backend_->allocator(), Shape{static_cast<std::int64_t>(sizeof(StepScalars))}, DType::u8);
  }
  // A loss-scaled step's update has its own host copy: nothing waits for it before the
  // next step writes step_host (Note [Loss scaling on the device]).
  StepScalars& host = e.mode == Mode::apply ? p.update_step_host : p.step_host;
  host = StepScalars::of(ctx);
  q.copy_to_device(Queue::compute, p.step_buffer.raw(), &host, sizeof(StepScalars));
  StepContext c = ctx;
  c.device_step = static_cast<const StepScalars*>(p.step_buffer.raw());
  static const bool graphs = env_flag("NNFIT_CUDA_GRAPHS").value_or("1") != "0";
  Entry::Captured& g = e.graph;
  if (g.id < 0 && !g.uncapturable && !e.program.timing()) {
    g.uncapturable = !graphs || !q.supports_graphs() || !e.program.capturable();
    if (!g.uncapturable) {
      q.begin_capture(Queue::compute);
      try {
        body ? body(c) : e.program.run(c);
      } catch (...) {
        try {
          q.end_capture(Queue::compute);
        } catch (const Error&) {  // the kernel's own error is the one to report
        }
        throw;
      }
      try {
        g.id = q.end_capture(Queue::compute);
        g.queues = &q;
      } catch (const BackendError&) {
        g.uncapturable = true;  // nothing recorded ran: the step runs below, kernel by kernel
      }
    }
  }
  if (g.id >= 0 && !e.program.timing()) q.launch_graph(Queue::compute, g.id);
  else body ? body(c) : e.program.run(c);
}

}  // namespace nnfit
