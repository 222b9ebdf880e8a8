// cuda-host cases of group_norm_kernels.h, prelu_kernels.h and regularizer_kernels.h:
// group_norm (+grad) over images and sequences with 1, some and all channels per group;
// standardize (+grad) with the 1e-7 floor and invert; prelu (+grad) with alpha per
// element, shared along the spatial axes, and shared everywhere, a batch of zero rows
// included; weight_penalty (+grad) l1l2 and orthogonal (rows and columns, a zero vector
// included: the clamped branch); apply_constraint of every kind over several axes.
#include <cmath>

#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

// Per (sample, group) mean and 1/sqrt(var + eps) of x [N, S..., C], in double.
std::pair<Tensor, Tensor> group_stats(const Tensor& x, std::int64_t groups, double eps) {
  const std::int64_t n = x.shape()[0], c = x.shape().dim(-1), s = x.numel() / (n * c), width = c / groups;
  Tensor mean = Tensor::zeros(Shape{n, groups}), rstd = Tensor::zeros(Shape{n, groups});
  const float* p = x.data<float>();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t g = 0; g < groups; ++g) {
      double m = 0.0, v = 0.0;
      for (std::int64_t q = 0; q < s; ++q) {
        for (std::int64_t k = 0; k < width; ++k) m += p[(i * s + q) * c + g * width + k];
      }
      m /= static_cast<double>(s * width);
      for (std::int64_t q = 0; q < s; ++q) {
        for (std::int64_t k = 0; k < width; ++k) v += std::pow(p[(i * s + q) * c + g * width + k] - m, 2);
      }
      mean.data<float>()[i * groups + g] = static_cast<float>(m);
      rstd.data<float>()[i * groups + g] = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(s * width) + eps));
    }
  }
  return {mean, rstd};
}

void check_group_norm(bool grad) {
  std::uint64_t seed = 2100;
  struct Case {
    Shape x;
    std::int64_t groups;
  };
  // 150 positions x 2 samples: the gradient's column sums span several 64-row chunks.
  for (const Case& k : {Case{Shape{2, 5, 6}, 3}, Case{Shape{2, 10, 15, 8}, 8}, Case{Shape{3, 4, 4, 12}, 1}, Case{Shape{1, 7, 4}, 2}}) {
    SCOPED_TRACE(k.x.to_string() + " groups " + std::to_string(k.groups));
    const Shape c{k.x.dim(-1)}, stats{k.x[0], k.groups};
    const Attrs a{{"groups", k.groups}, {"epsilon", 1e-3}};
    const Tensor x = random_tensor(k.x, seed++, -2.0f, 4.0f), gamma = random_tensor(c, seed++), beta = random_tensor(c, seed++);
    for (DType dt : float_dtypes()) {
      if (!grad) {
        expect_cuda_host_matches_reference(desc("group_norm", a, {f32(k.x), f32(c), f32(c)}, {f32(k.x), f32(stats), f32(stats)}),
                                           {x, gamma, beta}, dt, 2e-5f, 2e-5f);
        continue;
      }
      const auto [mean, rstd] = group_stats(to_f32(to_dtype(x, dt)), k.groups, 1e-3);
      const Tensor dy = random_tensor(k.x, seed++);
      expect_cuda_host_matches_reference(
          desc("group_norm_grad", a, {f32(k.x), f32(k.x), f32(c), f32(stats), f32(stats)}, {f32(k.x), f32(c), f32(c)}),
          {x, dy, gamma, mean, rstd}, dt, 2e-4f, 1e-4f);
    }
  }
}

void check_standardize(bool grad) {
  std::uint64_t seed = 2200;
  for (const Shape& s : {Shape{1}, Shape{5, 3}, Shape{300, 77}, Shape{4, 9, 9, 5}}) {
    for (std::int64_t invert : {0, 1}) {
      SCOPED_TRACE(s.to_string() + " invert " + std::to_string(invert));
      const Shape cols{s.dim(-1)};
      const Tensor x = random_tensor(s, seed++), mean = random_tensor(cols, seed++);
      const Tensor var_pos = random_tensor(cols, seed++, 0.0f, 2.0f);
      Tensor floored = var_pos.clone();
      floored.data<float>()[0] = 0.0f;  // the 1e-7 floor
      for (DType dt : float_dtypes()) {
        // x / 1e-7 is past float16's range (65504) and x · 1e-7 among its subnormals:
        // float16 checks the other columns only.
        const Tensor& var = dt == DType::f16 ? var_pos : floored;
        if (grad) {
          expect_cuda_host_matches_reference(desc("standardize_grad", {{"invert", invert}}, {f32(s), f32(cols)}, {f32(s)}), {x, var},
                                             dt, 1e-6f, 1e-6f);
        } else {
          expect_cuda_host_matches_reference(desc("standardize", {{"invert", invert}}, {f32(s), f32(cols), f32(cols)}, {f32(s)}),
                                             {x, mean, var}, dt, 1e-6f, 1e-6f);
        }
      }
    }
  }
}

void check_prelu(bool grad) {
  std::uint64_t seed = 2300;
  struct Case {
    Shape x, alpha;
  };
  for (const Case& k : {Case{Shape{4, 6, 5, 3}, Shape{6, 5, 3}}, Case{Shape{4, 6, 5, 3}, Shape{1, 1, 3}},
                        Case{Shape{8, 7, 5}, Shape{1, 5}}, Case{Shape{3, 10}, Shape{1}}, Case{Shape{5, 1, 4}, Shape{1, 4}},
                        Case{Shape{0, 6}, Shape{6}}}) {
    SCOPED_TRACE(k.x.to_string() + " alpha " + k.alpha.to_string());
    const Tensor x = random_tensor(k.x, seed++, -2.0f, 1.0f), alpha = random_tensor(k.alpha, seed++, 0.0f, 0.5f);
    for (DType dt : float_dtypes()) {
      if (grad) {
        const Tensor dy = random_tensor(k.x, seed++);
        expect_cuda_host_matches_reference(desc("prelu_grad", {}, {f32(k.x), f32(k.alpha), f32(k.x)}, {f32(k.x), f32(k.alpha)}),
                                           {x, alpha, dy}, dt, 1e-5f, 1e-5f);
      } else {
        expect_cuda_host_matches_reference(desc("prelu", {}, {f32(k.x), f32(k.alpha)}, {f32(k.x)}), {x, alpha}, dt, 0.0f, 1e-6f);
      }
    }
  }
}

void check_weight_penalty(bool grad) {
  std::uint64_t seed = 2400;
  const TensorDesc scalar = f32(Shape{});
  const Attrs l1l2{{"kind", std::string("l1l2")}, {"l1", 0.01}, {"l2", 0.02}};
  for (const Shape& s : {Shape{1}, Shape{7, 3}, Shape{784, 128}, Shape{3, 3, 16, 32}}) {
    SCOPED_TRACE(s.to_string());
    const Tensor x = random_tensor(s, seed++), dloss = random_tensor(Shape{}, seed++);
    if (grad) expect_cuda_host_matches_reference(desc("weight_penalty_grad", l1l2, {f32(s), scalar}, {f32(s)}), {x, dloss}, DType::f32, 1e-7f, 1e-6f);
    else expect_cuda_host_matches_reference(desc("weight_penalty", l1l2, {f32(s)}, {scalar}), {x}, DType::f32, 1e-7f, 1e-6f);
  }
  for (const char* mode : {"rows", "columns"}) {
    for (const Shape& s : {Shape{4, 5}, Shape{16, 9}, Shape{2, 2}}) {
      SCOPED_TRACE(s.to_string() + " " + mode);
      const Attrs ortho{{"kind", std::string("orthogonal")}, {"factor", 0.01}, {"mode", std::string(mode)}};
      Tensor x = random_tensor(s, seed++);
      if (s[0] == 16) {  // a zero vector: 1/‖v‖ clamped at 1/ε
        for (std::int64_t k = 0; k < s[1]; ++k) x.data<float>()[k] = 0.0f;
        for (std::int64_t k = 0; k < s[0]; ++k) x.data<float>()[k * s[1]] = 0.0f;
      }
      const Tensor dloss = random_tensor(Shape{}, seed++);
      if (grad) {
        expect_cuda_host_matches_reference(desc("weight_penalty_grad", ortho, {f32(s), scalar}, {f32(s)}), {x, dloss}, DType::f32,
                                           1e-6f, 1e-5f);
      } else {
        expect_cuda_host_matches_reference(desc("weight_penalty", ortho, {f32(s)}, {scalar}), {x}, DType::f32, 1e-7f, 1e-6f);
      }
    }
  }
}

void check_apply_constraint() {
  std::uint64_t seed = 2500;
  for (const Shape& s : {Shape{1}, Shape{7, 3}, Shape{784, 128}, Shape{3, 3, 16, 32}}) {
    SCOPED_TRACE(s.to_string());
    const Tensor x = random_tensor(s, seed++);
    std::vector<std::vector<std::int64_t>> axes_cases = {{0}, {-1}};
    if (s.rank() == 4) axes_cases.push_back({0, 1, 2});
    for (const char* kind : {"MaxNorm", "MinMaxNorm", "UnitNorm", "NonNeg"}) {
      for (const auto& axes : axes_cases) {
        SCOPED_TRACE(std::string(kind) + " axes " + std::to_string(axes.size()));
        const Attrs a{{"kind", std::string(kind)}, {"max_value", 0.5}, {"min_value", 0.2}, {"rate", 0.7}, {"axes", axes}};
        expect_cuda_host_matches_reference(desc("apply_constraint", a, {f32(s)}, {}), {x}, DType::f32, 1e-7f, 1e-6f);
      }
    }
  }
}

}  // namespace

std::vector<OpCase> norm_regularizer_cases() {
  return {{"group_norm", [] { check_group_norm(false); }},
          {"group_norm_grad", [] { check_group_norm(true); }},
          {"standardize", [] { check_standardize(false); }},
          {"standardize_grad", [] { check_standardize(true); }},
          {"prelu", [] { check_prelu(false); }},
          {"prelu_grad", [] { check_prelu(true); }},
          {"weight_penalty", [] { check_weight_penalty(false); }},
          {"weight_penalty_grad", [] { check_weight_penalty(true); }},
          {"apply_constraint", check_apply_constraint}};
}

}  // namespace nnfit::testing
