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
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/reshaping_layers.h"
#include "model/keras_config_helpers.h"

namespace nnfit {
namespace {

using namespace keras_test;

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

// trainable: false freezes a layer as Keras does: its weights count as non-trainable, fit
// leaves them (and a frozen BatchNormalization's moving statistics) alone, the flag is
// written back, and a frozen nested model freezes its layers.
TEST(KerasConfig, TrainableFalseFreezesLayers) {
  const std::string json = keras3_model(
      "[null, 4]", layer("Dense", R"({"name": "base", "units": 3, "trainable": false})") + ", " +
                       layer("BatchNormalization", R"({"name": "bn", "trainable": false})") + ", " +
                       layer("Dense", R"({"name": "head", "units": 2})"));
  auto m = sequential_from_keras_json(json, "frozen.json");
  CompileOptions c;
  c.loss = Loss::from_name("mse");
  c.optimizer.name = "sgd";
  m->compile(c);
  const std::string summary = m->summary();
  EXPECT_NE(summary.find("Trainable params: 8 "), std::string::npos) << summary;        // head: 3 x 2 + 2
  EXPECT_NE(summary.find("Non-trainable params: 27 "), std::string::npos) << summary;   // base 15, bn 12
  const std::vector<Tensor> before = m->get_weights();
  Tensor x = Tensor::zeros(Shape{8, 4}), y = Tensor::zeros(Shape{8, 2});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  for (std::int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = 1.0f;
  FitOptions f;
  f.batch_size = 4;
  m->fit(x, y, f);
  const std::vector<Tensor> after = m->get_weights();
  ASSERT_EQ(before.size(), after.size());
  std::size_t changed = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const bool same = std::memcmp(before[i].raw(), after[i].raw(), before[i].nbytes()) == 0;
    changed += same ? 0 : 1;
    if (i < 6) EXPECT_TRUE(same) << "frozen weight " << i << " changed";  // base kernel, bias; bn's four
  }
  EXPECT_EQ(changed, 2u);  // the head's kernel and bias
  const std::string written = model_to_keras_json(*m);
  auto again = sequential_from_keras_json(written, "again.json");
  EXPECT_FALSE(again->layers()[0]->trainable());
  EXPECT_FALSE(again->layers()[1]->trainable());
  EXPECT_TRUE(again->layers()[2]->trainable());

  // Keras's model.trainable = False: the model's own flag freezes every layer (it was refused).
  std::string whole = json;
  whole.replace(whole.find(R"("trainable": true)"), 17, R"("trainable": false)");
  auto frozen = model_from_keras_json(whole, "frozen_model.json");
  for (const auto& l : frozen->layers()) EXPECT_FALSE(l->trainable()) << l->name();
}

// Several unsupported features are said together, one line each naming the layer, the
// value whole; Keras 3's build_config shapes carry the reading past each of them.
TEST(KerasConfigErrors, EveryUnsupportedFeatureIsSaidOnce) {
  auto entry = [](const std::string& cls, const std::string& config, const std::string& input_shape) {
    return R"({"module": "keras.layers", "class_name": ")" + cls + R"(", "config": )" + config +
           R"(, "registered_name": null, "build_config": {"input_shape": )" + input_shape + "}}";
  };
  const std::string json = keras3_model(
      "[null, 6, 4]",
      entry("LayerNormalization", R"({"name": "ln", "gamma_initializer": "zeros"})", "[null, 6, 4]") + ", " +
          entry("LSTM", R"({"name": "lstm", "units": 3, "stateful": true, "return_sequences": true})", "[null, 6, 4]") +
          ", " + entry("Flatten", R"({"name": "flat"})", "[null, 6, 3]") + ", " +
          entry("Dense", R"({"name": "out", "units": 2, "kernel_regularizer": {"class_name": "SpectralNorm", "config": {"power": 2}}})",
                "[null, 18]"));
  const std::string e = error_of<Unsupported>([&] { sequential_from_keras_json(json, "many.json"); });
  EXPECT_NE(e.find("many.json: the model uses 3 features nnfit does not support:"), std::string::npos) << e;
  for (const char* line : {"\n  many.json: model.config.layers[1] (ln): \"gamma_initializer\"",
                           "\n  many.json: model.config.layers[2] (lstm): \"stateful\" = true is not supported (only false)",
                           "\n  many.json: model.config.layers[4] (out).kernel_regularizer: regularizer {\"class_name\":\"SpectralNorm\",\"config\":{\"power\":2}} is not supported"}) {
    EXPECT_NE(e.find(line), std::string::npos) << line << " not in: " << e;
  }
  EXPECT_EQ(e.find("(flat)"), std::string::npos) << e;
}

// The offending value is printed whole: a Keras 3 DTypePolicy names its policy.
TEST(KerasConfigErrors, UnsupportedValuesArePrintedWhole) {
  const std::string json = keras3_model(
      "[null, 4]", layer("Dense", R"({"name": "d", "units": 2, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "int8_from_mixed_bfloat16"}, "registered_name": null}})"));
  const std::string e = error_of<Unsupported>([&] { sequential_from_keras_json(json, "dt.json"); });
  EXPECT_NE(e.find("dt.json: model.config.layers[1] (d): \"dtype\" = \"int8_from_mixed_bfloat16\" ({\"class_name\":\"DTypePolicy\",\"config\":{\"name\":\"int8_from_mixed_bfloat16\"},\"module\":\"keras\",\"registered_name\":null}): dtype policy \"int8_from_mixed_bfloat16\": quantized policies are not supported"),
            std::string::npos)
      << e;
}

TEST(KerasConfigErrors, UnknownLayerClassNamesIndexNameAndSupportedList) {
  const std::string json = keras3_model("[null, 4]", layer("ConvLSTM2D", R"({"name": "lstm_7", "filters": 3})"));
  const std::string msg = error_of<InvalidArgument>([&] { sequential_from_keras_json(json, "cfg.json"); });
  EXPECT_NE(msg.find("cfg.json: model.config.layers[1] (lstm_7): unknown layer class \"ConvLSTM2D\""), std::string::npos) << msg;
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
      {keras2_mlp(R"(, "kernel_regularizer": {"class_name": "MyRegularizer", "config": {"l2": 0.01}})"),
       "layers[0] (dense).kernel_regularizer: regularizer {\"class_name\":\"MyRegularizer\",\"config\":{\"l2\":0.01}} is not supported"},
      {keras2_mlp(R"(, "kernel_initializer": {"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 0.5, "seed": null}})"), "initializer argument \"stddev\" = 0.5 is not supported"},
      {keras2_mlp(R"(, "kernel_initializer": {"class_name": "VarianceScaling", "config": {"mode": "fan_sideways"}})"), "VarianceScaling argument \"mode\" = \"fan_sideways\" is not supported"},
      {keras3_model("[null, 8, 8, 3]", layer("Conv2D", R"({"name": "c", "filters": 2, "kernel_size": 3, "data_format": "channels_first"})")), "data_format"},
      {keras3_model("[null, 8, 8, 3]", layer("Conv2D", R"({"name": "c", "filters": 2, "kernel_size": 3, "kernel_constraint": {"class_name": "RadialConstraint", "config": {}}})")),
       "(c).kernel_constraint: constraint {\"class_name\":\"RadialConstraint\",\"config\":{}} is not supported"},
      {keras3_model("[null, 8, 8, 3]", layer("BatchNormalization", R"({"name": "bn", "axis": [1, 2]})")),
       "\"axis\" = [1,2] is not supported (one features axis)"},
      {keras3_model("[null, 8, 4]", layer("Softmax", R"({"name": "s", "axis": [1, 2]})")), "axis"},
      {keras3_model("[null, 8]", layer("Dense", R"({"name": "d", "units": 2, "dtype": "float64"})")), "dtype"},
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
      // An LSTM directly on images: the layer that does not fit is named.
      {keras3_model("[null, 28, 28, 1]", layer("LSTM", R"({"name": "lstm_on_images", "units": 3})")), "layers[1] (lstm_on_images): LSTM expects (steps, features), got (28, 28, 1)"},
      {keras3_model("[null, 2, 2, 1]", layer("Conv2D", R"({"name": "big", "filters": 1, "kernel_size": 5})")), "layers[1] (big)"},
      {keras3_model("[null, 8]", layer("Dense", R"({"name": "d", "units": -3})")), "\"units\" must be positive"},
      {keras3_model("[null, 8]", layer("Dense", R"({"name": "d", "units": 3, "trainable": "no"})")), "layers[1] (d): \"trainable\" must be true or false, got \"no\""},
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
  // Each optimizer's own defaults (Keras 3.15's), and its keys written back.
  EXPECT_DOUBLE_EQ(optimizer_from_keras_json(R"("Lion")", "o").beta_2, 0.99);
  EXPECT_DOUBLE_EQ(optimizer_from_keras_json(R"("adadelta")", "o").rho, 0.95);
  EXPECT_DOUBLE_EQ(optimizer_from_keras_json(R"("Adagrad")", "o").initial_accumulator_value, 0.1);
  EXPECT_EQ(optimizer_from_keras_json(R"("adamax")", "o").name, "adamax");
  OptimizerOptions adagrad = optimizer_from_keras_json(
      R"({"class_name": "Adagrad", "config": {"learning_rate": 0.05, "initial_accumulator_value": 0.5, "epsilon": 1e-5}})",
      "o");
  const OptimizerOptions back = optimizer_from_keras_json(optimizer_to_keras_json(adagrad), "w");
  EXPECT_EQ(back.name, "adagrad");
  EXPECT_DOUBLE_EQ(back.initial_accumulator_value, 0.5);
  EXPECT_DOUBLE_EQ(back.epsilon, 1e-5);
  EXPECT_DOUBLE_EQ(Optimizer(adagrad).slot_initial_value(0), 0.5);
  EXPECT_EQ(Optimizer(adagrad).num_slots(), 1);
  // Nadam and Ftrl with their keys, written back; weight_decay on any optimizer.
  const OptimizerOptions ftrl = optimizer_from_keras_json(
      R"({"class_name": "Ftrl", "config": {"learning_rate_power": -0.7, "l1_regularization_strength": 0.01, "beta": 0.1, "weight_decay": 0.02}})",
      "o");
  const OptimizerOptions ftrl_back = optimizer_from_keras_json(optimizer_to_keras_json(ftrl), "w");
  EXPECT_DOUBLE_EQ(ftrl_back.learning_rate_power, -0.7);
  EXPECT_DOUBLE_EQ(ftrl_back.l1_regularization_strength, 0.01);
  EXPECT_DOUBLE_EQ(ftrl_back.beta, 0.1);
  EXPECT_DOUBLE_EQ(ftrl_back.weight_decay, 0.02);
  EXPECT_DOUBLE_EQ(Optimizer(ftrl).slot_initial_value(0), 0.1);  // Keras's initial_accumulator_value
  EXPECT_EQ(Optimizer(ftrl).num_slots(), 2);
  EXPECT_EQ(Optimizer(optimizer_from_keras_json(R"("Nadam")", "o")).num_slots(), 2);
  // Lamb: Adam's keys but amsgrad, written back; momentum and velocity.
  const OptimizerOptions lamb = optimizer_from_keras_json(
      R"({"class_name": "Lamb", "config": {"learning_rate": 0.02, "beta_1": 0.8, "epsilon": 1e-5, "weight_decay": 0.1}})",
      "o");
  const OptimizerOptions lamb_back = optimizer_from_keras_json(optimizer_to_keras_json(lamb), "w");
  EXPECT_EQ(lamb_back.name, "lamb");
  EXPECT_DOUBLE_EQ(lamb_back.beta_1, 0.8);
  EXPECT_DOUBLE_EQ(lamb_back.beta_2, 0.999);
  EXPECT_DOUBLE_EQ(lamb_back.epsilon, 1e-5);
  EXPECT_DOUBLE_EQ(lamb_back.weight_decay, 0.1);
  EXPECT_EQ(Optimizer(lamb).num_slots(), 2);
  EXPECT_NE(optimizer_to_keras_json(lamb).find(R"("class_name":"Lamb")"), std::string::npos);
  std::string lamb_msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Lamb", "config": {"amsgrad": false}})", "o"); });
  EXPECT_NE(lamb_msg.find("unknown key \"amsgrad\""), std::string::npos) << lamb_msg;
  // Adafactor: its keys written back; r, c and v shaped as Keras's (placeholders below rank 2).
  const OptimizerOptions adafactor = optimizer_from_keras_json(
      R"({"class_name": "Adafactor", "config": {"beta_2_decay": -0.5, "epsilon_2": 0.01, "clip_threshold": 0.5, "relative_step": false}})",
      "o");
  const OptimizerOptions adafactor_back = optimizer_from_keras_json(optimizer_to_keras_json(adafactor), "w");
  EXPECT_DOUBLE_EQ(adafactor_back.beta_2_decay, -0.5);
  EXPECT_DOUBLE_EQ(adafactor_back.epsilon_1, 1e-30);
  EXPECT_DOUBLE_EQ(adafactor_back.epsilon_2, 0.01);
  EXPECT_DOUBLE_EQ(adafactor_back.clip_threshold, 0.5);
  EXPECT_FALSE(adafactor_back.relative_step);
  const Optimizer af(adafactor);
  EXPECT_EQ(af.num_slots(), 3);
  EXPECT_EQ(af.slot_shape(0, Shape{2, 4, 3}), (Shape{2, 4}));
  EXPECT_EQ(af.slot_shape(1, Shape{2, 4, 3}), (Shape{2, 3}));
  EXPECT_EQ(af.slot_shape(2, Shape{2, 4, 3}), (Shape{2, 4, 3}));
  EXPECT_EQ(af.slot_shape(0, Shape{5}), Shape{});
  EXPECT_TRUE(af.slot_is_placeholder(1, Shape{5}));
  EXPECT_FALSE(af.slot_is_placeholder(1, Shape{5, 2}));
  EXPECT_EQ(Optimizer(lamb).slot_shape(0, Shape{5, 2}), (Shape{5, 2}));
  // ScheduleFreeAdamW: Keras's defaults (rate 0.0025, epsilon 1e-8), warmup_steps written back.
  const OptimizerOptions sf = optimizer_from_keras_json(R"({"class_name": "ScheduleFreeAdamW", "config": {"warmup_steps": 3}})", "o");
  EXPECT_EQ(sf.name, "schedulefreeadamw");
  EXPECT_DOUBLE_EQ((*sf.learning_rate)(0), 0.0025);
  EXPECT_DOUBLE_EQ(sf.epsilon, 1e-8);
  EXPECT_EQ(optimizer_from_keras_json(optimizer_to_keras_json(sf), "w").warmup_steps, 3);
  EXPECT_EQ(Optimizer(sf).num_slots(), 2);
  const std::string af_msg = error_of<InvalidArgument>(
      [] { optimizer_from_keras_json(R"({"class_name": "Adafactor", "config": {"clip_threshold": 0}})", "o"); });
  EXPECT_NE(af_msg.find("clip_threshold must be positive"), std::string::npos) << af_msg;
  std::string msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"("Muon")", "cfg.json: compile.optimizer"); });
  EXPECT_NE(msg.find("unknown optimizer \"Muon\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("Muon and MultiOptimizer are not implemented yet"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Ftrl", "config": {"learning_rate_power": 0.5}})", "o"); });
  EXPECT_NE(msg.find("learning_rate_power must be <= 0"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Nadam", "config": {"amsgrad": false}})", "o"); });
  EXPECT_NE(msg.find("unknown key \"amsgrad\""), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "SGD", "config": {"weight_decay": -1}})", "o"); });
  EXPECT_NE(msg.find("\"weight_decay\" must not be negative"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Lion", "config": {"rho": 0.9}})", "o"); });
  EXPECT_NE(msg.find("unknown key \"rho\""), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    Optimizer(optimizer_from_keras_json(R"({"class_name": "Adadelta", "config": {"rho": 1.5}})", "o"));
  });
  EXPECT_NE(msg.find("rho must be in [0, 1)"), std::string::npos) << msg;
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
  std::string msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"("adagrd")", "cfg.json: compile.optimizer"); });
  EXPECT_NE(msg.find("cfg.json: compile.optimizer: unknown optimizer \"adagrd\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("Adam"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"learning_rat": 0.1}})", "o"); });
  EXPECT_NE(msg.find("o: config: unknown key \"learning_rat\""), std::string::npos) << msg;
  EXPECT_DOUBLE_EQ(optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"clipnorm": 1.0}})", "o").clipnorm, 1.0);
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"clipnorm": 1.0, "clipvalue": 0.5}})", "o");
  });
  EXPECT_NE(msg.find("only one of \"clipnorm\", \"global_clipnorm\" and \"clipvalue\" can be set"), std::string::npos)
      << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "SGD", "config": {"clipvalue": -1}})", "o"); });
  EXPECT_NE(msg.find("\"clipvalue\" must be positive or null, got -1"), std::string::npos) << msg;
  // amsgrad and centered read and write back; only where Keras has them.
  const OptimizerOptions ams = optimizer_from_keras_json(R"({"class_name": "AdamW", "config": {"amsgrad": true}})", "o");
  EXPECT_TRUE(ams.amsgrad);
  EXPECT_TRUE(optimizer_from_keras_json(optimizer_to_keras_json(ams), "w").amsgrad);
  const OptimizerOptions cen = optimizer_from_keras_json(R"({"class_name": "RMSprop", "config": {"centered": true}})", "o");
  EXPECT_TRUE(cen.centered);
  EXPECT_TRUE(optimizer_from_keras_json(optimizer_to_keras_json(cen), "w").centered);
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Adamax", "config": {"amsgrad": true}})", "o"); });
  EXPECT_NE(msg.find("amsgrad"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"centered": true}})", "o"); });
  EXPECT_NE(msg.find("centered"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"amsgrad": "yes"}})", "o"); });
  EXPECT_NE(msg.find("amsgrad"), std::string::npos) << msg;
  // use_ema with Keras's momentum and overwrite frequency, written back; bad values named.
  const OptimizerOptions ema = optimizer_from_keras_json(
      R"({"class_name": "SGD", "config": {"use_ema": true, "ema_momentum": 0.9, "ema_overwrite_frequency": 5}})", "o");
  const OptimizerOptions ema_back = optimizer_from_keras_json(optimizer_to_keras_json(ema), "w");
  EXPECT_TRUE(ema_back.use_ema);
  EXPECT_DOUBLE_EQ(ema_back.ema_momentum, 0.9);
  EXPECT_EQ(ema_back.ema_overwrite_frequency, 5);
  EXPECT_EQ(Optimizer(ema).num_kept_slots(), 1);  // plain SGD: the average only
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"use_ema": true, "ema_momentum": 1.5}})", "o");
  });
  EXPECT_NE(msg.find("\"ema_momentum\" must be in [0, 1], got 1.5"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    optimizer_from_keras_json(R"({"class_name": "Adam", "config": {"use_ema": true, "ema_overwrite_frequency": 0}})", "o");
  });
  EXPECT_NE(msg.find("\"ema_overwrite_frequency\" must be an integer >= 1 or null, got 0"), std::string::npos) << msg;
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
  // Keras's short names and class names, and each class's options, written back as Keras 3 writes them.
  const std::pair<const char*, const char*> kNames[] = {
      {"\"mae\"", "mean_absolute_error"}, {"\"mape\"", "mean_absolute_percentage_error"},
      {"\"msle\"", "mean_squared_logarithmic_error"}, {"\"kld\"", "kl_divergence"},
      {"\"logcosh\"", "log_cosh"}, {"\"huber_loss\"", "huber"}, {"\"KLDivergence\"", "kl_divergence"},
      {"\"CategoricalHinge\"", "categorical_hinge"}, {"\"cosine_similarity\"", "cosine_similarity"}};
  for (const auto& [text, kind] : kNames) EXPECT_EQ(loss_from_keras_json(text, "l").kind, kind) << text;
  // keras.losses.serialize(BinaryFocalCrossentropy(...)), Keras 3.15.1.
  Loss f = loss_from_keras_json(R"json({"module": "keras.losses", "class_name": "BinaryFocalCrossentropy", "config": {"name": "binary_focal_crossentropy", "reduction": "sum_over_batch_size", "from_logits": true, "label_smoothing": 0.1, "axis": -1, "apply_class_balancing": true, "alpha": 0.3, "gamma": 1.5}, "registered_name": null})json", "l");
  EXPECT_TRUE(f.from_logits && f.apply_class_balancing);
  EXPECT_DOUBLE_EQ(f.label_smoothing, 0.1);
  EXPECT_DOUBLE_EQ(f.alpha, 0.3);
  EXPECT_DOUBLE_EQ(f.gamma, 1.5);
  const Loss back = loss_from_keras_json(loss_to_keras_json(f), "w");
  EXPECT_TRUE(back.kind == f.kind && back.from_logits && back.apply_class_balancing && back.label_smoothing == 0.1 &&
              back.alpha == 0.3 && back.gamma == 1.5);
  Loss h = loss_from_keras_json(R"({"class_name": "Huber", "config": {"name": "huber_loss", "delta": 0.5}})", "l");
  EXPECT_EQ(loss_from_keras_json(loss_to_keras_json(h), "w").delta, 0.5);
  EXPECT_NE(loss_to_keras_json(h).find(R"("name":"huber_loss")"), std::string::npos) << loss_to_keras_json(h);
}

TEST(KerasLoss, Errors) {
  std::string msg = error_of<InvalidArgument>([] { loss_from_keras_json(R"("hingee")", "cfg.json: compile.loss"); });
  EXPECT_EQ(msg.rfind("cfg.json: compile.loss: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("unknown loss 'hingee'; supported: sparse_categorical_crossentropy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("categorical_focal_crossentropy"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    loss_from_keras_json(R"({"class_name": "MeanAbsoluteError", "config": {"from_logits": true}})", "l");
  });
  EXPECT_NE(msg.find("\"from_logits\" is not an option of MeanAbsoluteError"), std::string::npos) << msg;
  msg = error_of<Unsupported>([] {
    loss_from_keras_json(R"({"class_name": "Huber", "config": {"label_smoothing": 0.1}})", "l");
  });
  EXPECT_NE(msg.find("\"label_smoothing\" = 0.1 is not an option of Huber"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] { loss_from_keras_json(R"({"class_name": "Huber", "config": {"delta": -1}})", "l"); });
  EXPECT_NE(msg.find("\"delta\" must be positive, got -1"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    loss_from_keras_json(R"({"class_name": "CategoricalCrossentropy", "config": {"label_smoothing": 1.5}})", "l");
  });
  EXPECT_NE(msg.find("\"label_smoothing\" must be in [0, 1], got 1.5"), std::string::npos) << msg;
  msg = error_of<InvalidArgument>([] {
    loss_from_keras_json(R"({"class_name": "BinaryFocalCrossentropy", "config": {"gamma": -2}})", "l");
  });
  EXPECT_NE(msg.find("\"gamma\" must be >= 0, got -2"), std::string::npos) << msg;
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
