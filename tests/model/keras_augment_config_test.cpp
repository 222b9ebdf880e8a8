// The Keras codecs of the random augmentation layers (src/model/keras/codecs/augmentation.cpp:
// RandomFlip, RandomTranslation, RandomRotation, RandomZoom, RandomShear, RandomContrast):
// Keras 3.15's configs (as its get_config() printed them) read and are written back key
// for key in Keras's order; bad factors, fill modes, interpolations and modes are refused
// naming the layer, the key and the value; tf.keras's forms are refused; and every layer
// is the identity at inference, as Keras's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/keras_config_helpers.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

using namespace keras_test;
using ojson = nlohmann::ordered_json;

std::string config(const std::string& name, const std::string& rest) {
  return R"({"name": ")" + name + R"(", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", )"
         R"("config": {"name": "float32"}, "registered_name": null}, "data_format": "channels_last", )" + rest + "}";
}

const struct {
  const char* cls;
  std::string cfg;
} kLayers[] = {
    {"RandomFlip", config("f1", R"("seed": null, "mode": "horizontal_and_vertical")")},
    {"RandomFlip", config("f2", R"("seed": 3, "mode": "vertical")")},
    {"RandomTranslation", config("t1", R"("height_factor": 0.2, "width_factor": [-0.1, 0.3], "fill_mode": "reflect", )"
                                       R"("interpolation": "bilinear", "seed": null, "fill_value": 0.0)")},
    {"RandomTranslation", config("t2", R"("height_factor": 0.1, "width_factor": 0.1, "fill_mode": "wrap", )"
                                       R"("interpolation": "nearest", "seed": 5, "fill_value": 1.5)")},
    {"RandomRotation", config("r1", R"("factor": [-0.2, 0.2], "fill_mode": "reflect", "fill_value": 0.0, )"
                                    R"("interpolation": "bilinear", "seed": null)")},
    {"RandomRotation", config("r2", R"("factor": [-0.1, 0.3], "fill_mode": "constant", "fill_value": 0.0, )"
                                    R"("interpolation": "bilinear", "seed": 2)")},
    {"RandomZoom", config("z1", R"("height_factor": 0.2, "width_factor": null, "fill_mode": "reflect", )"
                                R"("interpolation": "bilinear", "seed": null, "fill_value": 0.0)")},
    {"RandomZoom", config("z2", R"("height_factor": [-0.3, 0.1], "width_factor": 0.2, "fill_mode": "nearest", )"
                                R"("interpolation": "bilinear", "seed": null, "fill_value": 0.0)")},
    {"RandomContrast", config("c1", R"("factor": [0, 0.3], "value_range": [0, 255], "seed": null)")},
    {"RandomContrast", config("c2", R"("factor": [0.2, 0.5], "value_range": [-1, 1], "seed": 4)")},
    {"RandomShear", config("s1", R"("x_factor": [-0.2, 0.2], "y_factor": [-0.0, 0.0], "fill_mode": "reflect", )"
                                 R"("interpolation": "bilinear", "seed": null, "fill_value": 0.0)")},
    {"RandomShear", config("s2", R"("x_factor": [0.1, 0.3], "y_factor": [-0.5, 0.5], "fill_mode": "constant", )"
                                 R"("interpolation": "nearest", "seed": 7, "fill_value": 2.0)")},
};

ojson config_of(const std::string& model_json, const std::string& name) {
  const ojson model = ojson::parse(model_json);  // kept: the loop reads into it
  for (const ojson& l : model["config"]["layers"]) {
    if (l["config"].value("name", "") == name) return l["config"];
  }
  ADD_FAILURE() << "no layer " << name << " in " << model_json;
  return {};
}

std::string model_of_all() {
  std::string entries;
  for (const auto& l : kLayers) entries += (entries.empty() ? "" : ", ") + layer(l.cls, l.cfg);
  return keras3_model("[null, 6, 8, 3]", entries);
}

TEST(KerasConfig, AugmentationLayersReadAndWriteBackAsKerasWritesThem) {
  auto m = sequential_from_keras_json(model_of_all(), "augment.json");
  ASSERT_EQ(m->layers().size(), std::size(kLayers));
  const std::string written = model_to_keras_json(*m);
  for (const auto& l : kLayers) {
    const ojson want = ojson::parse(l.cfg);
    EXPECT_EQ(config_of(written, want["name"]), want) << l.cls;
  }
  const auto& t1 = dynamic_cast<const RandomAffine&>(*m->layers()[2]);
  EXPECT_EQ(RandomAffine::factor_range(t1.options().width_factor), (std::pair<double, double>{-0.1, 0.3}));
  EXPECT_EQ(RandomAffine::factor_range(t1.options().height_factor), (std::pair<double, double>{-0.2, 0.2}));
  const auto& c1 = dynamic_cast<const RandomContrast&>(*m->layers()[8]);
  EXPECT_EQ(c1.options().lower, 0.0);
  EXPECT_EQ(c1.options().upper, 0.3);
  EXPECT_EQ(dynamic_cast<const RandomFlip&>(*m->layers()[1]).options().seed, std::optional<std::int64_t>(3));
  // A single number reads as Keras reads it: RandomRotation writes back its range.
  auto r = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]", layer("RandomRotation", config("r", R"("factor": 0.25)"))), "r.json");
  EXPECT_EQ(config_of(model_to_keras_json(*r), "r")["factor"], ojson::parse("[-0.25, 0.25]"));
  auto c = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]", layer("RandomContrast", config("c", R"("factor": 0.4)"))), "c.json");
  EXPECT_EQ(config_of(model_to_keras_json(*c), "c")["factor"], ojson::parse("[0, 0.4]"));
  auto s = sequential_from_keras_json(
      keras3_model("[null, 6, 8, 3]", layer("RandomShear", config("s", R"("x_factor": 0.25)"))), "s.json");
  // RandomShear keeps a number as given (Keras's (-f, f) is refused by Keras's own reader).
  EXPECT_EQ(config_of(model_to_keras_json(*s), "s")["x_factor"], ojson::parse("0.25"));
  EXPECT_EQ(config_of(model_to_keras_json(*s), "s")["y_factor"], ojson::parse("0.0"));
  const auto& shear = dynamic_cast<const RandomAffine&>(*s->layers()[0]);
  EXPECT_EQ(RandomAffine::factor_range(shear.options().width_factor), (std::pair<double, double>{-0.25, 0.25}));
}

TEST(KerasConfig, AugmentationLayersAreTheIdentityAtInference) {
  auto m = sequential_from_keras_json(model_of_all(), "augment.json");
  m->build();
  Tensor x = Tensor::zeros(Shape{2, 6, 8, 3});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 13) * 0.5f;
  const Tensor y = m->predict(x);
  ASSERT_EQ(y.shape(), x.shape());
  for (std::int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(y.data<float>()[i], x.data<float>()[i]) << i;
}

std::string one(const char* cls, const std::string& rest) {
  return keras3_model("[null, 6, 8, 3]", layer(cls, config("a", rest)));
}

TEST(KerasConfig, AugmentationLayersRefuseBadValuesNamingKeyAndValue) {
  expect_config_errors({
      {one("RandomFlip", R"("mode": "diagonal")"),
       "layers[1] (a): \"mode\" = \"diagonal\" is not one of horizontal, vertical, horizontal_and_vertical"},
      {one("RandomTranslation", R"("height_factor": 1.5, "width_factor": 0.1)"),
       "layers[1] (a): height_factor = 1.5 is outside [-1, 1]"},
      {one("RandomTranslation", R"("height_factor": 0.1)"), "layers[1] (a): missing required key \"width_factor\""},
      {one("RandomTranslation", R"("height_factor": [0.1, 0.2, 0.3], "width_factor": 0.1)"),
       "\"height_factor\" must be a number or a list of two numbers, got [0.1,0.2,0.3]"},
      {one("RandomZoom", R"("height_factor": -1.0)"), "layers[1] (a): height_factor = -1 is outside (-1, 1]"},
      {one("RandomZoom", R"("height_factor": 0.2, "fill_mode": "mirror")"),
       "layers[1] (a): \"fill_mode\" = \"mirror\" is not one of reflect, wrap, constant, nearest"},
      {one("RandomRotation", R"("factor": 0.2, "interpolation": "bicubic")"),
       "layers[1] (a): \"interpolation\" = \"bicubic\" is not one of bilinear, nearest"},
      {one("RandomRotation", R"("factor": [1.5, 2.0])"), "layers[1] (a): factor = [1.5, 2] is outside [-1, 1]"},
      {one("RandomContrast", R"("factor": 1.5)"), "layers[1] (a): \"factor\" = 1.5 is outside [0, 1]"},
      {one("RandomContrast", R"("factor": [0.5, -0.2])"), "\"factor\" = [0.5,-0.2] is outside [0, 1]"},
      {one("RandomContrast", R"("factor": 0.2, "value_range": [1, 0])"),
       "\"value_range\" must be two numbers [lower, upper], got [1,0]"},
      {one("RandomFlip", R"("mode": "vertical", "factor": 0.1)"), "unknown key \"factor\""},
      {one("RandomShear", R"("x_factor": 1.5)"), "layers[1] (a): x_factor = 1.5 is outside [0, 1]"},
      {one("RandomShear", R"("y_factor": [-1.5, 0.2])"), "layers[1] (a): y_factor = [-1.5, 0.2] is outside [-1, 1]"},
  });
  EXPECT_NE(error_of<Unsupported>([] {
              sequential_from_keras_json(
                  keras3_model("[null, 6, 8, 3]",
                               layer("RandomFlip", R"({"name": "a", "data_format": "channels_first", "mode": "vertical"})")),
                  "bad.json");
            }).find("channels_first"),
            std::string::npos);
}

}  // namespace
}  // namespace nnfit
