// Private to the CUDA backend: own kernels of group_norm, group_norm_grad, standardize and
// standardize_grad (Note [Kernel/launcher split]), at float32, bfloat16 and float16, with
// the reference's formulas (ref_layer_norm.cpp).
//   group_norm over x [N, S..., C] seen as [N, S, G, C/G]: one index per (sample, group)
//   computes its statistics and writes its elements. The gradient: one index per (sample,
//   group) for dx; dgamma/dbeta as per-channel sums over fixed 64-row chunks of the N·S
//   positions, then the chunks in order (launch-shape independent, as layer_norm's).
//   standardize (Keras's Normalization): element-wise, s = max(sqrt(var), 1e-7) per column.
// Statistics in float32 where the reference uses double; the cuda-host test holds them to it.
#pragma once
#include <math.h>

#include <algorithm>

#include "backend/cuda/kernels/elementwise_kernels.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

struct GroupGeometry {
  std::int64_t s = 0, c = 0, groups = 1;  // positions per sample, channels, groups
  NNFIT_HD std::int64_t width() const { return c / groups; }
  // Index into x of element k (of s · width) of group g of sample i.
  NNFIT_HD std::int64_t at(std::int64_t i, std::int64_t g, std::int64_t k) const {
    const std::int64_t p = k / width(), ch = g * width() + k % width();
    return (i * s + p) * c + ch;
  }
};

template <class T>
struct GroupNormFn {
  const void* x;
  const void* gamma;
  const void* beta;
  void* y;
  void* mean_out;
  void* rstd_out;
  GroupGeometry geo;
  float epsilon;
  NNFIT_HD void operator()(std::int64_t ig) const {
    const std::int64_t i = ig / geo.groups, g = ig % geo.groups, count = geo.s * geo.width();
    float mean = 0.0f;
    for (std::int64_t k = 0; k < count; ++k) mean += load<T>(x, geo.at(i, g, k));
    mean /= static_cast<float>(count);
    float var = 0.0f;
    for (std::int64_t k = 0; k < count; ++k) {
      const float e = load<T>(x, geo.at(i, g, k)) - mean;
      var += e * e;
    }
    const float rstd = 1.0f / sqrtf(var / static_cast<float>(count) + epsilon);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t a = geo.at(i, g, k), ch = a % geo.c;
      store<T>(y, a, (load<T>(x, a) - mean) * rstd * load<T>(gamma, ch) + load<T>(beta, ch));
    }
    store<T>(mean_out, ig, mean);
    store<T>(rstd_out, ig, rstd);
  }
};

template <class T>
struct GroupNormGradFn {
  const void* x;
  const void* dy;
  const void* gamma;
  const void* mean;
  const void* rstd;
  void* dx;
  GroupGeometry geo;
  NNFIT_HD void operator()(std::int64_t ig) const {
    const std::int64_t i = ig / geo.groups, g = ig % geo.groups, count = geo.s * geo.width();
    const float m = load<T>(mean, ig), r = load<T>(rstd, ig);
    float mean_g = 0.0f, mean_gx = 0.0f;
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t a = geo.at(i, g, k);
      const float gd = load<T>(dy, a) * load<T>(gamma, a % geo.c);
      mean_g += gd;
      mean_gx += gd * (load<T>(x, a) - m) * r;
    }
    mean_g /= static_cast<float>(count);
    mean_gx /= static_cast<float>(count);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t a = geo.at(i, g, k);
      const float gd = load<T>(dy, a) * load<T>(gamma, a % geo.c), xhat = (load<T>(x, a) - m) * r;
      store<T>(dx, a, r * (gd - mean_g - xhat * mean_gx));
    }
  }
};

// partial_g[chunk·C + ch] = Σ dy·x̂, partial_b = Σ dy over the chunk's rows (positions n·S + p).
template <class T>
struct GroupNormColumnFn {
  const void* x;
  const void* dy;
  const void* mean;
  const void* rstd;
  float* partial_g;
  float* partial_b;
  std::int64_t rows;
  GroupGeometry geo;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t chunk = i / geo.c, ch = i % geo.c, g = ch / geo.width();
    const std::int64_t end = (chunk + 1) * kRowsPerPartial < rows ? (chunk + 1) * kRowsPerPartial : rows;
    float sg = 0.0f, sb = 0.0f;
    for (std::int64_t r = chunk * kRowsPerPartial; r < end; ++r) {
      const std::int64_t stat = (r / geo.s) * geo.groups + g;
      const float d = load<T>(dy, r * geo.c + ch);
      sg += d * (load<T>(x, r * geo.c + ch) - load<T>(mean, stat)) * load<T>(rstd, stat);
      sb += d;
    }
    partial_g[i] = sg;
    partial_b[i] = sb;
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_group_norm(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "group_norm_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 5u : 3u) && desc.outputs.size() == 3, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", grad ? 5 : 3, " inputs and 3 outputs");
  const Shape& x = desc.inputs[0].shape;
  NNFIT_CHECK(x.rank() >= 2, InvalidArgument, desc.op, ": x needs a batch and a channel axis");
  const std::int64_t n = x[0], c = x.dim(-1), s = n == 0 || c == 0 ? 0 : x.numel() / (n * c);
  const std::int64_t groups = desc.attrs.i("groups");
  NNFIT_CHECK(groups > 0 && c % groups == 0, InvalidArgument, desc.op, ": groups ", groups, " must divide ", c);
  const GroupGeometry geo{s, c, groups};
  if (!grad) {
    const float eps = static_cast<float>(desc.attrs.f("epsilon"));
    return launch_kernel([n, geo, eps](const KernelArgs& a) {
      Launch::run(GroupNormFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], a.outputs[1], a.outputs[2], geo, eps},
                  n * geo.groups, a.ctx);
    });
  }
  const std::int64_t rows = n * s;
  const std::int64_t chunks = std::max<std::int64_t>(1, (rows + kRowsPerPartial - 1) / kRowsPerPartial);
  const std::size_t part = aligned_bytes(static_cast<std::size_t>(chunks * c) * sizeof(float));
  return launch_kernel(
      [n, rows, chunks, part, geo](const KernelArgs& a) {
        auto* pg = static_cast<float*>(a.workspace);
        auto* pb = reinterpret_cast<float*>(static_cast<char*>(a.workspace) + part);
        Launch::run(GroupNormGradFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.inputs[3], a.inputs[4], a.outputs[0], geo},
                    n * geo.groups, a.ctx);
        Launch::run(GroupNormColumnFn<T>{a.inputs[0], a.inputs[1], a.inputs[3], a.inputs[4], pg, pb, rows, geo}, chunks * geo.c,
                    a.ctx);
        Launch::run(ColumnFinishFn<T>{pg, a.outputs[1], chunks, geo.c}, geo.c, a.ctx);
        Launch::run(ColumnFinishFn<T>{pb, a.outputs[2], chunks, geo.c}, geo.c, a.ctx);
      },
      2 * part);
}

// y = (x − mean) / s, or x·s + mean with invert; the gradient dy / s (dy·s with invert).
template <class T>
struct StandardizeFn {
  const void* x;
  const void* mean;  // null for the gradient
  const void* var;
  void* y;
  std::int64_t cols;
  bool invert;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t c = i % cols;
    const float sd = sqrtf(load<T>(var, c));
    const float s = sd > 1e-7f ? sd : 1e-7f;
    const float v = load<T>(x, i), m = mean ? load<T>(mean, c) : 0.0f;
    store<T>(y, i, invert ? v * s + m : (v - m) / s);
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_standardize(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "standardize_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 2u : 3u) && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", grad ? 2 : 3, " inputs and 1 output");
  const Shape& x = desc.inputs[0].shape;
  NNFIT_CHECK(x.rank() >= 1, InvalidArgument, desc.op, ": x needs at least one axis");
  const std::int64_t cols = x.dim(-1), n = x.numel();
  NNFIT_CHECK(desc.inputs.back().shape.numel() == cols, InvalidArgument, desc.op, ": the variance needs ", cols,
              " values (one per column of x), got ", desc.inputs.back().shape.to_string());
  const bool invert = desc.attrs.i_or("invert", 0) != 0;
  return launch_kernel([grad, n, cols, invert](const KernelArgs& a) {
    if (n == 0) return;
    Launch::run(StandardizeFn<T>{a.inputs[0], grad ? nullptr : a.inputs[1], a.inputs[grad ? 1 : 2], a.outputs[0], cols, invert},
                n, a.ctx);
  });
}

template <class Launch>
void register_group_norm_kernels(KernelRegistry& r) {
  for (const char* op : {"group_norm", "group_norm_grad"}) {
    add_float_kernels(r, op, make_group_norm<Launch, float>, make_group_norm<Launch, Bf16>, make_group_norm<Launch, F16>);
  }
  for (const char* op : {"standardize", "standardize_grad"}) {
    add_float_kernels(r, op, make_standardize<Launch, float>, make_standardize<Launch, Bf16>, make_standardize<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
