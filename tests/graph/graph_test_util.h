// Helpers shared by the graph tests that build small training graphs by hand
// (planner_test.cpp, fusion_test.cpp).
#pragma once
#include "nnfit/core/tensor.h"

namespace nnfit::graph_test {

// A float32 tensor of `s` whose element i is v + 0.01 (i mod 7).
inline Tensor filled(Shape s, float v) {
  Tensor t = Tensor::zeros(std::move(s));
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = v + 0.01f * static_cast<float>(i % 7);
  return t;
}

}  // namespace nnfit::graph_test
