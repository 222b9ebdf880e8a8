// fit(on_oom="reduce_batch"): a training batch that does not fit runs as micro-batches
// with gradient accumulation (Accumulation in sequential_impl.h; docs/design/memory.md).
#include <algorithm>
#include <cstring>

#include "model/sequential_impl.h"
#include "nnfit/core/error.h"

namespace nnfit {

Sequential::FitScope::FitScope(Sequential& m, const FitOptions& options, std::vector<std::string>& notes) : model(m) {
  NNFIT_CHECK(options.on_oom == "fail" || options.on_oom == "reduce_batch", InvalidArgument, "on_oom must be ",
              "\"fail\" or \"reduce_batch\", got \"", options.on_oom, "\"");
  model.reduce_on_oom_ = options.on_oom == "reduce_batch";
  model.notes_ = &notes;
  model.on_note_ = options.on_note;
}

Sequential::FitScope::~FitScope() {
  model.reduce_on_oom_ = false;
  model.notes_ = nullptr;
  model.on_note_ = nullptr;
}

Sequential::Entry& Sequential::training_entry(std::int64_t batch) {
  try {
    return entry(true, batch);
  } catch (const OutOfMemory& oom) {
    if (!reduce_on_oom_ || batch < 2) throw;
    Entry& e = entry(true, batch, /*bind=*/false);
    // The largest power-of-two fraction of the batch whose gradient program fits.
    std::int64_t micro = batch / 2;
    for (;; micro /= 2) {
      try {
        entry_mode(static_cast<int>(Mode::grads), micro);
        break;
      } catch (const OutOfMemory&) {
        if (micro == 1) {
          throw OutOfMemory(std::string(oom.what()) + "; reduce_batch: not even micro-batches of 1 fit", oom.hint());
        }
      }
    }
    entry_mode(static_cast<int>(Mode::apply), 0);
    auto a = std::make_unique<Accumulation>();
    a->batch = batch;
    a->micro = micro;
    a->x = Tensor::zeros(e.program.graph().desc(e.x).shape, DType::f32);
    a->y = Tensor::zeros(e.program.graph().desc(e.y).shape, e.program.graph().desc(e.y).dtype);
    a->pred = Tensor::zeros(e.program.graph().desc(e.pred).shape, DType::f32);
    for (Weight* w : programs_->trainable) a->grad_sums.push_back(Tensor::zeros(w->value.shape(), DType::f32));
    e.acc = std::move(a);
    bool differs = false;
    for (const auto& l : layers_) {
      const std::string kind = l->class_name();
      differs = differs || kind == "Dropout" || kind == "BatchNormalization";
    }
    if (notes_) {
      notes_->push_back("batch " + std::to_string(batch) + " does not fit (" + oom.what() + "); training on micro-batches of " +
                        std::to_string(micro) + " with gradient accumulation, so the effective batch stays " +
                        std::to_string(batch) +
                        (differs ? "; Dropout/BatchNormalization see micro-batches, so results differ from a full batch"
                                 : "; results match a full batch within float rounding"));
      if (on_note_) on_note_(notes_->back());
    }
    return e;
  }
}

void Sequential::run_accumulated(Entry& e, std::int64_t rows, const StepContext& ctx) {
  Accumulation& a = *e.acc;
  Programs& p = *programs_;
  const Graph& full = e.program.graph();
  const std::size_t x_row = full.desc(e.x).bytes() / static_cast<std::size_t>(a.batch);
  const std::size_t y_row = full.desc(e.y).bytes() / static_cast<std::size_t>(a.batch);
  const std::size_t pred_row = full.desc(e.pred).bytes() / static_cast<std::size_t>(a.batch);
  const char* x = static_cast<const char*>(a.x_ext ? a.x_ext : a.x.raw());
  a.x_ext = nullptr;
  for (Tensor& g : a.grad_sums) std::memset(g.raw(), 0, g.nbytes());
  double loss_sum = 0;
  std::int64_t index = 0;
  for (std::int64_t off = 0; off < rows; off += a.micro, ++index) {
    const std::int64_t r = std::min(a.micro, rows - off);
    Entry& m = entry_mode(static_cast<int>(Mode::grads), r);
    m.program.set_input(m.x, x + static_cast<std::size_t>(off) * x_row);
    std::memcpy(m.program.data(m.y), static_cast<const char*>(a.y.raw()) + static_cast<std::size_t>(off) * y_row,
                static_cast<std::size_t>(r) * y_row);
    StepContext mc = ctx;
    mc.step = ctx.step + (index << 40);  // a dropout stream of its own per micro-batch
    m.program.run(mc);
    loss_sum += static_cast<double>(*static_cast<const float*>(m.program.data(m.loss))) * static_cast<double>(r);
    std::memcpy(static_cast<char*>(a.pred.raw()) + static_cast<std::size_t>(off) * pred_row, m.program.data(m.pred),
                static_cast<std::size_t>(r) * pred_row);
    // Each micro-batch's gradient is of its mean loss: weight it by its rows.
    for (std::size_t k = 0; k < m.gradient_values.size(); ++k) {
      float* sum = a.grad_sums[m.gradient_weights[k]].data<float>();
      const float* g = static_cast<const float*>(m.program.data(m.gradient_values[k]));
      const std::int64_t n = a.grad_sums[m.gradient_weights[k]].numel();
      const float w = static_cast<float>(r);
      for (std::int64_t i = 0; i < n; ++i) sum[i] += w * g[i];
    }
    m.program.set_input(m.x, nullptr);
  }
  Entry& apply = entry_mode(static_cast<int>(Mode::apply), 0);
  const float inv = 1.0f / static_cast<float>(rows);
  for (std::size_t k = 0; k < p.trainable.size(); ++k) {
    float* dst = static_cast<float*>(apply.program.data(apply.gradient_inputs[k]));
    const float* sum = a.grad_sums[k].data<float>();
    for (std::int64_t i = 0; i < a.grad_sums[k].numel(); ++i) dst[i] = sum[i] * inv;
  }
  apply.program.run(ctx);
  a.loss = static_cast<float>(loss_sum / static_cast<double>(rows));
}

}  // namespace nnfit
