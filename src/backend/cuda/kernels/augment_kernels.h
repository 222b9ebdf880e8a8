// Private to the CUDA backend: own kernels of the image augmentation ops random_flip
// (+grad), random_contrast (+grad), affine_transform (+grad) and random_affine (Note
// [Kernel/launcher split]) at float32, bfloat16 and float16, over [N, H, W, C] images. The
// per-pixel math and the per-sample draws are backend/common/augment_math.h's, the code
// the CPU kernels run (augment_kernel.cpp), so a sample's flip, factor and transform are
// the reference's numbers.
//   random_flip: one index per element; the first element of a sample writes its flag.
//   random_contrast: one index per (sample, channel): the channel's mean (double, as the
//   reference), then its pixels; the gradient the same way (TF's clip gradient, then the
//   mean's share).
//   affine_transform / random_affine: one index per output element, its taps from the
//   sample's transform; random_affine first draws each sample's transform (one index per
//   sample). The adjoint, a scatter, without atomics: one index per (sample, channel)
//   walks the output pixels in the reference's order into a float32 workspace, then a
//   pass stores it at the kernel's dtype.
#pragma once
#include "backend/common/augment_kernel.h"
#include "backend/common/augment_math.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

struct ImageGeometry {
  std::int64_t n = 0, h = 0, w = 0, c = 0;
  NNFIT_HD std::int64_t sample() const { return h * w * c; }
  NNFIT_HD std::int64_t numel() const { return n * sample(); }
};

template <class T>
struct FlipFn {
  const void* x;
  void* y;
  std::uint8_t* flips;         // random_flip: written; the gradient: read
  // random_draw's (random_flip): the key, and sample 0's row of the global batch
  // (data-parallel: Note [Random draws by global row]); unread by the gradient.
  const std::uint64_t* drawn;
  bool draw, horizontal, vertical;
  ImageGeometry g;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t n = i / g.sample(), within = i % g.sample();
    const std::int64_t ch = within % g.c, col = (within / g.c) % g.w, r = within / (g.c * g.w);
    bool flip;
    if (draw) {
      const std::int64_t row0 = static_cast<std::int64_t>(drawn[1]);
      flip = augment_uniform(drawn[0], row0 + n, 0) <= 0.5;  // Keras: flip where uniform() <= 0.5
      if (within == 0) flips[n] = flip ? 1 : 0;
    } else {
      flip = flips[n] != 0;
    }
    const std::int64_t sr = flip && vertical ? g.h - 1 - r : r, sc = flip && horizontal ? g.w - 1 - col : col;
    store<T>(y, i, load<T>(x, n * g.sample() + (sr * g.w + sc) * g.c + ch));
  }
};

// random_contrast (dy null): y = clip((x − m)·f + m, lower, upper), m the channel's mean;
// random_contrast_grad: g = dy where the unclipped value lies in the range, dx = f·g +
// (1 − f)·mean(g) over the image's pixels.
template <class T>
struct ContrastFn {
  const void* x;
  const void* dy;      // null: the forward op
  const void* factor;  // the gradient: the forward's factors
  void* out;
  void* factor_out;    // the forward: written by channel 0 of each sample
  const std::uint64_t* drawn;  // the forward: random_draw's key and sample 0's row
  double factor_lower, factor_upper;
  float value_lower, value_upper;
  ImageGeometry g;
  NNFIT_HD void operator()(std::int64_t nc) const {
    const std::int64_t n = nc / g.c, ch = nc % g.c, pixels = g.h * g.w, base = n * g.sample() + ch;
    float f;
    if (!dy) {
      const std::int64_t row0 = static_cast<std::int64_t>(drawn[1]);
      f = static_cast<float>(factor_lower + (factor_upper - factor_lower) * (1.0 - augment_uniform(drawn[0], row0 + n, 0)));
      if (ch == 0) store<T>(factor_out, n, f);
    } else {
      f = load<T>(factor, n);
    }
    double mean = 0.0;
    for (std::int64_t px = 0; px < pixels; ++px) mean += load<T>(x, base + px * g.c);
    const float m = static_cast<float>(mean / static_cast<double>(pixels));
    if (!dy) {
      for (std::int64_t px = 0; px < pixels; ++px) {
        const float z = (load<T>(x, base + px * g.c) - m) * f + m;
        store<T>(out, base + px * g.c, fminf(fmaxf(z, value_lower), value_upper));
      }
      return;
    }
    double sum = 0.0;
    for (std::int64_t px = 0; px < pixels; ++px) {
      const float z = (load<T>(x, base + px * g.c) - m) * f + m;
      sum += z >= value_lower && z <= value_upper ? load<T>(dy, base + px * g.c) : 0.0f;
    }
    const double share = (1.0 - f) * sum / static_cast<double>(pixels);
    for (std::int64_t px = 0; px < pixels; ++px) {
      const float z = (load<T>(x, base + px * g.c) - m) * f + m;
      const float gv = z >= value_lower && z <= value_upper ? load<T>(dy, base + px * g.c) : 0.0f;
      store<T>(out, base + px * g.c, static_cast<float>(f * gv + share));
    }
  }
};

struct AffineSettings {
  AffineFill fill = AffineFill::reflect;
  AffineInterpolation interpolation = AffineInterpolation::bilinear;
  float fill_value = 0.0f;
};


template <class T>
NNFIT_HD void load_transform(const void* t, std::int64_t n, float* out) {
  for (int k = 0; k < 8; ++k) out[k] = load<T>(t, 8 * n + k);
}

// random_affine draws each sample's transform here too (from the same key as AffineDrawFn),
// so y is sampled with the float32 transform even where the stored one is rounded.
template <class T>
struct AffineApplyFn {
  const void* x;
  const void* t;  // [N, 8]; unused when drawing
  void* y;
  AffineSettings s;
  ImageGeometry g;
  bool draw = false;
  AffineDrawRange d{};
  const std::uint64_t* drawn = nullptr;  // drawing: random_draw's key and sample 0's row
  NNFIT_HD float read(std::int64_t n, std::int64_t r, std::int64_t col, std::int64_t ch) const {
    return r >= 0 && r < g.h && col >= 0 && col < g.w ? load<T>(x, n * g.sample() + (r * g.w + col) * g.c + ch) : s.fill_value;
  }
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t n = i / g.sample(), within = i % g.sample();
    const std::int64_t ch = within % g.c, ox = (within / g.c) % g.w, oy = within / (g.c * g.w);
    float tr[8];
    if (draw) draw_affine_transform(d, drawn[0], static_cast<std::int64_t>(drawn[1]) + n, g.h, g.w, tr);
    else load_transform<T>(t, n, tr);
    const AffineTaps a = affine_taps(tr, oy, ox, g.h, g.w, s.fill, s.interpolation);
    float v;
    if (a.projection_zero) {
      v = s.fill_value;
    } else if (s.interpolation == AffineInterpolation::nearest) {
      v = read(n, a.y0, a.x0, ch);
    } else {  // TF's order of operations: along x on each row, then along y
      const float top = a.wx0 * read(n, a.y0, a.x0, ch) + a.wx1 * read(n, a.y0, a.x1, ch);
      const float bottom = a.wx0 * read(n, a.y1, a.x0, ch) + a.wx1 * read(n, a.y1, a.x1, ch);
      v = a.wy0 * top + a.wy1 * bottom;
    }
    store<T>(y, i, v);
  }
};

template <class T>
struct AffineDrawFn {  // random_affine: sample n's transform
  void* t;
  AffineDrawRange d;
  const std::uint64_t* drawn;  // random_draw's key and sample 0's row
  ImageGeometry g;
  NNFIT_HD void operator()(std::int64_t n) const {
    float tr[8];
    draw_affine_transform(d, drawn[0], static_cast<std::int64_t>(drawn[1]) + n, g.h, g.w, tr);
    for (int k = 0; k < 8; ++k) store<T>(t, 8 * n + k, tr[k]);
  }
};

template <class T>
struct AffineAdjointFn {  // acc = the transposed sampling of dy, channel ch of sample n
  const void* dy;
  const void* t;
  float* acc;
  AffineSettings s;
  ImageGeometry g;
  NNFIT_HD void add(std::int64_t n, std::int64_t ch, std::int64_t r, std::int64_t col, float weight, float d) const {
    if (r < 0 || r >= g.h || col < 0 || col >= g.w || weight == 0.0f) return;
    acc[n * g.sample() + (r * g.w + col) * g.c + ch] += weight * d;
  }
  NNFIT_HD void operator()(std::int64_t nc) const {
    const std::int64_t n = nc / g.c, ch = nc % g.c;
    for (std::int64_t p = 0; p < g.h * g.w; ++p) acc[n * g.sample() + p * g.c + ch] = 0.0f;
    float tr[8];
    load_transform<T>(t, n, tr);
    for (std::int64_t oy = 0; oy < g.h; ++oy) {
      for (std::int64_t ox = 0; ox < g.w; ++ox) {
        const AffineTaps a = affine_taps(tr, oy, ox, g.h, g.w, s.fill, s.interpolation);
        if (a.projection_zero) continue;
        const float d = load<T>(dy, n * g.sample() + (oy * g.w + ox) * g.c + ch);
        if (s.interpolation == AffineInterpolation::nearest) {
          add(n, ch, a.y0, a.x0, 1.0f, d);
          continue;
        }
        add(n, ch, a.y0, a.x0, a.wy0 * a.wx0, d);
        add(n, ch, a.y0, a.x1, a.wy0 * a.wx1, d);
        add(n, ch, a.y1, a.x0, a.wy1 * a.wx0, d);
        add(n, ch, a.y1, a.x1, a.wy1 * a.wx1, d);
      }
    }
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_augment(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  AugmentParams p;
  if (!check_augment(as_f32(desc), &p, why_not)) return nullptr;
  const ImageGeometry g{p.image.n, p.image.h, p.image.w, p.image.c};
  const AffineSettings s{p.image.fill, p.image.interpolation, p.image.fill_value};
  const std::uint64_t seed = p.seed;
  switch (p.op) {
    case AugmentOp::random_flip:
    case AugmentOp::random_flip_grad: {
      const bool draw = p.op == AugmentOp::random_flip;
      return launch_kernel([=](const KernelArgs& a) {
        if (g.numel() == 0) return;
        auto* flips = static_cast<std::uint8_t*>(draw ? a.outputs[1] : const_cast<void*>(a.inputs[1]));
        const std::uint64_t* drawn = draw ? random_draw<Launch>(a, seed, g.n, 0, 0) : nullptr;
        Launch::run(FlipFn<T>{a.inputs[0], a.outputs[0], flips, drawn, draw, p.horizontal, p.vertical, g}, g.numel(), a.ctx);
      }, kRandomDrawWorkspace);
    }
    case AugmentOp::random_contrast:
    case AugmentOp::random_contrast_grad: {
      const bool grad = p.op == AugmentOp::random_contrast_grad;
      return launch_kernel([=](const KernelArgs& a) {
        if (g.n * g.c == 0 || g.h * g.w == 0) return;
        // The gradient's inputs: dy, x, factor (augment_kernel.cpp's order).
        const void* x = grad ? a.inputs[1] : a.inputs[0];
        const std::uint64_t* drawn = grad ? nullptr : random_draw<Launch>(a, seed, g.n, 0, 0);
        Launch::run(ContrastFn<T>{x, grad ? a.inputs[0] : nullptr, grad ? a.inputs[2] : nullptr, a.outputs[0],
                                  grad ? nullptr : a.outputs[1], drawn, p.factor_lower, p.factor_upper, p.value_lower,
                                  p.value_upper, g},
                    g.n * g.c, a.ctx);
      }, kRandomDrawWorkspace);
    }
    case AugmentOp::affine_transform:
      return launch_kernel([=](const KernelArgs& a) {
        if (g.numel()) Launch::run(AffineApplyFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], s, g}, g.numel(), a.ctx);
      });
    case AugmentOp::random_affine: {
      AffineDrawRange d;
      d.kind = p.draw.kind == "rotation"      ? AffineDrawKind::rotation
               : p.draw.kind == "translation" ? AffineDrawKind::translation
               : p.draw.kind == "shear"       ? AffineDrawKind::shear
                                              : AffineDrawKind::zoom;
      d.height_lower = p.draw.height_lower;
      d.height_upper = p.draw.height_upper;
      d.width_lower = p.draw.width_lower;
      d.width_upper = p.draw.width_upper;
      d.same_zoom = p.draw.same_zoom;
      return launch_kernel([=](const KernelArgs& a) {
        if (g.n == 0) return;
        const std::uint64_t* drawn = random_draw<Launch>(a, seed, g.n, 0, 0);
        Launch::run(AffineDrawFn<T>{a.outputs[1], d, drawn, g}, g.n, a.ctx);
        if (g.numel()) Launch::run(AffineApplyFn<T>{a.inputs[0], nullptr, a.outputs[0], s, g, true, d, drawn}, g.numel(), a.ctx);
      }, kRandomDrawWorkspace);
    }
    case AugmentOp::affine_transform_grad:
      return launch_kernel(
          [=](const KernelArgs& a) {
            if (g.numel() == 0) return;
            auto* acc = static_cast<float*>(a.workspace);
            Launch::run(AffineAdjointFn<T>{a.inputs[0], a.inputs[1], acc, s, g}, g.n * g.c, a.ctx);
            Launch::run(StoreF32Fn<T>{acc, a.outputs[0]}, g.numel(), a.ctx);
          },
          aligned_bytes(static_cast<std::size_t>(g.numel()) * sizeof(float)));
  }
  return nullptr;
}

template <class Launch>
void register_augment_kernels(KernelRegistry& r) {
  for (const char* op : {"random_flip", "random_flip_grad", "random_contrast", "random_contrast_grad", "affine_transform",
                         "affine_transform_grad", "random_affine"}) {
    add_float_kernels(r, op, make_augment<Launch, float>, make_augment<Launch, Bf16>, make_augment<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
