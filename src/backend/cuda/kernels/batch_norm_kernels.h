// Private to the CUDA backend: own kernels of batch_norm_train, batch_norm_grad,
// batch_norm_infer and batch_norm_infer_grad over the channels-last [rows, C] view (Note
// [Kernel/launcher split]), at float32, bfloat16 and float16 (every floating tensor of one
// type). The reference's formulas (ref_train_batch_norm.cpp): two-pass statistics (the
// mean, then the biased variance about it); per-channel sums are partial sums over fixed
// 64-row chunks, then the chunks in order, so results do not depend on the launch shape.
// Sums run in float32 where the reference uses double; the cuda-host test holds them to it.
#pragma once
#include <math.h>

#include "backend/common/train_op_checks.h"
#include "backend/cuda/kernels/elementwise_kernels.h"
#include "backend/cuda/kernels/own_kernel.h"

namespace nnfit::cuda {

enum class BnSum { x, centered_square, grad };  // Σx; Σ(x − mean)²; Σdy and Σdy·x̂

// partial[chunk·C + c] (and partial2 for grad) over the chunk's rows.
template <class T>
struct BnPartialFn {
  const void* x;
  const void* dy;       // grad only
  const float* mean;    // centered_square, grad
  const float* rstd;    // grad
  float* partial;
  float* partial2;      // grad only
  std::int64_t rows, channels;
  BnSum what;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t chunk = i / channels, c = i % channels;
    const std::int64_t end = (chunk + 1) * kRowsPerPartial < rows ? (chunk + 1) * kRowsPerPartial : rows;
    float s = 0.0f, s2 = 0.0f;
    for (std::int64_t r = chunk * kRowsPerPartial; r < end; ++r) {
      const float v = load<T>(x, r * channels + c);
      if (what == BnSum::x) {
        s += v;
      } else if (what == BnSum::centered_square) {
        s += (v - mean[c]) * (v - mean[c]);
      } else {
        const float g = load<T>(dy, r * channels + c);
        s += g;
        s2 += g * (v - mean[c]) * rstd[c];
      }
    }
    partial[i] = s;
    if (partial2) partial2[i] = s2;
  }
};

// One index per channel: adds the chunks in order; scale divides (1/rows for a mean).
struct BnFinishFn {
  const float* partial;
  float* out;
  std::int64_t chunks, channels;
  float scale;
  NNFIT_HD void operator()(std::int64_t c) const {
    float s = 0.0f;
    for (std::int64_t k = 0; k < chunks; ++k) s += partial[k * channels + c];
    out[c] = s * scale;
  }
};

// One index per channel: the statistics as the op's outputs (or rstd from given ones).
template <class T>
struct BnStatsFn {
  const float* mean;  // the workspace's
  const float* var;
  float* rstd;
  void* mean_out;  // null: not an output
  void* var_out;
  float epsilon;
  NNFIT_HD void operator()(std::int64_t c) const {
    rstd[c] = 1.0f / sqrtf(var[c] + epsilon);
    if (mean_out) store<T>(mean_out, c, mean[c]);
    if (var_out) store<T>(var_out, c, var[c]);
  }
};

// One index per element: y = γ (x − mean) rstd + β, or the gradient.
template <class T>
struct BnApplyFn {
  const void* x;
  const void* dy;     // gradients
  const void* gamma;
  const void* beta;   // forward
  const float* mean;
  const float* rstd;
  const float* sum_dy;       // batch_norm_grad
  const float* sum_dy_xhat;  // batch_norm_grad
  void* out;
  std::int64_t rows, channels;
  int mode;  // 0 forward, 1 training gradient, 2 inference gradient
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t c = i % channels;
    const float g = load<T>(gamma, c);
    const float xhat = (load<T>(x, i) - mean[c]) * rstd[c];
    if (mode == 0) {
      store<T>(out, i, g * xhat + load<T>(beta, c));
    } else if (mode == 1) {
      const float m = static_cast<float>(rows);
      store<T>(out, i, g * rstd[c] * (load<T>(dy, i) - sum_dy[c] / m - xhat * sum_dy_xhat[c] / m));
    } else {
      store<T>(out, i, load<T>(dy, i) * g * rstd[c]);
    }
  }
};

// Copies float sums into the op's outputs of type T.
template <class T>
struct StoreFn {
  const float* src;
  void* dst;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(dst, i, src[i]); }
};

template <class T>
struct LoadFn {
  const void* src;
  float* dst;
  NNFIT_HD void operator()(std::int64_t i) const { dst[i] = load<T>(src, i); }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_batch_norm(const KernelDesc& desc, std::string* why_not) {
  BatchNormParams p;
  if (!floats_are<T>(desc, why_not) || !check_batch_norm(as_f32(desc), &p, why_not)) return nullptr;
  const std::int64_t rows = p.geometry.rows, C = p.geometry.channels, n = rows * C;
  const std::int64_t chunks = std::max<std::int64_t>(1, (rows + kRowsPerPartial - 1) / kRowsPerPartial);
  const float eps = static_cast<float>(p.epsilon);
  const std::string op = desc.op;
  // Workspace: two partial arrays, then mean, var, rstd, and two sums per channel.
  const std::size_t part = aligned_bytes(static_cast<std::size_t>(chunks * C) * sizeof(float));
  const std::size_t chan = aligned_bytes(static_cast<std::size_t>(C) * sizeof(float));
  return launch_kernel(
      [=](const KernelArgs& a) {
        char* ws = static_cast<char*>(a.workspace);
        auto* p1 = reinterpret_cast<float*>(ws);
        auto* p2 = reinterpret_cast<float*>(ws + part);
        auto* mean = reinterpret_cast<float*>(ws + 2 * part);
        auto* var = reinterpret_cast<float*>(ws + 2 * part + chan);
        auto* rstd = reinterpret_cast<float*>(ws + 2 * part + 2 * chan);
        auto* s1 = reinterpret_cast<float*>(ws + 2 * part + 3 * chan);
        auto* s2 = reinterpret_cast<float*>(ws + 2 * part + 4 * chan);
        const void* x = a.inputs[0];
        if (op == "batch_norm_train") {
          Launch::run(BnPartialFn<T>{x, nullptr, nullptr, nullptr, p1, nullptr, rows, C, BnSum::x}, chunks * C, a.ctx);
          Launch::run(BnFinishFn{p1, mean, chunks, C, 1.0f / static_cast<float>(rows)}, C, a.ctx);
          Launch::run(BnPartialFn<T>{x, nullptr, mean, nullptr, p1, nullptr, rows, C, BnSum::centered_square}, chunks * C, a.ctx);
          Launch::run(BnFinishFn{p1, var, chunks, C, 1.0f / static_cast<float>(rows)}, C, a.ctx);
          Launch::run(BnStatsFn<T>{mean, var, rstd, a.outputs[1], a.outputs[2], eps}, C, a.ctx);
          Launch::run(BnApplyFn<T>{x, nullptr, a.inputs[1], a.inputs[2], mean, rstd, nullptr, nullptr, a.outputs[0], rows, C, 0}, n,
                      a.ctx);
          return;
        }
        // The others read the statistics: batch_norm_infer x, γ, β, mean, var; the gradients
        // x, dy, γ, mean, var.
        const bool infer = op == "batch_norm_infer";
        Launch::run(LoadFn<T>{a.inputs[3], mean}, C, a.ctx);
        Launch::run(LoadFn<T>{a.inputs[4], var}, C, a.ctx);
        Launch::run(BnStatsFn<T>{mean, var, rstd, nullptr, nullptr, eps}, C, a.ctx);
        if (infer) {
          Launch::run(BnApplyFn<T>{x, nullptr, a.inputs[1], a.inputs[2], mean, rstd, nullptr, nullptr, a.outputs[0], rows, C, 0}, n,
                      a.ctx);
          return;
        }
        const void* dy = a.inputs[1];
        Launch::run(BnPartialFn<T>{x, dy, mean, rstd, p1, p2, rows, C, BnSum::grad}, chunks * C, a.ctx);
        Launch::run(BnFinishFn{p1, s1, chunks, C, 1.0f}, C, a.ctx);
        Launch::run(BnFinishFn{p2, s2, chunks, C, 1.0f}, C, a.ctx);
        Launch::run(BnApplyFn<T>{x, dy, a.inputs[2], nullptr, mean, rstd, s1, s2, a.outputs[0], rows, C,
                                 op == "batch_norm_grad" ? 1 : 2},
                    n, a.ctx);
        Launch::run(StoreFn<T>{s2, a.outputs[1]}, C, a.ctx);  // dγ = Σ dy·x̂
        Launch::run(StoreFn<T>{s1, a.outputs[2]}, C, a.ctx);  // dβ = Σ dy
      },
      2 * part + 5 * chan);
}

template <class Launch>
void register_batch_norm_kernels(KernelRegistry& r) {
  for (const char* op : {"batch_norm_train", "batch_norm_grad", "batch_norm_infer", "batch_norm_infer_grad"}) {
    add_float_kernels(r, op, make_batch_norm<Launch, float>, make_batch_norm<Launch, Bf16>, make_batch_norm<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
