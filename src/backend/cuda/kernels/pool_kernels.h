// Private to the CUDA backend: own kernels of max and average pooling, 2-D and 3-D, and
// their gradients (Note [Kernel/launcher split]), at float32, bfloat16 and float16, with
// the reference's rules (ref_nn_pool3d.cpp): only in-bounds positions take part (padding
// never wins a max and is not counted in an average, TensorFlow's rule), and a max tie
// sends the gradient to the first position in row-major window order. A 2-D op is the 3-D
// one with a depth of 1. Forward: one index per output. Gradients: one index per input
// element, which visits the windows that cover it in output order (the order in which the
// reference adds into it) and, for max, recomputes each window's first argmax; so no two
// indices write one element and no atomics are needed (cuDNN's max-pool backward picks
// among ties differently, and needs a training workspace from the forward pass).
#pragma once
#include <array>

#include "backend/common/nn_op_geometry.h"
#include "backend/cuda/kernels/own_kernel.h"

namespace nnfit::cuda {

struct PoolGeometry {
  std::int64_t n = 0, c = 0;
  std::array<std::int64_t, 3> in{}, k{}, out{}, stride{}, pad{};
  // Output element yi's window, in bounds: [lo[a], hi[a]) per axis; returns the count.
  NNFIT_HD std::int64_t span(std::int64_t yi, std::int64_t* lo, std::int64_t* hi, std::int64_t* nc) const {
    const std::int64_t ch = yi % c;
    std::int64_t r = yi / c, p[3];
    for (int a = 2; a >= 0; --a) {
      p[a] = r % out[a];
      r /= out[a];
    }
    nc[0] = r;
    nc[1] = ch;
    std::int64_t count = 1;
    for (int a = 0; a < 3; ++a) {
      const std::int64_t start = p[a] * stride[a] - pad[a];
      lo[a] = start > 0 ? start : 0;
      hi[a] = start + k[a] < in[a] ? start + k[a] : in[a];
      count *= hi[a] - lo[a];
    }
    return count;
  }
  NNFIT_HD std::int64_t x_index(std::int64_t n_, std::int64_t d, std::int64_t h, std::int64_t w, std::int64_t ch) const {
    return (((n_ * in[0] + d) * in[1] + h) * in[2] + w) * c + ch;
  }
};

// Index in x of output yi's first maximum (row-major window order; NaN never wins).
template <class T>
NNFIT_HD std::int64_t first_argmax(const PoolGeometry& g, const void* x, std::int64_t yi) {
  std::int64_t lo[3], hi[3], nc[2];
  g.span(yi, lo, hi, nc);
  std::int64_t best = -1;
  float best_v = 0.0f;
  for (std::int64_t d = lo[0]; d < hi[0]; ++d)
    for (std::int64_t h = lo[1]; h < hi[1]; ++h)
      for (std::int64_t w = lo[2]; w < hi[2]; ++w) {
        const std::int64_t i = g.x_index(nc[0], d, h, w, nc[1]);
        const float v = load<T>(x, i);
        if (best < 0 || v > best_v) {
          best = i;
          best_v = v;
        }
      }
  return best;
}

template <class T>
struct PoolFn {
  const void* x;
  void* y;
  PoolGeometry g;
  bool max;
  NNFIT_HD void operator()(std::int64_t yi) const {
    if (max) {
      store<T>(y, yi, load<T>(x, first_argmax<T>(g, x, yi)));
      return;
    }
    std::int64_t lo[3], hi[3], nc[2];
    const std::int64_t count = g.span(yi, lo, hi, nc);
    float s = 0.0f;
    for (std::int64_t d = lo[0]; d < hi[0]; ++d)
      for (std::int64_t h = lo[1]; h < hi[1]; ++h)
        for (std::int64_t w = lo[2]; w < hi[2]; ++w) s += load<T>(x, g.x_index(nc[0], d, h, w, nc[1]));
    store<T>(y, yi, s / static_cast<float>(count));
  }
};

template <class T>
struct PoolGradFn {
  const void* x;   // max: the forward input; avg: unused
  const void* dy;
  void* dx;
  PoolGeometry g;
  bool max, relu;
  NNFIT_HD void operator()(std::int64_t xi) const {
    const std::int64_t ch = xi % g.c;
    std::int64_t r = xi / g.c, p[3];
    for (int a = 2; a >= 0; --a) {
      p[a] = r % g.in[a];
      r /= g.in[a];
    }
    const std::int64_t n = r;
    // The outputs whose window covers p on each axis: o·s − pad ≤ p < o·s − pad + k.
    std::int64_t first[3], last[3];
    for (int a = 0; a < 3; ++a) {
      const std::int64_t top = p[a] + g.pad[a];  // o·s ≤ top and o·s > top − k
      const std::int64_t lo = top - g.k[a] + 1 <= 0 ? 0 : (top - g.k[a] + 1 + g.stride[a] - 1) / g.stride[a];
      const std::int64_t hi = top / g.stride[a];
      first[a] = lo;
      last[a] = hi < g.out[a] - 1 ? hi : g.out[a] - 1;
    }
    float acc = 0.0f;
    for (std::int64_t od = first[0]; od <= last[0]; ++od)
      for (std::int64_t oh = first[1]; oh <= last[1]; ++oh)
        for (std::int64_t ow = first[2]; ow <= last[2]; ++ow) {
          const std::int64_t yi = (((n * g.out[0] + od) * g.out[1] + oh) * g.out[2] + ow) * g.c + ch;
          if (max) {
            if (first_argmax<T>(g, x, yi) == xi) acc += load<T>(dy, yi);
          } else {
            std::int64_t lo[3], hi[3], nc[2];
            acc += load<T>(dy, yi) / static_cast<float>(g.span(yi, lo, hi, nc));
          }
        }
    if (relu && !(load<T>(x, xi) > 0.0f)) acc = 0.0f;
    store<T>(dx, xi, acc);
  }
};

inline PoolGeometry pool_geometry(const KernelDesc& f32) {
  PoolGeometry p;
  if (f32.op.find("3d") != std::string::npos) {
    const Window3d g = checked_window3d(f32);
    p.n = g.n;
    p.c = g.c;
    p.in = g.in;
    p.k = g.k;
    p.out = g.out;
    p.stride = g.stride;
    p.pad = g.pad_before;
  } else {
    const Window2d g = checked_window(f32);
    p.n = g.n;
    p.c = g.c;
    p.in = {1, g.h, g.w};
    p.k = {1, g.kh, g.kw};
    p.out = {1, g.oh, g.ow};
    p.stride = {1, g.sh, g.sw};
    p.pad = {0, g.pad_top, g.pad_left};
  }
  return p;
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_pool(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const PoolGeometry g = pool_geometry(as_f32(desc));
  const bool max = desc.op.rfind("max_", 0) == 0, grad = desc.op.find("_grad") != std::string::npos;
  const std::int64_t n_in = g.n * g.in[0] * g.in[1] * g.in[2] * g.c, n_out = g.n * g.out[0] * g.out[1] * g.out[2] * g.c;
  if (!grad) {
    return launch_kernel([g, max, n_out](const KernelArgs& a) { Launch::run(PoolFn<T>{a.inputs[0], a.outputs[0], g, max}, n_out, a.ctx); });
  }
  const bool relu = max && desc.attrs.i_or("relu", 0) != 0;
  return launch_kernel([g, max, relu, n_in](const KernelArgs& a) {
    // max_pool*_grad: x, y, dy; avg_pool*_grad: dy.
    const PoolGradFn<T> f = max ? PoolGradFn<T>{a.inputs[0], a.inputs[2], a.outputs[0], g, true, relu}
                                : PoolGradFn<T>{nullptr, a.inputs[0], a.outputs[0], g, false, false};
    Launch::run(f, n_in, a.ctx);
  });
}

template <class Launch>
void register_pool_kernels(KernelRegistry& r) {
  for (const char* op : {"max_pool2d", "max_pool2d_grad", "avg_pool2d", "avg_pool2d_grad", "max_pool3d", "max_pool3d_grad",
                         "avg_pool3d", "avg_pool3d_grad"}) {
    add_float_kernels(r, op, make_pool<Launch, float>, make_pool<Launch, Bf16>, make_pool<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
