// How fit's batches reach the programs (split from fit_loop.cpp): StepEngine::stage_element, a
// dataset element (x, y[, sample_weight]) checked against the model's inputs and targets and
// copied into the inputs of the program for its batch size (fit's training and validation
// batches, evaluate's), and StepEngine::limit_steps, an EpochFeed cut into epochs of
// steps_per_epoch batches.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/fit_data.h"
#include "engine/engine_types.h"
#include "nnfit/core/error.h"

namespace nnfit {

using namespace fit_data;

SampleShapes StepEngine::element_samples(const data::Element& element, const char* what, std::int64_t index) const {
  // Targets: one per output, none for a compute_loss that reads no y (Model::num_targets).
  const std::size_t n_in = model_.num_inputs(), n_out = model_.num_targets();
  NNFIT_CHECK(element.size() >= n_in + n_out, InvalidArgument, what, " batch ", index + 1, " has ", element.size(),
              " component(s); fit and evaluate need ",
              n_in + n_out == 2   ? std::string("(x, y)")
              : n_out == 0        ? std::to_string(n_in) + " (one per model input; its compute_loss reads no targets)"
                                  : std::to_string(n_in + n_out) + " (one per model input, then one target per output)");
  const std::vector<Shape> in_shapes = model_.input_shapes();
  SampleShapes samples;
  const std::int64_t rows = element[0].shape().rank() >= 1 ? element[0].shape()[0] : 0;
  for (std::size_t i = 0; i < n_in; ++i) {
    const Tensor& x = element[i];
    const std::string which = n_in > 1 ? " input " + std::to_string(i) : "";
    NNFIT_CHECK(x.dtype() == DType::f32 || x.dtype() == DType::u8 || x.dtype() == DType::i32 ||
                    x.dtype() == DType::i64 || x.dtype() == DType::boolean,
                InvalidArgument, what, " batch ", index + 1, which, ": inputs are ", dtype_name(x.dtype()),
                ", the model takes float32, uint8, int32, int64 or bool; add a map that converts them (cast)");
    NNFIT_CHECK(!in_shapes[i].admits(x.shape()) && x.shape().rank() >= 1, InvalidArgument, what, " batch ", index + 1,
                which, ": inputs of shape ", x.shape().to_string(), " are single samples; batch the dataset first");
    // As fit(x, y) and Keras: the input's shape, or it with a trailing axis of 1 added or
    // removed ([B, 28, 28] for a [28, 28, 1] input); never another layout of the same size.
    const Shape sample(std::vector<std::int64_t>(x.shape().dims().begin() + 1, x.shape().dims().end()));
    NNFIT_CHECK(rows > 0 && x.shape()[0] == rows && fit_data::keras_takes_sample_shape(sample, in_shapes[i]),
                InvalidArgument, what, " batch ", index + 1, which, ": inputs of shape ", x.shape().to_string(),
                " do not match the model's input shape ", in_shapes[i].to_string(),
                " per sample (Keras takes that shape, or it with a trailing axis of 1 added or removed)");
    samples.push_back(*program_sample_shape(sample, in_shapes[i]));
  }
  return samples;
}

StepEngine::Entry& StepEngine::stage_element(const data::Element& element, const char* what, std::int64_t index) {
  const bool training = std::strcmp(what, "training") == 0;
  // Sample weights follow one target per output, read or not: Keras's (x, y, sample_weight),
  // whose y a model that takes no targets ignores (carries_sample_weights).
  const std::size_t n_in = model_.num_inputs(), n_out = model_.num_outputs();
  const SampleShapes samples = element_samples(element, what, index);
  const std::int64_t rows = element[0].shape()[0];
  Entry& e = entry_or_split(training, rows, what, samples);
  const float* given_weights = nullptr;
  if (e.sample_weight >= 0 && element.size() > n_in + n_out) {
    const Tensor& w = element[n_in + n_out];
    NNFIT_CHECK(w.dtype() == DType::f32 && w.numel() == rows, InvalidArgument, what, " batch ", index + 1,
                ": sample weights must be float32, one per sample (", rows, "), got ", dtype_name(w.dtype()), " ",
                w.shape().to_string());
    given_weights = w.data<float>();
  }
  // The batch is read where the pipeline made it; the caller keeps `element` alive
  // through the step.
  // A float32 batch is read where the pipeline made it; others (uint8 images, integer token
  // ids) are cast into the program's own input as Keras's model casts them, so pipelines
  // may carry them as stored.
  for (std::size_t i = 0; i < n_in; ++i) {
    if (element[i].dtype() == DType::f32) {
      e.set_x(element[i].raw(), i);
    } else {
      e.set_x(nullptr, i);
      cast_inputs_to_f32(element[i], static_cast<float*>(e.x_data(i)));
    }
  }
  for (std::size_t i = 0; i < e.ys.size(); ++i) {
    try {
      const Shape& out = e.program.graph().desc(e.preds[i]).shape;  // [rows, ...] at this batch's shapes
      convert_targets(element[n_in + i], e.program.graph().desc(e.ys[i]), rows, e.y_data(i),
                      out.rank() > 1 ? out.dim(-1) : 0);
    } catch (const InvalidArgument& err) {
      throw InvalidArgument(std::string(what) + " batch " + std::to_string(index + 1) + ": " + err.what());
    }
  }
  if (e.sample_weight >= 0) stage_sample_weights(e, rows, given_weights);
  return e;
}

// Note [Steps per epoch]: FitOptions::steps_per_epoch as Keras's EpochIterator has it. The
// pass over the data is not restarted at an epoch's start while it has batches left, so
// consecutive epochs read consecutive batches; an epoch ends after steps_per_epoch of them,
// or where the pass ends (then the next epoch begins a new pass: with the tensors' shuffle,
// in that epoch's order). A pass known to be used up at an epoch's end is closed there; one
// of unknown length found empty at the start of an epoch is begun anew at once, so no epoch
// is empty. A run resumed inside an epoch begins a new pass there and skips the epoch's
// done batches (the position inside the old pass is not kept, as Keras's BackupAndRestore
// does not keep its iterator's).
StepEngine::EpochFeed StepEngine::limit_steps(EpochFeed& inner, std::int64_t steps, std::vector<std::string>* notes,
                                    const std::function<void(const std::string&)>& on_note) {
  struct State {
    bool open = false;       // the pass has batches left
    std::int64_t taken = 0;  // batches of this epoch
    std::int64_t in_pass = 0;
    std::int64_t epoch = 0;
    bool noted = false;
  };
  auto st = std::make_shared<State>();
  EpochFeed f;
  f.pass_steps = inner.pass_steps;
  f.begin = [&inner, st](std::int64_t epoch) {
    if (!st->open) {
      inner.begin(epoch);
      st->in_pass = 0;
    }
    st->open = true;
    st->taken = 0;
    st->epoch = epoch;
  };
  if (inner.prepare) {
    f.prepare = [&inner, st](std::int64_t next_epoch) {
      if (!st->open) inner.prepare(next_epoch);
    };
  }
  if (inner.skip) {
    f.skip = [&inner, st](std::int64_t n) {
      inner.skip(n);
      st->taken = st->in_pass = n;
    };
  }
  f.next = [&inner, st, steps, notes, on_note](std::int64_t& rows) -> Entry* {
    if (st->taken == steps) return nullptr;
    Entry* e = inner.next(rows);
    if (!e && st->taken == 0 && st->in_pass > 0) {  // used up exactly at the last epoch's end
      inner.begin(st->epoch);
      st->in_pass = 0;
      e = inner.next(rows);
    }
    if (!e) {
      st->open = false;
      if (!st->noted) {
        st->noted = true;
        const std::string note = "the data ran out after " + std::to_string(st->taken) + " of epoch " +
                                 std::to_string(st->epoch + 1) + "'s steps_per_epoch " + std::to_string(steps) +
                                 " batches; that epoch ended there and the next begins a new pass (repeat() the "
                                 "dataset, or lower steps_per_epoch)";
        if (notes) notes->push_back(note);
        if (on_note) on_note(note);
      }
      return nullptr;
    }
    ++st->taken;
    if (inner.pass_steps > 0 && ++st->in_pass >= inner.pass_steps) st->open = false;
    else if (inner.pass_steps == 0) ++st->in_pass;
    return e;
  };
  return f;
}

}  // namespace nnfit
