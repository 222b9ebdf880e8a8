// Private to the CUDA backend: own kernels of dropout (+grad), the four fused losses
// (+grad) and the reductions (+grads) (Note [Kernel/launcher split]).
// - dropout draws its mask from backend/common/random.h's counter-based hash of (run seed,
//   node seed, step, element), the very functions the CPU kernels call: the mask is a
//   function of the element's index, not of the thread that computes it, so it does not
//   depend on the launch shape and equals the CPU's bit for bit.
// - a loss is two passes: one index per sample writes its loss into the workspace, then
//   one index adds the samples in order (in double); an out-of-range sparse label makes
//   its sample's loss and gradient NaN (a device kernel cannot throw; the CPU kernels
//   name the row). Losses run at float32 only: the dtype policies compute them in float32.
// - reductions: one index per output walks its reduced axis in order.
#pragma once
#include <math.h>

#include <array>

#include "backend/common/random.h"
#include "backend/common/reduce_view.h"
#include "backend/common/train_op_checks.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

inline constexpr int kMaxRank = 8;

// DropoutParams::noise_index without the vectors.
struct NoiseIndex {
  int rank = 0;  // 0: every element decides alone
  std::array<std::int64_t, kMaxRank> dims{}, noise{};
  NNFIT_HD std::uint64_t operator()(std::int64_t i) const {
    if (rank == 0) return static_cast<std::uint64_t>(i);
    std::int64_t at = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const std::int64_t c = i % dims[d];
      i /= dims[d];
      if (noise[d] != 1) at += c * stride;
      stride *= noise[d];
    }
    return static_cast<std::uint64_t>(at);
  }
};

template <class T>
struct DropoutFn {
  const void* x;
  void* y;
  std::uint8_t* mask;
  // DropoutDrawFn's: the key, and (data-parallel) the first global row's index (Note
  // [Random draws by global row]).
  const std::uint64_t* draw;
  float rate;
  NoiseIndex noise;
  NNFIT_HD void operator()(std::int64_t i) const {
    const bool keep = dropout_uniform_keyed(draw[0], draw[1] + noise(i)) >= rate;
    store<T>(y, i, keep ? static_cast<float>(load<T>(x, i) / (1.0 - rate)) : 0.0f);
    mask[i] = keep ? 1 : 0;
  }
};

template <class T>
struct DropoutGradFn {
  const void* dy;
  const std::uint8_t* mask;
  void* dx;
  float rate;
  NNFIT_HD void operator()(std::int64_t i) const {
    store<T>(dx, i, mask[i] ? static_cast<float>(load<T>(dy, i) / (1.0 - rate)) : 0.0f);
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_dropout(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  if (!floats_are<T>(desc, why_not) || !check_dropout(as_f32(desc), &p, why_not)) return nullptr;
  const std::int64_t n = p.numel;
  if (desc.op == "dropout_grad") {
    return launch_kernel([n, p](const KernelArgs& a) {
      Launch::run(DropoutGradFn<T>{a.inputs[0], static_cast<const std::uint8_t*>(a.inputs[1]), a.outputs[0], p.rate}, n,
                  a.ctx);
    });
  }
  NNFIT_CHECK(p.dims.size() <= static_cast<std::size_t>(kMaxRank), Unsupported, "dropout at node '", desc.node_name,
              "': a noise_shape of rank ", p.dims.size(), " (the CUDA kernel takes up to ", kMaxRank, ")");
  NoiseIndex noise;
  noise.rank = static_cast<int>(p.noise.size());
  for (int d = 0; d < noise.rank; ++d) {
    noise.dims[d] = p.dims[d];
    noise.noise[d] = p.noise[d];
  }
  // DropoutParams::index_offset's cases, fixed at plan time.
  std::int64_t per_row = 0;
  if (!p.noise.empty()) {
    per_row = -1;
    if (!p.dims.empty() && p.noise[0] == p.dims[0]) {
      per_row = 1;
      for (std::size_t d = 1; d < p.noise.size(); ++d) per_row *= p.noise[d];
    }
  }
  const std::int64_t first_dim = p.dims.empty() ? 0 : p.dims[0];
  return launch_kernel(
      [n, p, noise, per_row, first_dim](const KernelArgs& a) {
        const std::uint64_t* draw = random_draw<Launch>(a, p.seed, p.numel, first_dim, per_row);
        Launch::run(DropoutFn<T>{a.inputs[0], a.outputs[0], static_cast<std::uint8_t*>(a.outputs[1]), draw, p.rate, noise},
                    n, a.ctx);
      },
      kRandomDrawWorkspace);
}

// ---- losses (float32) ----

struct LossArgs {
  LossKind kind;
  bool from_logits;
  std::int64_t batch, d;
  float smoothing;
  const float* pred;
  const void* target;  // int32 labels or float targets
  const float* weights;  // null: unweighted
};

NNFIT_HD float smoothed(const LossArgs& p, float t, std::int64_t classes) {
  return t * (1.0f - p.smoothing) + p.smoothing / static_cast<float>(classes);
}
NNFIT_HD float clip_prob(float p) { return p < kLossEpsilon ? kLossEpsilon : (p > 1.0f - kLossEpsilon ? 1.0f - kLossEpsilon : p); }
NNFIT_HD bool prob_clipped(float p) { return p < kLossEpsilon || p > 1.0f - kLossEpsilon; }

NNFIT_HD float row_log_sum_exp(const float* z, std::int64_t n) {
  float m = z[0];
  for (std::int64_t c = 1; c < n; ++c) m = z[c] > m ? z[c] : m;
  float s = 0.0f;
  for (std::int64_t c = 0; c < n; ++c) s += expf(z[c] - m);
  return m + logf(s);
}

NNFIT_HD bool label_ok(const LossArgs& p, std::int64_t i) {
  const std::int32_t y = static_cast<const std::int32_t*>(p.target)[i];
  return y >= 0 && y < p.d;
}

// One index per sample: its (weighted) loss.
struct LossSampleFn {
  LossArgs p;
  float* sample;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float* z = p.pred + i * p.d;
    float s = 0.0f;
    if (p.kind == LossKind::sparse_categorical_crossentropy) {
      if (!label_ok(p, i)) {
        sample[i] = bits_float(0x7fc00000u);
        return;
      }
      const std::int32_t y = static_cast<const std::int32_t*>(p.target)[i];
      s = p.from_logits ? row_log_sum_exp(z, p.d) - z[y] : -logf(clip_prob(z[y]));
    } else {
      const float* t = static_cast<const float*>(p.target) + i * p.d;
      if (p.kind == LossKind::categorical_crossentropy) {
        const float lse = p.from_logits ? row_log_sum_exp(z, p.d) : 0.0f;
        for (std::int64_t c = 0; c < p.d; ++c) s -= smoothed(p, t[c], p.d) * (p.from_logits ? z[c] - lse : logf(clip_prob(z[c])));
      } else if (p.kind == LossKind::binary_crossentropy) {
        for (std::int64_t j = 0; j < p.d; ++j) {
          const float zj = z[j], tj = smoothed(p, t[j], 2);
          if (p.from_logits) {
            s += (zj > 0.0f ? zj : 0.0f) - zj * tj + log1pf(expf(-fabsf(zj)));
          } else {
            const float pc = clip_prob(zj);
            s -= tj * logf(pc) + (1.0f - tj) * logf(1.0f - pc);
          }
        }
        s /= static_cast<float>(p.d);
      } else {  // mean_squared_error
        for (std::int64_t j = 0; j < p.d; ++j) s += (z[j] - t[j]) * (z[j] - t[j]);
        s /= static_cast<float>(p.d);
      }
    }
    sample[i] = p.weights ? p.weights[i] * s : s;
  }
};

struct LossSumFn {
  const float* sample;
  std::int64_t batch;
  float* out;
  NNFIT_HD void operator()(std::int64_t) const {
    double total = 0.0;
    for (std::int64_t i = 0; i < batch; ++i) total += sample[i];
    *out = static_cast<float>(total / static_cast<double>(batch));
  }
};

// One index per sample: the row's log-sum-exp and the sum of its smoothed targets.
struct LossRowStatsFn {
  LossArgs p;
  float* stats;  // [batch, 2]
  NNFIT_HD void operator()(std::int64_t i) const {
    const float* z = p.pred + i * p.d;
    stats[2 * i] = p.from_logits ? row_log_sum_exp(z, p.d) : 0.0f;
    float t_sum = 0.0f;
    if (p.kind == LossKind::categorical_crossentropy) {
      const float* t = static_cast<const float*>(p.target) + i * p.d;
      for (std::int64_t c = 0; c < p.d; ++c) t_sum += smoothed(p, t[c], p.d);
    }
    stats[2 * i + 1] = t_sum;
  }
};

// One index per element of pred.
struct LossGradFn {
  LossArgs p;
  const float* stats;
  const float* dloss;
  float* dpred;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t i = e / p.d, c = e % p.d;
    const bool categorical = p.kind == LossKind::sparse_categorical_crossentropy || p.kind == LossKind::categorical_crossentropy;
    float scale = *dloss / static_cast<float>(categorical ? p.batch : p.batch * p.d);
    if (p.weights) scale *= p.weights[i];
    const float z = p.pred[e];
    float g = 0.0f;
    if (p.kind == LossKind::sparse_categorical_crossentropy) {
      if (!label_ok(p, i)) {
        dpred[e] = bits_float(0x7fc00000u);
        return;
      }
      const std::int32_t y = static_cast<const std::int32_t*>(p.target)[i];
      if (p.from_logits) g = expf(z - stats[2 * i]) - (c == y ? 1.0f : 0.0f);
      else if (c == y && !prob_clipped(z)) g = -1.0f / z;
    } else {
      const float t = static_cast<const float*>(p.target)[e];
      if (p.kind == LossKind::categorical_crossentropy) {
        const float ts = smoothed(p, t, p.d);
        if (p.from_logits) g = expf(z - stats[2 * i]) * stats[2 * i + 1] - ts;
        else if (!prob_clipped(z)) g = -ts / z;
      } else if (p.kind == LossKind::binary_crossentropy) {
        const float ts = smoothed(p, t, 2);
        if (p.from_logits) g = 1.0f / (1.0f + expf(-z)) - ts;
        else if (!prob_clipped(z)) g = -ts / z + (1.0f - ts) / (1.0f - z);
      } else {
        g = 2.0f * (z - t);
      }
    }
    dpred[e] = scale * g;
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_loss(const KernelDesc& desc, std::string* why_not) {
  LossParams p;
  if (!check_loss(desc, &p, why_not)) return nullptr;
  if (is_row_loss(p.kind)) {
    if (why_not) *why_not = "cuda:" + desc.op + " has the four fused kinds; " + desc.attrs.s("kind") + " is not one yet";
    return nullptr;
  }
  const bool grad = desc.op == "loss_grad";
  const LossArgs base{p.kind, p.from_logits, p.batch, p.per_sample, static_cast<float>(p.label_smoothing), nullptr, nullptr, nullptr};
  const std::size_t weights_at = grad ? 3 : 2;
  const bool weighted = p.weighted;
  const std::int64_t batch = p.batch;
  const auto bind = [base, weighted, weights_at](const KernelArgs& a) {
    LossArgs l = base;
    l.pred = static_cast<const float*>(a.inputs[0]);
    l.target = a.inputs[1];
    l.weights = weighted ? static_cast<const float*>(a.inputs[weights_at]) : nullptr;
    return l;
  };
  if (!grad) {
    return launch_kernel(
        [bind, batch](const KernelArgs& a) {
          auto* sample = static_cast<float*>(a.workspace);
          Launch::run(LossSampleFn{bind(a), sample}, batch, a.ctx);
          Launch::run(LossSumFn{sample, batch, static_cast<float*>(a.outputs[0])}, 1, a.ctx);
        },
        aligned_bytes(static_cast<std::size_t>(batch) * sizeof(float)));
  }
  const std::int64_t n = p.batch * p.per_sample;
  return launch_kernel(
      [bind, batch, n](const KernelArgs& a) {
        auto* stats = static_cast<float*>(a.workspace);
        const LossArgs l = bind(a);
        Launch::run(LossRowStatsFn{l, stats}, batch, a.ctx);
        Launch::run(LossGradFn{l, stats, static_cast<const float*>(a.inputs[2]), static_cast<float*>(a.outputs[0])}, n, a.ctx);
      },
      aligned_bytes(static_cast<std::size_t>(2 * batch) * sizeof(float)));
}

// ---- reductions ----

enum class ReduceOp { mean, max, mean_grad, max_grad };

template <class T>
struct ReduceFn {  // one index per output (o, i)
  const void* x;
  void* y;
  ReduceView v;
  bool max;
  NNFIT_HD void operator()(std::int64_t out) const {
    const std::int64_t o = out / v.inner, i = out % v.inner;
    const std::int64_t base = o * v.reduced * v.inner + i;
    if (!max) {
      float s = 0.0f;
      for (std::int64_t r = 0; r < v.reduced; ++r) s += load<T>(x, base + r * v.inner);
      store<T>(y, out, s / static_cast<float>(v.reduced));
      return;
    }
    float m = load<T>(x, base);
    for (std::int64_t r = 1; r < v.reduced && m == m; ++r) {
      const float e = load<T>(x, base + r * v.inner);
      if (e > m || e != e) m = e;
    }
    store<T>(y, out, m);
  }
};

template <class T>
struct ReduceGradFn {  // one index per element of x
  const void* x;     // reduce_max_grad: x; reduce_mean_grad: unused
  const void* ymax;  // reduce_max_grad: the forward output
  const void* dy;
  void* dx;
  ReduceView v;
  bool max;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t i = e % v.inner, o = e / (v.reduced * v.inner), out = o * v.inner + i;
    if (!max) {
      store<T>(dx, e, load<T>(dy, out) / static_cast<float>(v.reduced));
      return;
    }
    const float m = load<T>(ymax, out);
    if (!(load<T>(x, e) == m)) {
      store<T>(dx, e, 0.0f);
      return;
    }
    std::int64_t ties = 0;
    const std::int64_t base = o * v.reduced * v.inner + i;
    for (std::int64_t r = 0; r < v.reduced; ++r) ties += load<T>(x, base + r * v.inner) == m;
    store<T>(dx, e, load<T>(dy, out) / static_cast<float>(ties));
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_reduce(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool mean_grad = desc.op == "reduce_mean_grad", max_grad = desc.op == "reduce_max_grad";
  const std::size_t inputs = max_grad ? 3 : 1;
  NNFIT_CHECK(desc.inputs.size() == inputs && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", inputs, " inputs and 1 output");
  const Shape& x = mean_grad ? desc.outputs[0].shape : desc.inputs[0].shape;
  const std::vector<std::int64_t>& axes = desc.attrs.ints("axes");
  NNFIT_CHECK(!axes.empty() && axes.front() >= 0 && axes.back() < x.rank(), InvalidArgument, desc.op, " at node '",
              desc.node_name, "': axes out of range for ", x.to_string());
  const ReduceView v = reduce_view(x, axes);
  const std::int64_t outputs = v.outer * v.inner, n = x.numel();
  if (desc.op == "reduce_mean" || desc.op == "reduce_max") {
    const bool max = desc.op == "reduce_max";
    return launch_kernel([v, max, outputs](const KernelArgs& a) {
      Launch::run(ReduceFn<T>{a.inputs[0], a.outputs[0], v, max}, outputs, a.ctx);
    });
  }
  return launch_kernel([v, max_grad, n](const KernelArgs& a) {
    const ReduceGradFn<T> f = max_grad ? ReduceGradFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], v, true}
                                       : ReduceGradFn<T>{nullptr, nullptr, a.inputs[0], a.outputs[0], v, false};
    Launch::run(f, n, a.ctx);
  });
}

template <class Launch>
void register_training_kernels(KernelRegistry& r) {
  for (const char* op : {"dropout", "dropout_grad"}) {
    add_float_kernels(r, op, make_dropout<Launch, float>, make_dropout<Launch, Bf16>, make_dropout<Launch, F16>);
  }
  for (const char* op : {"loss", "loss_grad"}) r.add(op, DeviceType::cuda, DType::f32, {std::string("cuda:") + op, make_loss<Launch>});
  for (const char* op : {"reduce_mean", "reduce_max", "reduce_mean_grad", "reduce_max_grad"}) {
    add_float_kernels(r, op, make_reduce<Launch, float>, make_reduce<Launch, Bf16>, make_reduce<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
