// Reference kernels of attention_mask, masked_softmax, masked_softmax_grad, scale_by,
// scale_by_grad, additive_scores and additive_scores_grad (graph/attention_op_defs.cpp):
// Keras's mask combination and its masked Softmax, in double within a row; the additive
// scores' tanh recomputed in the gradient.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/ref/ref_nn_kernel.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

// Keras's Softmax replaces masked scores by -1e9 (Note [Masked softmax rows]).
constexpr double kMaskedScore = -1e9;

std::unique_ptr<Kernel> attention_mask(const KernelDesc& d) {
  const Shape out = d.outputs.at(0).shape;
  const std::int64_t b = out[0], t = out[1], s = out[2];
  const bool q = d.attrs.i_or("has_query_mask", 0), v = d.attrs.i_or("has_value_mask", 0);
  const bool k = d.attrs.i_or("has_key_mask", 0), am = d.attrs.i_or("has_attention_mask", 0);
  const bool causal = d.attrs.i_or("causal", 0);
  const std::int64_t window = d.attrs.i_or("window", 0);
  return std::make_unique<RefKernel>([=](const KernelArgs& args) {
    std::size_t next = 0;
    const auto input = [&](bool present) {
      return present ? static_cast<const float*>(args.inputs[next++]) : nullptr;
    };
    const float* qm = input(q);
    const float* vm = input(v);
    const float* km = input(k);
    const float* amm = input(am);
    auto* m = static_cast<float*>(args.outputs[0]);
    for (std::int64_t n = 0; n < b; ++n) {
      for (std::int64_t i = 0; i < t; ++i) {
        for (std::int64_t j = 0; j < s; ++j) {
          bool keep = true;
          if (qm) keep = keep && qm[n * t + i] != 0.0f;
          if (vm) keep = keep && vm[n * s + j] != 0.0f;
          if (km) keep = keep && km[n * s + j] != 0.0f;
          if (amm) keep = keep && amm[(n * t + i) * s + j] != 0.0f;
          if (causal) keep = keep && j <= i;
          if (window > 0) keep = keep && std::llabs(i - j) < window;
          m[(n * t + i) * s + j] = keep ? 1.0f : 0.0f;
        }
      }
    }
  });
}

std::unique_ptr<Kernel> scale_by(const KernelDesc& d) {
  const std::int64_t n = d.inputs.at(0).shape.numel();
  const bool grad = d.op == "scale_by_grad";
  return std::make_unique<RefKernel>([=](const KernelArgs& args) {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    if (grad) {
      const auto* dy = static_cast<const float*>(args.inputs[1]);
      double sum = 0.0;
      for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * dy[i];
      *static_cast<float*>(args.outputs[0]) = static_cast<float>(sum);
      return;
    }
    const float s = *static_cast<const float*>(args.inputs[1]);
    auto* y = static_cast<float*>(args.outputs[0]);
    for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
  });
}

std::unique_ptr<Kernel> additive_scores(const KernelDesc& d) {
  const bool grad = d.op == "additive_scores_grad";
  const Shape q = d.inputs.at(0).shape, k = d.inputs.at(1).shape;
  const std::int64_t b = q[0], tq = q[1], tv = k[1], dim = q[2];
  const bool weighted = d.inputs.size() == (grad ? 4u : 3u);
  // The gradient's sums in double, sized once (a step allocates nothing).
  std::vector<double> dq, dk, dw;
  if (grad) {
    dq.resize(static_cast<std::size_t>(b * tq * dim));
    dk.resize(static_cast<std::size_t>(b * tv * dim));
    dw.resize(static_cast<std::size_t>(dim));
  }
  return std::make_unique<RefKernel>([=](const KernelArgs& args) mutable {
    const auto* qs = static_cast<const float*>(args.inputs[0]);
    const auto* ks = static_cast<const float*>(args.inputs[1]);
    const auto* w = weighted ? static_cast<const float*>(args.inputs[2]) : nullptr;
    const auto weight = [&](std::int64_t c) { return w ? static_cast<double>(w[c]) : 1.0; };
    if (!grad) {
      auto* s = static_cast<float*>(args.outputs[0]);
      for (std::int64_t n = 0; n < b; ++n) {
        for (std::int64_t i = 0; i < tq; ++i) {
          for (std::int64_t j = 0; j < tv; ++j) {
            double sum = 0.0;
            for (std::int64_t c = 0; c < dim; ++c) {
              sum += weight(c) * std::tanh(static_cast<double>(qs[(n * tq + i) * dim + c]) + ks[(n * tv + j) * dim + c]);
            }
            s[(n * tq + i) * tv + j] = static_cast<float>(sum);
          }
        }
      }
      return;
    }
    const auto* ds = static_cast<const float*>(args.inputs[weighted ? 3 : 2]);
    std::fill(dq.begin(), dq.end(), 0.0);
    std::fill(dk.begin(), dk.end(), 0.0);
    std::fill(dw.begin(), dw.end(), 0.0);
    for (std::int64_t n = 0; n < b; ++n) {
      for (std::int64_t i = 0; i < tq; ++i) {
        for (std::int64_t j = 0; j < tv; ++j) {
          const double g = ds[(n * tq + i) * tv + j];
          for (std::int64_t c = 0; c < dim; ++c) {
            const double t = std::tanh(static_cast<double>(qs[(n * tq + i) * dim + c]) + ks[(n * tv + j) * dim + c]);
            const double dpre = g * weight(c) * (1.0 - t * t);
            dq[static_cast<std::size_t>((n * tq + i) * dim + c)] += dpre;
            dk[static_cast<std::size_t>((n * tv + j) * dim + c)] += dpre;
            dw[static_cast<std::size_t>(c)] += g * t;
          }
        }
      }
    }
    const auto store = [](const std::vector<double>& from, void* to) {
      auto* out = static_cast<float*>(to);
      for (std::size_t i = 0; i < from.size(); ++i) out[i] = static_cast<float>(from[i]);
    };
    store(dq, args.outputs[0]);
    store(dk, args.outputs[1]);
    if (weighted) store(dw, args.outputs[2]);
  });
}

}  // namespace

std::unique_ptr<Kernel> make_ref_attention(const KernelDesc& d, std::string* /*why_not*/) {
  if (d.op == "attention_mask") return attention_mask(d);
  if (d.op == "scale_by" || d.op == "scale_by_grad") return scale_by(d);
  if (d.op == "additive_scores" || d.op == "additive_scores_grad") return additive_scores(d);
  const bool grad = d.op == "masked_softmax_grad";
  const Shape x = d.inputs.at(0).shape;
  const std::int64_t g = x[0], t = x[1], s = x[2];
  const std::int64_t heads = g / d.inputs.at(grad ? 2 : 1).shape[0];
  const bool zero_rows = d.attrs.i_or("zero_masked_rows", 0) != 0;
  std::vector<double> e(static_cast<std::size_t>(s));  // one row's exponentials, sized once
  return std::make_unique<RefKernel>([=](const KernelArgs& args) mutable {
    const auto* m = static_cast<const float*>(args.inputs[grad ? 2 : 1]);
    auto* out = static_cast<float*>(args.outputs[0]);
    for (std::int64_t r = 0; r < g * t; ++r) {
      const float* mr = m + ((r / t) / heads * t + r % t) * s;
      if (grad) {
        const float* y = static_cast<const float*>(args.inputs[0]) + r * s;
        const float* dy = static_cast<const float*>(args.inputs[1]) + r * s;
        double dot = 0.0;
        for (std::int64_t j = 0; j < s; ++j) dot += static_cast<double>(dy[j]) * y[j];
        for (std::int64_t j = 0; j < s; ++j) {
          out[r * s + j] = mr[j] != 0.0f ? static_cast<float>(y[j] * (dy[j] - dot)) : 0.0f;
        }
        continue;
      }
      const float* xr = static_cast<const float*>(args.inputs[0]) + r * s;
      double mx = -INFINITY;
      bool any = false;
      for (std::int64_t j = 0; j < s; ++j) {
        e[j] = mr[j] != 0.0f ? xr[j] : kMaskedScore;
        any = any || mr[j] != 0.0f;
        mx = std::max(mx, e[j]);
      }
      double sum = 0.0;
      for (std::int64_t j = 0; j < s; ++j) sum += (e[j] = std::exp(e[j] - mx));
      for (std::int64_t j = 0; j < s; ++j) {
        out[r * s + j] = !any && zero_rows ? 0.0f : static_cast<float>(e[j] / sum);
      }
    }
  });
}

}  // namespace nnfit
