// The Keras codecs of the convolutions (src/model/keras/codecs/conv.cpp): Conv1D/2D/3D with
// dilation and groups, depthwise, separable and transposed convolutions read in both
// generations' forms, give Keras's shapes and parameter counts, round-trip through the
// writer, and bad values are named with the layer's path.
#include <gtest/gtest.h>

#include "model/keras_config_helpers.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

using namespace keras_test;

TEST(KerasConfig, Conv1DReadsAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 10, 4]",
      layer("Convolution1D", R"({"name": "c", "filters": 4, "kernel_size": [3], "strides": [2], "padding": "causal", "dilation_rate": [1], "groups": 1, "activation": "relu"})") +
          ", " + layer("Conv1D", R"({"name": "tcn", "filters": 6, "kernel_size": 2, "padding": "causal", "dilation_rate": 4, "groups": 2})"));
  auto m = sequential_from_keras_json(json, "conv1d.json");
  m->build();
  EXPECT_EQ(m->layers()[0]->class_name(), "Conv1D");
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{10, 4}), (Shape{5, 4}));  // causal: (10 + 2 - 3) / 2 + 1
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{5, 4}), (Shape{5, 6}));   // causal keeps the length
  EXPECT_EQ(m->layers()[1]->count_params(), 2 * 2 * 6 + 6);               // kernel (2, 4 / 2, 6)
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  const auto& o = dynamic_cast<const Conv1D&>(*again->layers()[0]).options();
  EXPECT_EQ(o.kernel_size, 3);
  EXPECT_EQ(o.strides, 2);
  EXPECT_EQ(o.padding, "causal");
  EXPECT_EQ(o.activation, "relu");
  const auto& t = dynamic_cast<const Conv1D&>(*again->layers()[1]).options();
  EXPECT_EQ(t.dilation_rate, 4);
  EXPECT_EQ(t.groups, 2);
}

TEST(KerasConfig, ConvFamilyReadsBothGenerationsAndRoundTrips) {
  // Keras 3 forms, then Keras 2's SeparableConvolution2D with the base Conv's keys.
  const std::string json = keras3_model(
      "[null, 9, 9, 4]",
      layer("Conv2D", R"({"name": "g", "filters": 6, "kernel_size": 3, "padding": "same", "dilation_rate": [2, 2], "groups": 2})") +
          ", " + layer("DepthwiseConv2D", R"({"name": "dw", "kernel_size": [3, 3], "strides": [2, 2], "depth_multiplier": 2, "padding": "valid", "depthwise_initializer": {"class_name": "HeNormal", "config": {"seed": null}}})") +
          ", " + layer("SeparableConvolution2D", R"({"name": "sep", "filters": 5, "kernel_size": 3, "padding": "same", "depth_multiplier": 1, "groups": 1, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "kernel_regularizer": null, "kernel_constraint": null, "pointwise_initializer": "he_uniform"})") +
          ", " + layer("Conv2DTranspose", R"({"name": "up", "filters": 3, "kernel_size": [3, 3], "strides": [2, 2], "padding": "same", "output_padding": [1, 1], "activation": "relu"})"));
  auto m = sequential_from_keras_json(json, "convs.json");
  m->build();
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Conv2D", "DepthwiseConv2D", "SeparableConv2D", "Conv2DTranspose"}));
  const std::vector<Shape> shapes = {Shape{9, 9, 6}, Shape{4, 4, 12}, Shape{4, 4, 5}, Shape{8, 8, 3}};
  const std::vector<std::int64_t> params = {3 * 3 * 2 * 6 + 6, 3 * 3 * 6 * 2 + 12, 3 * 3 * 12 + 12 * 5 + 5,
                                            3 * 3 * 3 * 5 + 3};
  Shape s{9, 9, 4};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    s = m->layers()[i]->output_shape(s);
    EXPECT_EQ(s, shapes[i]) << m->layers()[i]->name();
    EXPECT_EQ(m->layers()[i]->count_params(), params[i]) << m->layers()[i]->name();
  }
  // Keras's weight names and order.
  const auto& sep = m->layers()[2]->weights();
  ASSERT_EQ(sep.size(), 3u);
  EXPECT_EQ(sep[0].name, "sep/depthwise_kernel");
  EXPECT_EQ(sep[0].value.shape().to_string(), (Shape{3, 3, 12, 1}).to_string());
  EXPECT_EQ(sep[1].name, "sep/pointwise_kernel");
  EXPECT_EQ(sep[1].value.shape().to_string(), (Shape{1, 1, 12, 5}).to_string());
  EXPECT_EQ(m->layers()[3]->weights()[0].value.shape(), (Shape{3, 3, 3, 5}));  // (k, k, filters, channels)
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), classes(*m));
  const auto& g = dynamic_cast<const Conv2D&>(*again->layers()[0]).options();
  EXPECT_EQ(g.dilation_rate, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(g.groups, 2);
  const auto& dw = dynamic_cast<const DepthwiseConv&>(*again->layers()[1]).options();
  EXPECT_EQ(dw.depth_multiplier, 2);
  EXPECT_EQ(dw.strides, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(dw.depthwise_initializer, "he_normal");
  EXPECT_EQ(dynamic_cast<const SeparableConv&>(*again->layers()[2]).options().pointwise_initializer, "he_uniform");
  const auto& up = dynamic_cast<const ConvTranspose&>(*again->layers()[3]).options();
  EXPECT_EQ(up.output_padding, (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(up.activation, "relu");
}

TEST(KerasConfig, OneDimensionalDepthwiseSeparableAndTransposed) {
  const std::string json = keras3_model(
      "[null, 10, 3]",
      layer("DepthwiseConv1D", R"({"name": "dw", "kernel_size": 3, "depth_multiplier": 2, "padding": "same"})") + ", " +
          layer("SeparableConv1D", R"({"name": "sep", "filters": 4, "kernel_size": [3], "dilation_rate": [2]})") +
          ", " + layer("Convolution1DTranspose", R"({"name": "up", "filters": 2, "kernel_size": 4, "strides": 2, "output_padding": null})"));
  auto m = sequential_from_keras_json(json, "convs1d.json");
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"DepthwiseConv1D", "SeparableConv1D", "Conv1DTranspose"}));
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{10, 3}), (Shape{10, 6}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{10, 6}), (Shape{6, 4}));
  EXPECT_EQ(m->layers()[2]->output_shape(Shape{6, 4}), (Shape{14, 2}));  // valid: 6 * 2 + (4 - 2)
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), classes(*m));
  EXPECT_TRUE(dynamic_cast<const ConvTranspose&>(*again->layers()[2]).options().output_padding.empty());
}

TEST(KerasConfig, Conv3DReadsAndRoundTrips) {
  // Keras 3's full Conv3D config (as keras.layers.Conv3D(...).get_config() writes it), then
  // the Convolution3D alias with tuples given as single integers.
  const std::string json = keras3_model(
      "[null, 6, 9, 8, 4]",
      layer("Conv3D", R"({"name": "c", "trainable": true, "dtype": "float32", "filters": 6, "kernel_size": [3, 3, 2], "strides": [1, 2, 2], "padding": "same", "data_format": "channels_last", "dilation_rate": [1, 1, 1], "groups": 2, "activation": "relu", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "HeNormal", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null})") +
          ", " + layer("Convolution3D", R"({"name": "d", "filters": 3, "kernel_size": 2, "dilation_rate": [2, 1, 1], "use_bias": false})"));
  auto m = sequential_from_keras_json(json, "conv3d.json");
  m->build();
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Conv3D", "Conv3D"}));
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{6, 9, 8, 4}), (Shape{6, 5, 4, 6}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{6, 5, 4, 6}), (Shape{4, 4, 3, 3}));  // depth 6 - (2 - 1) * 2
  // Keras's weight layout: kernel (kd, kh, kw, in / groups, out), then bias.
  const auto& w = m->layers()[0]->weights();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, "c/kernel");
  EXPECT_EQ(w[0].value.shape(), (Shape{3, 3, 2, 2, 6}));
  EXPECT_EQ(w[1].value.shape(), (Shape{6}));
  EXPECT_EQ(m->layers()[1]->count_params(), 2 * 2 * 2 * 6 * 3);  // no bias
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), classes(*m));
  const auto& c = dynamic_cast<const Conv3D&>(*again->layers()[0]).options();
  EXPECT_EQ(c.kernel_size, (std::vector<std::int64_t>{3, 3, 2}));
  EXPECT_EQ(c.strides, (std::vector<std::int64_t>{1, 2, 2}));
  EXPECT_EQ(c.padding, "same");
  EXPECT_EQ(c.groups, 2);
  EXPECT_EQ(c.activation, "relu");
  EXPECT_EQ(c.kernel_initializer, "he_normal");
  const auto& d = dynamic_cast<const Conv3D&>(*again->layers()[1]).options();
  EXPECT_EQ(d.kernel_size, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(d.dilation_rate, (std::vector<std::int64_t>{2, 1, 1}));
  EXPECT_FALSE(d.use_bias);
}

TEST(KerasConfigErrors, Conv3D) {
  auto conv = [](const std::string& input, const std::string& config) {
    return keras3_model(input, layer("Conv3D", config));
  };
  expect_config_errors({
      {conv("[null, 4, 8, 8, 4]", R"({"name": "c", "filters": 5, "kernel_size": 3, "groups": 2})"),
       "layers[1] (c): \"groups\" = 2 must be positive and divide \"filters\" = 5"},
      {conv("[null, 4, 8, 8, 3]", R"({"name": "c", "filters": 4, "kernel_size": 3, "groups": 2})"),
       "layers[1] (c): the input's 3 channels must be a multiple of groups (2)"},
      {conv("[null, 4, 8, 8, 3]", R"({"name": "c", "filters": 4, "kernel_size": [3, 3]})"),
       "layers[1] (c): \"kernel_size\" must be a positive integer or a list of 3, got [3,3]"},
      {conv("[null, 4, 8, 8, 3]", R"({"name": "c", "filters": 4, "strides": 2})"),
       "layers[1] (c): missing required key \"kernel_size\""},
      {conv("[null, 4, 8, 8, 3]", R"({"name": "c", "filters": 4, "kernel_size": 3, "dilation_rate": [2, 1, 1]})"),
       "layers[1] (c): a kernel of 3 dilated by 2 does not fit an input of 4 along spatial axis 0"},
      {conv("[null, 4, 8, 8, 3]", R"({"name": "c", "filters": 4, "kernel_size": 3, "padding": "causal"})"),
       "layers[1] (c): padding must be \"valid\" or \"same\", got \"causal\""},
      {conv("[null, 3, 4, 8, 8]", R"({"name": "c", "filters": 4, "kernel_size": 3, "data_format": "channels_first"})"),
       "layers[1] (c): \"data_format\" = \"channels_first\" is not supported (only \"channels_last\")"},
      {conv("[null, 8, 8, 3]", R"({"name": "c", "filters": 4, "kernel_size": 3})"),
       "layers[1] (c): Conv3D expects (depth, height, width, channels), got (8, 8, 3)"},
      {conv("[null, 4, 8, 8, 3]", R"({"name": "c", "filters": 4, "kernel_size": 3, "kernel_sizes": 3})"),
       "layers[1] (c): unknown key \"kernel_sizes\""},
  });
}

TEST(KerasConfigErrors, ConvFamily) {
  auto conv = [](const std::string& input, const std::string& cls, const std::string& config) {
    return keras3_model(input, layer(cls, config));
  };
  expect_config_errors({
      {conv("[null, 8, 8, 4]", "Conv2D", R"({"name": "c", "filters": 5, "kernel_size": 3, "groups": 2})"),
       "layers[1] (c): \"groups\" = 2 must be positive and divide \"filters\" = 5"},
      {conv("[null, 8, 8, 3]", "Conv2D", R"({"name": "c", "filters": 4, "kernel_size": 3, "groups": 2})"),
       "layers[1] (c): the input's 3 channels must be a multiple of groups (2)"},
      {conv("[null, 8, 8, 3]", "Conv2D", R"({"name": "c", "filters": 4, "kernel_size": 3, "dilation_rate": 0})"),
       "dilation_rate"},
      {conv("[null, 5, 5, 3]", "Conv2D", R"({"name": "c", "filters": 4, "kernel_size": 3, "dilation_rate": 3})"),
       "layers[1] (c): a kernel of 3 dilated by 3 does not fit an input of 5"},
      {conv("[null, 2, 3]", "Conv1D", R"({"name": "c", "filters": 4, "kernel_size": 3})"),
       "layers[1] (c): a kernel of 3 does not fit an input of 2"},
      {conv("[null, 10, 3]", "Conv1D", R"({"name": "c", "filters": 4, "kernel_size": 3, "padding": "full"})"),
       "padding must be \"valid\", \"same\" or \"causal\""},
      {conv("[null, 8, 8, 3]", "DepthwiseConv2D", R"({"name": "dw", "kernel_size": 3, "depth_multiplier": 0})"),
       "layers[1] (dw): \"depth_multiplier\" must be positive, got 0"},
      {conv("[null, 8, 8, 3]", "DepthwiseConv2D", R"({"name": "dw", "kernel_size": 3, "groups": 3})"), "\"groups\""},
      {conv("[null, 8, 8, 3]", "DepthwiseConv2D", R"({"name": "dw", "strides": 2})"),
       "layers[1] (dw): missing required key \"kernel_size\""},
      {conv("[null, 8, 8, 3]", "SeparableConv2D", R"({"name": "s", "kernel_size": 3})"), "layers[1] (s)"},
      {conv("[null, 8, 8, 3]", "SeparableConv2D", R"({"name": "s", "filters": 2, "kernel_size": 3, "pointwise_constraint": {"class_name": "NonNeg", "config": {"axis": 0}}})"),
       "(s).pointwise_constraint.config: unknown key \"axis\""},
      {conv("[null, 4, 4, 3]", "Conv2DTranspose", R"({"name": "t", "filters": 2, "kernel_size": 3, "strides": 2, "output_padding": 2})"),
       "layers[1] (t): output_padding 2 must be at least 0 and less than the stride 2"},
      {conv("[null, 4, 4, 3]", "Conv2DTranspose", R"({"name": "t", "filters": 2, "kernel_size": 3, "output_padding": "one"})"),
       "layers[1] (t): \"output_padding\" must be null or 2 non-negative integers, got \"one\""},
      {conv("[null, 4, 4, 3]", "Conv2DTranspose", R"({"name": "t", "filters": 2, "kernel_size": 2, "strides": 2, "padding": "same", "output_padding": 0})"),
       "layers[1] (t): an output of 6 along spatial axis 0 is not what a stride-2 \"same\" convolution maps to 4"},
      {conv("[null, 4, 3]", "Conv1DTranspose", R"({"name": "t", "filters": 2, "kernel_size": 3, "padding": "causal"})"),
       "layers[1] (t): padding must be \"valid\" or \"same\", got \"causal\""},
  });
}

}  // namespace
}  // namespace nnfit
