// cuda-host cases of misc_kernels.h: gather with int32 and int64 ids (repeats included),
// l2_normalize (+grad) along every axis with a floored all-zero slice, scale_by (+grad),
// and the masks (mask_kernels.h), an all-masked row included.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

KernelDesc desc(const std::string& op, Attrs attrs, const std::vector<Tensor>& in, std::vector<TensorDesc> outs) {
  KernelDesc d{op, std::move(attrs), {}, std::move(outs), "test/" + op};
  for (const Tensor& t : in) d.inputs.push_back(t.desc());
  return d;
}

void check_gather() {
  const Tensor table = random_tensor(Shape{50, 17}, 1);
  for (DType ids_dtype : {DType::i32, DType::i64}) {
    Tensor ids = Tensor::zeros(Shape{6, 7}, ids_dtype);
    for (std::int64_t i = 0; i < ids.numel(); ++i) {
      const std::int64_t v = (i * 13 + 5) % 50;
      if (ids_dtype == DType::i32) ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(v);
      else ids.data<std::int64_t>()[i] = v;
    }
    for (DType dt : float_dtypes()) {
      expect_cuda_host_matches_reference(desc("gather", {}, {table, ids}, {{Shape{6, 7, 17}, DType::f32}}), {table, ids}, dt, 0.0f, 0.0f);
    }
  }
}

void check_l2(bool grad) {
  std::uint64_t seed = 20;
  const Shape s{4, 5, 6};
  Tensor x = random_tensor(s, seed++);
  for (std::int64_t j = 0; j < 6; ++j) x.data<float>()[j] = 0.0f;  // slice (0, 0, :) is all zeros: the floor
  for (std::int64_t axis = 0; axis < 3; ++axis) {
    const Attrs a{{"axis", axis}};
    for (DType dt : float_dtypes()) {
      if (grad) {
        const Tensor dy = random_tensor(s, seed++);
        // On the floored slice dx = dy / 1e-6, past float16's range (65504): float16
        // checks the other slices only.
        const Tensor xg = dt == DType::f16 ? random_tensor(s, seed++) : x;
        expect_cuda_host_matches_reference(desc("l2_normalize_grad", a, {xg, dy}, {{s, DType::f32}}), {xg, dy}, dt, 1e-5f, 1e-4f);
      } else {
        expect_cuda_host_matches_reference(desc("l2_normalize", a, {x}, {{s, DType::f32}}), {x}, dt, 1e-6f, 1e-5f);
      }
    }
  }
}

void check_scale_by(bool grad) {
  const Tensor x = random_tensor(Shape{3, 1001}, 30);
  for (DType dt : float_dtypes()) {
    if (grad) {
      const Tensor dy = random_tensor(Shape{3, 1001}, 31);
      expect_cuda_host_matches_reference(desc("scale_by_grad", {}, {x, dy}, {{Shape{}, DType::f32}}), {x, dy}, dt, 1e-4f, 1e-5f);
    } else {
      Tensor s = Tensor::zeros(Shape{}, DType::f32);
      *s.data<float>() = 0.37f;
      expect_cuda_host_matches_reference(desc("scale_by", {}, {x, s}, {{Shape{3, 1001}, DType::f32}}), {x, s}, dt, 1e-6f, 1e-6f);
    }
  }
}

// 0/1 values with whole rows of zeros (the all-masked 0/0 of masked_mean).
Tensor random_mask(const Shape& s, std::uint64_t seed) {
  Tensor m = random_tensor(s, seed, 0.0f, 1.0f);
  for (std::int64_t i = 0; i < m.numel(); ++i) m.data<float>()[i] = m.data<float>()[i] < 0.3f ? 0.0f : 1.0f;
  const std::int64_t row = s.dim(-1);
  for (std::int64_t j = 0; j < row && m.numel() >= 2 * row; ++j) m.data<float>()[row + j] = 0.0f;
  return m;
}

void check_masks(const std::string& op) {
  std::uint64_t seed = 1000;
  for (const Shape& s : {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{16, 40, 32}}) {
    SCOPED_TRACE(s.to_string());
    const Tensor x = random_tensor(s, seed++), m = random_mask(Shape{s[0], s[1]}, seed++), dy = random_tensor(Shape{s[0], s[2]}, seed++);
    for (DType dt : float_dtypes()) {
      if (op == "masked_mean") expect_cuda_host_matches_reference(desc(op, {}, {x, m}, {dy.desc()}), {x, m}, dt, 1e-6f, 1e-5f);
      if (op == "masked_mean_grad") expect_cuda_host_matches_reference(desc(op, {}, {m, dy}, {x.desc()}), {m, dy}, dt, 1e-6f, 1e-5f);
      if (op == "apply_mask") expect_cuda_host_matches_reference(desc(op, {}, {x, m}, {x.desc()}), {x, m}, dt, 0.0f, 0.0f);
    }
    if (op != "sequence_mask") continue;
    // Zeros are the padding: per element, and per row of the last axis; float and int ids.
    const Tensor ids = random_mask(s, seed++);
    Tensor ids32 = Tensor::zeros(s, DType::i32), ids64 = Tensor::zeros(s, DType::i64);
    for (std::int64_t i = 0; i < ids.numel(); ++i) {
      ids32.data<std::int32_t>()[i] = static_cast<std::int32_t>(ids.data<float>()[i] * 7);
      ids64.data<std::int64_t>()[i] = static_cast<std::int64_t>(ids.data<float>()[i] * 9);
    }
    // Values at bfloat16 and float16 (a mixed policy's activations): the mask in their type.
    for (DType dt : float_dtypes()) {
      for (std::int64_t reduce : {0, 1}) {
        const Shape out = reduce ? m.shape() : s;
        expect_cuda_host_matches_reference(desc(op, {{"value", 0.0}, {"reduce_last", reduce}}, {ids}, {{out, DType::f32}}),
                                           {ids}, dt, 0.0f, 0.0f);
      }
    }
    for (const Tensor* t : std::vector<const Tensor*>{&ids32, &ids64}) {
      expect_cuda_host_matches_reference(
          desc(op, {{"value", 0.0}, {"reduce_last", std::int64_t{0}}}, {*t}, {{s, DType::f32}}), {*t}, DType::f32, 0.0f, 0.0f);
      expect_cuda_host_matches_reference(desc(op, {{"value", 0.0}, {"reduce_last", std::int64_t{1}}}, {*t}, {m.desc()}), {*t},
                                         DType::f32, 0.0f, 0.0f);
    }
  }
}

}  // namespace

std::vector<OpCase> misc_cases() {
  return {{"gather", check_gather},
          {"l2_normalize", [] { check_l2(false); }},
          {"l2_normalize_grad", [] { check_l2(true); }},
          {"scale_by", [] { check_scale_by(false); }},
          {"scale_by_grad", [] { check_scale_by(true); }},
          {"sequence_mask", [] { check_masks("sequence_mask"); }},
          {"apply_mask", [] { check_masks("apply_mask"); }},
          {"masked_mean", [] { check_masks("masked_mean"); }},
          {"masked_mean_grad", [] { check_masks("masked_mean_grad"); }}};
}

}  // namespace nnfit::testing
