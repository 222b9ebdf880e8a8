// Reference kernels of attention_mask, masked_softmax and masked_softmax_grad
// (graph/attention_op_defs.cpp): Keras's mask combination and its masked Softmax, in
// double within a row.
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

}  // namespace

std::unique_ptr<Kernel> make_ref_attention(const KernelDesc& d, std::string* /*why_not*/) {
  if (d.op == "attention_mask") return attention_mask(d);
  const bool grad = d.op == "masked_softmax_grad";
  const Shape x = d.inputs.at(0).shape;
  const std::int64_t g = x[0], t = x[1], s = x[2];
  const std::int64_t heads = g / d.inputs.at(grad ? 2 : 1).shape[0];
  const bool zero_rows = d.attrs.i_or("zero_masked_rows", 0) != 0;
  return std::make_unique<RefKernel>([=](const KernelArgs& args) {
    const auto* m = static_cast<const float*>(args.inputs[grad ? 2 : 1]);
    auto* out = static_cast<float*>(args.outputs[0]);
    std::vector<double> e(static_cast<std::size_t>(s));
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
