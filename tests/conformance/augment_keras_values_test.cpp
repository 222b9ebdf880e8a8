// The augmentation kernels against numbers Keras 3.15 printed (TensorFlow 2.21 backend):
// keras.ops.image.affine_transform (ImageProjectiveTransformV3) of a 4 x 5 image under one
// projective transform, for every fill mode and interpolation; the transforms Keras's
// RandomRotation, RandomZoom and RandomTranslation build; RandomContrast's adjustment at
// fixed factors; RandomFlip's flips. Produced in the Keras venv (scripts/keras_venv.sh) by
// calling keras.ops.image.affine_transform(x, T, interpolation, fill_mode, fill_value=0.5),
// RandomRotation()._compute_affine_matrix(0.5, 0.5, [30], ..., 4, 5),
// RandomZoom()._get_zoom_matrix([[1.3, 0.8]], 4, 5),
// RandomTranslation()._get_translation_matrix([[1.5, -0.8]]),
// RandomContrast([0.3, 0.4], value_range=(-1, 1)).transform_images(xc, {"contrast_factor":
// [0.7, 1.4]}) and RandomFlip(mode)._flip_inputs(x, {"flips": [True, False]}), each
// printed with "%.8g". x[i] = (i * 37 % 17) / 4 - 2 and xc[i] = (i * 29 % 13) / 6 - 1.
#include <gtest/gtest.h>

#include <cstring>

#include "backend/common/augment.h"
#include "conformance/harness.h"

namespace nnfit {
namespace {

Tensor image(const Shape& shape, double mul, double mod, double div, double sub) {
  Tensor t = Tensor::zeros(shape, DType::f32);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    t.data<float>()[i] = static_cast<float>(static_cast<double>(i * static_cast<std::int64_t>(mul) % static_cast<std::int64_t>(mod)) / div - sub);
  }
  return t;
}

std::vector<Tensor> run_ref(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs,
                            std::vector<TensorDesc> outputs) {
  KernelDesc desc{op, std::move(attrs), {}, std::move(outputs), "keras_values/" + op};
  for (const Tensor& t : inputs) desc.inputs.push_back(t.desc());
  std::string why;
  auto k = kernel_registry().create("ref:" + op, desc, DeviceType::cpu, &why);
  EXPECT_NE(k, nullptr) << why;
  if (!k) return {};
  return testing::run_kernel(*k, desc, inputs, StepContext{});
}

void expect_values(const float* got, const std::vector<float>& want, float tol, const std::string& what) {
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

TEST(AugmentKerasValues, AffineTransformEveryFillModeAndInterpolation) {
  const Tensor x = image(Shape{1, 4, 5, 1}, 37, 17, 4.0, 2.0);
  Tensor t = Tensor::zeros(Shape{1, 8}, DType::f32);
  const float transform[8] = {2.3f, 0.4f, -3.1f, -0.5f, 1.9f, -2.6f, 0.01f, -0.02f};
  std::memcpy(t.raw(), transform, sizeof transform);
  const struct {
    const char* fill;
    const char* interpolation;
    std::vector<float> want;
  } kCases[] = {
      {"reflect", "bilinear", {-1.225, 1.2153466, 0.088235371, -0.72330099, -1.1490384, -0.68367374, -1.2045457, -0.92499989, 0.41089118, -0.8529408, -0.93619764, 0.7061857, -0.34183672, 1, -0.42500007, 1.4255323, 1.1973685, -0.98437464, 0.059278734, -1.1643068}},
      {"reflect", "nearest", {-1.5, 1.25, 1.5, -0.5, -1.25, -0.5, -2, -1, 0.5, -0.75, -1.75, 1.75, -0.5, 1, -0.5, 1.5, 0.75, -0.75, 0, -1}},
      {"wrap", "bilinear", {-1.1050001, -0.5, -0.14705873, -0.73300976, 1.3990384, -1.8163263, -0.3939395, -1.3000004, 1.3391087, -0.70588183, -0.671875, 0.7061857, -0.34183672, 0.75, -1.6500003, 0.23404264, 1.1973685, -0.98437464, 1.3108729, -0.72448993}},
      {"wrap", "nearest", {-1, -0.5, 1.5, -0.5, 1.5, -2, -0.5, -1.5, 1.25, -1.75, -0.25, 1.75, -0.5, 0.75, -2, 0.25, 0.75, -0.75, 1.25, -1}},
      {"constant", "bilinear", {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.7061857, -0.34183672, 0.62320185, 0.5, 0.5, 1.1973685, -0.98437464, 0.5, 0.5}},
      {"constant", "nearest", {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.75, -0.5, 0.5, 0.5, 0.5, 0.75, -0.75, 0.5, 0.5}},
      {"nearest", "bilinear", {-2, -2, -0.89705884, 0.76699024, 1, -2, -2, -0.57499993, 1, 1, 1.6249999, 0.7061857, -0.34183672, 1, 1, 0.75, 1.1973685, -0.98437464, 0.1752578, 0.4387756}},
      {"nearest", "nearest", {-2, -2, -1.25, 1, 1, -2, -2, -0.5, 1, 1, 1.75, 1.75, -0.5, 1, 1, 0.75, 0.75, -0.75, 0, 0.5}},
  };
  for (const auto& c : kCases) {
    const Attrs a{{"fill_mode", std::string(c.fill)}, {"interpolation", std::string(c.interpolation)}, {"fill_value", 0.5}};
    const std::vector<Tensor> y = run_ref("affine_transform", a, {x, t}, {x.desc()});
    ASSERT_GE(y.size(), 1u);  // outputs, then the inputs
    expect_values(y[0].data<float>(), c.want, 2e-6f, std::string(c.fill) + " " + c.interpolation);
  }
}

TEST(AugmentKerasValues, TransformsAsKerasLayersBuildThem) {
  float t[8];
  rotation_transform(30.0f, 4, 5, t);
  expect_values(t, {0.86602539, -0.5, 1.0179492, 0.5, 0.86602539, -0.79903805, 0, 0}, 1e-6f, "rotation 30 degrees");
  zoom_transform(1.3f, 0.8f, 4, 5, t);
  expect_values(t, {1.3, 0, -0.5999999, 0, 0.80000001, 0.29999998, 0, 0}, 1e-6f, "zoom (1.3, 0.8)");
  translation_transform(1.5f, -0.8f, t);
  expect_values(t, {1, 0, -1.5, 0, 1, 0.80000001, 0, 0}, 1e-6f, "translation (1.5, -0.8)");
}

TEST(AugmentKerasValues, ContrastAtFixedFactors) {
  const Tensor xc = image(Shape{2, 3, 3, 2}, 29, 13, 6.0, 1.0);
  const std::vector<float> want = {-0.66666669, -0.38333333, 0.033333331, 0.31666666, 0.73333335, -0.5, -0.083333343, 0.20000002, 0.61666662, -0.61666662, -0.20000002, 0.083333343, 0.5, -0.73333335, -0.31666666, -0.033333331, 0.38333333, 0.66666669, -0.91851854, -0.22592592, 0.48148149, 1, -1, -0.45925927, 0.24814816, 0.94074076, -1, -0.69259256, 0.014814813, 0.70740741, 1, -0.92592597, -0.21851853, 0.47407413, 1, -1};
  // A range of one value draws exactly it: sample 0 at 0.7, sample 1 at 1.4.
  for (std::int64_t n = 0; n < 2; ++n) {
    Tensor one = Tensor::zeros(Shape{1, 3, 3, 2}, DType::f32);
    std::memcpy(one.raw(), xc.data<float>() + n * 18, 18 * sizeof(float));
    const double f = n == 0 ? 0.7 : 1.4;
    const Attrs a{{"factor_lower", f}, {"factor_upper", f}, {"value_lower", -1.0}, {"value_upper", 1.0}, {"seed", std::int64_t{1}}};
    const std::vector<Tensor> y = run_ref("random_contrast", a, {one}, {one.desc(), {Shape{1}, DType::f32}});
    ASSERT_GE(y.size(), 2u);
    EXPECT_FLOAT_EQ(y[1].data<float>()[0], static_cast<float>(f));
    expect_values(y[0].data<float>(), std::vector<float>(want.begin() + n * 18, want.begin() + n * 18 + 18), 1e-6f,
                  "contrast sample " + std::to_string(n));
  }
}

TEST(AugmentKerasValues, FlipsOfEachMode) {
  const Tensor x = image(Shape{1, 4, 5, 1}, 37, 17, 4.0, 2.0);
  Tensor two = Tensor::zeros(Shape{2, 4, 5, 1}, DType::f32);
  std::memcpy(two.data<float>(), x.raw(), 20 * sizeof(float));
  std::memcpy(two.data<float>() + 20, x.raw(), 20 * sizeof(float));
  Tensor flips = Tensor::zeros(Shape{2}, DType::u8);
  flips.data<std::uint8_t>()[0] = 1;  // sample 0 flipped, sample 1 kept
  const struct {
    const char* mode;
    std::vector<float> want;
  } kModes[] = {{"horizontal", {1, 0.25, -0.5, -1.25, -2, 0.5, -0.25, -1, -1.75, 1.75, 0, -0.75, -1.5, 2, 1.25, -0.5, -1.25, -2, 1.5, 0.75}},
                {"vertical", {0.75, 1.5, -2, -1.25, -0.5, 1.25, 2, -1.5, -0.75, 0, 1.75, -1.75, -1, -0.25, 0.5, -2, -1.25, -0.5, 0.25, 1}},
                {"horizontal_and_vertical", {-0.5, -1.25, -2, 1.5, 0.75, 0, -0.75, -1.5, 2, 1.25, 0.5, -0.25, -1, -1.75, 1.75, 1, 0.25, -0.5, -1.25, -2}}};
  for (const auto& m : kModes) {
    // random_flip_grad applies given flips: the same code path as random_flip's draws.
    const std::vector<Tensor> y = run_ref("random_flip_grad", {{"mode", std::string(m.mode)}}, {two, flips}, {two.desc()});
    ASSERT_GE(y.size(), 1u);  // outputs, then the inputs
    expect_values(y[0].data<float>(), m.want, 0.0f, m.mode);
    expect_values(y[0].data<float>() + 20, std::vector<float>(x.data<float>(), x.data<float>() + 20), 0.0f, "kept");
  }
}

}  // namespace
}  // namespace nnfit
