// The Keras readers and writers of the layer families (src/model/keras/codecs/): each
// family's Keras config forms read, round-trip through the writer in both generations,
// and bad values named with the layer's path.
#include <gtest/gtest.h>

#include "model/keras_config_helpers.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {
namespace {

using namespace keras_test;

TEST(KerasConfig, PoolingFamilyAndKerasAliasesRoundTrip) {
  const std::string json = keras3_model(
      "[null, 9, 4]",
      layer("MaxPool1D", R"({"name": "p", "pool_size": 3, "strides": null, "padding": "same"})") + ", " +
          layer("AveragePooling1D", R"({"name": "a", "pool_size": [2], "strides": [1], "padding": "valid"})") + ", " +
          layer("Reshape", R"({"name": "r", "target_shape": [2, 1, 4]})") + ", " +
          layer("GlobalAvgPool2D", R"({"name": "g", "keepdims": true})") + ", " +
          layer("Reshape", R"({"name": "r2", "target_shape": [4, 1]})") + ", " +
          layer("GlobalMaxPooling1D", R"({"name": "gm", "data_format": "channels_first"})"));
  auto m = sequential_from_keras_json(json, "pool.json");
  const std::vector<std::string> want = {"MaxPooling1D", "AveragePooling1D", "Reshape", "GlobalAveragePooling2D",
                                         "Reshape", "GlobalMaxPooling1D"};
  EXPECT_EQ(classes(*m), want);
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{9, 4}), (Shape{3, 4}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{3, 4}), (Shape{2, 4}));
  EXPECT_EQ(m->layers()[3]->output_shape(Shape{2, 1, 4}), (Shape{1, 1, 4}));
  EXPECT_EQ(m->layers()[5]->output_shape(Shape{4, 1}), (Shape{4}));
  // What nnfit writes reads back to the same layers and options.
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), want);
  const auto* p = dynamic_cast<const Pooling1D*>(again->layers()[0].get());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->options().pool_size, 3);
  EXPECT_EQ(p->options().strides, 3);
  EXPECT_EQ(p->options().padding, "same");
  const auto* g = dynamic_cast<const GlobalPooling*>(again->layers()[5].get());
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->options().channels_first);
  EXPECT_FALSE(g->options().keepdims);
}

TEST(KerasConfig, Pooling3DReadsAliasesAndRoundTrips) {
  // Keras 3's config keys (MaxPooling3D(...).get_config()), the short aliases, strides null
  // (the pool size) and single integers for tuples.
  const std::string json = keras3_model(
      "[null, 9, 7, 6, 3]",
      layer("MaxPooling3D", R"({"name": "m", "trainable": true, "dtype": "float32", "pool_size": [2, 2, 2], "padding": "valid", "strides": [2, 2, 2], "data_format": "channels_last"})") +
          ", " + layer("AvgPool3D", R"({"name": "a", "pool_size": [3, 3, 1], "strides": [1, 2, 2], "padding": "same"})") +
          ", " + layer("MaxPool3D", R"({"name": "m2", "pool_size": 3, "strides": null, "padding": "same"})") +
          ", " + layer("AveragePooling3D", R"({"name": "a2", "padding": "same"})"));
  auto m = sequential_from_keras_json(json, "pool3d.json");
  const std::vector<std::string> want = {"MaxPooling3D", "AveragePooling3D", "MaxPooling3D", "AveragePooling3D"};
  EXPECT_EQ(classes(*m), want);
  const std::vector<Shape> shapes = {Shape{4, 3, 3, 3}, Shape{4, 2, 2, 3}, Shape{2, 1, 1, 3}, Shape{1, 1, 1, 3}};
  Shape s{9, 7, 6, 3};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    s = m->layers()[i]->output_shape(s);
    EXPECT_EQ(s, shapes[i]) << m->layers()[i]->name();
  }
  // Keras's defaults: pool_size (2, 2, 2), strides the pool size.
  EXPECT_EQ(m->layers()[3]->output_shape(Shape{5, 4, 3, 2}), (Shape{3, 2, 2, 2}));
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), want);
  const auto& a = dynamic_cast<const Pooling3D&>(*again->layers()[1]).options();
  EXPECT_EQ(a.kind, PoolKind::average);
  EXPECT_EQ(a.pool_size, (std::vector<std::int64_t>{3, 3, 1}));
  EXPECT_EQ(a.strides, (std::vector<std::int64_t>{1, 2, 2}));
  EXPECT_EQ(a.padding, "same");
  const auto& m2 = dynamic_cast<const Pooling3D&>(*again->layers()[2]).options();
  EXPECT_EQ(m2.kind, PoolKind::max);
  EXPECT_EQ(m2.strides, (std::vector<std::int64_t>{3, 3, 3}));  // written as Keras writes it: the pool size
  const auto& a2 = dynamic_cast<const Pooling3D&>(*again->layers()[3]).options();
  EXPECT_EQ(a2.pool_size, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(a2.strides, (std::vector<std::int64_t>{2, 2, 2}));
}

TEST(KerasConfigErrors, Pooling3D) {
  auto pool = [](const std::string& cls, const std::string& config) {
    return keras3_model("[null, 5, 6, 7, 2]", layer(cls, config));
  };
  expect_config_errors({
      {pool("MaxPooling3D", R"({"name": "p", "pool_size": [2, 2]})"),
       "layers[1] (p): \"pool_size\" must be a positive integer or a list of 3, got [2,2]"},
      {pool("AveragePooling3D", R"({"name": "p", "strides": [1, 0, 1]})"),
       "layers[1] (p): \"strides\" must be a positive integer or a list of 3, got [1,0,1]"},
      {pool("MaxPooling3D", R"({"name": "p", "pool_size": [6, 2, 2]})"),
       "layers[1] (p): pool 6x2x2 does not fit input (5, 6, 7, 2) with padding \"valid\""},
      {pool("AvgPool3D", R"({"name": "p", "padding": "full"})"),
       "layers[1] (p): padding must be \"valid\" or \"same\", got \"full\""},
      {pool("MaxPooling3D", R"({"name": "p", "data_format": "channels_first"})"),
       "layers[1] (p): \"data_format\" = \"channels_first\" is not supported (only \"channels_last\")"},
      {pool("MaxPooling3D", R"({"name": "p", "pool": 2})"), "layers[1] (p): unknown key \"pool\""},
      {keras3_model("[null, 6, 7, 2]", layer("MaxPooling3D", R"({"name": "p"})")),
       "layers[1] (p): MaxPooling3D expects (depth, height, width, channels), got (6, 7, 2)"},
  });
}

TEST(KerasConfig, ReshapingFamilyReadsKerasFormsAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 6, 5, 3]",
      layer("ZeroPadding2D", R"({"name": "zp", "padding": [[1, 2], [0, 1]]})") + ", " +
          layer("Cropping2D", R"({"name": "cr", "cropping": [1, 1], "data_format": "channels_first"})") + ", " +
          layer("UpSampling2D", R"({"name": "up", "size": [2, 1], "interpolation": "nearest"})") + ", " +
          layer("Permute", R"({"name": "pm", "dims": [3, 1, 2]})") + ", " +
          layer("Reshape", R"({"name": "flat", "target_shape": [-1]})") + ", " +
          layer("RepeatVector", R"({"name": "rv", "n": 2})") + ", " +
          layer("ZeroPadding1D", R"({"name": "zp1", "padding": 3})"));
  auto m = sequential_from_keras_json(json, "reshape.json");
  // Cropping2D is channels first: its spatial axes are the last two, (6, 3) -> (4, 1).
  const std::vector<Shape> want = {Shape{9, 6, 3}, Shape{9, 4, 1}, Shape{18, 4, 1}, Shape{1, 18, 4},
                                   Shape{72},      Shape{2, 72},   Shape{8, 72}};
  Shape s{6, 5, 3};
  for (std::size_t i = 0; i < want.size(); ++i) {
    s = m->layers()[i]->output_shape(s);
    EXPECT_EQ(s, want[i]) << m->layers()[i]->name();
  }
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(again->layers()[i]->class_name(), m->layers()[i]->class_name());
  }
  const auto& zp = dynamic_cast<const ZeroPadding&>(*again->layers()[0]).options();
  EXPECT_EQ(zp.padding, (SpatialPairs{{1, 2}, {0, 1}}));
  const auto& cr = dynamic_cast<const Cropping&>(*again->layers()[1]).options();
  EXPECT_TRUE(cr.channels_first);
  EXPECT_EQ(cr.cropping, (SpatialPairs{{1, 1}, {1, 1}}));
  EXPECT_EQ(dynamic_cast<const UpSampling&>(*again->layers()[2]).options().size, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(dynamic_cast<const Permute&>(*again->layers()[3]).dims(), (std::vector<std::int64_t>{3, 1, 2}));
  EXPECT_EQ(dynamic_cast<const ZeroPadding&>(*again->layers()[6]).options().padding, (SpatialPairs{{3, 3}}));
}

TEST(KerasConfigErrors, ReshapingFamily) {
  expect_config_errors({
      {keras3_model("[null, 6, 5, 3]", layer("ZeroPadding2D", R"({"name": "z", "padding": [1, 2, 3]})")),
       "\"padding\" must be an integer, a list of 2 integers or of 2 pairs of integers >= 0, got [1,2,3]"},
      {keras3_model("[null, 9, 3]", layer("Cropping1D", R"({"name": "c", "cropping": [5, 4]})")),
       "layers[1] (c): cropping (5, 4) leaves nothing of (9, 3)"},
      {keras3_model("[null, 9, 3]", layer("Cropping1D", R"({"name": "c", "data_format": "channels_first"})")),
       "data_format"},
      {keras3_model("[null, 6, 5, 3]", layer("UpSampling2D", R"({"name": "u", "size": 0})")), "\"size\" must be"},
      {keras3_model("[null, 6, 5]", layer("Permute", R"({"name": "p", "dims": [1, 1]})")), "dims must be a permutation of 1..2"},
      {keras3_model("[null, 6, 5]", layer("Permute", R"({"name": "p", "dims": [2, 1, 3]})")), "dims has 3 entries"},
      {keras3_model("[null, 6, 5]", layer("RepeatVector", R"({"name": "r", "n": 3})")), "RepeatVector expects (features)"},
      {keras3_model("[null, 6]", layer("RepeatVector", R"({"name": "r"})")), "missing required key \"n\""},
  });
  // UpSampling2D resizes with any of Keras's methods (keras_image_config_test.cpp); tf.image's
  // others are Unsupported.
  const std::string gaussian =
      keras3_model("[null, 6, 5, 3]", layer("UpSampling2D", R"({"name": "u", "interpolation": "gaussian"})"));
  EXPECT_NE(error_of<Unsupported>([&] { sequential_from_keras_json(gaussian, "b.json"); })
                .find("\"interpolation\" = \"gaussian\" is not supported (one of nearest, bilinear"),
            std::string::npos);
}

TEST(KerasConfig, ActivationLayersReadKerasFormsAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 4, 3]",
      layer("ReLU", R"({"name": "r", "max_value": 1.5, "negative_slope": 0.1, "threshold": 0.2})") + ", " +
          layer("LeakyReLU", R"({"name": "l", "negative_slope": 0.05})") + ", " +
          layer("LeakyReLU", R"({"name": "l2", "alpha": 0.2})") + ", " +  // Keras 2's key
          layer("ELU", R"({"name": "e", "alpha": 0.5})") + ", " +
          layer("PReLU", R"({"name": "p", "alpha_initializer": "zeros", "alpha_regularizer": null, "alpha_constraint": null, "shared_axes": [1]})") + ", " +
          layer("Softmax", R"({"name": "s", "axis": 1})"));
  auto m = sequential_from_keras_json(json, "activations.json");
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"ReLU", "LeakyReLU", "LeakyReLU", "ELU", "PReLU", "Softmax"}));
  for (KerasFormat format : {KerasFormat::keras3, KerasFormat::keras2}) {
    const std::string written = model_to_keras_json(*m, format);
    // Keras 3 names LeakyReLU's slope negative_slope, Keras 2 alpha.
    EXPECT_NE(written.find(format == KerasFormat::keras2 ? R"("alpha":0.05)" : R"("negative_slope":0.05)"),
              std::string::npos);
    auto again = sequential_from_keras_json(written, "written.json");
    const auto& relu = dynamic_cast<const ReLU&>(*again->layers()[0]).options();
    EXPECT_EQ(relu.max_value, 1.5);
    EXPECT_EQ(relu.negative_slope, 0.1);
    EXPECT_EQ(relu.threshold, 0.2);
    EXPECT_EQ(dynamic_cast<const LeakyReLU&>(*again->layers()[1]).negative_slope(), 0.05);
    EXPECT_EQ(dynamic_cast<const LeakyReLU&>(*again->layers()[2]).negative_slope(), 0.2);
    EXPECT_EQ(dynamic_cast<const ELU&>(*again->layers()[3]).alpha(), 0.5);
    EXPECT_EQ(dynamic_cast<const PReLU&>(*again->layers()[4]).options().shared_axes, (std::vector<std::int64_t>{1}));
    EXPECT_EQ(dynamic_cast<const Softmax&>(*again->layers()[5]).axis(), 1);
  }
  // PReLU's alpha: the input's shape with 1 on the shared axes, as Keras stores it.
  m->build();
  ASSERT_EQ(m->get_weights().size(), 1u);
  EXPECT_EQ(m->get_weights()[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(m->layers()[3]->output_shape(Shape{4, 3}), (Shape{4, 3}));
}

TEST(KerasConfigErrors, ActivationLayers) {
  expect_config_errors({
      {keras3_model("[null, 6]", layer("ReLU", R"({"name": "r", "threshold": -1.0})")), "\"threshold\" must be >= 0, got -1.0"},
      {keras3_model("[null, 6]", layer("ReLU", R"({"name": "r", "max_value": -2})")), "\"max_value\" must be >= 0, got -2"},
      {keras3_model("[null, 6]", layer("LeakyReLU", R"({"name": "l", "alpha": 0.1, "negative_slope": 0.1})")),
       "give \"negative_slope\" (Keras 3) or \"alpha\" (Keras 2), not both"},
      {keras3_model("[null, 6]", layer("LeakyReLU", R"({"name": "l", "negative_slope": -0.1})")), "negative slope must be >= 0"},
      {keras3_model("[null, 6]", layer("ELU", R"({"name": "e", "alpha": "one"})")), "\"alpha\""},
      {keras3_model("[null, 4, 3]", layer("PReLU", R"({"name": "p", "shared_axes": [3]})")),
       "layers[1] (p): \"shared_axes\" must hold axes 1..2 of the input ((4, 3) after the batch axis), got [3]"},
      {keras3_model("[null, 4, 3]", layer("PReLU", R"({"name": "p", "alpha_regularizer": {"class_name": "L2", "config": {"l2": -0.5}}})")),
       "(p).alpha_regularizer: a regularizer's factor must be non-negative"},
      {keras3_model("[null, 4, 3]", layer("PReLU", R"({"name": "p", "alpha_regularizer": 3})")),
       "(p).alpha_regularizer: expected a JSON object, got number 3"},
      {keras3_model("[null, 4, 3]", layer("Softmax", R"({"name": "s", "axis": 3})")),
       "layers[1] (s): \"axis\" = 3 is not a feature axis of the input ((4, 3) after the batch axis)"},
      {keras3_model("[null, 4, 3]", layer("Softmax", R"({"name": "s", "axis": 0})")), "\"axis\" = 0 is not a feature axis"},
      {keras3_model("[null, 4, 3]", layer("Softmax", R"({"name": "s", "axis": [1, 2]})")),
       "a softmax over several axes at once is not supported"},
  });
}

TEST(KerasConfig, LayerNormalizationReadsBothGenerationsAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "axis": -1, "epsilon": 1e-5, "center": false, "scale": true, "rms_scaling": false, "beta_initializer": "zeros", "gamma_initializer": "ones", "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null})") +
                          ", " + layer("LayerNormalization", R"({"name": "ln2", "axis": [2]})"));  // tf.keras's list form
  auto m = sequential_from_keras_json(json, "ln.json");
  for (KerasFormat format : {KerasFormat::keras3, KerasFormat::keras2}) {
    auto again = sequential_from_keras_json(model_to_keras_json(*m, format), "written.json");
    const auto& o = dynamic_cast<const LayerNormalization&>(*again->layers()[0]).options();
    EXPECT_EQ(o.epsilon, 1e-5);
    EXPECT_FALSE(o.center);
    EXPECT_TRUE(o.scale);
  }
  // Keras's variables and count: gamma only (no center), then gamma and beta.
  m->build();
  EXPECT_EQ(m->layers()[0]->count_params(), 3);
  EXPECT_EQ(m->count_params(), 9);
  struct Case {
    std::string json, expect;
  };
  const Case bad[] = {
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "axis": 5})")), "\"axis\" = 5 is out of range"},
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "rms_scaling": 1})")),
       "\"rms_scaling\" must be true or false"},
      {keras3_model("[null, 4, 3]", layer("RMSNormalization", R"({"name": "ln", "epsilon": -1})")), "\"epsilon\" must be positive, got -1"},
      {keras3_model("[null, 4, 3]", layer("RMSNormalization", R"({"name": "ln", "axis": [0]})")), "out of range"},
      {keras3_model("[null, 4, 3]", layer("RMSNormalization", R"({"name": "ln", "center": true})")), "\"center\""},
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "epsilon": 0})")), "\"epsilon\" must be positive, got 0"},
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "gamma_initializer": "zeros"})")),
       "\"gamma_initializer\" other than ones"},
  };
  for (const Case& c : bad) {
    std::string msg;
    try {
      sequential_from_keras_json(c.json, "bad.json");
      ADD_FAILURE() << "accepted: " << c.expect;
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
    EXPECT_NE(msg.find("layers[1] (ln)"), std::string::npos) << msg;
  }
}

TEST(KerasConfigErrors, PoolingFamily) {
  struct Case {
    std::string json, expect;
  };
  const Case cases[] = {
      {keras3_model("[null, 9, 4]", layer("MaxPooling1D", R"({"name": "p", "pool_size": [2, 2]})")),
       "layers[1] (p): \"pool_size\" must be a positive integer or a list of one, got [2,2]"},
      {keras3_model("[null, 9, 4]", layer("MaxPooling1D", R"({"name": "p", "pool_size": 12})")), "does not fit input (9, 4)"},
      {keras3_model("[null, 9, 4]", layer("AveragePooling1D", R"({"name": "p", "padding": "full"})")), "padding must be"},
      {keras3_model("[null, 9, 4]", layer("GlobalAveragePooling2D", R"({"name": "g"})")),
       "layers[1] (g): GlobalAveragePooling2D expects 2 spatial axes and a channel axis, got (9, 4)"},
      {keras3_model("[null, 3, 9, 4]", layer("GlobalMaxPooling2D", R"({"name": "g", "data_format": "channels_middle"})")),
       "\"data_format\" must be \"channels_last\" or \"channels_first\""},
      {keras3_model("[null, 3, 9, 4]", layer("GlobalMaxPooling2D", R"({"name": "g", "keepdim": true})")), "unknown key \"keepdim\""},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of<InvalidArgument>([&] { sequential_from_keras_json(c.json, "bad.json"); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
}

// Dropout's noise_shape (null entries: the input's size), SpatialDropout1D/2D and a
// recurrent layer's input dropout read and write back; inference leaves them out.
TEST(KerasConfig, DropoutFormsReadAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 6, 4]", layer("Dropout", R"({"name": "d", "rate": 0.3, "noise_shape": [null, 1, 4], "seed": 5})") + ", " +
                          layer("SpatialDropout1D", R"({"name": "sd", "rate": 0.2, "seed": null})") + ", " +
                          layer("LSTM", R"({"name": "l", "units": 3, "dropout": 0.25, "seed": 9})"));
  auto m = sequential_from_keras_json(json, "drop.json");
  m->build();
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  const auto& d = dynamic_cast<const Dropout&>(*again->layers()[0]);
  EXPECT_EQ(d.noise_shape(), (std::vector<std::int64_t>{-1, 1, 4}));
  EXPECT_EQ(d.seed(), 5);
  EXPECT_EQ(again->layers()[1]->class_name(), "SpatialDropout1D");
  EXPECT_DOUBLE_EQ(dynamic_cast<const Recurrent&>(*again->layers()[2]).options().dropout, 0.25);
  EXPECT_EQ(dynamic_cast<const Recurrent&>(*again->layers()[2]).options().seed, 9);
  auto sd2 = sequential_from_keras_json(
      keras3_model("[null, 3, 5, 4]", layer("SpatialDropout2D", R"({"name": "sd", "rate": 0.2, "data_format": "channels_first"})")),
      "sd2.json");
  EXPECT_TRUE(dynamic_cast<const SpatialDropout&>(*sd2->layers()[0]).channels_first());
  expect_config_errors({
      {keras3_model("[null, 6, 4]", layer("Dropout", R"({"name": "d", "rate": 0.3, "noise_shape": [null, 2, 4]})")),
       "layers[1] (d): noise_shape axis 1 is 2; it must be 1, the input's 6 or null"},
      {keras3_model("[null, 6, 4]", layer("Dropout", R"({"name": "d", "rate": 0.3, "noise_shape": [null, 1]})")),
       "layers[1] (d): noise_shape has 2 axes, the input 3"},
      {keras3_model("[null, 6, 4]", layer("Dropout", R"({"name": "d", "rate": 1.5})")), "layers[1] (d): \"rate\" must be in [0, 1), got 1.5"},
      {keras3_model("[null, 6, 4]", layer("SpatialDropout2D", R"({"name": "sd", "rate": 0.2})")),
       "layers[1] (sd): SpatialDropout2D expects 2 spatial axes and a channel axis, got (6, 4)"},
  });
}

TEST(KerasConfig, GroupNormalizationReadsAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 5, 8]", layer("GroupNormalization", R"({"name": "gn", "groups": 4, "axis": -1, "epsilon": 1e-05, "center": false, "scale": true, "beta_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "gamma_initializer": {"module": "keras.initializers", "class_name": "Ones", "config": {}, "registered_name": null}, "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null})"));
  auto m = sequential_from_keras_json(json, "gn.json");
  m->build();
  EXPECT_EQ(m->layers()[0]->count_params(), 8);  // gamma only
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  const auto& o = dynamic_cast<const GroupNormalization&>(*again->layers()[0]).options();
  EXPECT_EQ(o.groups, 4);
  EXPECT_DOUBLE_EQ(o.epsilon, 1e-5);
  EXPECT_FALSE(o.center);
  expect_config_errors({
      {keras3_model("[null, 5, 6]", layer("GroupNormalization", R"({"name": "gn", "groups": 4})")),
       "layers[1] (gn): groups 4 must divide the 6 channels of (5, 6)"},
      {keras3_model("[null, 5, 6]", layer("GroupNormalization", R"({"name": "gn", "groups": 0})")),
       "layers[1] (gn): \"groups\" must be positive, got 0"},
      {keras3_model("[null, 5, 6]", layer("GroupNormalization", R"({"name": "gn", "groups": 2, "axis": 1})")),
       "layers[1] (gn): \"axis\" = 1 is not supported (only the last axis, -1)"},
  });
}

// LayerNormalization over several axes and BatchNormalization over a channels-first axis:
// Keras's parameter shapes, the axes written back as Keras writes them, bad axes refused.
TEST(KerasConfig, NormalizationAxesReadAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 3, 4, 5]", layer("LayerNormalization", R"({"name": "ln", "axis": [-2, 1]})") + ", " +
                             layer("BatchNormalization", R"({"name": "bn", "axis": 1})"));
  auto m = sequential_from_keras_json(json, "norm.json");
  m->build();
  EXPECT_EQ(m->layers()[0]->weights()[0].value.shape(), (Shape{3, 4}));  // gamma over axes 1 and 2
  EXPECT_EQ(m->layers()[1]->weights()[0].value.shape(), (Shape{3}));     // the channels of axis 1
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  EXPECT_EQ(dynamic_cast<const LayerNormalization&>(*again->layers()[0]).options().axes,
            (std::vector<std::int64_t>{-2, 1}));
  EXPECT_EQ(dynamic_cast<const BatchNormalization&>(*again->layers()[1]).options().axis, 1);
  expect_config_errors({
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "axis": 3})")),
       "layers[1] (ln): \"axis\" = 3 is out of range for inputs of rank 3 (with the batch axis, which cannot be "
       "normalized over)"},
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "axis": [0]})")),
       "layers[1] (ln): \"axis\" = [0] is out of range"},
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "axis": "last"})")),
       "layers[1] (ln): \"axis\" must be an integer or a list of them, got \"last\""},
      {keras3_model("[null, 4, 3]", layer("BatchNormalization", R"({"name": "bn", "axis": -3})")),
       "layers[1] (bn): \"axis\" = -3 is out of range"},
  });
}

// GaussianNoise, GaussianDropout, AlphaDropout: their keys read and written back, bad values refused.
TEST(KerasConfig, NoiseLayersReadAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 6]", layer("GaussianNoise", R"({"name": "gn", "stddev": 0.1, "seed": 3})") + ", " +
                       layer("GaussianDropout", R"({"name": "gd", "rate": 0.2, "seed": null})") + ", " +
                       layer("AlphaDropout", R"({"name": "ad", "rate": 0.3, "noise_shape": null, "seed": null})"));
  auto m = sequential_from_keras_json(json, "noise.json");
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  const auto& gn = dynamic_cast<const NoiseLayer&>(*again->layers()[0]);
  EXPECT_EQ(gn.class_name(), "GaussianNoise");
  EXPECT_DOUBLE_EQ(gn.value(), 0.1);
  EXPECT_EQ(gn.seed(), 3);
  EXPECT_EQ(again->layers()[1]->class_name(), "GaussianDropout");
  EXPECT_DOUBLE_EQ(dynamic_cast<const NoiseLayer&>(*again->layers()[2]).value(), 0.3);
  expect_config_errors({
      {keras3_model("[null, 6]", layer("GaussianNoise", R"({"name": "gn"})")), "layers[1] (gn): missing required key \"stddev\""},
      {keras3_model("[null, 6]", layer("GaussianDropout", R"({"name": "gd", "rate": 1.0})")),
       "layers[1] (gd): \"rate\" must be in [0, 1), got 1.0"},
      {keras3_model("[null, 6]", layer("AlphaDropout", R"({"name": "ad", "rate": 0.1, "noise_shape": [null, 1]})")),
       "noise_shape"},
  });
}

TEST(KerasConfig, RescalingAndUnitNormalizationReadAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 4, 3]", layer("Rescaling", R"({"name": "rs", "scale": 0.00392156862745098, "offset": -0.5})") + ", " +
                          layer("UnitNormalization", R"({"name": "un", "axis": [1]})"));
  auto m = sequential_from_keras_json(json, "pre.json");
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  const auto& rs = dynamic_cast<const Rescaling&>(*again->layers()[0]);
  EXPECT_EQ(rs.scale(), std::vector<double>{0.00392156862745098});
  EXPECT_EQ(rs.offset(), std::vector<double>{-0.5});
  // Keras's per-channel form (EfficientNet's ImageNet variant) reads and writes back as lists.
  auto per_channel = sequential_from_keras_json(
      keras3_model("[null, 4, 3]", layer("Rescaling", R"({"name": "rs", "scale": [1.0, 2.0, 3.0], "offset": [0.5, 0, 1]})")),
      "per_channel.json");
  auto written = sequential_from_keras_json(model_to_keras_json(*per_channel), "pc");
  const auto& pc = dynamic_cast<const Rescaling&>(*written->layers()[0]);
  EXPECT_EQ(pc.scale(), (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_EQ(pc.offset(), (std::vector<double>{0.5, 0.0, 1.0}));
  EXPECT_EQ(per_channel->count_params(), 0);
  EXPECT_EQ(dynamic_cast<const UnitNormalization&>(*again->layers()[1]).axis(), 1);
  expect_config_errors({
      {keras3_model("[null, 4, 3]", layer("Rescaling", R"({"name": "rs", "scale": [[1.0, 2.0, 3.0]]})")),
       "layers[1] (rs): \"scale\" = [[1.0,2.0,3.0]] is not supported (a number, or a flat list of numbers, one per channel)"},
      {keras3_model("[null, 4, 3]", layer("Rescaling", R"({"name": "rs", "scale": [1.0, 2.0]})")),
       "(rs): Rescaling's scale holds 2 values, which do not broadcast against inputs of shape (4, 3)"},
      {keras3_model("[null, 4, 3]", layer("Rescaling", R"({"name": "rs"})")), "layers[1] (rs): missing required key \"scale\""},
      {keras3_model("[null, 4, 3]", layer("UnitNormalization", R"({"name": "un", "axis": [1, 2]})")),
       "layers[1] (un): \"axis\" = [1,2] is not supported (one axis)"},
      {keras3_model("[null, 4, 3]", layer("UnitNormalization", R"({"name": "un", "axis": 0})")),
       "layers[1] (un): axis 0 is out of range"},
  });
}

TEST(KerasConfig, NormalizationReadsGivenAndAdaptedStatisticsAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 2, 3]", layer("Normalization", R"({"name": "given", "axis": [1, 2], "invert": false, "mean": [[1, 2, 3], [4, 5, 6]], "variance": [[1, 1, 1], [4, 4, 4]]})") +
                          ", " + layer("Normalization", R"({"name": "adapted", "axis": null, "invert": true, "mean": null, "variance": null})"));
  auto m = sequential_from_keras_json(json, "norm.json");
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  const NormalizationOptions& g = dynamic_cast<const Normalization&>(*again->layers()[0]).options();
  EXPECT_EQ(g.axes, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(g.mean, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(g.given_shape, (std::vector<std::int64_t>{2, 3}));
  const NormalizationOptions& a = dynamic_cast<const Normalization&>(*again->layers()[1]).options();
  EXPECT_TRUE(a.axes.empty());
  EXPECT_TRUE(a.invert);
  EXPECT_TRUE(a.mean.empty());
  // Keras's variables: none for given statistics; mean, variance and count when adapted.
  again->build();
  EXPECT_TRUE(again->layers()[0]->saved_weights().empty());
  EXPECT_EQ(again->layers()[1]->saved_weights().size(), 3u);
  expect_config_errors({
      {keras3_model("[null, 3]", layer("Normalization", R"({"name": "n", "mean": [1, 2, 3]})")),
       "layers[1] (n): \"mean\" and \"variance\" must both be given or both be null"},
      {keras3_model("[null, 3]", layer("Normalization", R"({"name": "n", "mean": [[1, 2], [3]], "variance": [[1, 1], [1]]})")),
       "layers[1] (n).mean: a ragged list of numbers"},
      {keras3_model("[null, 3]", layer("Normalization", R"({"name": "n", "mean": [1, 2, 3], "variance": [1, -1, 1]})")),
       "layers[1] (n).variance: a variance must be non-negative"},
      {keras3_model("[null, 3]", layer("Normalization", R"({"name": "n", "mean": [1, 2], "variance": [1, 1]})")),
       "(n): mean and variance hold 2 values; expected 1 or one per position of the kept axes (3)"},
      {keras3_model("[null, 3]", layer("Normalization", R"({"name": "n", "axis": 0})")), "(n): axis 0 is out of range"},
      {keras3_model("[null, 3]", layer("Normalization", R"({"name": "n", "axis": "last"})")),
       "\"axis\" must be an integer, a list of integers or null, got \"last\""},
  });
}

// summary() before compile: the model builds its weights first, as Keras's layers have them
// once called, so the counts are Keras's (these four give 96, 16 of them BatchNormalization's
// moving statistics), and the normalizations, whose saved weights index the weights build()
// makes, are never read unbuilt (it crashed).
TEST(KerasConfig, SummaryBeforeCompileCountsKerasParams) {
  const std::string json = keras3_model(
      "[null, 4]", layer("Dense", R"({"name": "d", "units": 8})") + ", " +
                       layer("BatchNormalization", R"({"name": "bn"})") + ", " +
                       layer("LayerNormalization", R"({"name": "ln"})") + ", " +
                       layer("RMSNormalization", R"({"name": "rms"})"));
  auto m = sequential_from_keras_json(json, "summary.json");
  EXPECT_EQ(m->count_params(), 0);  // nothing built yet
  const std::string summary = m->summary();
  EXPECT_NE(summary.find("Total params: 96 "), std::string::npos) << summary;  // 40 + 32 + 16 + 8
  EXPECT_NE(summary.find("Trainable params: 80 "), std::string::npos) << summary;
  EXPECT_NE(summary.find("Non-trainable params: 16 "), std::string::npos) << summary;
  EXPECT_NE(summary.find("\u2502 bn (BatchNormalization)"), std::string::npos) << summary;
  EXPECT_EQ(m->count_params(), 96);
}

// Weights are seeded by their place, not their layer's name: Keras numbers automatic names
// per session ("dense", then "dense_1"), and keras.utils.set_random_seed gives two builds of
// one architecture the same weights however they are named.
TEST(KerasConfig, OneSeedGivesOneArchitectureTheSameWeightsUnderAnyNames) {
  auto make = [](const std::string& a, const std::string& b, std::uint64_t seed) {
    auto m = sequential_from_keras_json(
        keras3_model("[null, 4]", layer("Dense", R"({"name": ")" + a + R"(", "units": 5})") + ", " +
                                      layer("Dense", R"({"name": ")" + b + R"(", "units": 2})")),
        "seeded.json");
    m->set_seed(seed);
    m->build();
    return m->get_weights();
  };
  const std::vector<Tensor> first = make("dense", "dense_1", 9), again = make("dense_2", "dense_3", 9);
  ASSERT_EQ(first.size(), again.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(first[i].numel(), again[i].numel());
    for (std::int64_t j = 0; j < first[i].numel(); ++j) EXPECT_EQ(first[i].data<float>()[j], again[i].data<float>()[j]);
  }
  const std::vector<Tensor> other = make("dense", "dense_1", 10);
  EXPECT_NE(other[0].data<float>()[0], first[0].data<float>()[0]);
  EXPECT_NE(first[0].data<float>()[0], first[2].data<float>()[0]);  // each weight draws its own values
}

}  // namespace
}  // namespace nnfit
