// Planning a model's programs (StepEngine::plan_entry, plan_apply): the graph of each
// (mode, batch) entry built from the layers, the loss and autodiff, then planned into a
// Program; the update-only program; and the memory plan that says what fits before the
// first step (Note [Plan breakdown]).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "engine/engine_types.h"
#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/fusion.h"
#include "nnfit/graph/program.h"
#include "nnfit/nn/lr_schedule.h"
#include "nnfit/nn/metrics.h"

namespace nnfit {

namespace {

// The fusions whose fused op the kernels `po` plans with have (FusionOptions).
FusionOptions fusions_for(const PlanOptions& po) {
  const std::vector<std::string> ops = (po.registry ? *po.registry : kernel_registry()).ops(po.device);
  FusionOptions fusions;
  const auto has = [&](const char* op) { return std::find(ops.begin(), ops.end(), op) != ops.end(); };
  fusions.pool_bias_grad = has("max_pool2d_grad_bias");
  fusions.pool_argmax = has("max_pool2d_argmax") && has("max_pool2d_argmax_grad") && has("max_pool2d_argmax_grad_bias");
  fusions.conv_pool = fusions.pool_argmax && has("fused_conv2d_max_pool_argmax");
  fusions.conv_pool_grad = fusions.conv_pool && has("fused_conv2d_max_pool_argmax_grad");
  return fusions;
}

}  // namespace

std::unique_ptr<StepEngine::Entry> StepEngine::plan_entry(int mode_value, std::int64_t batch,
                                                          const SampleShapes& samples) {
  Programs& p = *programs_;
  const Mode mode = static_cast<Mode>(mode_value);
  const bool training = !is_inference(mode);

  auto e = std::make_unique<Entry>();
  Graph g;
  GraphBuilder b(g, training || mode == Mode::infer_training);  // Keras's model(x, training=True)
  const auto& inputs = model_.graph_.inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i) {  // at this batch's shapes (Note [Shapes known per batch])
    std::vector<std::int64_t> dims{batch};
    dims.insert(dims.end(), samples[i].dims().begin(), samples[i].dims().end());
    e->xs.push_back(g.add_input(inputs[i].name, {Shape(dims), DType::f32}));
  }
  std::vector<int> output_masks;
  const bool has_loss = training || !model_.compile_options_.loss_for(0).kind.empty();
  b.set_collect_losses(has_loss);
  b.set_default_policy(model_.dtype_policy_);
  e->preds = model_.graph_.emit_masked(b, e->xs, std::vector<int>(e->xs.size(), -1), output_masks);
  // Keras's losses and nnfit's predictions take float32 whatever the policy; an integer
  // output (keras.ops.argmax's indices) is predicted as float32 values too.
  for (int& pred : e->preds) {
    const DType d = g.desc(pred).dtype;
    if (is_floating(d) || d == DType::i32 || d == DType::i64) pred = b.cast(pred, DType::f32);
  }
  std::vector<int> keep = e->preds;
  if (has_loss) {
    for (std::size_t i = 0; i < output_masks.size(); ++i) {
      // Keras weights the loss of an output that carries a mask by it (padded steps count
      // nothing); nnfit's losses do not take masks yet.
      NNFIT_CHECK(output_masks[i] < 0, Unsupported, "model '", model_.name(), "': output '", model_.output_names()[i],
                  "' carries a mask (from Embedding(mask_zero=True) or Masking through return_sequences layers), ",
                  "and a masked loss is not supported yet; end the masked part with a layer that consumes the mask ",
                  "(an RNN without return_sequences)");
    }
    const std::vector<std::string> names = model_.output_names();
    if ((training && weighted_) || mode == Mode::infer_weighted) {
      e->sample_weight = g.add_input("sample_weight", {Shape{batch}, DType::f32});
    }
    std::vector<int> weighted;
    const CompileOptions& co = model_.compile_options_;
    if (co.computes_loss()) {  // one loss over the whole model (Note [compute_loss in the step])
      for (std::size_t i = 0; i < model_.num_targets(); ++i) {
        const std::string prefix = e->preds.size() > 1 ? names[i] + "/" : "";
        e->ys.push_back(g.add_input(prefix + "y", co.loss.target_desc(g.desc(e->preds[i]), i)));
      }
      weighted.push_back(co.loss.emit_compute_loss(g, e->xs, e->ys, e->preds, e->sample_weight));
    }
    for (std::size_t i = 0; i < e->preds.size() && !co.computes_loss(); ++i) {
      const Loss& loss = co.loss_for(i);
      const std::string prefix = e->preds.size() > 1 ? names[i] + "/" : "";
      e->ys.push_back(g.add_input(prefix + "y", loss.target_desc(g.desc(e->preds[i]))));
      const int l = loss.emit(g, e->preds[i], e->ys.back(), e->sample_weight);
      if (e->preds.size() > 1) e->output_losses.push_back(l);
      const double w = model_.compile_options_.loss_weight(i);
      if (w == 1.0) {
        weighted.push_back(l);
      } else {
        Attrs a;
        a.set("factor", w);
        weighted.push_back(g.add("scale", {l}, a, prefix + "loss_weight"));
      }
    }
    // Keras adds the regularizers' penalties (of the weights that train, and the layers'
    // activity regularizers) to the loss it reports and differentiates.
    for (const auto& [id, w] : b.variables()) {
      if (w->trains() && w->regularizer.active()) {
        weighted.push_back(emit_penalty(g, id, w->regularizer, 1.0, w->name + "/regularizer"));
      }
    }
    weighted.insert(weighted.end(), b.losses().begin(), b.losses().end());
    e->loss = weighted.size() == 1 ? weighted[0] : g.add("add_n", weighted, {}, "total_loss");
    keep.push_back(e->loss);
    keep.insert(keep.end(), e->output_losses.begin(), e->output_losses.end());
  }
  if (training) {
    int one = g.add_variable("autodiff/one", p.one);
    std::vector<int> vars;
    std::vector<std::size_t> index;
    for (const auto& [id, w] : b.variables()) {
      for (std::size_t i = 0; i < p.trainable.size(); ++i) {
        if (p.trainable[i] == w) {
          vars.push_back(id);
          index.push_back(i);
        }
      }
    }
    std::vector<int> grads = gradients(g, e->loss, one, vars);
    // Mode::grads, scaled and accumulate end with the gradients; the apply program clips them.
    const bool gradients_only = mode == Mode::grads || mode == Mode::scaled || mode == Mode::accumulate;
    if (!gradients_only) {  // accumulated gradients are clipped when applied (plan_apply)
      std::vector<std::string> names;
      for (std::size_t k = 0; k < vars.size(); ++k) names.push_back(p.trainable[index[k]]->name);
      grads = optimizer_->clip_gradients(g, grads, names);
    }
    std::vector<int> nonfinite;  // Mode::scaled: per gradient, whether it holds a non-finite element
    int scale = -1;              // Mode::scaled, accumulate: what the gradients are divided by
    if (mode == Mode::scaled || mode == Mode::accumulate) {
      if (!p.scale.defined()) p.scale = on_backend(Tensor::zeros(Shape{}));  // written before each step
      scale = g.add_variable("loss_scale", p.scale);
    }
    for (std::size_t k = 0; k < vars.size(); ++k) {
      if (grads[k] < 0) continue;  // the loss does not depend on it
      if (gradients_only) {  // kept readable after the run; no update
        int grad = grads[k];
        if (mode == Mode::scaled) {  // Note [Loss scaling on the device]
          const std::vector<int> out =
              g.add_node("unscale_gradient", {grads[k], scale}, {}, p.trainable[index[k]]->name + "/unscale");
          grad = out[0];
          nonfinite.push_back(out[1]);
        }
        if (mode == Mode::accumulate) {  // into the step's sum (Note [Micro-batches on the device])
          Attrs a;
          a.set("weight", static_cast<double>(batch));
          const int sum = g.add_variable(p.trainable[index[k]]->name + "/sum", p.device_grad_sums.at(index[k]));
          nonfinite.push_back(g.add("accumulate_gradient", {grads[k], scale, sum}, a,
                                    p.trainable[index[k]]->name + "/accumulate"));
          e->gradient_weights.push_back(index[k]);
          continue;
        }
        e->gradient_values.push_back(grad);
        e->gradient_weights.push_back(index[k]);
        keep.push_back(grad);
        continue;
      }
      e->gradient_values.push_back(grads[k]);
      std::vector<int> slot_ids;
      const Weight& w = *p.trainable[index[k]];
      for (std::size_t s = 0; s < p.slots[index[k]].size(); ++s) {
        slot_ids.push_back(g.add_variable(w.name + "/slot" + std::to_string(s), p.slots[index[k]][s]));
      }
      optimizer_->emit_update(g, vars[k], grads[k], slot_ids, w.name);
      if (w.constraint.active()) emit_constraint(g, vars[k], w.constraint, w.name + "/constraint");
      optimizer_->emit_average(g, vars[k], slot_ids, w.name);
    }
    if (!nonfinite.empty()) {
      e->nonfinite = nonfinite.size() == 1 ? nonfinite[0] : g.add("add_n", nonfinite, {}, "loss_scale/nonfinite");
      keep.push_back(e->nonfinite);
    }
  }
  PlanOptions po;
  po.device = backend_->device().type;
  po.registry = backend_->kernels();
  FusionOptions fusions = fusions_for(po);
  fusions.keep = keep;
  fuse_all(g, fusions);
  place_constants(g);
  po.keep = keep;
  e->program = plan(std::move(g), po);
  return e;
}

// The optimizer update alone, from gradients given as inputs (one per trainable weight):
// what an accumulated batch ends with (Mode::apply).
std::unique_ptr<StepEngine::Entry> StepEngine::plan_apply() {
  Programs& p = *programs_;
  auto e = std::make_unique<Entry>();
  Graph g;
  std::vector<int> vars, grads;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    const Weight& w = *p.trainable[k];
    vars.push_back(g.add_variable(w.name, w.value));
    grads.push_back(g.add_input(w.name + "/grad", {w.value.shape(), DType::f32}));
    names.push_back(w.name);
    e->gradient_inputs.push_back(grads.back());
  }
  grads = optimizer_->clip_gradients(g, grads, names);
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    const Weight& w = *p.trainable[k];
    std::vector<int> slot_ids;
    for (std::size_t s = 0; s < p.slots[k].size(); ++s) {
      slot_ids.push_back(g.add_variable(w.name + "/slot" + std::to_string(s), p.slots[k][s]));
    }
    optimizer_->emit_update(g, vars[k], grads[k], slot_ids, w.name);
    if (w.constraint.active()) emit_constraint(g, vars[k], w.constraint, w.name + "/constraint");
    optimizer_->emit_average(g, vars[k], slot_ids, w.name);
  }
  place_constants(g);
  PlanOptions po;
  po.device = backend_->device().type;
  po.registry = backend_->kernels();
  e->program = plan(std::move(g), po);
  return e;
}

std::int64_t StepEngine::planned_peak_bytes() const {
  if (!programs_) return 0;
  std::int64_t n = persistent_bytes() + round64(static_cast<std::int64_t>(programs_->arena_bytes));
  // On a device: what is allocated beside them (device_staging_bytes's parts, as taken).
  const Programs& p = *programs_;
  for (const Tensor* t : {&p.step_buffer, &p.update_arena, &p.zero_gradient}) {
    if (t->defined()) n += round64(static_cast<std::int64_t>(t->nbytes()));
  }
  for (const Tensor& t : p.device_grad_sums) n += round64(static_cast<std::int64_t>(t.nbytes()));  // split steps' sums
  if (replicas_ && (replicas_->on_device || backend_->host_addressable())) {  // the gradient buckets, as taken
    n += round64(static_cast<std::int64_t>(replicas_->flat.nbytes()));
  }
  if (p.ring) {
    for (const Tensor& slot : p.ring->device) {
      if (slot.defined()) n += round64(static_cast<std::int64_t>(slot.nbytes()));
    }
  }
  return n;
}

std::int64_t StepEngine::staging_bytes(const Entry& e) {
  std::int64_t n = 0;
  if (queued_device() && e.staged) {
    // The ring's two slots (StepEngine::input_ring: at least 64 bytes each) and the StepScalars.
    n += 2 * round64(std::max<std::int64_t>(static_cast<std::int64_t>(e.staged->bytes), 64)) +
         round64(static_cast<std::int64_t>(sizeof(StepScalars)));
  }
  const auto update_arena = [&] {
    const Entry& apply = entry_mode(static_cast<int>(Mode::apply), 0, /*bind=*/false);
    return round64(std::max<std::int64_t>(static_cast<std::int64_t>(apply.program.arena_bytes()), 64));
  };
  if (replicated() && (e.mode == Mode::grads || e.mode == Mode::scaled)) {  // the update's own arena, the buckets
    n += update_arena() + round64(gradient_buckets_bytes());
  } else if (e.mode == Mode::scaled) {  // the update's own arena and zero gradient (Note [Loss scaling on the device])
    n += update_arena() + round64(static_cast<std::int64_t>(zero_gradient_bytes(e)));
  }
  return n;
}

std::int64_t StepEngine::largest_batch_size_within(std::int64_t limit_bytes, std::int64_t max_batch,
                                                   const SampleShapes& samples) {
  // Planned peaks grow with the batch size, so bisect; each probe plans without allocating.
  if (max_batch < 1 || plan_memory(1, samples).peak_bytes > limit_bytes) return 0;
  std::int64_t lo = 1, hi = max_batch + 1;  // lo fits; hi does not (or is past the range)
  if (plan_memory(max_batch, samples).peak_bytes <= limit_bytes) return max_batch;
  hi = max_batch;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (plan_memory(mid, samples).peak_bytes <= limit_bytes ? lo : hi) = mid;
  }
  return lo;
}

// Note [Plan breakdown]: arena slots overlap in time, so "how much of the arena is
// gradients" has an answer only at one step. We take the step where the live bytes peak
// and count the weight gradients and workspaces live there; everything else in the arena
// (activations, their gradients, inputs, and the packing slack between the live bytes and
// the arena size) and the autodiff constant are reported as activations, so the parts add
// up to peak_bytes exactly.
MemoryPlan StepEngine::plan_memory(std::int64_t batch_size, const SampleShapes& samples) {
  NNFIT_CHECK(batch_size >= 1, InvalidArgument, "batch size must be at least 1, got ", batch_size);
  check_compiled();
  // The program the training step runs (a replica's gradients, a loss-scaled step's on a
  // device, or the fused step).
  Entry& e = entry_mode(training_mode(), batch_size, /*bind=*/false, samples);
  MemoryPlan m;
  m.batch_size = batch_size;
  for (const Weight* w : model_.graph_.weights()) m.weights_bytes += round64(static_cast<std::int64_t>(w->value.nbytes()));
  for (const auto& sl : programs_->slots) {
    for (const Tensor& t : sl) m.optimizer_bytes += round64(static_cast<std::int64_t>(t.nbytes()));
  }
  m.arena_bytes = round64(static_cast<std::int64_t>(e.program.arena_bytes()));
  m.staging_bytes = staging_bytes(e);
  m.peak_bytes = persistent_bytes() + m.arena_bytes + m.staging_bytes;

  // Live bytes per step (index step + 1: inputs are live from step -1).
  const std::size_t n = e.program.steps().size() + 2;
  std::vector<std::int64_t> total(n), grads(n), work(n);
  for (const ArenaSlot& slot : e.program.slots()) {
    const bool is_grad = slot.value >= 0 && std::find(e.gradient_values.begin(), e.gradient_values.end(),
                                                      slot.value) != e.gradient_values.end();
    for (int st = slot.first_step; st <= slot.last_step; ++st) {
      const auto i = static_cast<std::size_t>(std::clamp(st + 1, 0, static_cast<int>(n) - 1));
      total[i] += static_cast<std::int64_t>(slot.bytes);
      if (is_grad) grads[i] += static_cast<std::int64_t>(slot.bytes);
      if (slot.value < 0) work[i] += static_cast<std::int64_t>(slot.bytes);
    }
  }
  const auto fullest = static_cast<std::size_t>(std::max_element(total.begin(), total.end()) - total.begin());
  m.gradients_bytes = grads[fullest];
  m.workspace_bytes = work[fullest];
  m.activations_bytes =
      m.peak_bytes - m.weights_bytes - m.optimizer_bytes - m.gradients_bytes - m.workspace_bytes - m.staging_bytes;
  return m;
}

}  // namespace nnfit
