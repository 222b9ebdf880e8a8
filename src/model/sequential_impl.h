// What sequential.cpp (building and planning) and sequential_fit.cpp (the training and
// inference loops) share: the per-(mode, batch) planned entries and small helpers.
#pragma once
#include <chrono>
#include <cstdint>
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

// A training batch run as micro-batches with gradient accumulation: rows are staged here
// (or read where the pipeline made them), each micro-batch's gradients are summed weighted
// by its rows, and one update applies their mean, which is the full batch's gradient.
struct Sequential::Accumulation {
  std::int64_t batch = 0, micro = 0;
  Tensor x, y, pred;                  // host staging for the whole batch
  const void* x_ext = nullptr;        // the batch's inputs where they lie, for one step
  std::vector<Tensor> grad_sums;      // per trainable weight (undefined: no gradient)
  float loss = 0;
};

// fit()'s on_oom policy and notes, set on the model for the length of one fit.
struct Sequential::FitScope {
  // throws: InvalidArgument for an on_oom other than "fail" or "reduce_batch".
  FitScope(Sequential& model, const FitOptions& options, std::vector<std::string>& notes);
  ~FitScope();
  FitScope(const FitScope&) = delete;
  FitScope& operator=(const FitScope&) = delete;
  Sequential& model;
};

struct Sequential::Entry {
  Program program;  // for an accumulating entry: planned for the whole batch, never bound
  int x = -1, y = -1, loss = -1, pred = -1;
  std::vector<int> gradient_values;  // weight gradients, for the plan breakdown
  std::vector<std::size_t> gradient_weights;  // Mode::grads: trainable index of each gradient
  std::vector<int> gradient_inputs;           // Mode::apply: the input of each trainable weight, or -1
  bool bound = false;                // bound to the current arena
  std::unique_ptr<Accumulation> acc;  // set: this batch runs as micro-batches

  // Where a feed writes the batch's input rows and targets; where training reads the
  // outputs after the step.
  void* x_data() {
    if (acc) return acc->x.raw();
    program.set_input(x, nullptr);
    return program.data(x);
  }
  void set_x(const void* data) {
    if (acc) acc->x_ext = data;
    else program.set_input(x, data);
  }
  void* y_data() { return acc ? acc->y.raw() : program.data(y); }
  const float* pred_data() const { return static_cast<const float*>(acc ? acc->pred.raw() : program.data(pred)); }
  float loss_value() const { return acc ? acc->loss : *static_cast<const float*>(program.data(loss)); }
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
