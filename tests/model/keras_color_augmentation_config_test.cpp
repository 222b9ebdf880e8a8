// The Keras codecs of the colour augmentation layers (src/model/keras/codecs/color_augmentation.cpp):
// Keras 3.15's configs (as its get_config() printed them) read and are written back key for
// key; a single factor reads as Keras's _set_factor reads it; bad factors, kernel sizes and
// value ranges are refused naming the layer, the key and the value; channels_first and
// tf.keras files are refused; and every layer is the identity at inference, as Keras's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/keras_config_helpers.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/color_augmentation_layers.h"

namespace nnfit {
namespace {

using namespace keras_test;
using ojson = nlohmann::ordered_json;

std::string color_config(const std::string& name, const std::string& rest) {
  return R"({"name": ")" + name + R"(", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", )"
         R"("config": {"name": "float32"}, "registered_name": null}, "data_format": "channels_last", )" + rest + "}";
}

const struct {
  const char* cls;
  std::string cfg;
} kColorLayers[] = {
    {"RandomHue", color_config("h", R"("factor": [0.0, 0.3], "value_range": [0.0, 255.0], "seed": null)")},
    {"RandomSaturation", color_config("s", R"("factor": [-0.4, 0.4], "value_range": [0.0, 1.0], "seed": 3)")},
    {"RandomColorJitter", color_config("j", R"("value_range": [0.0, 1.0], "brightness_factor": 0.2, "contrast_factor": 0.3, )"
                                            R"("saturation_factor": [0.4, 0.6], "hue_factor": 0.1, "seed": 3)")},
    {"RandomColorJitter", color_config("k", R"("value_range": [0.0, 255.0], "brightness_factor": null, )"
                                            R"("contrast_factor": null, "saturation_factor": null, "hue_factor": null, "seed": null)")},
    {"RandomGaussianBlur", color_config("g", R"("factor": [0.0, 0.5], "kernel_size": [5, 3], "sigma": [0.5, 2.0], )"
                                             R"("value_range": [0.0, 255.0], "seed": null)")},
};

ojson color_config_of(const std::string& model_json, const std::string& name) {
  const ojson model = ojson::parse(model_json);
  for (const ojson& l : model["config"]["layers"]) {
    if (l["config"].value("name", "") == name) return l["config"];
  }
  ADD_FAILURE() << "no layer " << name << " in " << model_json;
  return {};
}

std::string color_model() {
  std::string entries;
  for (const auto& l : kColorLayers) entries += (entries.empty() ? "" : ", ") + layer(l.cls, l.cfg);
  return keras3_model("[null, 6, 8, 3]", entries);
}

TEST(KerasConfig, ColorAugmentationLayersReadAndWriteBackAsKerasWritesThem) {
  auto m = sequential_from_keras_json(color_model(), "color.json");
  ASSERT_EQ(m->layers().size(), std::size(kColorLayers));
  const std::string written = model_to_keras_json(*m);
  for (const auto& l : kColorLayers) {
    const ojson want = ojson::parse(l.cfg);
    EXPECT_EQ(color_config_of(written, want["name"]), want) << l.cls;
  }
  const auto& g = dynamic_cast<const ColorAugmentation&>(*m->layers()[4]);
  EXPECT_EQ(g.options().kernel_h, 5);
  EXPECT_EQ(g.options().kernel_w, 3);
  // A single number reads as Keras reads it: (0, f) for RandomHue, (-f, f) for RandomSaturation.
  auto h = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]", layer("RandomHue", color_config("h", R"("factor": 0.25)"))), "h.json");
  EXPECT_EQ(color_config_of(model_to_keras_json(*h), "h")["factor"], ojson::parse("[0.0, 0.25]"));
  auto s = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]", layer("RandomSaturation", color_config("s", R"("factor": 0.25)"))), "s.json");
  EXPECT_EQ(color_config_of(model_to_keras_json(*s), "s")["factor"], ojson::parse("[-0.25, 0.25]"));
}

TEST(KerasConfig, ColorAugmentationLayersAreTheIdentityAtInference) {
  auto m = sequential_from_keras_json(color_model(), "color.json");
  m->build();
  Tensor x = Tensor::zeros(Shape{2, 6, 8, 3});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 13) * 0.5f;
  const Tensor y = m->predict(x);
  ASSERT_EQ(y.shape(), x.shape());
  for (std::int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(y.data<float>()[i], x.data<float>()[i]) << i;
}

std::string one_color(const char* cls, const std::string& rest) {
  return keras3_model("[null, 6, 8, 3]", layer(cls, color_config("a", rest)));
}

TEST(KerasConfig, ColorAugmentationLayersRefuseBadValuesNamingKeyAndValue) {
  expect_config_errors({
      {one_color("RandomHue", R"("factor": 1.5)"), "layers[1] (a): \"factor\" = 1.5 is outside [0.0, 1.0]"},
      {one_color("RandomHue", R"("factor": -0.2)"), "\"factor\" = -0.2 is outside [0.0, 1.0]"},
      {one_color("RandomSaturation", R"("factor": [1.5, 2.0])"), "\"factor\" = [1.5,2.0] is outside [-1.0, 1.0]"},
      {one_color("RandomSaturation", R"("factor": "high")"), "\"factor\" must be a number or a list of two numbers"},
      {one_color("RandomHue", R"("value_range": [0, 1, 2], "factor": 0.1)"), "\"value_range\" must be two numbers"},
      {one_color("RandomGaussianBlur", R"("factor": 0.5, "kernel_size": [4, 3], "sigma": 1.0)"),
       "\"kernel_size\" = [4,3] must be odd positive integers"},
      {one_color("RandomGaussianBlur", R"("factor": 0.5, "kernel_size": 3, "sigma": 1.5)"),
       "\"sigma\" = 1.5 is outside [0.0, 1.0]"},
      {one_color("RandomColorJitter", R"("hue_factor": [0.1])"), "\"hue_factor\" must be a number or a list of two"},
      {one_color("RandomHue", R"("factor": 0.1, "fill_mode": "wrap")"), "unknown key \"fill_mode\""},
      {one_color("RandomHue", R"("value_range": [0, 255])"), "missing required key \"factor\""},
  });
  EXPECT_NE(error_of<Unsupported>([] {
              sequential_from_keras_json(
                  keras3_model("[null, 6, 8, 3]",
                               layer("RandomHue", R"({"name": "a", "data_format": "channels_first", "factor": 0.1})")),
                  "bad.json");
            }).find("channels_first"),
            std::string::npos);
  EXPECT_NE(error_of<InvalidArgument>([] {
              sequential_from_keras_json(keras3_model("[null, 6, 8, 4]", layer("RandomHue", color_config("a", R"("factor": 0.1)"))),
                                         "four.json")->build();
            }).find("3 channels"),
            std::string::npos);
}

}  // namespace
}  // namespace nnfit
