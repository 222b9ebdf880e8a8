// The per-pixel and per-sample math of the augmentation ops, NNFIT_HD so the CPU kernels
// (through augment.h / augment.cpp) and the CUDA kernels (nvcc, cuda/kernels/
// augment_kernels.h) run the same code: TensorFlow's MapCoordinate and projective taps
// (image_ops.h, line for line, in float), Keras 3's translation, rotation and zoom
// transforms, and the per-sample draws from backend/common/random.h. math.h's float
// functions (floorf, roundf, cosf, ...) are std::'s float overloads on the host.
#pragma once
#include <math.h>

#include <cstdint>

#include "backend/common/hd.h"
#include "backend/common/random.h"

namespace nnfit {

enum class AffineFill { reflect, wrap, constant, nearest };
enum class AffineInterpolation { bilinear, nearest };

// TF's MapCoordinate: an input coordinate outside [0, len - 1] mapped back by the fill mode
// (constant returns it unchanged: the taps outside read fill_value).
NNFIT_HD float affine_map_coordinate(float in, std::int64_t len, AffineFill fill) {
  // TF truncates quotients to DenseIndex (int64) and mixes them back into float.
  const float flen = static_cast<float>(len), last = static_cast<float>(len - 1);
  switch (fill) {
    case AffineFill::constant: return in;
    case AffineFill::nearest: return fminf(fmaxf(in, 0.0f), last);
    case AffineFill::reflect: {
      // Reflect [abcd] to [dcba|abcd|dcba] (TF's code, its quirks included).
      if (len <= 1 && (in < 0 || in > last)) return 0.0f;
      const float sz2 = 2.0f * flen;
      if (in < 0) {
        if (in < sz2) in = sz2 * static_cast<float>(static_cast<std::int64_t>(-in / sz2)) + in;  // always true, as in TF
        in = in < -flen ? in + sz2 : -in - 1.0f;
      } else if (in > last) {
        in -= sz2 * static_cast<float>(static_cast<std::int64_t>(in / sz2));
        if (in >= flen) in = sz2 - in - 1.0f;
      }
      return fminf(fmaxf(in, 0.0f), last);  // 3.5 of length 4 would round to 4 under nearest
    }
    case AffineFill::wrap: {
      // Wrap [abcd] to [abcd|abcd|abcd].
      if (len <= 1 && (in < 0 || in > last)) return 0.0f;
      if (in < 0) {
        in += flen * (static_cast<float>(static_cast<std::int64_t>(-in / last)) + 1.0f);
      } else if (in > last) {
        in -= flen * static_cast<float>(static_cast<std::int64_t>(in / last));
      }
      return fminf(fmaxf(in, 0.0f), last);
    }
  }
  return in;
}

// The taps of output pixel (oy, ox) under transform t (8 floats a0 a1 a2 b0 b1 b2 c0 c1:
// the input point is ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1).
// Rows y0, y1 (weights wy0, wy1) and columns x0, x1 (wx0, wx1); an index outside the image
// reads fill_value. Nearest has one tap (weights 1 and 0). `projection_zero`: k == 0, where
// TF writes fill_value alone.
struct AffineTaps {
  std::int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  float wy0 = 1, wy1 = 0, wx0 = 1, wx1 = 0;
  bool projection_zero = false;
};

NNFIT_HD AffineTaps affine_taps(const float* t, std::int64_t oy, std::int64_t ox, std::int64_t h, std::int64_t w,
                                AffineFill fill, AffineInterpolation interpolation) {
  AffineTaps taps;
  const float fx = static_cast<float>(ox), fy = static_cast<float>(oy);
  const float k = t[6] * fx + t[7] * fy + 1.0f;
  if (k == 0.0f) {
    taps.projection_zero = true;
    return taps;
  }
  const float x = affine_map_coordinate((t[0] * fx + t[1] * fy + t[2]) / k, w, fill);
  const float y = affine_map_coordinate((t[3] * fx + t[4] * fy + t[5]) / k, h, fill);
  if (interpolation == AffineInterpolation::nearest) {
    taps.y0 = taps.y1 = static_cast<std::int64_t>(roundf(y));
    taps.x0 = taps.x1 = static_cast<std::int64_t>(roundf(x));
    return taps;
  }
  const float yf = floorf(y), xf = floorf(x);
  taps.y0 = static_cast<std::int64_t>(yf);
  taps.x0 = static_cast<std::int64_t>(xf);
  taps.y1 = taps.y0 + 1;
  taps.x1 = taps.x0 + 1;
  taps.wy0 = (yf + 1.0f) - y;
  taps.wy1 = y - yf;
  taps.wx0 = (xf + 1.0f) - x;
  taps.wx1 = x - xf;
  return taps;
}

// Keras's transforms (float32 as Keras computes them): translation by (dx, dy) pixels;
// rotation by angle_deg about the image centre ((w - 1) / 2, (h - 1) / 2); zoom by (zx, zy)
// about the centre.
NNFIT_HD void translation_transform(float dx, float dy, float* t) {
  const float v[8] = {1.0f, 0.0f, -dx, 0.0f, 1.0f, -dy, 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

NNFIT_HD void rotation_transform(float angle_deg, std::int64_t h, std::int64_t w, float* t) {
  // Keras's _compute_affine_matrix with centre (0.5, 0.5), no shear, scale 1.
  const float rad = angle_deg * static_cast<float>(3.141592653589793 / 180.0);
  const float cx = 0.5f * (static_cast<float>(w) - 1.0f), cy = 0.5f * (static_cast<float>(h) - 1.0f);
  const float c = cosf(rad), s = sinf(rad);
  const float a0 = c, a1 = -s, b0 = s, b1 = c;
  const float v[8] = {a0, a1, cx - cx * a0 - cy * a1, b0, b1, cy - cx * b0 - cy * b1, 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

// Keras's RandomShear: x' = x + sx·y, y' = sy·x + y about the origin (its shear matrix).
NNFIT_HD void shear_transform(float sx, float sy, float* t) {
  const float v[8] = {1.0f, sx, 0.0f, sy, 1.0f, 0.0f, 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

NNFIT_HD void zoom_transform(float zx, float zy, std::int64_t h, std::int64_t w, float* t) {
  const float v[8] = {zx, 0.0f, (static_cast<float>(w) - 1.0f) / 2.0f * (1.0f - zx), 0.0f, zy,
                      (static_cast<float>(h) - 1.0f) / 2.0f * (1.0f - zy), 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

// Draw slot `slot` (< 4) of sample `n` for a node's per-step key: uniform in (0, 1].
NNFIT_HD double augment_uniform(std::uint64_t key, std::int64_t n, int slot) {
  return noise_uniform(key, static_cast<std::uint64_t>(n) * 4 + static_cast<std::uint64_t>(slot));
}

// random_affine's draws for sample n: kind translation (factors are fractions of h and w),
// rotation (fractions of a full turn, height_* only), zoom (1 + factor; same_zoom: the
// width's zoom is the height's), shear (x factor width_*, y factor height_*, both negated
// together with probability 1/2, as Keras's). Writes the sample's 8-float transform.
enum class AffineDrawKind { translation, rotation, zoom, shear };
struct AffineDrawRange {
  AffineDrawKind kind = AffineDrawKind::zoom;
  double height_lower = 0, height_upper = 0, width_lower = 0, width_upper = 0;
  bool same_zoom = false;
};

NNFIT_HD void draw_affine_transform(const AffineDrawRange& d, std::uint64_t key, std::int64_t n, std::int64_t h,
                                    std::int64_t w, float* t) {
  // A uniform in [lower, upper): 1 - u is in [0, 1).
  const double hv = d.height_lower + (d.height_upper - d.height_lower) * (1.0 - augment_uniform(key, n, 0));
  const double wv = d.width_lower + (d.width_upper - d.width_lower) * (1.0 - augment_uniform(key, n, 1));
  if (d.kind == AffineDrawKind::shear) {
    // Keras: where(uniform(0, 1) > 0.5, -1, 1) times both factors.
    const float sign = 1.0 - augment_uniform(key, n, 2) > 0.5 ? -1.0f : 1.0f;
    shear_transform(static_cast<float>(wv) * sign, static_cast<float>(hv) * sign, t);
  } else if (d.kind == AffineDrawKind::rotation) {
    rotation_transform(static_cast<float>(hv * 360.0), h, w, t);
  } else if (d.kind == AffineDrawKind::translation) {
    // Keras: fractions of the width and height, in pixels.
    translation_transform(static_cast<float>(wv * static_cast<double>(w)), static_cast<float>(hv * static_cast<double>(h)), t);
  } else {
    const double zy = 1.0 + hv, zx = d.same_zoom ? zy : 1.0 + wv;
    zoom_transform(static_cast<float>(zx), static_cast<float>(zy), h, w, t);
  }
}

}  // namespace nnfit
