// The Keras codecs of the layer classes added for issue 36 (src/model/keras/codecs): the
// adaptive poolings (pooling.cpp), Conv3DTranspose (conv.cpp) and GroupQueryAttention
// (attention.cpp, on the attention fixture's cross-attention call) read Keras 3's configs,
// give Keras's shapes and parameter counts, round-trip through the writer, and bad values
// are named with the layer's path. Values against Keras: tests/python/keras_layers_more_parity.py.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model/keras_config_helpers.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/attention_layers.h"
#include "nnfit/nn/conv_layers.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

using namespace keras_test;

TEST(KerasConfig, AdaptivePoolingsReadAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 7, 5, 3]",
      layer("AdaptiveAveragePooling2D", R"({"name": "a", "output_size": [3, 2], "data_format": "channels_last"})") +
          ", " + layer("AdaptiveMaxPooling2D", R"({"name": "b", "output_size": 4, "data_format": "channels_first"})"));
  auto m = sequential_from_keras_json(json, "adaptive.json");
  m->build();
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"AdaptiveAveragePooling2D", "AdaptiveMaxPooling2D"}));
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{7, 5, 3}), (Shape{3, 2, 3}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{3, 2, 3}), (Shape{3, 4, 4}));  // channels first: (3, 4, 4)
  EXPECT_EQ(m->count_params(), 0);
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), classes(*m));
  const auto& b = dynamic_cast<const AdaptivePooling&>(*again->layers()[1]).options();
  EXPECT_EQ(b.kind, PoolKind::max);
  EXPECT_EQ(b.output_size, (std::vector<std::int64_t>{4, 4}));
  EXPECT_TRUE(b.channels_first);

  const std::string one_d = keras3_model(
      "[null, 9, 2]", layer("AdaptiveMaxPooling1D", R"({"name": "p", "output_size": [4]})") + ", " +
                          layer("AdaptiveAveragePooling1D", R"({"name": "q", "output_size": 2})"));
  auto m1 = sequential_from_keras_json(one_d, "adaptive1d.json");
  EXPECT_EQ(m1->layers()[0]->output_shape(Shape{9, 2}), (Shape{4, 2}));
  EXPECT_EQ(m1->layers()[1]->class_name(), "AdaptiveAveragePooling1D");
  const std::string three_d =
      keras3_model("[null, 5, 6, 4, 2]", layer("AdaptiveAveragePooling3D", R"({"name": "r", "output_size": [2, 3, 2]})"));
  auto m3 = sequential_from_keras_json(three_d, "adaptive3d.json");
  EXPECT_EQ(m3->layers()[0]->output_shape(Shape{5, 6, 4, 2}), (Shape{2, 3, 2, 2}));
}

TEST(KerasConfig, Conv3DTransposeReadsAndRoundTrips) {
  // Keras 3's full config (keras.layers.Conv3DTranspose(...).get_config()), then the alias
  // with tuples given as single integers.
  const std::string json = keras3_model(
      "[null, 3, 4, 2, 3]",
      layer("Conv3DTranspose", R"({"name": "t", "trainable": true, "dtype": "float32", "filters": 2, "kernel_size": [2, 3, 2], "strides": [2, 1, 2], "padding": "same", "output_padding": null, "data_format": "channels_last", "dilation_rate": [1, 1, 1], "activation": "relu", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name": null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "bias_constraint": null})") +
          ", " + layer("Convolution3DTranspose", R"({"name": "u", "filters": 3, "kernel_size": 3, "strides": 2, "output_padding": 1, "padding": "same", "use_bias": false})"));
  auto m = sequential_from_keras_json(json, "conv3dt.json");
  m->build();
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"Conv3DTranspose", "Conv3DTranspose"}));
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{3, 4, 2, 3}), (Shape{6, 4, 4, 2}));  // same: in * stride
  // With output_padding: (in - 1) * 2 + 3 - 2 * 1 + 1.
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{6, 4, 4, 2}), (Shape{12, 8, 8, 3}));
  // Keras's weight layout: kernel (kd, kh, kw, filters, in), then bias (filters).
  const auto& w = m->layers()[0]->weights();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].value.shape(), (Shape{2, 3, 2, 2, 3}));
  EXPECT_EQ(w[1].value.shape(), (Shape{2}));
  EXPECT_EQ(m->layers()[1]->count_params(), 3 * 3 * 3 * 3 * 2);
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  EXPECT_EQ(classes(*again), classes(*m));
  const auto& u = dynamic_cast<const ConvTranspose&>(*again->layers()[1]).options();
  EXPECT_EQ(u.kernel_size, (std::vector<std::int64_t>{3, 3, 3}));
  EXPECT_EQ(u.output_padding, (std::vector<std::int64_t>{1, 1, 1}));
  EXPECT_FALSE(u.use_bias);
}

TEST(KerasConfigErrors, AdaptivePoolingAndConv3DTranspose) {
  expect_config_errors({
      {keras3_model("[null, 7, 5, 3]", layer("AdaptiveAveragePooling2D", R"({"name": "a"})")),
       "layers[1] (a): \"output_size\" is required"},
      {keras3_model("[null, 7, 5, 3]", layer("AdaptiveAveragePooling2D", R"({"name": "a", "output_size": [3, 2, 1]})")),
       "output_size"},
      {keras3_model("[null, 7, 5, 3]", layer("AdaptiveMaxPooling2D", R"({"name": "a", "output_size": 0})")),
       "output_size"},
      {keras3_model("[null, 7, 3]", layer("AdaptiveMaxPooling2D", R"({"name": "a", "output_size": 2})")),
       "layers[1] (a): AdaptiveMaxPooling2D expects 2 spatial axes and a channel axis, got (7, 3)"},
      {keras3_model("[null, 7, 5, 3]", layer("AdaptiveMaxPooling2D", R"({"name": "a", "output_size": 2, "data_format": "channels_middle"})")),
       "data_format"},
      {keras3_model("[null, 3, 4, 2, 3]", layer("Conv3DTranspose", R"({"name": "t", "filters": 2, "kernel_size": 3, "strides": 2, "output_padding": [1, 2, 1]})")),
       "layers[1] (t): output_padding 2 must be at least 0 and less than the stride 2"},
      {keras3_model("[null, 4, 2, 3]", layer("Conv3DTranspose", R"({"name": "t", "filters": 2, "kernel_size": 3})")),
       "layers[1] (t): Conv3DTranspose expects 3 spatial axes and a channel axis, got (4, 2, 3)"},
  });
}

// The attention fixture (tests/model/fixtures/attention_keras3.json) with its "cross" call
// (query q (5, 8), value v (6, 8), key=v, attention_mask=m) made a GroupQueryAttention.
nlohmann::json grouped_fixture(const nlohmann::json& config) {
  std::ifstream f(std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/attention_keras3.json");
  nlohmann::json m = nlohmann::json::parse(f);
  for (nlohmann::json& l : m["config"]["layers"]) {
    if (l["name"] != "cross") continue;
    l["class_name"] = "GroupQueryAttention";
    nlohmann::json c = config;
    c["name"] = "cross";
    l["config"] = c;
  }
  return m;
}

TEST(KerasConfig, GroupQueryAttentionReadsAndRoundTrips) {
  const nlohmann::json m = grouped_fixture({{"head_dim", 4}, {"num_query_heads", 4}, {"num_key_value_heads", 2},
                                            {"use_bias", true}, {"use_gate", true}, {"sliding_window", nullptr},
                                            {"dropout", 0.0}, {"seed", nullptr}});
  auto model = model_from_keras_json(m.dump(), "gqa.json");
  model->build();
  const auto& l = dynamic_cast<const MultiHeadAttention&>(*model->graph().find_layer("cross"));
  EXPECT_EQ(l.class_name(), "GroupQueryAttention");  // as Keras writes it
  EXPECT_EQ(l.type_name(), "GroupedQueryAttention");  // as Keras's summary shows it
  EXPECT_TRUE(l.options().grouped && l.options().has_key && l.options().has_attention_mask);
  // Keras's 568 for these sizes: query and gate (8, 4, 4) + (4, 4), key and value (8, 2, 4) + (2, 4),
  // output (4, 4, 8) + (8).
  EXPECT_EQ(l.count_params(), 2 * (128 + 16) + 2 * (64 + 8) + 128 + 8);
  EXPECT_EQ(l.compute_output_shapes({Shape{5, 8}, Shape{6, 8}, Shape{6, 8}, Shape{5, 6}})[0], (Shape{5, 8}));
  const nlohmann::json written = nlohmann::json::parse(model_to_keras_json(*model));
  for (const nlohmann::json& e : written["config"]["layers"]) {
    if (e["name"] != "cross") continue;
    EXPECT_EQ(e["class_name"], "GroupQueryAttention");
    EXPECT_EQ(e["config"]["num_key_value_heads"], 2);
    EXPECT_EQ(e["config"]["head_dim"], 4);
    EXPECT_FALSE(e["config"].contains("num_heads")) << "MultiHeadAttention's keys are not GroupQueryAttention's";
  }
  auto back = model_from_keras_json(written.dump(), "written.json");
  back->build();
  EXPECT_EQ(back->count_params(), model->count_params());
  EXPECT_EQ(nlohmann::json::parse(model_to_keras_json(*back)), written) << "writing is a fixed point";
}

TEST(KerasConfigErrors, GroupQueryAttention) {
  const auto error_of = [](const nlohmann::json& m) {
    try {
      model_from_keras_json(m.dump(), "gqa.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    ADD_FAILURE() << "no error";
    return std::string();
  };
  std::string e = error_of(grouped_fixture({{"head_dim", 4}, {"num_query_heads", 3}, {"num_key_value_heads", 2}}));
  EXPECT_NE(e.find("(cross): \"num_query_heads\" (3) must be divisible by \"num_key_value_heads\" (2)"),
            std::string::npos) << e;
  e = error_of(grouped_fixture({{"head_dim", 4}, {"num_query_heads", 4}}));
  EXPECT_NE(e.find("(cross): missing required key \"num_key_value_heads\""), std::string::npos) << e;
  e = error_of(grouped_fixture({{"head_dim", 4}, {"num_query_heads", 4}, {"num_key_value_heads", 2}, {"num_heads", 4}}));
  EXPECT_NE(e.find("(cross): unknown key \"num_heads\""), std::string::npos) << e;
}

}  // namespace
}  // namespace nnfit
