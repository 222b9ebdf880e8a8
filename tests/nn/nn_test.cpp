// Layers, losses, metrics, optimizers and initializers: names, defaults, shapes, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/memory/host_allocator.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/nn/optimizer.h"

namespace nnfit {
namespace {

TEST(Initializers, GlorotUniformHasKerasLimitAndIsSeeded) {
  HostAllocator alloc;
  WeightFactory wf(alloc, 42);
  Tensor w = wf.make("dense/kernel", Shape{784, 128}, "glorot_uniform", 784, 128);
  float limit = std::sqrt(6.0f / (784 + 128));
  double sum = 0, sq = 0;
  for (std::int64_t i = 0; i < w.numel(); ++i) {
    float v = w.data<float>()[i];
    ASSERT_LE(std::fabs(v), limit);
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  double mean = sum / static_cast<double>(w.numel());
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(w.numel())), limit / std::sqrt(3.0), 0.001);
  Tensor again = WeightFactory(alloc, 42).make("dense/kernel", Shape{784, 128}, "glorot_uniform", 784, 128);
  EXPECT_EQ(0, std::memcmp(w.raw(), again.raw(), w.nbytes()));
  Tensor other = WeightFactory(alloc, 43).make("dense/kernel", Shape{784, 128}, "glorot_uniform", 784, 128);
  EXPECT_NE(0, std::memcmp(w.raw(), other.raw(), w.nbytes()));
}

TEST(Initializers, HeNormalStddevAndTruncation) {
  HostAllocator alloc;
  WeightFactory wf(alloc, 1);
  Tensor w = wf.make("k", Shape{200, 100}, "he_normal", 200, 100);
  double sq = 0, bound = 2.0 * std::sqrt(2.0 / 200) / 0.87962566103423978;
  for (std::int64_t i = 0; i < w.numel(); ++i) {
    double v = w.data<float>()[i];
    ASSERT_LE(std::fabs(v), bound + 1e-6);
    sq += v * v;
  }
  EXPECT_NEAR(std::sqrt(sq / static_cast<double>(w.numel())), std::sqrt(2.0 / 200), 0.005);
  EXPECT_THROW(wf.make("k", Shape{2}, "orthogonal_typo", 2, 2), InvalidArgument);
  Tensor ones = wf.make("o", Shape{3}, "ones", 1, 1);
  EXPECT_EQ(ones.data<float>()[2], 1.0f);
}

TEST(Layers, OutputShapesFollowKeras) {
  Conv2DOptions c;
  c.filters = 32;
  EXPECT_EQ(Conv2D("c", c).output_shape(Shape{28, 28, 1}), (Shape{26, 26, 32}));
  c.padding = "same";
  c.strides = {2, 2};
  EXPECT_EQ(Conv2D("c", c).output_shape(Shape{28, 28, 1}), (Shape{14, 14, 32}));
  EXPECT_EQ(MaxPooling2D("p", {}).output_shape(Shape{26, 26, 32}), (Shape{13, 13, 32}));
  Pooling2DOptions same{{3, 3}, {2, 2}, "same"};
  EXPECT_EQ(AveragePooling2D("p", same).output_shape(Shape{7, 7, 4}), (Shape{4, 4, 4}));
  EXPECT_EQ(Flatten("f").output_shape(Shape{5, 5, 64}), (Shape{1600}));
  EXPECT_EQ(Reshape("r", {-1, 4}).output_shape(Shape{2, 6}), (Shape{3, 4}));
  EXPECT_EQ(Dense("d", {10}).output_shape(Shape{1600}), (Shape{10}));
}

TEST(Layers, BadConfigurationsNameTheLayer) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { Dense("dense_7", {0}); }).find("dense_7"), std::string::npos);
  EXPECT_NE(message([] { Dense("dense_8", {4, "swishy"}); }).find("swishy"), std::string::npos);
  EXPECT_NE(message([] { Dense("d", {4}).output_shape(Shape{}); }).find("d: Dense needs an input with a feature axis"),
            std::string::npos);
  EXPECT_EQ(Dense("d", {4}).output_shape(Shape{28, 28}), (Shape{28, 4}));  // Keras: the last axis
  EXPECT_NE(message([] { Conv2D("conv", {}); }).find("conv"), std::string::npos);
  EXPECT_NE(message([] { Dropout("drop", 1.0); }).find("drop"), std::string::npos);
  EXPECT_NE(message([] { Reshape("r", {5}).output_shape(Shape{2, 3}); }).find("cannot reshape"), std::string::npos);
  Conv2DOptions big;
  big.filters = 1;
  big.kernel_size = {5, 5};
  EXPECT_NE(message([&] { Conv2D("conv_big", big).output_shape(Shape{3, 3, 1}); }).find("does not fit"), std::string::npos);
}

TEST(Losses, NamesAndAliases) {
  EXPECT_EQ(Loss::from_name("SparseCategoricalCrossentropy").kind, "sparse_categorical_crossentropy");
  EXPECT_EQ(Loss::from_name("mse").kind, "mean_squared_error");
  EXPECT_EQ(Loss::from_name("BinaryCrossentropy").kind, "binary_crossentropy");
  EXPECT_EQ(Loss::from_name("hinge").kind, "hinge");
  EXPECT_THROW(Loss::from_name("hinges"), InvalidArgument);
  EXPECT_FALSE(Loss::from_name("mae", true).from_logits) << "MeanAbsoluteError takes no from_logits";
  TensorDesc pred{Shape{8, 10}, DType::f32};
  EXPECT_EQ(Loss::from_name("sparse_categorical_crossentropy").target_desc(pred).dtype, DType::i32);
  EXPECT_EQ(Loss::from_name("categorical_crossentropy").target_desc(pred).shape, (Shape{8, 10}));
}

TEST(Optimizers, KerasDefaultsAndSchedules) {
  Optimizer adam({});
  EXPECT_DOUBLE_EQ(adam.learning_rate(0), 0.001);
  EXPECT_EQ(adam.num_slots(), 2);
  OptimizerOptions sgd;
  sgd.name = "SGD";
  EXPECT_DOUBLE_EQ(Optimizer(sgd).learning_rate(5), 0.01);
  EXPECT_EQ(Optimizer(sgd).num_slots(), 0);
  sgd.momentum = 0.9;
  EXPECT_EQ(Optimizer(sgd).num_slots(), 1);
  OptimizerOptions adamw;
  adamw.name = "adamw";
  EXPECT_DOUBLE_EQ(Optimizer(adamw).options().weight_decay, 0.004);
  OptimizerOptions bad;
  bad.name = "adagradx";
  EXPECT_THROW(Optimizer{bad}, InvalidArgument);
  ExponentialDecay d(0.1, 10, 0.5, false);
  EXPECT_NEAR(d(10), 0.05, 1e-12);
  EXPECT_NEAR(d(5), 0.1 * std::sqrt(0.5), 1e-12);
  ExponentialDecay st(0.1, 10, 0.5, true);
  EXPECT_NEAR(st(19), 0.05, 1e-12);
  EXPECT_THROW(ExponentialDecay(0.1, 0, 0.5, false), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
