// End to end through the C++ API: a small MLP and CNN learn a Fashion-MNIST subset.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "nnfit/data/in_memory_dataset.h"
#include "nnfit/io/idx.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

std::string fmnist_dir() {
  const char* d = std::getenv("FASHION_MNIST_DIR");
  return d ? d : "/usr/share/datasets/fashion-mnist";
}

struct Subset {
  Tensor x, y, xt, yt;
};

Subset load(std::int64_t train, std::int64_t test, const Shape& sample) {
  std::string d = fmnist_dir();
  Subset s;
  s.x = data::InMemoryDataset::to_float(io::read_idx(d + "/train-images-idx3-ubyte.gz"), 1.0f / 255, sample).slice_rows(0, train);
  s.y = io::read_idx(d + "/train-labels-idx1-ubyte.gz").slice_rows(0, train);
  s.xt = data::InMemoryDataset::to_float(io::read_idx(d + "/t10k-images-idx3-ubyte.gz"), 1.0f / 255, sample).slice_rows(0, test);
  s.yt = io::read_idx(d + "/t10k-labels-idx1-ubyte.gz").slice_rows(0, test);
  return s;
}

CompileOptions adam_logits() {
  CompileOptions c;
  c.optimizer.name = "adam";
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  c.metrics = {"accuracy"};
  return c;
}

TEST(TrainSubset, MlpReaches80PercentOn5000Samples) {
  if (!std::filesystem::exists(fmnist_dir() + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "no Fashion-MNIST";
  Subset d = load(5000, 2000, Shape{28, 28});
  Sequential m;
  m.set_input_shape(Shape{28, 28});
  m.add(std::make_unique<Flatten>("flatten"));
  m.add(std::make_unique<Dense>("dense", DenseOptions{128, "relu"}));
  m.add(std::make_unique<Dense>("dense_1", DenseOptions{10}));
  m.set_seed(1);
  m.compile(adam_logits());
  FitOptions fo;
  fo.epochs = 5;
  fo.batch_size = 64;
  fo.seed = 1;
  fo.validation_data = std::make_pair(d.xt, d.yt);
  History h = m.fit(d.x, d.y, fo);
  ASSERT_EQ(h.epochs.size(), 5u);
  EXPECT_LT(log_value(h.epochs.back(), "loss"), log_value(h.epochs.front(), "loss"));
  EXPECT_GT(log_value(h.epochs.back(), "val_accuracy"), 0.80);
  // evaluate agrees with the last validation figure (same weights, same data).
  Logs ev = m.evaluate(d.xt, d.yt, 100);
  EXPECT_NEAR(log_value(ev, "accuracy"), log_value(h.epochs.back(), "val_accuracy"), 1e-9);
  EXPECT_NEAR(log_value(ev, "loss"), log_value(h.epochs.back(), "val_loss"), 1e-4);
  // The allocator's measured peak is exactly the planner's figure.
  EXPECT_EQ(m.memory_stats().peak_bytes, m.planned_peak_bytes());
  Tensor p = m.predict(d.xt.slice_rows(0, 10), 4);
  EXPECT_EQ(p.shape(), (Shape{10, 10}));
}

TEST(TrainSubset, CnnWithBatchNormAndDropoutLearns) {
  if (!std::filesystem::exists(fmnist_dir() + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "no Fashion-MNIST";
  Subset d = load(3000, 1000, Shape{28, 28, 1});
  Sequential m;
  m.set_input_shape(Shape{28, 28, 1});
  Conv2DOptions c1;
  c1.filters = 16;
  c1.activation = "relu";
  m.add(std::make_unique<Conv2D>("conv2d", c1));
  m.add(std::make_unique<MaxPooling2D>("max_pooling2d", Pooling2DOptions{}));
  m.add(std::make_unique<BatchNormalization>("batch_normalization", BatchNormalizationOptions{}));
  Conv2DOptions c2;
  c2.filters = 16;
  c2.padding = "same";
  c2.strides = {2, 2};
  m.add(std::make_unique<Conv2D>("conv2d_1", c2));
  m.add(std::make_unique<Activation>("activation", "gelu"));
  m.add(std::make_unique<AveragePooling2D>("average_pooling2d", Pooling2DOptions{}));
  m.add(std::make_unique<Flatten>("flatten"));
  m.add(std::make_unique<Dropout>("dropout", 0.3));
  m.add(std::make_unique<Dense>("dense", DenseOptions{10, "softmax"}));
  m.set_seed(3);
  CompileOptions co;
  co.optimizer.name = "adam";
  co.loss = Loss::from_name("sparse_categorical_crossentropy", false);
  co.metrics = {"accuracy"};
  m.compile(co);
  FitOptions fo;
  fo.epochs = 3;
  fo.batch_size = 50;
  fo.seed = 2;
  fo.validation_data = std::make_pair(d.xt, d.yt);
  History h = m.fit(d.x, d.y, fo);
  // This deliberately awkward model (BN moving statistics still warming up, average
  // pooling down to 2x2) reaches about 0.70 here; chance is 0.10.
  EXPECT_GT(log_value(h.epochs.back(), "val_accuracy"), 0.65);
  EXPECT_LT(log_value(h.epochs.back(), "loss"), log_value(h.epochs.front(), "loss"));
  EXPECT_EQ(m.memory_stats().peak_bytes, m.planned_peak_bytes());
}

}  // namespace
}  // namespace nnfit
