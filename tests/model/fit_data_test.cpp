// fit_data's input preparation: Keras's rule for a sample's shape (its own, or with a
// trailing axis of 1 added or removed); another layout of the same size is refused, as
// Keras refuses it, instead of being reshaped silently.
#include "model/fit_data.h"

#include <gtest/gtest.h>

#include "nnfit/core/error.h"

namespace nnfit::fit_data {
namespace {

TEST(FitData, TakesTheInputShapeOrItWithATrailingOneAddedOrRemoved) {
  const Shape image{28, 28, 1};
  EXPECT_EQ(prepare_inputs(Tensor::zeros(Shape{8, 28, 28, 1}), image).shape(), (Shape{8, 28, 28, 1}));
  EXPECT_EQ(prepare_inputs(Tensor::zeros(Shape{8, 28, 28}), image).shape(), (Shape{8, 28, 28, 1}));
  EXPECT_EQ(prepare_inputs(Tensor::zeros(Shape{8, 5, 1}), Shape{5}).shape(), (Shape{8, 5}));
  EXPECT_TRUE(keras_takes_sample_shape(Shape{}, Shape{1}));
  EXPECT_FALSE(keras_takes_sample_shape(Shape{28, 28}, Shape{28, 28, 2}));
}

TEST(FitData, RefusesAnotherLayoutOfTheSameSize) {
  // The sweep's case: (8, 784) fed to a (28, 28, 1) model was reshaped without a word.
  for (const Shape& given : {Shape{8, 784}, Shape{8, 28, 1, 28}, Shape{8, 1, 28, 28}, Shape{8, 14, 56, 1}}) {
    try {
      prepare_inputs(Tensor::zeros(given), Shape{28, 28, 1});
      FAIL() << given.to_string() << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("inputs of shape " + given.to_string() +
                                           " do not match the model's input shape (28, 28, 1) per sample"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace nnfit::fit_data
