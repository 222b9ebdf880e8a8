// LossScaledStep: a loss-scaled training step on a device with queues (Note [Loss scaling
// on the device]): the scaled gradient program, the host's decision from one flag, and
// when finite the update program fed by device-to-device copies in its own arena.
#include <algorithm>

#include "engine/step.h"
#include "nnfit/backend/device_queues.h"

namespace nnfit {

// Note [Loss scaling on the device]: on a device with queues (a GPU's) a loss-scaled batch
// that fits runs as two programs that never take a gradient through host memory. The
// Mode::scaled program is the gradient program with the scale as its seed (`one`, written
// by a copy on the compute queue before the step, so the captured graph reads it from
// memory), each gradient then unscaled by an unscale_gradient node (u = g · 1/scale, the
// scale read from Programs::scale, written likewise; and a flag when an element of u is
// not finite), the flags summed into one scalar that comes
// back with the loss and the predictions (Entry::download). The host reads that scalar
// after the step's one wait and decides as Keras's LossScaleOptimizer does
// (update_loss_scale): a non-finite step is skipped (no update, the iterations stay) and
// halves the scale. A finite one copies each unscaled gradient device to device on the
// compute queue into the apply program's inputs and launches that program, captured like
// any other; it runs in an arena of its own (Programs::update_arena), since the shared one
// holds the gradients it copies in. The scaled program is an ordinary staged entry, so fit
// stages the next batch while it runs (Note [Input double buffer]); the update is enqueued
// after the decision and runs while the host takes the next step's batch. The arithmetic
// is the split path's in exact arithmetic (that one weights the whole batch's gradient by
// its rows and multiplies by 1/(rows · scale); the same float when rows and scale are
// powers of two, as 2^15 and its doublings and halvings are). A batch that does not fit
// under on_oom="reduce_batch" takes that path (micro-batches summed on the host), and so
// does a device without queues; the CPU always does, where it costs no copy.
bool LossScaledStep::run(Entry& e, std::int64_t, const StepContext& ctx, const BeforeRun& before_run) {
  Programs& p = *engine_.programs_;
  DeviceQueues& q = *engine_.backend_->queues();
  p.scale_host = static_cast<float>(engine_.loss_scale_);
  q.copy_to_device(Queue::compute, p.one.raw(), &p.scale_host, sizeof p.scale_host);    // the seed
  q.copy_to_device(Queue::compute, p.scale.raw(), &p.scale_host, sizeof p.scale_host);  // the divisor
  if (before_run) before_run(e.program, false);
  engine_.run_program(e, ctx);  // its results back and waited for: the loss, predictions, the flags
  if (!engine_.update_loss_scale(e.staged->nonfinite == 0.0f)) return false;
  engine_.reserve_scaled_update(e);  // taken when the batch was planned: nothing to do
  Entry& apply = engine_.update_in_own_arena();
  for (std::size_t j = 0; j < e.gradient_values.size(); ++j) {
    const std::size_t k = e.gradient_weights[j];
    q.copy_on_device(Queue::compute, apply.program.data(apply.gradient_inputs[k]), e.program.data(e.gradient_values[j]),
                     static_cast<std::size_t>(p.trainable[k]->value.numel()) * sizeof(float));
  }
  // A weight the loss does not reach: a zero gradient (a search, so the step allocates nothing).
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    if (std::find(e.gradient_weights.begin(), e.gradient_weights.end(), k) == e.gradient_weights.end()) {
      q.copy_on_device(Queue::compute, apply.program.data(apply.gradient_inputs[k]), p.zero_gradient.raw(),
                       static_cast<std::size_t>(p.trainable[k]->value.numel()) * sizeof(float));
    }
  }
  if (before_run) before_run(apply.program, true);
  engine_.captured_step_->launch(apply, ctx, q);
  return true;
}

}  // namespace nnfit
