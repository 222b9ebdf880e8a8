// The Keras codecs of the image resizing layers: Resizing and CenterCrop
// (src/model/keras/codecs/preprocessing.cpp) and UpSampling2D's interpolation (reshaping.cpp).
// Keras 3.15's configs read and are written back key for key, in Keras's order; tf.keras's
// form where it has one; bad or unimplemented values are refused naming the layer, the key
// and the value; and the layers predict the numbers Keras 3 (TensorFlow backend) printed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/keras_config_helpers.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/reshaping_layers.h"

namespace nnfit {
namespace {

using namespace keras_test;
using ojson = nlohmann::ordered_json;

// A layer config as Keras 3.15's get_config() writes it: the common keys, then `rest`.
std::string config(const std::string& name, const std::string& rest) {
  return R"({"name": ")" + name + R"(", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", )"
         R"("config": {"name": "float32"}, "registered_name": null}, )" + rest + "}";
}

// The config object of layer `name` in a model's JSON.
ojson config_of(const std::string& model_json, const std::string& name) {
  const ojson model = ojson::parse(model_json);
  for (const ojson& l : model["config"]["layers"]) {
    if (l["config"].value("name", "") == name) return l["config"];
  }
  ADD_FAILURE() << "no layer " << name << " in " << model_json;
  return {};
}

TEST(KerasConfig, ImageResizingLayersReadAndWriteBackAsKerasWritesThem) {
  const struct {
    const char* cls;
    std::string cfg;
    Shape out;
  } kLayers[] = {
      {"Resizing",
       config("rz", R"("data_format": "channels_last", "height": 5, "width": 7, "interpolation": "bilinear", )"
                    R"("crop_to_aspect_ratio": false, "pad_to_aspect_ratio": false, "fill_mode": "constant", )"
                    R"("fill_value": 0.0, "antialias": false)"),
       Shape{5, 7, 3}},
      {"CenterCrop", config("cc", R"("data_format": "channels_last", "height": 4, "width": 4)"), Shape{4, 4, 3}},
      {"UpSampling2D", config("up", R"("size": [2, 3], "data_format": "channels_last", "interpolation": "bilinear")"),
       Shape{8, 12, 3}},
      {"Resizing",
       config("rz2", R"("data_format": "channels_last", "bounding_box_format": "xyxy", "height": 3, "width": 9, )"
                     R"("interpolation": "lanczos3", "crop_to_aspect_ratio": true, "pad_to_aspect_ratio": false, )"
                     R"("fill_mode": "constant", "fill_value": 0.0, "antialias": true)"),
       Shape{3, 9, 3}},
      // Channels first from here: (3, 9, 3) is 3 channels of 9 x 3, padded to 9 x 5 (the
      // target's aspect ratio); then a CenterCrop taller than its 6 x 4 input.
      {"Resizing",
       config("rz3", R"("data_format": "channels_first", "height": 6, "width": 4, "interpolation": "nearest", )"
                     R"("crop_to_aspect_ratio": false, "pad_to_aspect_ratio": true, "fill_mode": "constant", )"
                     R"("fill_value": -1.5, "antialias": false)"),
       Shape{3, 6, 4}},
      {"CenterCrop", config("cc2", R"("data_format": "channels_first", "height": 8, "width": 1)"), Shape{3, 8, 1}},
      {"UpSampling2D", config("up2", R"("size": [1, 2], "data_format": "channels_first", "interpolation": "area")"),
       Shape{3, 8, 2}},
  };
  std::string entries;
  for (const auto& l : kLayers) entries += (entries.empty() ? "" : ", ") + layer(l.cls, l.cfg);
  auto m = sequential_from_keras_json(keras3_model("[null, 6, 8, 3]", entries), "image.json");
  Shape s{6, 8, 3};
  for (std::size_t i = 0; i < std::size(kLayers); ++i) {
    s = m->layers()[i]->output_shape(s);
    EXPECT_EQ(s, kLayers[i].out) << m->layers()[i]->name();
  }
  const std::string written = model_to_keras_json(*m);
  for (const auto& l : kLayers) {
    const ojson want = ojson::parse(l.cfg);
    EXPECT_EQ(config_of(written, want["name"]), want) << l.cls;
  }
  const ResizingOptions& rz2 = dynamic_cast<const Resizing&>(*m->layers()[3]).options();
  EXPECT_EQ(rz2.interpolation, "lanczos3");
  EXPECT_TRUE(rz2.crop_to_aspect_ratio && rz2.antialias);
  EXPECT_EQ(rz2.bounding_box_format, "xyxy");
  EXPECT_DOUBLE_EQ(dynamic_cast<const Resizing&>(*m->layers()[4]).options().fill_value, -1.5);
  EXPECT_EQ(dynamic_cast<const UpSampling&>(*m->layers()[6]).options().interpolation, "area");
  // Every layer's graph builds and runs: the prediction has the last layer's shape.
  m->build();
  EXPECT_EQ(m->predict(Tensor::zeros(Shape{2, 6, 8, 3})).shape(), (Shape{2, 3, 8, 2}));
}

// tf.keras's Resizing takes height, width, interpolation and crop_to_aspect_ratio only, its
// CenterCrop height and width: written so when the layer fits, refused when it does not.
TEST(KerasConfig, ImageResizingLayersInKeras2Form) {
  auto m = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]",
                   layer("Resizing", R"({"name": "rz", "height": 4, "width": 5, "interpolation": "bicubic", "crop_to_aspect_ratio": true})") +
                       ", " + layer("CenterCrop", R"({"name": "cc", "height": 3, "width": 3})")),
      "k2.json");
  const std::string written = model_to_keras_json(*m, KerasFormat::keras2);
  EXPECT_EQ(config_of(written, "rz").dump(),
            R"({"name":"rz","trainable":true,"dtype":"float32","height":4,"width":5,"interpolation":"bicubic","crop_to_aspect_ratio":true})");
  EXPECT_EQ(config_of(written, "cc").dump(), R"({"name":"cc","trainable":true,"dtype":"float32","height":3,"width":3})");
  auto padded = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]", layer("Resizing", R"({"name": "rz", "height": 4, "width": 5, "pad_to_aspect_ratio": true})")),
      "pad.json");
  EXPECT_NE(error_of<Unsupported>([&] { model_to_keras_json(*padded, KerasFormat::keras2); })
                .find("rz: Resizing with pad_to_aspect_ratio is not written in Keras 2's format"),
            std::string::npos);
}

TEST(KerasConfigErrors, ImageResizingLayers) {
  const auto model = [](const std::string& cls, const std::string& cfg) {
    return keras3_model("[null, 6, 8, 3]", layer(cls, cfg));
  };
  expect_config_errors({
      {model("Resizing", R"({"name": "r", "height": 4, "width": 4, "interpolation": "gaussian"})"),
       "layers[1] (r): \"interpolation\" = \"gaussian\" is not supported (one of nearest, bilinear, bicubic, area, lanczos3, lanczos5)"},
      {model("Resizing", R"({"name": "r", "height": 4, "width": 4, "fill_mode": "reflect"})"),
       "layers[1] (r): \"fill_mode\" = \"reflect\" is not supported (only \"constant\", as in Keras)"},
      {model("Resizing", R"({"name": "r", "height": 4, "width": 4, "crop_to_aspect_ratio": true, "pad_to_aspect_ratio": true})"),
       "layers[1] (r): \"crop_to_aspect_ratio\" and \"pad_to_aspect_ratio\" cannot both be true"},
      {model("Resizing", R"({"name": "r", "height": 0, "width": 4})"),
       "layers[1] (r): \"height\" and \"width\" must be integers >= 1, got 0 and 4"},
      {model("Resizing", R"({"name": "r", "width": 4})"), "layers[1] (r): missing required key \"height\""},
      {model("Resizing", R"({"name": "r", "height": 4, "width": 4, "antialias": "yes"})"),
       "layers[1] (r): \"antialias\" must be true or false, got \"yes\""},
      {model("Resizing", R"({"name": "r", "height": 4, "width": 4, "size": [4, 4]})"), "unknown key \"size\""},
      {model("CenterCrop", R"({"name": "c", "height": 4, "width": -2})"),
       "layers[1] (c): \"height\" and \"width\" must be integers >= 1, got 4 and -2"},
      {model("CenterCrop", R"({"name": "c", "height": 4, "width": 4, "data_format": "nhwc"})"),
       "\"data_format\" must be \"channels_last\" or \"channels_first\", got \"nhwc\""},
      {keras3_model("[null, 8, 3]", layer("CenterCrop", R"({"name": "c", "height": 4, "width": 4})")),
       "layers[1] (c): CenterCrop expects 2 spatial axes and a channel axis, got (8, 3)"},
      {model("UpSampling2D", R"({"name": "u", "interpolation": "mitchellcubic"})"),
       "layers[1] (u): \"interpolation\" = \"mitchellcubic\" is not supported (one of nearest, bilinear"},
      {keras3_model("[null, 6, 3]", layer("UpSampling1D", R"({"name": "u", "interpolation": "bilinear"})")),
       "layers[1] (u): \"interpolation\" = \"bilinear\" is not supported (only \"nearest\")"},
  });
  EXPECT_NE(error_of<Unsupported>([&] {
              sequential_from_keras_json(model("Resizing", R"({"name": "r", "height": 4, "width": 4, "interpolation": "lanczos7"})"),
                                         "bad.json");
            }).find("\"lanczos7\""),
            std::string::npos);
}

// Keras 3.15 (TensorFlow backend) on x = (7 i mod 11) - 5, i = 0..19, as a 5 x 4 image.
TEST(KerasConfig, ImageResizingLayersPredictWhatKerasPredicts) {
  Tensor x = Tensor::zeros(Shape{1, 5, 4, 1});
  for (std::int64_t i = 0; i < 20; ++i) x.data<float>()[i] = static_cast<float>(i * 7 % 11 - 5);
  const struct {
    const char* cls;
    const char* cfg;
    Shape out;
    std::vector<float> want;
  } kCases[] = {
      {"Resizing", R"({"name": "l", "height": 3, "width": 5, "crop_to_aspect_ratio": true})", Shape{1, 3, 5, 1},
       {1, -1.8f, 0.5f, 2.8f, 0, -1.5f, -0.4499998f, 0.75f, 0.3000002f, -2.5f, -4, 0.9000006f, 1, -2.2f, -5}},
      {"Resizing", R"({"name": "l", "height": 3, "width": 5, "pad_to_aspect_ratio": true, "fill_value": 2.0})",
       Shape{1, 3, 5, 1},
       {2, -2.5f, 0.1666667f, 3.2f, 2, 2, -3.400001f, 1, -4.300001f, 2, 2, -0.9999995f, 1.833333f, -1.9f, 2}},
      {"CenterCrop", R"({"name": "l", "height": 6, "width": 3})", Shape{1, 6, 3, 1},
       {2, 0, -2, -1.75f, 0.375f, 2.5f, 0.4999995f, 0.7916666f, 1.083334f, 0.9166675f, 1.208333f, 1.499999f, -0.5f,
        1.625f, 3.75f, 4, 2, 0}},
      {"CenterCrop", R"({"name": "l", "height": 3, "width": 3})", Shape{1, 3, 3, 1}, {1, -3, 4, -4, 3, -1, 2, -2, 5}},
      {"UpSampling2D", R"({"name": "l", "size": [2, 1], "interpolation": "bilinear"})", Shape{1, 10, 4, 1},
       {-5,    2,     -2,    5,     -3.5f, 0.75f, -0.5f, 3.75f, -0.5f, -1.75f, 2.5f,  1.25f, -0.25f, -1.5f,
        2.75f, -1.25f, -2.75f, 1.5f, 0.25f, -3.75f, -2.5f, 1.75f, 0.5f, -3.5f, 0.5f,  -0.75f, 3.5f,  -0.5f,
        0.75f, -0.5f, 3.75f, -0.25f, -1.75f, 2.5f, 1.25f, -2.75f, -3,    4,     0,     -4}},
  };
  for (const auto& c : kCases) {
    auto m = sequential_from_keras_json(keras3_model("[null, 5, 4, 1]", layer(c.cls, c.cfg)), "predict.json");
    m->build();
    const Tensor y = m->predict(x);
    ASSERT_EQ(y.shape(), c.out) << c.cfg;
    for (std::size_t i = 0; i < c.want.size(); ++i) EXPECT_NEAR(y.data<float>()[i], c.want[i], 2e-6f) << c.cfg << " [" << i << "]";
  }
}

}  // namespace
}  // namespace nnfit
