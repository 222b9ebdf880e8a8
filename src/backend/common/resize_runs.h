// One output coordinate's run of TensorFlow's resize sampling (Note [TF resize sampling],
// resize_taps.cpp) as an NNFIT_HD function of the coordinate: the CPU kernels build their
// tables from it once (resize_taps), and the CUDA kernels compute theirs on the device at
// every run (resize_kernels.h), so a captured CUDA graph needs no host table and the two
// paths cannot drift apart. The expressions are TF's float operations in TF's order, on
// the device too (own_kernels.cu: --fmad=false, IEEE division): every tap lands where it
// does on the host, and only lanczos's sinf may differ in its last ulp on a GPU.
#pragma once
#include <float.h>
#include <math.h>

#include <cstdint>

#include "backend/common/hd.h"

namespace nnfit {

// Keras 3's interpolation names for its TensorFlow backend (keras.ops.image.resize).
enum class ResizeInterpolation { nearest, bilinear, bicubic, area, lanczos3, lanczos5 };

// The taps of one run, written into index[0, size) and weight[0, size); a repeated index
// adds its weight to the earlier tap (clamped taps at an edge read the same input). At
// most `capacity` taps are stored: one more sets `overflowed` (resize_run_capacity bounds
// every run, and resize_taps checks it on the host).
struct ResizeRun {
  std::int64_t* index;
  float* weight;
  std::int64_t capacity;
  std::int64_t size = 0;
  bool overflowed = false;

  NNFIT_HD void add(std::int64_t i, float w) {
    for (std::int64_t k = 0; k < size; ++k) {
      if (index[k] == i) {
        weight[k] += w;
        return;
      }
    }
    append(i, w);
  }
  // For an index the run cannot hold yet.
  NNFIT_HD void append(std::int64_t i, float w) {
    if (size == capacity) {
      overflowed = true;
      return;
    }
    index[size] = i;
    weight[size] = w;
    ++size;
  }
};

namespace resize_detail {

NNFIT_HD std::int64_t clamp_index(std::int64_t i, std::int64_t in) { return i < 0 ? 0 : (i > in - 1 ? in - 1 : i); }

inline constexpr std::int64_t kCubicTableSize = 1024;

// TF's InitCoeffsTable(-0.5) entry 2i + `odd`: Keys' cubic at i / 1024 (odd 0) or at
// 1 + i / 1024 (odd 1), the table's own double expressions, computed where needed.
NNFIT_HD float keys_cubic_entry(std::int64_t i, int odd) {
  const double a = -0.5;
  float x = static_cast<float>(static_cast<double>(i) * 1.0 / kCubicTableSize);
  if (!odd) return static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
  x += 1.0f;
  return static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
}

// Renormalizes w[0, n) to sum 1 unless the sum is about 0 (TF's rule for both bicubic and
// ScaleAndTranslate); returns whether it did.
NNFIT_HD bool normalize(float* w, std::int64_t n) {
  float sum = 0.0f;
  for (std::int64_t k = 0; k < n; ++k) sum += w[k];
  if (!(fabsf(sum) >= 1000.0f * FLT_MIN)) return false;
  const float inv = 1.0f / sum;
  for (std::int64_t k = 0; k < n; ++k) w[k] *= inv;
  return true;
}

// ScaleAndTranslate's kernels (scale_and_translate_op.h) and their radius.
NNFIT_HD float span_radius(ResizeInterpolation method) {
  switch (method) {
    case ResizeInterpolation::bilinear: return 1.0f;
    case ResizeInterpolation::bicubic: return 2.0f;
    case ResizeInterpolation::lanczos3: return 3.0f;
    default: return 5.0f;
  }
}
NNFIT_HD float span_kernel(ResizeInterpolation method, float x) {
  x = fabsf(x);
  switch (method) {
    case ResizeInterpolation::bilinear:  // triangle
      return x < 1.0f ? 1.0f - x : 0.0f;
    case ResizeInterpolation::bicubic:  // Keys' cubic, a = -0.5
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    default: {  // lanczos
      const float kPi = 3.14159265359f;
      const float r = span_radius(method);
      if (x > r) return 0.0f;
      if (x <= 1e-3f) return 1.0f;
      return r * sinf(kPi * x) * sinf(kPi * x / r) / (kPi * kPi * x * x);
    }
  }
}

// The kernel's reach in input coordinates (radius, times in / out when antialias shrinks).
NNFIT_HD float span_kernel_scale(bool antialias, std::int64_t in, std::int64_t out) {
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  const auto inv_scale = static_cast<float>(1.0 / scale);
  return antialias ? (inv_scale > 1.0f ? inv_scale : 1.0f) : 1.0f;
}

NNFIT_HD void nearest_run(std::int64_t in, std::int64_t out, std::int64_t o, ResizeRun& r) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float f = (static_cast<float>(o) + 0.5f) * scale;
  r.add(clamp_index(static_cast<std::int64_t>(floorf(f)), in), 1.0f);
}

NNFIT_HD void bilinear_run(std::int64_t in, std::int64_t out, std::int64_t o, ResizeRun& r) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
  const float f_floor = floorf(f);
  const auto down = static_cast<std::int64_t>(f_floor);
  const std::int64_t lo = down > 0 ? down : 0;
  const auto up = static_cast<std::int64_t>(ceilf(f));
  const std::int64_t hi = up < in - 1 ? up : in - 1;
  const float lerp = f - f_floor;
  if (lo == hi) {
    r.add(lo, 1.0f);  // TF's top + (bottom - top) * lerp is then exactly top
  } else {
    r.add(lo, 1.0f - lerp);
    r.add(hi, lerp);
  }
}

NNFIT_HD void bicubic_run(std::int64_t in, std::int64_t out, std::int64_t o, ResizeRun& r) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
  const auto loc = static_cast<std::int64_t>(floorf(f));
  const float delta = f - static_cast<float>(loc);
  const auto offset = static_cast<std::int64_t>(lrintf(delta * static_cast<float>(kCubicTableSize)));
  const std::int64_t back = kCubicTableSize - offset;
  const float raw[4] = {keys_cubic_entry(offset, 1), keys_cubic_entry(offset, 0), keys_cubic_entry(back, 0),
                        keys_cubic_entry(back, 1)};
  float w[4];
  std::int64_t idx[4];
  for (int k = 0; k < 4; ++k) {
    idx[k] = clamp_index(loc - 1 + k, in);
    w[k] = idx[k] == loc - 1 + k ? raw[k] : 0.0f;
  }
  normalize(w, 4);
  for (int k = 0; k < 4; ++k) r.add(idx[k], w[k]);
}

NNFIT_HD void area_run(std::int64_t in, std::int64_t out, std::int64_t o, ResizeRun& r) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float lo = static_cast<float>(o) * scale;
  const float hi = static_cast<float>(o + 1) * scale;
  const auto start = static_cast<std::int64_t>(floorf(lo));
  const auto end = static_cast<std::int64_t>(ceilf(hi));
  for (std::int64_t i = start; i < end; ++i) {
    const auto fi = static_cast<float>(i);
    float w = 0.0f;
    if (fi < lo) {
      w = fi + 1.0f > hi ? scale : fi + 1.0f - lo;
    } else {
      w = fi + 1.0f > hi ? hi - fi : 1.0f;
    }
    r.add(clamp_index(i, in), w / scale);
  }
}

NNFIT_HD void span_run(ResizeInterpolation method, bool antialias, std::int64_t in, std::int64_t out, std::int64_t o,
                       ResizeRun& r) {
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  const auto inv_scale = static_cast<float>(1.0 / scale);
  const float kernel_scale = span_kernel_scale(antialias, in, out);
  const float inv_kernel_scale = 1.0f / kernel_scale;
  const float reach = span_radius(method) * kernel_scale;
  const float sample = (static_cast<float>(o) + 0.5f) * inv_scale;
  if (sample < 0.0f || sample > static_cast<float>(in)) return;  // outside the image: no sample
  const std::int64_t start = clamp_index(static_cast<std::int64_t>(ceilf(sample - reach - 0.5f)), in);
  const std::int64_t end = clamp_index(static_cast<std::int64_t>(floorf(sample + reach - 0.5f)), in) + 1;
  for (std::int64_t i = start; i < end; ++i) {  // distinct indices: append
    const float pos = static_cast<float>(i) + 0.5f - sample;
    r.append(i, span_kernel(method, fabsf(pos * inv_kernel_scale)));
  }
  if (r.overflowed || !normalize(r.weight, r.size)) r.size = 0;  // else TF leaves the run's weights at 0
}

}  // namespace resize_detail

// Whether `method` (with antialias) samples through ScaleAndTranslate's kernels.
NNFIT_HD bool resize_uses_span(ResizeInterpolation method, bool antialias) {
  return method == ResizeInterpolation::lanczos3 || method == ResizeInterpolation::lanczos5 ||
         (antialias && (method == ResizeInterpolation::bilinear || method == ResizeInterpolation::bicubic));
}

// The taps of output coordinate o (0 <= o < out) of an axis of length in into r (empty).
// requires: in >= 1, out >= 1.
NNFIT_HD void resize_run(ResizeInterpolation method, bool antialias, std::int64_t in, std::int64_t out, std::int64_t o,
                         ResizeRun& r) {
  using namespace resize_detail;
  if (resize_uses_span(method, antialias)) return span_run(method, antialias, in, out, o, r);
  switch (method) {
    case ResizeInterpolation::nearest: return nearest_run(in, out, o, r);
    case ResizeInterpolation::bilinear: return bilinear_run(in, out, o, r);
    case ResizeInterpolation::bicubic: return bicubic_run(in, out, o, r);
    default: return area_run(in, out, o, r);
  }
}

// A bound on every run's length for this axis: the taps a run can be offered, from the
// same float arithmetic that places them (at most `in`: a run's indices are distinct).
NNFIT_HD std::int64_t resize_run_capacity(ResizeInterpolation method, bool antialias, std::int64_t in,
                                          std::int64_t out) {
  using namespace resize_detail;
  std::int64_t n = 0;
  if (resize_uses_span(method, antialias)) {
    const float reach = span_radius(method) * span_kernel_scale(antialias, in, out);
    n = static_cast<std::int64_t>(ceilf(2.0f * reach)) + 2;  // ceil(s - reach - 0.5) .. floor(s + reach - 0.5)
  } else if (method == ResizeInterpolation::area) {
    n = static_cast<std::int64_t>(ceilf(static_cast<float>(in) / static_cast<float>(out))) + 2;  // floor(lo) .. ceil(hi)
  } else {
    n = method == ResizeInterpolation::nearest ? 1 : (method == ResizeInterpolation::bilinear ? 2 : 4);
  }
  return n < in ? n : in;
}

}  // namespace nnfit
