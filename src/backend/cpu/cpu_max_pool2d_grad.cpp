// omp:max_pool2d_grad. oneDNN's max-pool backward needs the opaque workspace of a training
// forward pass, so this kernel recomputes each window's argmax from x instead: the first
// position in row-major window order that holds the maximum gets dy (docs/design/ops.md).
// Threads split the batch, so overlapping windows accumulate into dx without races. NaN inputs are not given TF's treatment.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "backend/common/low_precision.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/widened_kernel.h"
#include "backend/cpu/onednn_kernels.h"

namespace nnfit {

namespace {

constexpr std::int64_t kChannelBlock = 16;

// One window's gradient for channels [c0, c0 + nc) of one image, vectorized over the
// channels: pass 1 finds the max, pass 2 the first row-major window position holding it
// (kept as a float index so every lane op is f32), then dy is added there. Pass 2 only
// loads: interleaving x loads with dx stores at the same offset stalled on 4K aliasing
// (x and dx are often page-aligned alike) and ran 4x slower. kWidth > 0 fixes nc.
template <std::int64_t kWidth, bool kRelu>
inline void window_grad(const Window2d& g, const float* xn, float* dxn, const float* dyp,
                        std::int64_t c0, std::int64_t h0, std::int64_t h1, std::int64_t w0,
                        std::int64_t w1, std::int64_t nc_runtime) {
  const std::int64_t nc = kWidth > 0 ? kWidth : nc_runtime;
  float mx[kChannelBlock];
  float at[kChannelBlock];
  const float* first = xn + (h0 * g.w + w0) * g.c + c0;
  for (std::int64_t c = 0; c < nc; ++c) mx[c] = first[c];
  for (std::int64_t h = h0; h < h1; ++h) {
    for (std::int64_t w = w0; w < w1; ++w) {
      const float* xp = xn + (h * g.w + w) * g.c + c0;
      for (std::int64_t c = 0; c < nc; ++c) mx[c] = xp[c] > mx[c] ? xp[c] : mx[c];
    }
  }
  // Scan backwards so the last assignment is the first position in row-major order.
  for (std::int64_t c = 0; c < nc; ++c) at[c] = 0.0f;
  const std::int64_t ww = w1 - w0;
  for (std::int64_t h = h1 - 1; h >= h0; --h) {
    for (std::int64_t w = w1 - 1; w >= w0; --w) {
      const float* xp = xn + (h * g.w + w) * g.c + c0;
      const float pos = static_cast<float>((h - h0) * ww + (w - w0));
      for (std::int64_t c = 0; c < nc; ++c) at[c] = xp[c] == mx[c] ? pos : at[c];
    }
  }
  for (std::int64_t c = 0; c < nc; ++c) {
    const std::int64_t pos = static_cast<std::int64_t>(at[c]);
    // With a fused relu gradient, x at the argmax is the window's max: pass dy where it is > 0.
    const float g_c = kRelu && !(mx[c] > 0.0f) ? 0.0f : dyp[c];
    dxn[((h0 + pos / ww) * g.w + w0 + pos % ww) * g.c + c0 + c] += g_c;
  }
}

// One image's gradient: dxn zeroed, then each window's.
inline void image_grad(const Window2d& g, bool relu, const float* xn, const float* dyn, float* dxn) {
  std::memset(dxn, 0, static_cast<std::size_t>(g.h * g.w * g.c) * sizeof(float));
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    const std::int64_t h0 = std::max<std::int64_t>(oh * g.sh - g.pad_top, 0);
    const std::int64_t h1 = std::min(oh * g.sh - g.pad_top + g.kh, g.h);
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      const std::int64_t w0 = std::max<std::int64_t>(ow * g.sw - g.pad_left, 0);
      const std::int64_t w1 = std::min(ow * g.sw - g.pad_left + g.kw, g.w);
      const float* dyp = dyn + (oh * g.ow + ow) * g.c;
      for (std::int64_t c0 = 0; c0 < g.c; c0 += kChannelBlock) {
        const std::int64_t nc = std::min(kChannelBlock, g.c - c0);
        if (nc == kChannelBlock) {
          if (relu) window_grad<kChannelBlock, true>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
          else window_grad<kChannelBlock, false>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
        } else {
          if (relu) window_grad<0, true>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
          else window_grad<0, false>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
        }
      }
    }
  }
}

// Stateless apart from the geometry; run() from one thread at a time, parallel inside. At
// bfloat16 / float16 each thread converts one image of x and dy into float32 in its slice
// of the workspace, computes there and rounds dx back: the same arithmetic as float32 on
// the rounded inputs, with half the memory traffic and no whole-tensor copies.
class OmpMaxPool2dGrad final : public Kernel {
 public:
  OmpMaxPool2dGrad(const Window2d& g, bool relu, DType dtype)
      : g_(g), relu_(relu), dtype_(dtype), threads_(omp_get_max_threads()) {}

  std::size_t workspace_bytes() const override {
    if (dtype_ == DType::f32) return 0;
    return static_cast<std::size_t>(threads_) * per_thread() * sizeof(float);
  }

  void run(const KernelArgs& args) override {
    const Window2d g = g_;
    const bool relu = relu_;
    const std::int64_t image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.c;
    if (dtype_ == DType::f32) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      const float* dy = static_cast<const float*>(args.inputs[2]);
      float* dx = static_cast<float*>(args.outputs[0]);
#pragma omp parallel for schedule(static)
      for (std::int64_t n = 0; n < g.n; ++n) image_grad(g, relu, x + n * image, dy + n * out_image, dx + n * image);
      return;
    }
    const auto* x = static_cast<const std::uint16_t*>(args.inputs[0]);
    const auto* dy = static_cast<const std::uint16_t*>(args.inputs[2]);
    auto* dx = static_cast<std::uint16_t*>(args.outputs[0]);
    float* ws = static_cast<float*>(args.workspace);
    const DType t = dtype_;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t n = 0; n < g.n; ++n) {
      float* xf = ws + static_cast<std::size_t>(omp_get_thread_num()) * per_thread();
      float* dyf = xf + image;
      float* dxf = dyf + out_image;
      // The conversions' own threads stay off: nested in this parallel loop.
      low_precision::to_f32(t, x + n * image, xf, image);
      low_precision::to_f32(t, dy + n * out_image, dyf, out_image);
      image_grad(g, relu, xf, dyf, dxf);
      low_precision::from_f32(t, dxf, dx + n * image, image);
    }
  }

 private:
  std::size_t per_thread() const { return static_cast<std::size_t>(2 * g_.h * g_.w * g_.c + g_.oh * g_.ow * g_.c); }

  Window2d g_;
  bool relu_;
  DType dtype_;
  int threads_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_max_pool2d_grad(const KernelDesc& desc, std::string* why_not) {
  if (std::string r = window_unsupported_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const DType dtype = desc.inputs.at(0).dtype;
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.dtype != dtype || !is_floating(dtype)) {
        if (why_not) *why_not = "x, y, dy and dx must share one floating type";
        return nullptr;
      }
    }
  }
  return std::make_unique<OmpMaxPool2dGrad>(checked_window(widened(desc)), desc.attrs.i_or("relu", 0) != 0, dtype);
}

}  // namespace nnfit
