// What sequential.cpp (building and planning) and sequential_fit.cpp (the training and
// inference loops) share: the per-(mode, batch) planned entries and small helpers.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/graph/program.h"
#include "nnfit/model/sequential.h"

namespace nnfit {

inline std::int64_t round64(std::int64_t b) { return (b + 63) / 64 * 64; }

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Everything planned for one model: programs by (training, batch size), the shared arena,
// optimizer slots and the constant that seeds autodiff.
// What an entry's program computes: inference, a training step (forward, backward and the
// optimizer update), only the weight gradients of a micro-batch, or only the update from
// given gradients (the last two make a batch that does not fit: fit(on_oom="reduce_batch")).
enum class Mode { infer = 0, train = 1, grads = 2, apply = 3 };

// A batch that does not fit, run as micro-batches (fit/evaluate/predict with
// on_oom="reduce_batch"; docs/design/memory.md). Rows are staged here (or read where the
// pipeline made them); each micro-batch runs the program of its size, its predictions
// land in `pred` and its loss is weighted by its rows. Training (Mode::grads) also sums
// each micro-batch's gradients weighted by its rows, and one update applies their mean,
// which is the full batch's gradient; inference (Mode::infer) needs nothing more.
struct Sequential::MicroBatches {
  Mode mode = Mode::grads;            // the micro-batches' programs
  std::int64_t batch = 0, micro = 0;
  Tensor x, y, pred;                  // host staging for the whole batch (y: if a loss)
  const void* x_ext = nullptr;        // the batch's inputs where they lie, for one run
  std::vector<Tensor> grad_sums;      // training: per trainable weight
  float loss = 0;
  std::string cause;                  // the OutOfMemory message that made the split
  std::uint64_t noted_scope = 0;      // the OomScope that last noted the split
};

// The on_oom policy and where notes go, set on the model for the length of one fit,
// evaluate or predict call; the previous ones come back after (validation inside fit
// keeps fit's).
struct Sequential::OomScope {
  // throws: InvalidArgument for an on_oom other than "fail" or "reduce_batch".
  OomScope(Sequential& model, const std::string& on_oom, std::vector<std::string>* notes,
           std::function<void(const std::string&)> on_note);
  ~OomScope();
  OomScope(const OomScope&) = delete;
  OomScope& operator=(const OomScope&) = delete;
  Sequential& model;
  bool reduce_on_oom;
  std::vector<std::string>* notes;
  std::function<void(const std::string&)> on_note;
  std::uint64_t scope;
};

struct Sequential::Entry {
  Program program;  // for a split entry: planned for the whole batch, never bound
  int x = -1, y = -1, loss = -1, pred = -1;
  std::vector<int> gradient_values;  // weight gradients, for the plan breakdown
  std::vector<std::size_t> gradient_weights;  // Mode::grads: trainable index of each gradient
  std::vector<int> gradient_inputs;           // Mode::apply: the input of each trainable weight, or -1
  bool bound = false;                // bound to the current arena
  std::unique_ptr<MicroBatches> split;  // set: this batch runs as micro-batches

  // Where a feed writes the batch's input rows and targets; where the loops read the
  // outputs after the run.
  void* x_data() {
    if (split) return split->x.raw();
    program.set_input(x, nullptr);
    return program.data(x);
  }
  // Reads the inputs from `data` for the next run (nullptr: from x_data() again).
  void set_x(const void* data) {
    if (split) split->x_ext = data;
    else program.set_input(x, data);
  }
  void* y_data() {
    if (split) return split->y.defined() ? split->y.raw() : nullptr;
    return y >= 0 ? program.data(y) : nullptr;
  }
  const float* pred_data() const {
    return static_cast<const float*>(split ? split->pred.raw() : program.data(pred));
  }
  float loss_value() const { return split ? split->loss : *static_cast<const float*>(program.data(loss)); }
};

struct Sequential::Programs {
  std::map<std::pair<Mode, std::int64_t>, std::unique_ptr<Entry>> entries;
  Tensor arena;
  std::size_t arena_bytes = 0;
  std::vector<Weight*> trainable;             // in layer order
  std::vector<std::vector<Tensor>> slots;     // per trainable weight
  Tensor one;                                 // scalar 1.0: dL/dL
};

}  // namespace nnfit
