// cuda-host cases of augment_kernels.h: random_flip (+grad) in each mode, random_contrast
// (+grad) with clipping, affine_transform (+grad) in every fill mode and interpolation with
// a projective part (k = 0 on some pixels), and random_affine of each kind; the random
// ops' draws (their second outputs) are compared too. At float32 the kernels run the CPU
// kernels' very code (augment_math.h), so the tolerances there are float rounding.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

const std::vector<Shape>& images() {
  static const std::vector<Shape> kImages = {Shape{1, 1, 1, 1}, Shape{3, 5, 7, 2}, Shape{4, 12, 9, 3}};
  return kImages;
}

// With `rank_slice`, a data-parallel rank's: the draws of rows 3.. of the global batch.
StepContext augment_ctx(bool rank_slice = false, std::int64_t rows = 0) {
  StepContext ctx;
  ctx.seed = 4321;
  ctx.step = 7;
  if (rank_slice) {
    ctx.row_offset = 3;
    ctx.rows = rows;
  }
  return ctx;
}

void check_flip(bool grad) {
  std::uint64_t seed = 5000;
  for (const Shape& s : images()) {
    for (const char* mode : {"horizontal", "vertical", "horizontal_and_vertical"}) {
      SCOPED_TRACE(s.to_string() + " " + mode);
      const Tensor x = random_tensor(s, seed++);
      const TensorDesc flags{Shape{s[0]}, DType::u8};
      for (DType dt : float_dtypes()) {
        if (!grad) {
          const Attrs a{{"mode", std::string(mode)}, {"seed", std::int64_t{11}}};
          expect_cuda_host_matches_reference(desc("random_flip", a, {f32(s)}, {f32(s), flags}), {x}, dt, 0.0f, 0.0f, augment_ctx());
          expect_cuda_host_matches_reference(desc("random_flip", a, {f32(s)}, {f32(s), flags}), {x}, dt, 0.0f, 0.0f,
                                             augment_ctx(true, s[0]));
          continue;
        }
        Tensor flips = Tensor::zeros(Shape{s[0]}, DType::u8);
        for (std::int64_t n = 0; n < s[0]; ++n) flips.data<std::uint8_t>()[n] = static_cast<std::uint8_t>(n % 3 == 0);
        expect_cuda_host_matches_reference(desc("random_flip_grad", {{"mode", std::string(mode)}}, {f32(s), flags}, {f32(s)}),
                                           {x, flips}, dt, 0.0f, 0.0f);
      }
    }
  }
}

void check_contrast(bool grad) {
  std::uint64_t seed = 5100;
  for (const Shape& s : images()) {
    SCOPED_TRACE(s.to_string());
    const Tensor x = random_tensor(s, seed++);
    for (DType dt : float_dtypes()) {
      if (!grad) {
        const Attrs a{{"factor_lower", 0.4}, {"factor_upper", 1.6}, {"value_lower", -0.8}, {"value_upper", 0.9},
                      {"seed", std::int64_t{3}}};
        expect_cuda_host_matches_reference(desc("random_contrast", a, {f32(s)}, {f32(s), f32(Shape{s[0]})}), {x}, dt, 1e-6f, 1e-6f,
                                           augment_ctx());
        continue;
      }
      const Tensor dy = random_tensor(s, seed++), factor = random_tensor(Shape{s[0]}, seed++, 0.4f, 1.6f);
      const Attrs g{{"value_lower", -0.8}, {"value_upper", 0.9}};
      expect_cuda_host_matches_reference(desc("random_contrast_grad", g, {f32(s), f32(s), f32(Shape{s[0]})}, {f32(s)}),
                                         {dy, x, factor}, dt, 1e-6f, 1e-6f);
    }
  }
}

// A transform per sample with a projective part: k = 0 on some pixels of odd samples.
Tensor projective_transforms(std::int64_t n, std::uint64_t seed) {
  Tensor t = random_tensor(Shape{n, 8}, seed, -0.5f, 0.5f);
  for (std::int64_t i = 0; i < n; ++i) {
    float* row = t.data<float>() + 8 * i;
    row[0] += 1.0f;
    row[4] += 1.0f;
    row[6] = i % 2 ? -0.25f : 0.0f;
    row[7] = i % 2 ? 0.0f : 0.05f;
  }
  return t;
}

void check_affine(const std::string& op) {
  std::uint64_t seed = 5200;
  const struct {
    const char* kind;
    double lo, hi;
  } kKinds[] = {{"translation", -0.2, 0.3}, {"rotation", -0.1, 0.1}, {"zoom", -0.3, 0.2}};
  for (const Shape& s : images()) {
    for (const char* fill : {"reflect", "wrap", "constant", "nearest"}) {
      for (const char* interpolation : {"bilinear", "nearest"}) {
        SCOPED_TRACE(s.to_string() + " " + fill + " " + interpolation);
        const Attrs common{{"fill_mode", std::string(fill)}, {"interpolation", std::string(interpolation)}, {"fill_value", 0.25}};
        const Tensor x = random_tensor(s, seed++), t = projective_transforms(s[0], seed++);
        const Shape ts{s[0], 8};
        for (DType dt : float_dtypes()) {
          if (op == "random_affine") {
            for (const auto& k : kKinds) {
              Attrs a = common;
              a.set("kind", std::string(k.kind));
              a.set("height_lower", k.lo);
              a.set("height_upper", k.hi);
              a.set("width_lower", k.lo / 2);
              a.set("width_upper", k.hi);
              a.set("seed", std::int64_t{5});
              expect_cuda_host_matches_reference(desc(op, a, {f32(s)}, {f32(s), f32(ts)}), {x}, dt, 1e-6f, 1e-6f, augment_ctx());
              expect_cuda_host_matches_reference(desc(op, a, {f32(s)}, {f32(s), f32(ts)}), {x}, dt, 1e-6f, 1e-6f,
                                                 augment_ctx(true, s[0]));
            }
          } else {
            expect_cuda_host_matches_reference(desc(op, common, {f32(s), f32(ts)}, {f32(s)}), {x, t}, dt, 1e-6f, 1e-6f);
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<OpCase> augment_cases() {
  return {{"random_flip", [] { check_flip(false); }},
          {"random_flip_grad", [] { check_flip(true); }},
          {"random_contrast", [] { check_contrast(false); }},
          {"random_contrast_grad", [] { check_contrast(true); }},
          {"affine_transform", [] { check_affine("affine_transform"); }},
          {"affine_transform_grad", [] { check_affine("affine_transform_grad"); }},
          {"random_affine", [] { check_affine("random_affine"); }}};
}

}  // namespace nnfit::testing
