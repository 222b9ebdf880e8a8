// omp:max_pool3d_grad, cpu_max_pool2d_grad.cpp's kernel with a depth axis. oneDNN's max-pool
// backward needs the opaque workspace of a training forward pass, so this kernel recomputes
// each window's argmax from x: the first position in row-major (depth, height, width)
// window order that holds the maximum gets dy (docs/design/ops.md). Threads split (image,
// 16-channel block) pairs: two pairs never write the same dx element, so overlapping
// windows accumulate without races, and a volume batch of 2 still keeps every core busy
// when the channels are wide. NaN inputs are not given TF's treatment.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/onednn_kernels.h"

namespace nnfit {

namespace {

constexpr std::int64_t kChannelBlock3d = 16;

// The in-bounds part of one window: [lo[a], hi[a]) on each axis a (depth, height, width).
struct Box {
  std::int64_t lo[3], hi[3];
};

// One window's gradient for channels [c0, c0 + nc) of one volume, vectorized over the
// channels: pass 1 finds the max, pass 2 (loads only, scanning backwards so the last hit
// is the first position) its first row-major position as a float index, then dy is added
// there. kWidth > 0 fixes nc.
template <std::int64_t kWidth, bool kRelu>
inline void window_grad(const Window3d& g, const float* xn, float* dxn, const float* dyp, std::int64_t c0,
                        const Box& b, std::int64_t nc_runtime) {
  const std::int64_t nc = kWidth > 0 ? kWidth : nc_runtime;
  const std::int64_t hh = b.hi[1] - b.lo[1], ww = b.hi[2] - b.lo[2];
  auto at = [&](std::int64_t d, std::int64_t h, std::int64_t w) {
    return ((d * g.in[1] + h) * g.in[2] + w) * g.c + c0;
  };
  float mx[kChannelBlock3d];
  float pos_of_max[kChannelBlock3d];
  const float* first = xn + at(b.lo[0], b.lo[1], b.lo[2]);
  for (std::int64_t c = 0; c < nc; ++c) mx[c] = first[c];
  for (std::int64_t d = b.lo[0]; d < b.hi[0]; ++d)
    for (std::int64_t h = b.lo[1]; h < b.hi[1]; ++h)
      for (std::int64_t w = b.lo[2]; w < b.hi[2]; ++w) {
        const float* xp = xn + at(d, h, w);
        for (std::int64_t c = 0; c < nc; ++c) mx[c] = xp[c] > mx[c] ? xp[c] : mx[c];
      }
  for (std::int64_t c = 0; c < nc; ++c) pos_of_max[c] = 0.0f;
  for (std::int64_t d = b.hi[0] - 1; d >= b.lo[0]; --d)
    for (std::int64_t h = b.hi[1] - 1; h >= b.lo[1]; --h)
      for (std::int64_t w = b.hi[2] - 1; w >= b.lo[2]; --w) {
        const float* xp = xn + at(d, h, w);
        const float pos = static_cast<float>(((d - b.lo[0]) * hh + (h - b.lo[1])) * ww + (w - b.lo[2]));
        for (std::int64_t c = 0; c < nc; ++c) pos_of_max[c] = xp[c] == mx[c] ? pos : pos_of_max[c];
      }
  for (std::int64_t c = 0; c < nc; ++c) {
    const auto pos = static_cast<std::int64_t>(pos_of_max[c]);
    // With a fused relu gradient, x at the argmax is the window's max: pass dy where it is > 0.
    const float g_c = kRelu && !(mx[c] > 0.0f) ? 0.0f : dyp[c];
    dxn[at(b.lo[0] + pos / (hh * ww), b.lo[1] + (pos / ww) % hh, b.lo[2] + pos % ww) + c] += g_c;
  }
}

// Stateless apart from the geometry; run() from one thread at a time, parallel inside.
class OmpMaxPool3dGrad final : public Kernel {
 public:
  OmpMaxPool3dGrad(const Window3d& g, bool relu) : g_(g), relu_(relu) {}

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[2]);
    float* dx = static_cast<float*>(args.outputs[0]);
    const Window3d g = g_;
    const bool relu = relu_;
    const std::int64_t in_volume = g.in[0] * g.in[1] * g.in[2] * g.c;
    const std::int64_t out_volume = g.out[0] * g.out[1] * g.out[2] * g.c;
    const std::int64_t blocks = (g.c + kChannelBlock3d - 1) / kChannelBlock3d;
#pragma omp parallel for schedule(static)
    for (std::int64_t n = 0; n < g.n; ++n) {
      std::memset(dx + n * in_volume, 0, static_cast<std::size_t>(in_volume) * sizeof(float));
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t n = 0; n < g.n; ++n) {
      for (std::int64_t cb = 0; cb < blocks; ++cb) {
        const float* xn = x + n * in_volume;
        float* dxn = dx + n * in_volume;
        const float* dyn = dy + n * out_volume;
        const std::int64_t c0 = cb * kChannelBlock3d;
        const std::int64_t nc = std::min(kChannelBlock3d, g.c - c0);
        Box b;
        std::int64_t p[3];
        for (p[0] = 0; p[0] < g.out[0]; ++p[0])
          for (p[1] = 0; p[1] < g.out[1]; ++p[1])
            for (p[2] = 0; p[2] < g.out[2]; ++p[2]) {
              for (std::size_t a = 0; a < 3; ++a) {
                const std::int64_t start = p[a] * g.stride[a] - g.pad_before[a];
                b.lo[a] = std::max<std::int64_t>(start, 0);
                b.hi[a] = std::min(start + g.k[a], g.in[a]);
              }
              const float* dyp = dyn + ((p[0] * g.out[1] + p[1]) * g.out[2] + p[2]) * g.c + c0;
              if (nc == kChannelBlock3d) {
                if (relu) window_grad<kChannelBlock3d, true>(g, xn, dxn, dyp, c0, b, nc);
                else window_grad<kChannelBlock3d, false>(g, xn, dxn, dyp, c0, b, nc);
              } else {
                if (relu) window_grad<0, true>(g, xn, dxn, dyp, c0, b, nc);
                else window_grad<0, false>(g, xn, dxn, dyp, c0, b, nc);
              }
            }
      }
    }
  }

 private:
  Window3d g_;
  bool relu_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_max_pool3d_grad(const KernelDesc& desc, std::string* /*why_not*/) {
  return std::make_unique<OmpMaxPool3dGrad>(checked_window3d(desc), desc.attrs.i_or("relu", 0) != 0);
}

}  // namespace nnfit
