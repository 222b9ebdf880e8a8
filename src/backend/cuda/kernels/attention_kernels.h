// Private to the CUDA backend: own kernels of attention_mask, masked_softmax (+grad) and
// additive_scores (+grad) (Note [Kernel/launcher split]) at float32, bfloat16 and float16,
// the reference's formulas (ref_attention.cpp): Keras's mask combination, its masked
// Softmax (masked scores replaced by -1e9; Note [Masked softmax rows]) one index per row,
// and Bahdanau's scores Σ_c w_c·tanh(q_c + k_c) one index per score. The additive
// gradient without atomics: dq one index per (sample, query, channel) summing over keys,
// dk per (sample, key, channel) over queries, dw per channel over every score, each sum
// in a fixed order. Row statistics in float32 where the reference uses double.
#pragma once
#include <math.h>

#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

template <class T>
struct AttentionMaskFn {
  const void* query_mask;      // [B, T] or null
  const void* value_mask;      // [B, S] or null
  const void* key_mask;        // [B, S] or null
  const void* attention_mask;  // [B, T, S] or null
  void* out;                   // [B or 1, T, S]
  std::int64_t t, s, window;
  bool causal;
  NNFIT_HD void operator()(std::int64_t idx) const {
    const std::int64_t j = idx % s, i = (idx / s) % t, n = idx / (s * t);
    bool keep = true;
    if (query_mask) keep = keep && load<T>(query_mask, n * t + i) != 0.0f;
    if (value_mask) keep = keep && load<T>(value_mask, n * s + j) != 0.0f;
    if (key_mask) keep = keep && load<T>(key_mask, n * s + j) != 0.0f;
    if (attention_mask) keep = keep && load<T>(attention_mask, idx) != 0.0f;
    if (causal) keep = keep && j <= i;
    if (window > 0) keep = keep && (i > j ? i - j : j - i) < window;
    store<T>(out, idx, keep ? 1.0f : 0.0f);
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_attention_mask(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  NNFIT_CHECK(desc.outputs.size() == 1 && desc.outputs[0].shape.rank() == 3, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected one [batch, query_len, key_len] output");
  const Shape out = desc.outputs[0].shape;
  const std::int64_t t = out[1], s = out[2], numel = out.numel();
  bool has[4];
  std::size_t count = 0;
  int k = 0;
  for (const char* name : {"has_query_mask", "has_value_mask", "has_key_mask", "has_attention_mask"}) {
    has[k] = desc.attrs.i_or(name, 0) != 0;
    count += has[k++] ? 1 : 0;
  }
  NNFIT_CHECK(desc.inputs.size() == count, InvalidArgument, desc.op, ": ", desc.inputs.size(), " inputs where the has_* attrs name ",
              count);
  const bool causal = desc.attrs.i_or("causal", 0) != 0;
  const std::int64_t window = desc.attrs.i_or("window", 0);
  return launch_kernel([=](const KernelArgs& a) {
    if (numel == 0) return;
    const void* in[4] = {nullptr, nullptr, nullptr, nullptr};
    std::size_t next = 0;
    for (int m = 0; m < 4; ++m) {
      if (has[m]) in[m] = a.inputs[next++];
    }
    Launch::run(AttentionMaskFn<T>{in[0], in[1], in[2], in[3], a.outputs[0], t, s, window, causal}, numel, a.ctx);
  });
}

// Scores x [G, T, S] with G = B·heads; the mask [B, T, S] is shared by a sample's heads.
struct SoftmaxRows {
  std::int64_t t = 0, s = 0, heads = 1;
  NNFIT_HD std::int64_t mask_row(std::int64_t r) const { return ((r / t) / heads * t + r % t) * s; }
};

template <class T>
struct MaskedSoftmaxFn {
  const void* x;
  const void* mask;
  void* y;
  SoftmaxRows rows;
  bool zero_rows;  // a row with every score masked is zeros, not uniform
  NNFIT_HD void operator()(std::int64_t r) const {
    const std::int64_t base = r * rows.s, mb = rows.mask_row(r);
    float mx = -INFINITY;
    bool any = false;
    for (std::int64_t j = 0; j < rows.s; ++j) {
      const bool kept = load<T>(mask, mb + j) != 0.0f;
      const float e = kept ? load<T>(x, base + j) : -1e9f;
      any = any || kept;
      mx = e > mx ? e : mx;
    }
    float sum = 0.0f;
    for (std::int64_t j = 0; j < rows.s; ++j) {
      const float e = load<T>(mask, mb + j) != 0.0f ? load<T>(x, base + j) : -1e9f;
      sum += expf(e - mx);
    }
    for (std::int64_t j = 0; j < rows.s; ++j) {
      const float e = load<T>(mask, mb + j) != 0.0f ? load<T>(x, base + j) : -1e9f;
      store<T>(y, base + j, !any && zero_rows ? 0.0f : expf(e - mx) / sum);
    }
  }
};

template <class T>
struct MaskedSoftmaxGradFn {
  const void* y;
  const void* dy;
  const void* mask;
  void* dx;
  SoftmaxRows rows;
  NNFIT_HD void operator()(std::int64_t r) const {
    const std::int64_t base = r * rows.s, mb = rows.mask_row(r);
    float dot = 0.0f;
    for (std::int64_t j = 0; j < rows.s; ++j) dot += load<T>(dy, base + j) * load<T>(y, base + j);
    for (std::int64_t j = 0; j < rows.s; ++j) {
      const float v = load<T>(y, base + j) * (load<T>(dy, base + j) - dot);
      store<T>(dx, base + j, load<T>(mask, mb + j) != 0.0f ? v : 0.0f);
    }
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_masked_softmax(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "masked_softmax_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 3u : 2u) && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", grad ? "y, dy and the mask" : "x and the mask");
  const Shape& x = desc.inputs[0].shape;
  const Shape& m = desc.inputs[grad ? 2 : 1].shape;
  NNFIT_CHECK(x.rank() == 3 && m.rank() == 3 && m[0] > 0 && x[0] % m[0] == 0 && x[1] == m[1] && x[2] == m[2], InvalidArgument,
              desc.op, ": scores ", x.to_string(), " and mask ", m.to_string(), " do not match ([B·heads, T, S] and [B, T, S])");
  const SoftmaxRows rows{x[1], x[2], x[0] / m[0]};
  const std::int64_t n = x[0] * x[1];
  const bool zero_rows = desc.attrs.i_or("zero_masked_rows", 0) != 0;
  return launch_kernel([=](const KernelArgs& a) {
    if (n == 0 || rows.s == 0) return;
    if (grad) Launch::run(MaskedSoftmaxGradFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], rows}, n, a.ctx);
    else Launch::run(MaskedSoftmaxFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], rows, zero_rows}, n, a.ctx);
  });
}

// q [B, Tq, D], k [B, Tv, D], optional w [D]; scores [B, Tq, Tv].
struct AdditiveGeometry {
  std::int64_t b = 0, tq = 0, tv = 0, dim = 0;
};

template <class T>
NNFIT_HD float additive_weight(const void* w, std::int64_t c) {
  return w ? load<T>(w, c) : 1.0f;
}

template <class T>
struct AdditiveScoresFn {
  const void* q;
  const void* k;
  const void* w;
  void* scores;
  AdditiveGeometry g;
  NNFIT_HD void operator()(std::int64_t idx) const {
    const std::int64_t j = idx % g.tv, i = (idx / g.tv) % g.tq, n = idx / (g.tv * g.tq);
    float sum = 0.0f;
    for (std::int64_t c = 0; c < g.dim; ++c) {
      sum += additive_weight<T>(w, c) * tanhf(load<T>(q, (n * g.tq + i) * g.dim + c) + load<T>(k, (n * g.tv + j) * g.dim + c));
    }
    store<T>(scores, idx, sum);
  }
};

// dq[n, i, c] = Σ_j ds[n, i, j]·w_c·(1 − tanh²), or with `keys` dk[n, j, c] = Σ_i the same.
template <class T>
struct AdditiveGradQKFn {
  const void* q;
  const void* k;
  const void* w;
  const void* ds;
  void* out;
  AdditiveGeometry g;
  bool keys;
  NNFIT_HD void operator()(std::int64_t idx) const {
    const std::int64_t c = idx % g.dim, row = idx / g.dim;  // row: (n, i) or (n, j)
    const std::int64_t len = keys ? g.tv : g.tq, n = row / len, at = row % len, other = keys ? g.tq : g.tv;
    const float wc = additive_weight<T>(w, c);
    float sum = 0.0f;
    for (std::int64_t o = 0; o < other; ++o) {
      const std::int64_t i = keys ? o : at, j = keys ? at : o;
      const float t = tanhf(load<T>(q, (n * g.tq + i) * g.dim + c) + load<T>(k, (n * g.tv + j) * g.dim + c));
      sum += load<T>(ds, (n * g.tq + i) * g.tv + j) * wc * (1.0f - t * t);
    }
    store<T>(out, idx, sum);
  }
};

template <class T>
struct AdditiveGradWFn {  // dw[c] = Σ_{n, i, j} ds·tanh
  const void* q;
  const void* k;
  const void* ds;
  void* dw;
  AdditiveGeometry g;
  NNFIT_HD void operator()(std::int64_t c) const {
    float sum = 0.0f;
    for (std::int64_t s = 0; s < g.b * g.tq * g.tv; ++s) {
      const std::int64_t j = s % g.tv, i = (s / g.tv) % g.tq, n = s / (g.tv * g.tq);
      sum += load<T>(ds, s) * tanhf(load<T>(q, (n * g.tq + i) * g.dim + c) + load<T>(k, (n * g.tv + j) * g.dim + c));
    }
    store<T>(dw, c, sum);
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_additive_scores(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "additive_scores_grad";
  const std::size_t base = grad ? 3 : 2;
  NNFIT_CHECK(desc.inputs.size() == base || desc.inputs.size() == base + 1, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected q, k", grad ? ", [w,] dscores" : " [and w]");
  const bool weighted = desc.inputs.size() == base + 1;
  const Shape& q = desc.inputs[0].shape;
  const Shape& k = desc.inputs[1].shape;
  NNFIT_CHECK(q.rank() == 3 && k.rank() == 3 && q[0] == k[0] && q[2] == k[2], InvalidArgument, desc.op, ": q ", q.to_string(),
              " and k ", k.to_string(), " must be [batch, steps, dim] with the same batch and dim");
  const AdditiveGeometry g{q[0], q[1], k[1], q[2]};
  NNFIT_CHECK(desc.outputs.size() == (grad ? (weighted ? 3u : 2u) : 1u), InvalidArgument, desc.op, ": wrong number of outputs");
  return launch_kernel([=](const KernelArgs& a) {
    const void* w = weighted ? a.inputs[2] : nullptr;
    if (!grad) {
      if (g.b * g.tq * g.tv) Launch::run(AdditiveScoresFn<T>{a.inputs[0], a.inputs[1], w, a.outputs[0], g}, g.b * g.tq * g.tv, a.ctx);
      return;
    }
    const void* ds = a.inputs[weighted ? 3 : 2];
    if (g.b * g.tq * g.dim) Launch::run(AdditiveGradQKFn<T>{a.inputs[0], a.inputs[1], w, ds, a.outputs[0], g, false}, g.b * g.tq * g.dim, a.ctx);
    if (g.b * g.tv * g.dim) Launch::run(AdditiveGradQKFn<T>{a.inputs[0], a.inputs[1], w, ds, a.outputs[1], g, true}, g.b * g.tv * g.dim, a.ctx);
    if (weighted && g.dim) Launch::run(AdditiveGradWFn<T>{a.inputs[0], a.inputs[1], ds, a.outputs[2], g}, g.dim, a.ctx);
  });
}

template <class Launch>
void register_attention_kernels(KernelRegistry& r) {
  add_float_kernels(r, "attention_mask", make_attention_mask<Launch, float>, make_attention_mask<Launch, Bf16>,
                    make_attention_mask<Launch, F16>);
  for (const char* op : {"masked_softmax", "masked_softmax_grad"}) {
    add_float_kernels(r, op, make_masked_softmax<Launch, float>, make_masked_softmax<Launch, Bf16>, make_masked_softmax<Launch, F16>);
  }
  for (const char* op : {"additive_scores", "additive_scores_grad"}) {
    add_float_kernels(r, op, make_additive_scores<Launch, float>, make_additive_scores<Launch, Bf16>,
                      make_additive_scores<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
