// The element-wise augmentation layers, MixUp and CutMix (ImageAugmentation,
// src/model/keras/codecs/image_augmentation.cpp):
// Keras 3.15's configs (as its get_config() printed them) read and written back key for
// key; single factors read as Keras's constructors read them; bad values refused naming
// the layer and key; the random ones the identity at inference, AutoContrast's stretch in
// both modes; and training outputs with a one-value range computed as Keras's formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/keras_config_helpers.h"
#include "nnfit/model/fit_options.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

using namespace keras_test;
using ojson = nlohmann::ordered_json;

std::string config(const std::string& name, const std::string& rest) {
  return R"({"name": ")" + name +
         R"(", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", )"
         R"("config": {"name": "float32"}, "registered_name": null}, "data_format": "channels_last", )" +
         rest + "}";
}

// As Keras 3.15 writes them (get_config of the layers built with the arguments in comments).
const struct {
  const char* cls;
  std::string cfg;
} kLayers[] = {
    {"RandomBrightness", config("b", R"("factor": [-0.2, 0.2], "value_range": [0, 1], "seed": 3)")},
    {"RandomGrayscale", config("g", R"("factor": 0.3)")},
    {"RandomInvert", config("i", R"("factor": [0, 0.4], "value_range": [1, 0], "seed": null)")},
    {"Solarization", config("s", R"("value_range": [0, 255], "addition_factor": [0, 0.2], )"
                                 R"("threshold_factor": [0.1, 0.6], "seed": 1)")},
    {"RandomPosterization", config("p", R"("factor": [1, 5], "value_range": [0, 255], "seed": null)")},
    {"AutoContrast", config("a", R"("value_range": [0, 1])")},
    {"RandomErasing", config("e", R"("factor": [0, 0.5], "scale": [0, 0.2], "fill_value": [1, 2, 3], )"
                                  R"("value_range": [0, 255], "seed": null)")},
    {"RandomColorDegeneration", config("c", R"("factor": [-0.2, 0.6], "value_range": [0, 255], "seed": null)")},
    {"RandomSharpness", config("h", R"("factor": [0, 0.7], "value_range": [0, 255], "seed": null)")},
    {"MaxNumBoundingBoxes", config("m", R"("max_number": 5)")},
    {"MixUp", config("x", R"("alpha": 0.4, "seed": 5)")},
    {"CutMix", config("u", R"("factor": [0, 0.6], "seed": null)")},
    {"Equalization", config("q", R"("bins": 64, "value_range": [0, 1])")},
};

ojson config_of(const std::string& model_json, const std::string& name) {
  const ojson model = ojson::parse(model_json);
  for (const ojson& l : model["config"]["layers"]) {
    if (l["config"].value("name", "") == name) return l["config"];
  }
  ADD_FAILURE() << "no layer " << name << " in " << model_json;
  return {};
}

std::string one(const char* cls, const std::string& rest) {
  return keras3_model("[null, 4, 5, 3]", layer(cls, config("a", rest)));
}

Tensor image(float scale) {
  Tensor x = Tensor::zeros(Shape{2, 4, 5, 3});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 37) % 101) * scale;
  return x;
}

Tensor run(const std::string& model_json, const Tensor& x, bool training) {
  auto m = sequential_from_keras_json(model_json, "m.json");
  m->build();
  InferenceOptions o;
  o.training = training;
  return m->predict(x, o);
}

TEST(KerasImageAugmentation, ConfigsReadAndWriteBackAsKerasWritesThem) {
  std::string entries;
  for (const auto& l : kLayers) entries += (entries.empty() ? "" : ", ") + layer(l.cls, l.cfg);
  auto m = sequential_from_keras_json(keras3_model("[null, 6, 8, 3]", entries), "every.json");
  ASSERT_EQ(m->layers().size(), std::size(kLayers));
  const std::string written = model_to_keras_json(*m);
  for (const auto& l : kLayers) {
    const ojson want = ojson::parse(l.cfg);
    EXPECT_EQ(config_of(written, want["name"]), want) << l.cls;
  }
}

TEST(KerasImageAugmentation, SingleFactorsReadAsKerasConstructorsReadThem) {
  const struct {
    const char* cls;
    const char* rest;
    const char* key;
    const char* want;
  } cases[] = {
      {"RandomBrightness", R"("factor": 0.2, "value_range": [255, 0])", "factor", "[-0.2, 0.2]"},
      {"RandomBrightness", R"("factor": 0.2, "value_range": [255, 0])", "value_range", "[0, 255]"},
      {"RandomColorDegeneration", R"("factor": 0.5)", "factor", "[-0.5, 0.5]"},
      {"RandomInvert", R"("value_range": [1, 0])", "factor", "[0, 1.0]"},
      {"RandomInvert", R"("value_range": [1, 0])", "value_range", "[1, 0]"},
      {"RandomSharpness", R"("factor": 0.7)", "factor", "[0, 0.7]"},
      {"RandomPosterization", R"("factor": 4)", "factor", "[1, 4]"},
      {"Solarization", R"("addition_factor": 0.3)", "addition_factor", "[0, 0.3]"},
      {"Solarization", R"("addition_factor": 0.3)", "threshold_factor", "[0, 0.0]"},
      {"RandomErasing", R"("scale": 0.2)", "scale", "[0, 0.2]"},
      {"RandomErasing", R"("scale": 0.2)", "fill_value", "null"},
      {"MixUp", R"("seed": 2)", "alpha", "0.2"},
      {"CutMix", R"("seed": 2)", "factor", "[0, 1.0]"},
      {"AutoContrast", R"("value_range": [1, 0])", "value_range", "[0, 1]"},
  };
  for (const auto& c : cases) {
    const std::string written = model_to_keras_json(*sequential_from_keras_json(one(c.cls, c.rest), "a.json"));
    EXPECT_EQ(config_of(written, "a")[c.key], ojson::parse(c.want)) << c.cls << " " << c.rest;
  }
}

TEST(KerasImageAugmentation, RefuseBadValuesNamingKeyAndValue) {
  expect_config_errors({
      {one("RandomBrightness", R"("factor": 1.5)"),
       "layers[1] (a): \"factor\" = 1.5 must be a number or two numbers in [-1, 1]"},
      {one("RandomBrightness", R"("value_range": [0, 1])"), "missing required key \"factor\""},
      {one("RandomBrightness", R"("factor": 0.1, "value_range": [0, 1, 2])"),
       "\"value_range\" must be a list of two numbers"},
      {one("RandomInvert", R"("factor": [1.5, 2])"), "\"factor\" = [1.5,2] must be a number or two numbers in [0, 1]"},
      {one("RandomPosterization", R"("factor": 9)"), "\"factor\" = 9 must be a number or two numbers in [1, 8]"},
      {one("RandomPosterization", R"("factor": 2.5)"), "must be whole numbers of bits"},
      {one("Solarization", R"("threshold_factor": [0.2, 1.5])"), "\"threshold_factor\" = [0.2,1.5] must be a number"},
      {one("RandomGrayscale", R"("factor": 2)"), "\"factor\" = 2 must lie in [0, 1]"},
      {one("RandomErasing", R"("fill_value": [1, 2])"),
       "\"fill_value\" must be null, a number or a list of three numbers"},
      {one("MaxNumBoundingBoxes", "\"fill_value\": 0"), "missing required key \"max_number\""},
      {one("AutoContrast", R"("value_range": [2, 2])"), "value_range (2, 2) is empty"},
      {one("RandomSharpness", R"("factor": 0.1, "mode": "x")"), "unknown key \"mode\""},
      {one("MixUp", R"("alpha": 0)"), "\"alpha\" = 0 must be above 0"},
      {one("CutMix", R"("factor": -0.5)"), "\"factor\" = -0.5 must be a number or two numbers in [0, 1]"},
  });
  EXPECT_NE(error_of<InvalidArgument>([] {
              sequential_from_keras_json(
                  keras3_model("[null, 4, 5, 2]", layer("RandomColorDegeneration", config("a", R"("factor": 0.1)"))),
                  "rgb.json");
            }).find("takes RGB images (3 channels)"),
            std::string::npos);
}

TEST(KerasImageAugmentation, RandomLayersAreTheIdentityAtInference) {
  const Tensor x = image(2.5f);
  for (const auto& l : kLayers) {
    if (std::string(l.cls) == "AutoContrast") continue;
    const Tensor y = run(keras3_model("[null, 4, 5, 3]", layer(l.cls, l.cfg)), x, false);
    ASSERT_EQ(y.shape(), x.shape()) << l.cls;
    for (std::int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(y.data<float>()[i], x.data<float>()[i]) << l.cls << " " << i;
  }
}

// AutoContrast: each image's channel stretched to [0, 255] in training and inference alike.
TEST(KerasImageAugmentation, AutoContrastStretchesEachChannelInBothModes) {
  const Tensor x = image(1.0f);
  for (bool training : {false, true}) {
    const Tensor y = run(one("AutoContrast", R"("value_range": [0, 255])"), x, training);
    for (std::int64_t n = 0; n < 2; ++n) {
      for (std::int64_t c = 0; c < 3; ++c) {
        float lo = 1e9f, hi = -1e9f;
        for (std::int64_t p = 0; p < 20; ++p) {
          const float v = x.data<float>()[(n * 20 + p) * 3 + c];
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        for (std::int64_t p = 0; p < 20; ++p) {
          const std::int64_t i = (n * 20 + p) * 3 + c;
          EXPECT_NEAR(y.data<float>()[i], (x.data<float>()[i] - lo) * 255.0f / (hi - lo), 1e-3) << training << " " << i;
        }
      }
    }
  }
}

TEST(KerasImageAugmentation, OneValueRangesTrainAsKerasFormulas) {
  const Tensor x = image(2.5f);  // values in [0, 250]
  const float* xs = x.data<float>();
  const Tensor b = run(one("RandomBrightness", R"("factor": [0.1, 0.1])"), x, true);
  const Tensor inv = run(one("RandomInvert", R"("factor": [1.0, 1.0])"), x, true);
  const Tensor sol = run(one("Solarization", R"("addition_factor": 0, "threshold_factor": 0)"), x, true);
  const Tensor post = run(one("RandomPosterization", R"("factor": [3, 3])"), x, true);
  const Tensor gray = run(one("RandomGrayscale", R"("factor": 1.0)"), x, true);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_FLOAT_EQ(b.data<float>()[i], std::min(xs[i] + 0.1f * 255.0f, 255.0f)) << i;
    EXPECT_FLOAT_EQ(inv.data<float>()[i], 255.0f - xs[i]) << i;
    EXPECT_FLOAT_EQ(sol.data<float>()[i], 255.0f - xs[i]) << i;
    EXPECT_FLOAT_EQ(post.data<float>()[i], std::floor(std::trunc(xs[i]) / 32.0f) * 32.0f) << i;
    const std::int64_t p = i / 3 * 3;
    EXPECT_NEAR(gray.data<float>()[i], xs[p] * 0.2989f + xs[p + 1] * 0.587f + xs[p + 2] * 0.114f, 1e-3) << i;
  }
}

// Equalization: Keras's histogram equalization of each channel over the whole batch,
// against a plain reference of Keras's _equalize_channel (bins 256, value_range (0, 255)).
TEST(KerasImageAugmentation, EqualizationMapsEachChannelThroughItsBatchHistogram) {
  const Tensor x = image(2.5f);  // values (i·37 mod 101)·2.5 in [0, 250]
  const Tensor y = run(one("Equalization", R"("bins": 256, "value_range": [0, 255])"), x, true);
  const std::int64_t pixels = 2 * 4 * 5;
  for (std::int64_t c = 0; c < 3; ++c) {
    std::vector<double> hist(256, 0.0);
    for (std::int64_t p = 0; p < pixels; ++p) {
      const float v = x.data<float>()[p * 3 + c];
      hist[static_cast<std::size_t>(std::clamp(static_cast<int>(v * 255.0f / 255.0f), 0, 255))] += 1.0;
    }
    std::vector<double> cdf(256);
    double run_sum = 0.0, cdf_min = 0.0;
    for (int b = 0; b < 256; ++b) {
      run_sum += hist[static_cast<std::size_t>(b)];
      cdf[static_cast<std::size_t>(b)] = run_sum;
      if (cdf_min == 0.0 && run_sum > 0.0) cdf_min = run_sum;
    }
    const double denominator = cdf[255] - cdf_min == 0.0 ? 1.0 : cdf[255] - cdf_min;
    for (std::int64_t p = 0; p < pixels; ++p) {
      const float v = x.data<float>()[p * 3 + c];
      const int b = static_cast<int>(std::clamp(v / 255.0f * 255.0f, 0.0f, 255.0f));
      const double want =
          std::clamp(std::nearbyint((cdf[static_cast<std::size_t>(b)] - cdf_min) * 255.0 / denominator), 0.0, 255.0);
      ASSERT_NEAR(y.data<float>()[p * 3 + c], want, 1e-3) << c << " " << p;
    }
  }
}

// RandomCrop: one window for the whole batch in training; at inference Keras's fixed window
// (nnfit's choice: Keras 3.15 returns the input uncropped), here rows 0-1 and columns 0-2.
TEST(KerasImageAugmentation, RandomCropTrainsOnOneWindowPerBatchAndPredictsTheFixedOne) {
  const std::string cfg = config("rc", R"("height": 2, "width": 3, "seed": 4)");
  const std::string model = keras3_model("[null, 4, 5, 3]", layer("RandomCrop", cfg));
  EXPECT_EQ(config_of(model_to_keras_json(*sequential_from_keras_json(model, "rc.json")), "rc"), ojson::parse(cfg));
  const Tensor x = image(1.0f);
  const auto window = [&](const Tensor& y, std::int64_t top, std::int64_t left) {
    for (std::int64_t n = 0; n < 2; ++n) {
      for (std::int64_t r = 0; r < 2; ++r) {
        for (std::int64_t c = 0; c < 3; ++c) {
          for (std::int64_t k = 0; k < 3; ++k) {
            if (y.data<float>()[((n * 2 + r) * 3 + c) * 3 + k] !=
                x.data<float>()[((n * 4 + top + r) * 5 + left + c) * 3 + k]) {
              return false;
            }
          }
        }
      }
    }
    return true;
  };
  const Tensor predicted = run(model, x, false);
  ASSERT_EQ(predicted.shape(), (Shape{2, 2, 3, 3}));
  EXPECT_TRUE(window(predicted, 0, 0));
  const Tensor trained = run(model, x, true);
  ASSERT_EQ(trained.shape(), (Shape{2, 2, 3, 3}));
  int windows = 0;
  for (std::int64_t top = 0; top <= 2; ++top) {
    for (std::int64_t left = 0; left <= 2; ++left) windows += window(trained, top, left) ? 1 : 0;
  }
  EXPECT_EQ(windows, 1);
  expect_config_errors({{keras3_model("[null, 4, 5, 3]", layer("RandomCrop", config("a", R"("height": 2)"))),
                         "layers[1] (a): missing required key \"width\""}});
}

}  // namespace
}  // namespace nnfit
