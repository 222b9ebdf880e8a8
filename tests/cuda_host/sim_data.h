// Training data the cuda-sim model tests share (sim_model_test.cpp, sim_ranks_test.cpp).
#pragma once
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "nnfit/core/tensor.h"

namespace nnfit::testing {

// n samples of `shape` drawn from N(0, 1) with `seed`, and 4 classes (int32) by the sign
// pattern of the sums of each sample's two halves: learnable by a small model.
inline std::pair<Tensor, Tensor> sim_data(std::int64_t n, const Shape& shape, std::uint32_t seed) {
  std::vector<std::int64_t> dims{n};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  Tensor x = Tensor::zeros(Shape(dims), DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  const std::int64_t w = shape.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    float a = 0, b = 0;
    for (std::int64_t j = 0; j < w; ++j) {
      const float v = x.data<float>()[i * w + j] = g(rng);
      (j < w / 2 ? a : b) += v;
    }
    y.data<std::int32_t>()[i] = (a > 0 ? 1 : 0) + (b > 0 ? 2 : 0);
  }
  return {x, y};
}

}  // namespace nnfit::testing
