// cuda-host cases of attention_kernels.h: attention_mask with every combination of its
// masks, the causal band and a sliding window, a [1, T, S] output included; masked_softmax
// (+grad) over several heads per mask with an all-masked row, zeroed or uniform; additive
// scores (+grad) with and without the scale vector.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

// 0/1 values, about a third zeros; with `empty_row`, the first row of the last axis all zeros.
Tensor mask01(const Shape& s, std::uint64_t seed, bool empty_row = false) {
  Tensor m = random_tensor(s, seed, 0.0f, 1.0f);
  for (std::int64_t i = 0; i < m.numel(); ++i) m.data<float>()[i] = m.data<float>()[i] < 0.33f ? 0.0f : 1.0f;
  if (empty_row) {
    for (std::int64_t j = 0; j < s.dim(-1); ++j) m.data<float>()[j] = 0.0f;
  }
  return m;
}

void check_attention_mask() {
  const std::int64_t b = 3, t = 5, s = 7;
  std::uint64_t seed = 3000;
  const Tensor qm = mask01(Shape{b, t}, seed++), vm = mask01(Shape{b, s}, seed++), km = mask01(Shape{b, s}, seed++),
               am = mask01(Shape{b, t, s}, seed++);
  for (int bits = 0; bits < 16; ++bits) {
    for (const auto& [causal, window] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {1, 0}, {0, 2}, {1, 3}}) {
      Attrs a{{"query_len", t}, {"key_len", s}, {"causal", causal}, {"window", window}};
      std::vector<Tensor> in;
      const char* names[4] = {"has_query_mask", "has_value_mask", "has_key_mask", "has_attention_mask"};
      const Tensor* masks[4] = {&qm, &vm, &km, &am};
      for (int m = 0; m < 4; ++m) {
        a.set(names[m], std::int64_t{(bits >> m) & 1});
        if ((bits >> m) & 1) in.push_back(*masks[m]);
      }
      const Shape out{in.empty() ? 1 : b, t, s};
      SCOPED_TRACE("masks " + std::to_string(bits) + " causal " + std::to_string(causal) + " window " + std::to_string(window));
      std::vector<TensorDesc> ins;
      for (const Tensor& x : in) ins.push_back(x.desc());
      for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(desc("attention_mask", a, ins, {f32(out)}), in, dt, 0.0f, 0.0f);
    }
  }
}

void check_masked_softmax(bool grad) {
  std::uint64_t seed = 3100;
  struct Case {
    std::int64_t b, heads, t, s;
  };
  for (const Case& k : {Case{2, 1, 3, 5}, Case{2, 4, 6, 9}, Case{1, 2, 1, 130}}) {
    const Shape scores{k.b * k.heads, k.t, k.s}, mshape{k.b, k.t, k.s};
    const Tensor mask = mask01(mshape, seed++, true);
    for (std::int64_t zero_rows : {0, 1}) {
      SCOPED_TRACE(scores.to_string() + " zero_masked_rows " + std::to_string(zero_rows));
      const Tensor x = random_tensor(scores, seed++, -4.0f, 4.0f);
      for (DType dt : float_dtypes()) {
        if (grad) {
          const Tensor y = random_tensor(scores, seed++, 0.0f, 0.3f), dy = random_tensor(scores, seed++);
          expect_cuda_host_matches_reference(desc("masked_softmax_grad", {}, {f32(scores), f32(scores), f32(mshape)}, {f32(scores)}),
                                             {y, dy, mask}, dt, 1e-6f, 1e-5f);
        } else {
          expect_cuda_host_matches_reference(
              desc("masked_softmax", {{"zero_masked_rows", zero_rows}}, {f32(scores), f32(mshape)}, {f32(scores)}), {x, mask}, dt,
              1e-6f, 1e-5f);
        }
      }
    }
  }
}

void check_additive_scores(bool grad) {
  std::uint64_t seed = 3200;
  struct Case {
    std::int64_t b, tq, tv, dim;
  };
  for (const Case& k : {Case{2, 3, 4, 5}, Case{3, 7, 6, 16}, Case{1, 1, 9, 3}}) {
    const Shape q{k.b, k.tq, k.dim}, kv{k.b, k.tv, k.dim}, w{k.dim}, s{k.b, k.tq, k.tv};
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(q.to_string() + " " + kv.to_string() + (weighted ? " weighted" : ""));
      const Tensor tq = random_tensor(q, seed++), tk = random_tensor(kv, seed++), tw = random_tensor(w, seed++);
      std::vector<Tensor> in{tq, tk};
      std::vector<TensorDesc> ins{f32(q), f32(kv)}, outs;
      if (weighted) {
        in.push_back(tw);
        ins.push_back(f32(w));
      }
      for (DType dt : float_dtypes()) {
        if (grad) {
          std::vector<Tensor> gin = in;
          std::vector<TensorDesc> gins = ins;
          gin.push_back(random_tensor(s, seed++));
          gins.push_back(f32(s));
          std::vector<TensorDesc> gouts{f32(q), f32(kv)};
          if (weighted) gouts.push_back(f32(w));
          expect_cuda_host_matches_reference(desc("additive_scores_grad", {}, gins, gouts), gin, dt, 1e-5f, 1e-5f);
        } else {
          expect_cuda_host_matches_reference(desc("additive_scores", {}, ins, {f32(s)}), in, dt, 1e-5f, 1e-5f);
        }
      }
    }
  }
}

}  // namespace

std::vector<OpCase> attention_cases() {
  return {{"attention_mask", check_attention_mask},
          {"masked_softmax", [] { check_masked_softmax(false); }},
          {"masked_softmax_grad", [] { check_masked_softmax(true); }},
          {"additive_scores", [] { check_additive_scores(false); }},
          {"additive_scores_grad", [] { check_additive_scores(true); }}};
}

}  // namespace nnfit::testing
