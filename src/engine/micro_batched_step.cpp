// MicroBatchedStep: a split entry's step (MicroBatches; on_oom="reduce_batch", and loss
// scaling off a device's queues): its micro-batches' programs (StepEngine::
// run_micro_batch_programs, micro_batches.cpp), then for training one update from their
// gradients' mean, after loss scaling's decision.
#include <cmath>

#include "engine/step.h"
#include "nnfit/backend/device_queues.h"

namespace nnfit {

bool MicroBatchedStep::run(Entry& e, std::int64_t rows, const StepContext& ctx, const BeforeRun& before_run) {
  MicroBatches& a = *e.split;
  Programs& p = *engine_.programs_;
  const bool training = !is_inference(a.mode);
  // Loss scaling: the loss's gradient seed (dL/dL) is the scale, so every gradient of the
  // backward pass is scaled (Keras's scale_loss); they are unscaled below.
  const double scale = training && engine_.loss_scaling() ? engine_.loss_scale_ : 1.0;
  const auto seed = [&](float value) { engine_.write_buffer(p.one.raw(), &value, sizeof value); };
  if (training) seed(static_cast<float>(scale));
  if (a.mode == Mode::accumulate) {  // the sums' divisor (Note [Micro-batches on the device])
    const float divisor = static_cast<float>(static_cast<double>(rows) * scale);
    engine_.write_buffer(p.scale.raw(), &divisor, sizeof divisor);
  }
  engine_.run_micro_batch_programs(e, rows, ctx, before_run);
  if (!training) return true;
  seed(1.0f);
  Entry& apply = engine_.entry_mode(static_cast<int>(Mode::apply), 0);
  const float inv = static_cast<float>(1.0 / (static_cast<double>(rows) * scale));
  const bool finite = feed_update(apply, a, inv);
  if (engine_.loss_scaling() && !engine_.update_loss_scale(finite)) return false;
  if (before_run) before_run(apply.program, true);
  engine_.run_program(apply, ctx);  // on a device with queues captured and replayed (Note [Captured steps])
  return true;
}

bool MicroBatchedStep::feed_update(Entry& apply, const MicroBatches& a, float inv) {
  Programs& p = *engine_.programs_;
  bool finite = a.nonfinite == 0.0f;  // Mode::accumulate's count; the host's check below
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    if (a.mode == Mode::accumulate) {  // summed and divided on the device: copied into the update
      engine_.backend_->queues()->copy_on_device(Queue::compute, apply.program.data(apply.gradient_inputs[k]),
                                         p.device_grad_sums[k].raw(), p.device_grad_sums[k].nbytes());
      continue;
    }
    void* input = apply.program.data(apply.gradient_inputs[k]);
    const float* sum = a.grad_sums[k].data<float>();
    const std::int64_t n = a.grad_sums[k].numel();
    if (!engine_.backend_->host_addressable()) p.host_scratch.resize(static_cast<std::size_t>(n));  // on a device: copied in below
    float* dst = engine_.backend_->host_addressable() ? static_cast<float*>(input) : p.host_scratch.data();
    bool ok = true;
#pragma omp simd reduction(&& : ok)
    for (std::int64_t i = 0; i < n; ++i) {
      dst[i] = sum[i] * inv;
      ok = ok && std::isfinite(dst[i]);
    }
    finite = finite && ok;
    engine_.write_buffer(input, dst, static_cast<std::size_t>(n) * sizeof(float));
  }
  return finite;
}

}  // namespace nnfit
