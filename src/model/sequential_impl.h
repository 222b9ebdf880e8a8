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
struct Sequential::Entry {
  Program program;
  int x = -1, y = -1, loss = -1, pred = -1;
  std::vector<int> gradient_values;  // weight gradients, for the plan breakdown
  bool bound = false;                // bound to the current arena
};

struct Sequential::Programs {
  std::map<std::pair<bool, std::int64_t>, std::unique_ptr<Entry>> entries;
  Tensor arena;
  std::size_t arena_bytes = 0;
  std::vector<Weight*> trainable;             // in layer order
  std::vector<std::vector<Tensor>> slots;     // per trainable weight
  Tensor one;                                 // scalar 1.0: dL/dL
};

}  // namespace nnfit
