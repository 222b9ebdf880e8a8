// Tests for the Keras JSON readers: real Keras 3 to_json() output (generated with Keras
// 3.15.1 and read from the Keras 3.1.1 .keras sample), hand-written Keras 2 output, the
// optimizer and loss objects, and the errors for every kind of bad input.
#include "nnfit/model/keras_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {
namespace {

// Keras 3.15.1: Sequential([Input((8, 8, 3)), Conv2D(4, 3, padding="same"),
// BatchNormalization(), ReLU(), AveragePooling2D(2), Reshape((-1,)), Activation("tanh"),
// Dense(5), Softmax()]).to_json()
const char* kKeras3AllLayers = R"json({"module": "keras", "class_name": "Sequential", "config": {"name": "extra", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "build_input_shape": [null, 8, 8, 3], "layers": [
{"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_layer", "optional": false}, "registered_name": null},
{"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "filters": 4, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "linear", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null, "input_axes": null, "output_axes": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}, "registered_name": null, "build_config": {"input_shape": [null, 8, 8, 3]}},
{"module": "keras.layers", "class_name": "BatchNormalization", "config": {"name": "batch_normalization", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "axis": -1, "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true, "beta_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "gamma_initializer": {"module": "keras.initializers", "class_name": "Ones", "config": {}, "registered_name": null}, "moving_mean_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "moving_variance_initializer": {"module": "keras.initializers", "class_name": "Ones", "config": {}, "registered_name": null}, "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null, "synchronized": false, "renorm": false, "renorm_clipping": null, "renorm_momentum": 0.99}, "registered_name": null, "build_config": {"input_shape": [null, 8, 8, 4]}},
{"module": "keras.layers", "class_name": "ReLU", "config": {"name": "re_lu", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "max_value": null, "negative_slope": 0.0, "threshold": 0.0}, "registered_name": null},
{"module": "keras.layers", "class_name": "AveragePooling2D", "config": {"name": "average_pooling2d", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "pool_size": [2, 2], "padding": "valid", "strides": [2, 2], "data_format": "channels_last"}, "registered_name": null},
{"module": "keras.layers", "class_name": "Reshape", "config": {"name": "reshape", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "target_shape": [-1]}, "registered_name": null},
{"module": "keras.layers", "class_name": "Activation", "config": {"name": "activation", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "activation": "tanh"}, "registered_name": null},
{"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 5, "activation": "linear", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null, "input_axes": null, "output_axes": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null, "quantization_config": null}, "registered_name": null, "build_config": {"input_shape": [null, 64]}},
{"module": "keras.layers", "class_name": "Softmax", "config": {"name": "softmax", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "axis": -1}, "registered_name": null}
]}, "registered_name": null, "build_config": {"input_shape": [null, 8, 8, 3]}, "compile_config": {}})json";

// Keras 3.15.1: Sequential([Input((28, 28, 1)), Flatten(), Dense(128, activation="relu"),
// Dense(10)]).to_json() (examples/fashion_mnist_mlp.json holds the same model).
const char* kKeras3Mlp = R"json({"module": "keras", "class_name": "Sequential", "config": {"name": "fashion_mnist_mlp", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "layers": [{"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28, 1], "dtype": "float32", "sparse": false, "ragged": false, "name": "input_layer", "optional": false}, "registered_name": null}, {"module": "keras.layers", "class_name": "Flatten", "config": {"name": "flatten", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "data_format": "channels_last"}, "registered_name": null, "build_config": {"input_shape": [null, 28, 28, 1]}}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 128, "activation": "relu", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null, "input_axes": null, "output_axes": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null, "quantization_config": null}, "registered_name": null, "build_config": {"input_shape": [null, 784]}}, {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null}, "units": 10, "activation": "linear", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null, "input_axes": null, "output_axes": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null, "quantization_config": null}, "registered_name": null, "build_config": {"input_shape": [null, 128]}}], "build_input_shape": [null, 28, 28, 1]}, "registered_name": null, "build_config": {"input_shape": [null, 28, 28, 1]}, "compile_config": {}})json";

// tf.keras 2.10 to_json() form: InputLayer with batch_input_shape, repeated on the first
// layer; BatchNormalization with list axes ([3] after a conv, [1] after a Dense).
const char* kKeras2Cnn = R"json({"class_name": "Sequential", "config": {"name": "sequential", "layers": [
{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "sparse": false, "ragged": false, "name": "conv2d_input"}},
{"class_name": "Conv2D", "config": {"name": "conv2d", "trainable": true, "batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "filters": 32, "kernel_size": [3, 3], "strides": [1, 1], "padding": "same", "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}},
{"class_name": "BatchNormalization", "config": {"name": "batch_normalization", "trainable": true, "dtype": "float32", "axis": [3], "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true, "beta_initializer": {"class_name": "Zeros", "config": {}}, "gamma_initializer": {"class_name": "Ones", "config": {}}, "moving_mean_initializer": {"class_name": "Zeros", "config": {}}, "moving_variance_initializer": {"class_name": "Ones", "config": {}}, "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null}},
{"class_name": "MaxPooling2D", "config": {"name": "max_pooling2d", "trainable": true, "dtype": "float32", "pool_size": [2, 2], "padding": "valid", "strides": [2, 2], "data_format": "channels_last"}},
{"class_name": "Dropout", "config": {"name": "dropout", "trainable": true, "dtype": "float32", "rate": 0.25, "noise_shape": null, "seed": null}},
{"class_name": "Flatten", "config": {"name": "flatten", "trainable": true, "dtype": "float32", "data_format": "channels_last"}},
{"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 64, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "HeNormal", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}},
{"class_name": "BatchNormalization", "config": {"name": "batch_normalization_1", "trainable": true, "dtype": "float32", "axis": [1], "momentum": 0.99, "epsilon": 0.001, "center": true, "scale": true, "beta_initializer": {"class_name": "Zeros", "config": {}}, "gamma_initializer": {"class_name": "Ones", "config": {}}, "moving_mean_initializer": {"class_name": "Zeros", "config": {}}, "moving_variance_initializer": {"class_name": "Ones", "config": {}}, "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null}},
{"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 10, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null}}
]}, "keras_version": "2.10.0", "backend": "tensorflow"})json";

// Keras 2 without an InputLayer: the input shape rides on the first layer only.
std::string keras2_mlp(const std::string& dense_extra = "", const std::string& second = "") {
  return R"({"class_name": "Sequential", "config": {"name": "mlp", "layers": [)"
         R"({"class_name": "Dense", "config": {"name": "dense", "trainable": true, "batch_input_shape": [null, 784], "dtype": "float32", "units": 32, "activation": "relu")" +
         dense_extra + "}}" + (second.empty() ? "" : ", " + second) +
         R"(]}, "keras_version": "2.4.0", "backend": "tensorflow"})";
}

// A Keras-3-style model: Input(shape) then the given layer entries.
std::string keras3_model(const std::string& batch_shape, const std::string& layers) {
  return R"({"module": "keras", "class_name": "Sequential", "config": {"name": "m", "trainable": true, "dtype": "float32", "layers": [)"
         R"({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": )" +
         batch_shape + R"(, "dtype": "float32", "sparse": false, "name": "input_layer"}, "registered_name": null}, )" +
         layers + "]}}";
}

std::string layer(const std::string& cls, const std::string& config) {
  return R"({"module": "keras.layers", "class_name": ")" + cls + R"(", "config": )" + config +
         R"(, "registered_name": null})";
}

std::vector<std::string> classes(const Sequential& m) {
  std::vector<std::string> out;
  for (const auto& l : m.layers()) out.push_back(l->class_name());
  return out;
}

// Runs f, expects exception E, returns "what\nhint".
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return std::string(e.what()) + "\n" + e.hint();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

TEST(KerasConfig, Keras3EveryLayerClass) {
  auto m = sequential_from_keras_json(kKeras3AllLayers, "extra.json");
  EXPECT_EQ(m->name(), "extra");
  EXPECT_EQ(m->input_shape(), (Shape{8, 8, 3}));
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Conv2D", "BatchNormalization", "ReLU", "AveragePooling2D",
                                                   "Reshape", "Activation", "Dense", "Softmax"}));
  EXPECT_EQ(m->layers()[0]->name(), "conv2d");
  EXPECT_EQ(m->layers()[3]->output_shape(Shape{8, 8, 4}), (Shape{4, 4, 4}));
  EXPECT_EQ(m->output_shape(), (Shape{5}));
}

TEST(KerasConfig, Keras3Mlp) {
  auto m = sequential_from_keras_json(kKeras3Mlp, "mlp.json");
  EXPECT_EQ(m->name(), "fashion_mnist_mlp");
  EXPECT_EQ(m->input_shape(), (Shape{28, 28, 1}));
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Flatten", "Dense", "Dense"}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{784}), (Shape{128}));
  EXPECT_EQ(m->output_shape(), (Shape{10}));
}

TEST(KerasConfig, Keras2CnnWithListAxes) {
  auto m = sequential_from_keras_json(kKeras2Cnn, "cnn2.json");
  EXPECT_EQ(m->input_shape(), (Shape{28, 28, 1}));
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Conv2D", "BatchNormalization", "MaxPooling2D", "Dropout",
                                                   "Flatten", "Dense", "BatchNormalization", "Dense"}));
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{28, 28, 1}), (Shape{28, 28, 32}));  // padding same
  EXPECT_EQ(m->layers()[4]->output_shape(Shape{14, 14, 32}), (Shape{6272}));
  EXPECT_EQ(m->output_shape(), (Shape{10}));
}

TEST(KerasConfig, Keras2InputShapeOnFirstLayer) {
  auto m = sequential_from_keras_json(
      keras2_mlp("", R"({"class_name": "Dense", "config": {"name": "out", "units": 3, "kernel_initializer": "he_uniform"}})"),
      "mlp2.json");
  EXPECT_EQ(m->input_shape(), (Shape{784}));
  EXPECT_EQ(m->layers()[1]->name(), "out");
  EXPECT_EQ(m->output_shape(), (Shape{3}));
}

// Keras's .keras archives store their members uncompressed ("Stored", shared/formats/keras.md),
// so config.json can be cut out of the ZIP by its local header.
std::string stored_zip_member(const std::string& path, const std::string& member) {
  std::ifstream in(path, std::ios::binary);
  std::string zip((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u16 = [&](std::size_t at) { return std::uint32_t(std::uint8_t(zip[at])) | std::uint32_t(std::uint8_t(zip[at + 1])) << 8; };
  auto u32 = [&](std::size_t at) { return u16(at) | u16(at + 2) << 16; };
  for (std::size_t at = 0; at + 30 <= zip.size() && zip.compare(at, 4, "PK\x03\x04") == 0;) {
    const std::uint32_t method = u16(at + 8), size = u32(at + 18), name_len = u16(at + 26), extra_len = u16(at + 28);
    const std::string name = zip.substr(at + 30, name_len);
    const std::size_t data = at + 30 + name_len + extra_len;
    if (name == member) return method == 0 ? zip.substr(data, size) : "";
    at = data + size;
  }
  return "";
}

TEST(KerasConfig, RealKeras311Sample) {
  const std::string path =
      std::string(NNFIT_SOURCE_DIR) + "/../shared/formats/samples/keras/moonflower_mnist_cnn_keras3.1.1.keras";
  if (!std::ifstream(path)) GTEST_SKIP() << "sample not present: " << path;
  const std::string config = stored_zip_member(path, "config.json");
  ASSERT_FALSE(config.empty());
  auto m = sequential_from_keras_json(config, "config.json");
  EXPECT_EQ(m->input_shape(), (Shape{28, 28, 1}));
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Conv2D", "MaxPooling2D", "Conv2D", "MaxPooling2D", "Flatten",
                                                   "Dropout", "Dense"}));
  EXPECT_EQ(m->layers()[4]->output_shape(Shape{5, 5, 64}), (Shape{1600}));
  EXPECT_EQ(m->output_shape(), (Shape{10}));
}

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
  struct Case {
    std::string json, expect;
  };
  const Case cases[] = {
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
  };
  for (const Case& c : cases) {
    std::string msg;
    try {
      sequential_from_keras_json(c.json, "bad.json");
      ADD_FAILURE() << "accepted: " << c.expect;
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
  const std::string bilinear =
      keras3_model("[null, 6, 5, 3]", layer("UpSampling2D", R"({"name": "u", "interpolation": "bilinear"})"));
  EXPECT_NE(error_of<Unsupported>([&] { sequential_from_keras_json(bilinear, "b.json"); }).find("only \"nearest\""),
            std::string::npos);
}

TEST(KerasConfig, Conv1DReadsAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 10, 3]", layer("Convolution1D", R"({"name": "c", "filters": 4, "kernel_size": [3], "strides": [2], "padding": "causal", "dilation_rate": [1], "groups": 1, "activation": "relu"})"));
  auto m = sequential_from_keras_json(json, "conv1d.json");
  EXPECT_EQ(m->layers()[0]->class_name(), "Conv1D");
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{10, 3}), (Shape{5, 4}));  // causal: (10 + 2 - 3) / 2 + 1
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  const auto& o = dynamic_cast<const Conv1D&>(*again->layers()[0]).options();
  EXPECT_EQ(o.kernel_size, 3);
  EXPECT_EQ(o.strides, 2);
  EXPECT_EQ(o.padding, "causal");
  EXPECT_EQ(o.activation, "relu");
  const std::string dilated = keras3_model("[null, 10, 3]", layer("Conv1D", R"({"name": "c", "filters": 4, "kernel_size": 3, "dilation_rate": 2})"));
  EXPECT_NE(error_of<Unsupported>([&] { sequential_from_keras_json(dilated, "d.json"); }).find("layers[1] (c): \"dilation_rate\" = 2"),
            std::string::npos);
  const std::string full = keras3_model("[null, 10, 3]", layer("Conv1D", R"({"name": "c", "filters": 4, "kernel_size": 3, "padding": "full"})"));
  EXPECT_NE(error_of<InvalidArgument>([&] { sequential_from_keras_json(full, "f.json"); }).find("padding must be \"valid\", \"same\" or \"causal\""),
            std::string::npos);
  const std::string big = keras3_model("[null, 2, 3]", layer("Conv1D", R"({"name": "c", "filters": 4, "kernel_size": 3})"));
  EXPECT_NE(error_of<InvalidArgument>([&] { sequential_from_keras_json(big, "b.json"); }).find("does not fit input (2, 3)"),
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
  struct Case {
    std::string json, expect;
  };
  const Case cases[] = {
      {keras3_model("[null, 6]", layer("ReLU", R"({"name": "r", "threshold": -1.0})")), "\"threshold\" must be >= 0, got -1.0"},
      {keras3_model("[null, 6]", layer("ReLU", R"({"name": "r", "max_value": -2})")), "\"max_value\" must be >= 0, got -2"},
      {keras3_model("[null, 6]", layer("LeakyReLU", R"({"name": "l", "alpha": 0.1, "negative_slope": 0.1})")),
       "give \"negative_slope\" (Keras 3) or \"alpha\" (Keras 2), not both"},
      {keras3_model("[null, 6]", layer("LeakyReLU", R"({"name": "l", "negative_slope": -0.1})")), "negative slope must be >= 0"},
      {keras3_model("[null, 6]", layer("ELU", R"({"name": "e", "alpha": "one"})")), "\"alpha\""},
      {keras3_model("[null, 4, 3]", layer("PReLU", R"({"name": "p", "shared_axes": [3]})")),
       "layers[1] (p): \"shared_axes\" must hold axes 1..2 of the input ((4, 3) after the batch axis), got [3]"},
      {keras3_model("[null, 4, 3]", layer("PReLU", R"({"name": "p", "alpha_regularizer": {"class_name": "L2"}})")),
       "alpha_regularizer"},
      {keras3_model("[null, 4, 3]", layer("Softmax", R"({"name": "s", "axis": 3})")),
       "layers[1] (s): \"axis\" = 3 is not a feature axis of the input ((4, 3) after the batch axis)"},
      {keras3_model("[null, 4, 3]", layer("Softmax", R"({"name": "s", "axis": 0})")), "\"axis\" = 0 is not a feature axis"},
      {keras3_model("[null, 4, 3]", layer("Softmax", R"({"name": "s", "axis": [1, 2]})")),
       "a softmax over several axes at once is not supported"},
  };
  for (const Case& c : cases) {
    std::string msg;
    try {
      sequential_from_keras_json(c.json, "bad.json");
      ADD_FAILURE() << "accepted: " << c.expect;
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
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
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "axis": 1})")), "\"axis\" = 1 is not supported"},
      {keras3_model("[null, 4, 3]", layer("LayerNormalization", R"({"name": "ln", "rms_scaling": true})")), "rms_scaling"},
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

TEST(KerasConfig, HardSigmoidMeansWhatTheWritingKerasMeant) {
  // Keras 2: clip(0.2 x + 0.5, 0, 1); Keras 3: relu6(x + 3) / 6. The generation is the
  // config's keras_version, or the one a legacy .h5 gives beside it.
  const std::string dense = R"(, "units": 2, "activation": "hard_sigmoid")";
  const std::string keras2 = R"({"class_name": "Sequential", "config": {"name": "m", "layers": [)"
                             R"({"class_name": "Dense", "config": {"name": "d", "batch_input_shape": [null, 3])" +
                             dense + "}}]}";
  auto activation_of = [](const Model& m) {
    return dynamic_cast<const Dense&>(*m.graph().layers().front()).options().activation;
  };
  EXPECT_EQ(activation_of(*model_from_keras_json(keras2 + R"(, "keras_version": "2.15.0"})", "k2.json")),
            "hard_sigmoid_keras2");
  EXPECT_EQ(activation_of(*model_from_keras_json(keras2 + "}", "h5.json", "2.4.0")), "hard_sigmoid_keras2");
  EXPECT_EQ(activation_of(*model_from_keras_json(keras2 + "}", "h5.json", "3.15.1")), "hard_sigmoid");
  auto k3 = model_from_keras_json(keras3_model("[null, 3]", layer("Dense", R"({"name": "d")" + dense + "}")), "k3.json");
  EXPECT_EQ(activation_of(*k3), "hard_sigmoid");
  // Each is written only in the format whose readers take it so.
  EXPECT_NE(model_to_keras_json(*k3).find(R"("activation":"hard_sigmoid")"), std::string::npos);
  EXPECT_NE(error_of<Unsupported>([&] { model_to_keras_json(*k3, KerasFormat::keras2); }).find("save the model as .keras"),
            std::string::npos);
  auto k2 = model_from_keras_json(keras2 + R"(, "keras_version": "2.15.0"})", "k2.json");
  const std::string written = model_to_keras_json(*k2, KerasFormat::keras2);
  EXPECT_NE(written.find(R"("activation":"hard_sigmoid")"), std::string::npos) << written;
  EXPECT_EQ(activation_of(*model_from_keras_json(written, "again.json")), "hard_sigmoid_keras2");
  EXPECT_NE(error_of<Unsupported>([&] { model_to_keras_json(*k2); }).find("Keras 2's hard_sigmoid"), std::string::npos);
}

TEST(KerasConfigErrors, UnknownLayerClassNamesIndexNameAndSupportedList) {
  const std::string json = keras3_model("[null, 4]", layer("LSTM", R"({"name": "lstm_7", "units": 3})"));
  const std::string msg = error_of<InvalidArgument>([&] { sequential_from_keras_json(json, "cfg.json"); });
  EXPECT_NE(msg.find("cfg.json: model.config.layers[1] (lstm_7): unknown layer class \"LSTM\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("Dense"), std::string::npos) << msg;
  EXPECT_NE(msg.find("BatchNormalization"), std::string::npos) << msg;
}

TEST(KerasConfigErrors, UnknownKey) {
  const std::string msg = error_of<InvalidArgument>([&] { sequential_from_keras_json(keras2_mlp(R"(, "unitz": 4)"), "m.json"); });
  EXPECT_NE(msg.find("m.json: model.config.layers[0] (dense): unknown key \"unitz\""), std::string::npos) << msg;
}

TEST(KerasConfigErrors, UnsupportedOptions) {
  struct Case {
    std::string json, expect;
  };
  const Case cases[] = {
      {keras2_mlp(R"(, "kernel_regularizer": {"class_name": "L2", "config": {"l2": 0.01}})"), "kernel_regularizer"},
      {keras2_mlp(R"(, "trainable": false)"), "trainable"},
      {keras2_mlp(R"(, "kernel_initializer": {"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 0.5, "seed": null}})"), "mean"},
      {keras3_model("[null, 8, 8, 3]", layer("Conv2D", R"({"name": "c", "filters": 2, "kernel_size": 3, "data_format": "channels_first"})")), "data_format"},
      {keras3_model("[null, 8, 8, 3]", layer("Conv2D", R"({"name": "c", "filters": 2, "kernel_size": 3, "dilation_rate": [2, 2]})")), "dilation_rate"},
      {keras3_model("[null, 8, 8, 3]", layer("BatchNormalization", R"({"name": "bn", "axis": 1})")), "axis"},
      {keras3_model("[null, 8, 4]", layer("Softmax", R"({"name": "s", "axis": [1, 2]})")), "axis"},
      {keras3_model("[null, 8]", layer("Dense", R"({"name": "d", "units": 2, "dtype": "float16"})")), "dtype"},
      // Functional models read (keras_functional_test.cpp), but not where a Sequential is asked for.
      {R"({"class_name": "Functional", "config": {"name": "f", "layers": [)"
       R"({"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_shape": [null, 2]}, "inbound_nodes": []},)"
       R"({"class_name": "Dense", "name": "d", "config": {"name": "d", "units": 1}, "inbound_nodes": [[["a", 0, 0, {}]]]}],)"
       R"("input_layers": [["a", 0, 0]], "output_layers": [["d", 0, 0]]}})",
       "a Functional model where a Sequential one was expected"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of<Unsupported>([&] { sequential_from_keras_json(c.json, "u.json"); });
    EXPECT_NE(msg.find("u.json: model"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
}

TEST(KerasConfigErrors, InvalidInput) {
  struct Case {
    std::string json, expect;
  };
  const Case cases[] = {
      {R"({"class_name": "Sequential", "config": {"layers": [}})", "invalid JSON: line 1, column 52"},
      {"[1, 2]", "expected a JSON object"},
      {R"({"class_name": "Sequential", "config": {"name": "x", "layers": []}})", "non-empty list"},
      {R"({"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"name": "d", "units": 3}}]}})", "no input shape"},
      // A Dense directly on images: nnfit's Dense wants a flat input, and says which layer.
      {keras3_model("[null, 28, 28, 1]", layer("Dense", R"({"name": "dense_on_images", "units": 3})")), "layers[1] (dense_on_images): Dense expects a flat input"},
      {keras3_model("[null, 2, 2, 1]", layer("Conv2D", R"({"name": "big", "filters": 1, "kernel_size": 5})")), "layers[1] (big)"},
      {keras3_model("[null, 8]", layer("Dense", R"({"name": "d", "units": -3})")), "\"units\" must be positive"},
      {keras3_model("[null, 8]", layer("Dense", R"({"name": "d", "units": "ten"})")), "\"units\" must be an integer"},
      {keras3_model("[null, 8]", layer("Activation", R"({"name": "a", "activation": "swoosh"})")), "layers[1] (a)"},
      {keras3_model("[null, 8]", layer("InputLayer", R"({"batch_shape": [null, 8], "name": "again"})")), "only valid on the first layer"},
      {keras3_model("[null, 8]", R"({"class_name": "Dense", "config": {"units": 2}, "inbound_nodes": []})"), "unknown key \"inbound_nodes\""},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of<InvalidArgument>([&] { sequential_from_keras_json(c.json, "bad.json"); });
    EXPECT_EQ(msg.rfind("bad.json: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
}

TEST(KerasOptimizer, NamesTakeKeras3Defaults) {
  OptimizerOptions adam = optimizer_from_keras_json(R"("adam")", "o");
  EXPECT_EQ(adam.name, "adam");
  ASSERT_TRUE(adam.learning_rate);
  EXPECT_DOUBLE_EQ((*adam.learning_rate)(0), 0.001);
  EXPECT_DOUBLE_EQ(adam.beta_1, 0.9);
  EXPECT_DOUBLE_EQ(adam.beta_2, 0.999);
  EXPECT_DOUBLE_EQ(adam.epsilon, 1e-7);
  EXPECT_DOUBLE_EQ((*optimizer_from_keras_json(R"("sgd")", "o").learning_rate)(5), 0.01);
  EXPECT_DOUBLE_EQ((*optimizer_from_keras_json(R"("RMSprop")", "o").learning_rate)(0), 0.001);
  OptimizerOptions adamw = optimizer_from_keras_json(R"("adamw")", "o");
  EXPECT_EQ(adamw.name, "adamw");
  EXPECT_DOUBLE_EQ(adamw.weight_decay, 0.004);
  EXPECT_DOUBLE_EQ((*adamw.learning_rate)(0), 0.001);
}

TEST(KerasOptimizer, Keras3Objects) {
  // keras.optimizers.serialize(Adam(1e-3)) from Keras 3.15.1 (lr stored as float32).
  OptimizerOptions adam = optimizer_from_keras_json(R"json({"module": "keras.optimizers", "class_name": "Adam", "config": {"name": "adam", "learning_rate": 0.0010000000474974513, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": false}, "registered_name": null})json", "o");
  EXPECT_EQ(adam.name, "adam");
  EXPECT_NEAR((*adam.learning_rate)(0), 0.001, 1e-9);
  OptimizerOptions sgd = optimizer_from_keras_json(
      R"({"class_name": "SGD", "config": {"learning_rate": 0.1, "momentum": 0.9, "nesterov": true}})", "o");
  EXPECT_EQ(sgd.name, "sgd");
  EXPECT_DOUBLE_EQ((*sgd.learning_rate)(0), 0.1);
  EXPECT_DOUBLE_EQ(sgd.momentum, 0.9);
  EXPECT_TRUE(sgd.nesterov);
  OptimizerOptions adamw = optimizer_from_keras_json(R"({"class_name": "AdamW", "config": {"weight_decay": 0.01}})", "o");
  EXPECT_DOUBLE_EQ(adamw.weight_decay, 0.01);
  // Keras 2.3-style legacy Adam config.
  OptimizerOptions k2 = optimizer_from_keras_json(
      R"({"class_name": "Adam", "config": {"name": "Adam", "learning_rate": 0.002, "decay": 0.0, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-07, "amsgrad": false}})", "o");
  EXPECT_DOUBLE_EQ((*k2.learning_rate)(0), 0.002);
  EXPECT_DOUBLE_EQ(k2.beta_1, 0.8);
}

TEST(KerasOptimizer, ExponentialDecaySchedule) {
  // keras.optimizers.serialize(Adam(ExponentialDecay(1e-3, 1000, 0.9))) from Keras 3.15.1.
  OptimizerOptions o = optimizer_from_keras_json(R"json({"module": "keras.optimizers", "class_name": "Adam", "config": {"name": "adam_1", "learning_rate": {"module": "keras.optimizers.schedules", "class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.001, "decay_steps": 1000, "decay_rate": 0.9, "staircase": false, "name": "ExponentialDecay"}, "registered_name": null}, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07, "amsgrad": false}, "registered_name": null})json", "o");
  ASSERT_TRUE(o.learning_rate);
  EXPECT_DOUBLE_EQ((*o.learning_rate)(0), 0.001);
  EXPECT_NEAR((*o.learning_rate)(1000), 0.0009, 1e-12);
  EXPECT_NEAR((*o.learning_rate)(500), 0.001 * std::pow(0.9, 0.5), 1e-12);
}

TEST(KerasOptimizer, EverySchedule) {
  // keras.optimizers.serialize(Adam(<schedule>)) from Keras 3.15.1, learning_rate objects only.
  auto read = [](const std::string& schedule) {
    return optimizer_from_keras_json(R"({"module": "keras.optimizers", "class_name": "Adam", "config": {"name": "adam", "learning_rate": )" + schedule + "}}", "o").learning_rate;
  };
  auto cos = read(R"json({"module": "keras.optimizers.schedules", "class_name": "CosineDecay", "config": {"initial_learning_rate": 0.0, "decay_steps": 800, "alpha": 0.0, "name": "CosineDecay", "warmup_target": 0.003, "warmup_steps": 200}, "registered_name": null})json");
  EXPECT_NEAR((*cos)(150), 0.0022499999, 1e-9);
  EXPECT_NEAR((*cos)(700), 0.000925974746, 1e-9);
  auto restarts = read(R"json({"module": "keras.optimizers.schedules", "class_name": "CosineDecayRestarts", "config": {"initial_learning_rate": 0.01, "first_decay_steps": 100, "t_mul": 2.0, "m_mul": 0.5, "alpha": 0.05, "name": "SGDRDecay"}, "registered_name": null})json");
  EXPECT_NEAR((*restarts)(301), 0.00287496345, 1e-9);
  auto poly = read(R"json({"module": "keras.optimizers.schedules", "class_name": "PolynomialDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 300, "end_learning_rate": 0.01, "power": 1.0, "cycle": true, "name": "PolynomialDecay"}, "registered_name": null})json");
  EXPECT_NEAR((*poly)(301), 0.0548500046, 1e-8);
  auto inv = read(R"json({"module": "keras.optimizers.schedules", "class_name": "InverseTimeDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 100, "decay_rate": 0.5, "staircase": false, "name": "InverseTimeDecay"}, "registered_name": null})json");
  EXPECT_NEAR((*inv)(150), 0.0571428575, 1e-8);
  auto pw = read(R"json({"module": "keras.optimizers.schedules", "class_name": "PiecewiseConstantDecay", "config": {"boundaries": [100, 250], "values": [0.1, 0.01, 0.001], "name": "PiecewiseConstant"}, "registered_name": null})json");
  EXPECT_DOUBLE_EQ((*pw)(100), 0.1);
  EXPECT_DOUBLE_EQ((*pw)(101), 0.01);
  EXPECT_DOUBLE_EQ((*pw)(251), 0.001);
  // Keras 2's legacy "decay": lr / (1 + decay · iterations).
  OptimizerOptions k2 = optimizer_from_keras_json(R"({"class_name": "SGD", "config": {"lr": 0.1, "decay": 0.01}})", "o");
  EXPECT_DOUBLE_EQ((*k2.learning_rate)(0), 0.1);
  EXPECT_DOUBLE_EQ((*k2.learning_rate)(100), 0.05);
}

TEST(KerasOptimizer, Errors) {
  std::string msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"("adagrad")", "cfg.json: compile.optimizer"); });
  EXPECT_NE(msg.find("cfg.json: compile.optimizer: unknown optimizer \"adagrad\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("Adam"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"learning_rat": 0.1}})", "o"); });
  EXPECT_NE(msg.find("o: config: unknown key \"learning_rat\""), std::string::npos) << msg;
  msg = error_of<Unsupported>([] { optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"clipnorm": 1.0}})", "o"); });
  EXPECT_NE(msg.find("clipnorm"), std::string::npos) << msg;
  msg = error_of<Unsupported>([] {
    optimizer_from_keras_json(R"({"class_name": "SGD", "config": {"learning_rate": {"class_name": "OneCycle", "config": {}}}})", "o");
  });
  EXPECT_NE(msg.find("o: config.learning_rate.class_name: learning-rate schedule \"OneCycle\" is not supported"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "SGD", "config": {"learning_rate": {"class_name": "CosineDecay", "config": {}}}})", "o");
  });
  EXPECT_NE(msg.find("o: config.learning_rate.config: CosineDecay needs \"initial_learning_rate\""), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"learning_rate": {"class_name": "CosineDecay", "config": {"initial_learning_rate": 0.001, "decay_steps": 100, "alpha": 2}}}})", "o");
  });
  EXPECT_NE(msg.find("o: config.learning_rate.config: alpha must be in [0, 1], got 2"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"learning_rate": {"class_name": "PiecewiseConstantDecay", "config": {"boundaries": [10.5], "values": [0.1, 0.01]}}}})", "o");
  });
  EXPECT_NE(msg.find("\"boundaries\" must be step numbers"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"learning_rate": {"class_name": "CosineDecay", "config": {"initial_learning_rate": 0.001, "decay_steps": 100}}, "decay": 0.01}})", "o");
  });
  EXPECT_NE(msg.find("cannot be combined"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "SGD", "config": {"learning_rate": -1}})", "o"); });
  EXPECT_NE(msg.find("learning_rate"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json("{\"class_name\": ", "o"); });
  EXPECT_NE(msg.find("line 1, column"), std::string::npos) << msg;
}

TEST(KerasLoss, NamesAndObjects) {
  Loss a = loss_from_keras_json(R"("sparse_categorical_crossentropy")", "l");
  EXPECT_EQ(a.kind, "sparse_categorical_crossentropy");
  EXPECT_FALSE(a.from_logits);
  // keras.losses.serialize(SparseCategoricalCrossentropy(from_logits=True)), Keras 3.15.1.
  Loss b = loss_from_keras_json(R"json({"module": "keras.losses", "class_name": "SparseCategoricalCrossentropy", "config": {"name": "sparse_categorical_crossentropy", "reduction": "sum_over_batch_size", "from_logits": true, "ignore_class": null}, "registered_name": null})json", "l");
  EXPECT_EQ(b.kind, "sparse_categorical_crossentropy");
  EXPECT_TRUE(b.from_logits);
  Loss c = loss_from_keras_json(R"({"class_name": "MeanSquaredError", "config": {"reduction": "auto", "name": "mean_squared_error"}})", "l");
  EXPECT_EQ(c.kind, "mean_squared_error");
}

TEST(KerasLoss, Errors) {
  std::string msg = error_of<InvalidArgument>([] { loss_from_keras_json(R"("hinge")", "cfg.json: compile.loss"); });
  EXPECT_EQ(msg.rfind("cfg.json: compile.loss: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("hinge"), std::string::npos) << msg;
  msg = error_of<Unsupported>([] {
    loss_from_keras_json(R"({"class_name": "SparseCategoricalCrossentropy", "config": {"reduction": "sum"}})", "l");
  });
  EXPECT_NE(msg.find("reduction"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    loss_from_keras_json(R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logit": true}})", "l");
  });
  EXPECT_NE(msg.find("unknown key \"from_logit\""), std::string::npos) << msg;
}

}  // namespace
}  // namespace nnfit
