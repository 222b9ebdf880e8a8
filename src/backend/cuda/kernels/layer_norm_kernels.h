// Private to the CUDA backend: own kernels of layer_norm and layer_norm_grad in their three
// modes (layer, rms_scaling, rms) over x's last axis (Note [Kernel/launcher split]), at
// float32, bfloat16 and float16: the reference's formulas (ref_layer_norm.cpp). Forward:
// one index per row. Gradient: one index per row for dx, and dgamma/dbeta as per-column
// sums over fixed 64-row chunks, then the chunks in order (launch-shape independent).
// Statistics in float32 where the reference uses double; the cuda-host test holds them to it.
#pragma once
#include <math.h>

#include "backend/common/nn_op_geometry.h"
#include "backend/cuda/kernels/elementwise_kernels.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

struct LnMode {
  bool rms = false;        // y from x · rstd, not (x − mean) · rstd
  bool zero_mean = false;  // statistics about 0
};

template <class T>
struct LayerNormRowFn {
  const void* x;
  const void* gamma;
  const void* beta;
  void* y;
  void* mean_out;
  void* rstd_out;
  std::int64_t cols;
  float epsilon;
  LnMode mode;
  NNFIT_HD void operator()(std::int64_t r) const {
    const std::int64_t base = r * cols;
    float mean = 0.0f;
    if (!mode.zero_mean) {
      for (std::int64_t c = 0; c < cols; ++c) mean += load<T>(x, base + c);
      mean /= static_cast<float>(cols);
    }
    float var = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) {
      const float e = load<T>(x, base + c) - mean;
      var += e * e;
    }
    var /= static_cast<float>(cols);
    const float rstd = 1.0f / sqrtf(var + epsilon);
    const float shift = mode.rms ? 0.0f : mean;
    for (std::int64_t c = 0; c < cols; ++c) {
      store<T>(y, base + c, (load<T>(x, base + c) - shift) * rstd * load<T>(gamma, c) + load<T>(beta, c));
    }
    store<T>(mean_out, r, mean);
    store<T>(rstd_out, r, rstd);
  }
};

template <class T>
struct LayerNormGradRowFn {
  const void* x;
  const void* dy;
  const void* gamma;
  const void* mean;
  const void* rstd;
  void* dx;
  std::int64_t cols;
  LnMode mode;
  NNFIT_HD void operator()(std::int64_t r) const {
    const std::int64_t base = r * cols;
    const float m = load<T>(mean, r), s = load<T>(rstd, r), shift = mode.rms ? 0.0f : m;
    float mean_g = 0.0f, mean_gx = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) {
      const float z = (load<T>(x, base + c) - shift) * s, g = load<T>(dy, base + c) * load<T>(gamma, c);
      mean_g += g;
      mean_gx += g * z;
    }
    mean_g = mode.rms ? 0.0f : mean_g / static_cast<float>(cols);
    mean_gx /= static_cast<float>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      const float xhat = (load<T>(x, base + c) - m) * s, g = load<T>(dy, base + c) * load<T>(gamma, c);
      store<T>(dx, base + c, s * (g - mean_g - xhat * mean_gx));
    }
  }
};

// partial_g[chunk·C + c] = Σ dy·z, partial_b = Σ dy over the chunk's rows.
template <class T>
struct LayerNormColumnFn {
  const void* x;
  const void* dy;
  const void* mean;
  const void* rstd;
  float* partial_g;
  float* partial_b;
  std::int64_t rows, cols;
  LnMode mode;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t chunk = i / cols, c = i % cols;
    const std::int64_t end = (chunk + 1) * kRowsPerPartial < rows ? (chunk + 1) * kRowsPerPartial : rows;
    float g = 0.0f, b = 0.0f;
    for (std::int64_t r = chunk * kRowsPerPartial; r < end; ++r) {
      const float shift = mode.rms ? 0.0f : load<T>(mean, r);
      const float d = load<T>(dy, r * cols + c);
      g += d * (load<T>(x, r * cols + c) - shift) * load<T>(rstd, r);
      b += d;
    }
    partial_g[i] = g;
    partial_b[i] = b;
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_layer_norm(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "layer_norm_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 5u : 3u) && desc.outputs.size() == 3, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", grad ? 5 : 3, " inputs and 3 outputs");
  const Shape& x = desc.inputs[0].shape;
  NNFIT_CHECK(x.rank() >= 1, InvalidArgument, desc.op, ": x needs at least one axis");
  const std::int64_t cols = x.dim(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  const LayerNormMode m = layer_norm_mode(desc.attrs);
  const LnMode mode{!m.centred, m.zero_mean};
  if (!grad) {
    const float eps = static_cast<float>(desc.attrs.f("epsilon"));
    return launch_kernel([rows, cols, eps, mode](const KernelArgs& a) {
      Launch::run(LayerNormRowFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], a.outputs[1], a.outputs[2], cols, eps, mode},
                  rows, a.ctx);
    });
  }
  const std::int64_t chunks = std::max<std::int64_t>(1, (rows + kRowsPerPartial - 1) / kRowsPerPartial);
  const std::size_t part = aligned_bytes(static_cast<std::size_t>(chunks * cols) * sizeof(float));
  return launch_kernel(
      [rows, cols, chunks, part, mode](const KernelArgs& a) {
        auto* pg = static_cast<float*>(a.workspace);
        auto* pb = reinterpret_cast<float*>(static_cast<char*>(a.workspace) + part);
        Launch::run(LayerNormGradRowFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.inputs[3], a.inputs[4], a.outputs[0], cols, mode},
                    rows, a.ctx);
        Launch::run(LayerNormColumnFn<T>{a.inputs[0], a.inputs[1], a.inputs[3], a.inputs[4], pg, pb, rows, cols, mode}, chunks * cols,
                    a.ctx);
        Launch::run(ColumnFinishFn<T>{pg, a.outputs[1], chunks, cols}, cols, a.ctx);
        Launch::run(ColumnFinishFn<T>{pb, a.outputs[2], chunks, cols}, cols, a.ctx);
      },
      2 * part);
}

template <class Launch>
void register_layer_norm_kernels(KernelRegistry& r) {
  for (const char* op : {"layer_norm", "layer_norm_grad"}) {
    add_float_kernels(r, op, make_layer_norm<Launch, float>, make_layer_norm<Launch, Bf16>, make_layer_norm<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
