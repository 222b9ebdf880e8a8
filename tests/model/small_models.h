// The small models and data the fit tests share: an 8-feature MLP of three classes and
// data whose labels follow the inputs (so it learns) or do not.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <utility>

#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit::test {

// Dense(16, relu) -> Dense(3) logits, Adam, sparse categorical cross-entropy, accuracy.
inline std::unique_ptr<Sequential> small_mlp(std::uint64_t seed = 3) {
  auto m = std::make_unique<Sequential>("mlp");
  m->set_input_shape(Shape{8});
  m->set_seed(seed);
  m->add(std::make_unique<Dense>("dense", DenseOptions{16, "relu"}));
  m->add(std::make_unique<Dense>("dense_1", DenseOptions{3}));
  CompileOptions c;
  c.optimizer.name = "adam";
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  c.metrics = {"accuracy"};
  m->compile(c);
  return m;
}

// n rows of 8 features in [0, 1) and uint8 labels: the argmax of the first three features
// (learnable), or random.
inline std::pair<Tensor, Tensor> small_data(std::int64_t n, std::uint32_t seed = 1, bool learnable = true) {
  Tensor x = Tensor::zeros(Shape{n, 8}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::u8);
  std::mt19937 rng(seed);
  for (std::int64_t i = 0; i < n; ++i) {
    float* row = x.data<float>() + i * 8;
    for (int j = 0; j < 8; ++j) row[j] = static_cast<float>(rng() % 1000) / 1000.0f;
    y.data<std::uint8_t>()[i] =
        static_cast<std::uint8_t>(!learnable              ? rng() % 3
                                  : row[0] > row[1] ? (row[0] > row[2] ? 0 : 2)
                                                    : (row[1] > row[2] ? 1 : 2));
  }
  return {x, y};
}

}  // namespace nnfit::test
