// The sampling math of the augmentation ops (augment.h). affine_map_coordinate and
// affine_taps follow TensorFlow's image_ops.h (MapCoordinate, ProjectiveGenerator) line for
// line, in float, because Keras 3's affine_transform on the TensorFlow backend is
// ImageProjectiveTransformV3 and a saved model must sample the same pixels.
#include "backend/common/augment.h"

#include <algorithm>
#include <cmath>

#include "backend/common/random.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

std::string where(const KernelDesc& desc) { return desc.op + " at node '" + desc.node_name + "'"; }

}  // namespace

bool parse_affine_fill(const std::string& name, AffineFill* out) {
  static const struct {
    const char* name;
    AffineFill fill;
  } kFills[] = {{"reflect", AffineFill::reflect}, {"wrap", AffineFill::wrap}, {"constant", AffineFill::constant},
                {"nearest", AffineFill::nearest}};
  for (const auto& f : kFills) {
    if (name == f.name) {
      *out = f.fill;
      return true;
    }
  }
  return false;
}

bool parse_affine_interpolation(const std::string& name, AffineInterpolation* out) {
  if (name != "bilinear" && name != "nearest") return false;
  *out = name == "bilinear" ? AffineInterpolation::bilinear : AffineInterpolation::nearest;
  return true;
}

bool parse_flip_mode(const std::string& name, bool* horizontal, bool* vertical) {
  if (name != "horizontal" && name != "vertical" && name != "horizontal_and_vertical") return false;
  *horizontal = name != "vertical";
  *vertical = name != "horizontal";
  return true;
}

float affine_map_coordinate(float in, std::int64_t len, AffineFill fill) {
  // TF truncates quotients to DenseIndex (int64) and mixes them back into float.
  const auto trunc = [](float v) { return static_cast<float>(static_cast<std::int64_t>(v)); };
  const auto flen = static_cast<float>(len), last = static_cast<float>(len - 1);
  const auto clamp = [last](float v) { return std::fmin(std::fmax(v, 0.0f), last); };
  switch (fill) {
    case AffineFill::constant: return in;
    case AffineFill::nearest: return clamp(in);
    case AffineFill::reflect: {
      // Reflect [abcd] to [dcba|abcd|dcba] (TF's code, its quirks included).
      if (len <= 1 && (in < 0 || in > last)) return 0.0f;
      const float sz2 = 2.0f * flen;
      if (in < 0) {
        if (in < sz2) in = sz2 * trunc(-in / sz2) + in;  // always true, as in TF
        in = in < -flen ? in + sz2 : -in - 1.0f;
      } else if (in > last) {
        in -= sz2 * trunc(in / sz2);
        if (in >= flen) in = sz2 - in - 1.0f;
      }
      return clamp(in);  // 3.5 of length 4 would round to 4 under nearest
    }
    case AffineFill::wrap: {
      // Wrap [abcd] to [abcd|abcd|abcd].
      if (len <= 1 && (in < 0 || in > last)) return 0.0f;
      if (in < 0) {
        in += flen * (trunc(-in / last) + 1.0f);
      } else if (in > last) {
        in -= flen * trunc(in / last);
      }
      return clamp(in);
    }
  }
  return in;
}

AffineTaps affine_taps(const float* t, std::int64_t oy, std::int64_t ox, std::int64_t h, std::int64_t w,
                       AffineFill fill, AffineInterpolation interpolation) {
  AffineTaps taps;
  const auto fx = static_cast<float>(ox), fy = static_cast<float>(oy);
  const float k = t[6] * fx + t[7] * fy + 1.0f;
  if (k == 0.0f) {
    taps.projection_zero = true;
    return taps;
  }
  const float x = affine_map_coordinate((t[0] * fx + t[1] * fy + t[2]) / k, w, fill);
  const float y = affine_map_coordinate((t[3] * fx + t[4] * fy + t[5]) / k, h, fill);
  if (interpolation == AffineInterpolation::nearest) {
    taps.y0 = taps.y1 = static_cast<std::int64_t>(std::round(y));
    taps.x0 = taps.x1 = static_cast<std::int64_t>(std::round(x));
    return taps;
  }
  const float yf = std::floor(y), xf = std::floor(x);
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

void affine_apply_sample(const AffineParams& p, const float* x, const float* t, float* y, std::int64_t n) {
  const float* img = x + n * p.h * p.w * p.c;
  const auto read = [&](std::int64_t r, std::int64_t col, std::int64_t ch) {
    return r >= 0 && r < p.h && col >= 0 && col < p.w ? img[(r * p.w + col) * p.c + ch] : p.fill_value;
  };
  for (std::int64_t oy = 0; oy < p.h; ++oy) {
    for (std::int64_t ox = 0; ox < p.w; ++ox) {
      const AffineTaps a = affine_taps(t + 8 * n, oy, ox, p.h, p.w, p.fill, p.interpolation);
      float* out = y + ((n * p.h + oy) * p.w + ox) * p.c;
      for (std::int64_t ch = 0; ch < p.c; ++ch) {
        if (a.projection_zero) {
          out[ch] = p.fill_value;
        } else if (p.interpolation == AffineInterpolation::nearest) {
          out[ch] = read(a.y0, a.x0, ch);
        } else {  // TF's order of operations: along x on each row, then along y
          const float top = a.wx0 * read(a.y0, a.x0, ch) + a.wx1 * read(a.y0, a.x1, ch);
          const float bottom = a.wx0 * read(a.y1, a.x0, ch) + a.wx1 * read(a.y1, a.x1, ch);
          out[ch] = a.wy0 * top + a.wy1 * bottom;
        }
      }
    }
  }
}

void affine_apply_adjoint_sample(const AffineParams& p, const float* dy, const float* t, float* dx, std::int64_t n) {
  const std::int64_t image = p.h * p.w * p.c;
  float* img = dx + n * image;
  std::fill(img, img + image, 0.0f);
  const auto add = [&](std::int64_t r, std::int64_t col, float weight, const float* d) {
    if (r < 0 || r >= p.h || col < 0 || col >= p.w || weight == 0.0f) return;
    for (std::int64_t ch = 0; ch < p.c; ++ch) img[(r * p.w + col) * p.c + ch] += weight * d[ch];
  };
  for (std::int64_t oy = 0; oy < p.h; ++oy) {
    for (std::int64_t ox = 0; ox < p.w; ++ox) {
      const AffineTaps a = affine_taps(t + 8 * n, oy, ox, p.h, p.w, p.fill, p.interpolation);
      if (a.projection_zero) continue;
      const float* d = dy + ((n * p.h + oy) * p.w + ox) * p.c;
      if (p.interpolation == AffineInterpolation::nearest) {
        add(a.y0, a.x0, 1.0f, d);
        continue;
      }
      add(a.y0, a.x0, a.wy0 * a.wx0, d);
      add(a.y0, a.x1, a.wy0 * a.wx1, d);
      add(a.y1, a.x0, a.wy1 * a.wx0, d);
      add(a.y1, a.x1, a.wy1 * a.wx1, d);
    }
  }
}

void translation_transform(float dx, float dy, float* t) {
  const float v[8] = {1.0f, 0.0f, -dx, 0.0f, 1.0f, -dy, 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

void rotation_transform(float angle_deg, std::int64_t h, std::int64_t w, float* t) {
  // Keras's _compute_affine_matrix with centre (0.5, 0.5), no shear, scale 1.
  const float rad = angle_deg * static_cast<float>(3.141592653589793 / 180.0);
  const float cx = 0.5f * (static_cast<float>(w) - 1.0f), cy = 0.5f * (static_cast<float>(h) - 1.0f);
  const float c = std::cos(rad), s = std::sin(rad);
  const float a0 = c, a1 = -s, b0 = s, b1 = c;
  const float v[8] = {a0, a1, cx - cx * a0 - cy * a1, b0, b1, cy - cx * b0 - cy * b1, 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

void zoom_transform(float zx, float zy, std::int64_t h, std::int64_t w, float* t) {
  const float v[8] = {zx, 0.0f, (static_cast<float>(w) - 1.0f) / 2.0f * (1.0f - zx), 0.0f, zy,
                      (static_cast<float>(h) - 1.0f) / 2.0f * (1.0f - zy), 0.0f, 0.0f};
  for (int i = 0; i < 8; ++i) t[i] = v[i];
}

double augment_uniform(std::uint64_t key, std::int64_t n, int slot) {
  return noise_uniform(key, static_cast<std::uint64_t>(n) * 4 + static_cast<std::uint64_t>(slot));
}

void draw_affine_transform(const AffineDraw& d, std::uint64_t key, std::int64_t n, std::int64_t h, std::int64_t w,
                           float* t) {
  // A uniform in [lower, upper): 1 - u is in [0, 1).
  const auto draw = [&](int slot, double lower, double upper) {
    return lower + (upper - lower) * (1.0 - augment_uniform(key, n, slot));
  };
  const double hv = draw(0, d.height_lower, d.height_upper);
  if (d.kind == "rotation") {
    rotation_transform(static_cast<float>(hv * 360.0), h, w, t);
  } else if (d.kind == "translation") {
    const double wv = draw(1, d.width_lower, d.width_upper);
    // Keras: fractions of the width and height, in pixels.
    translation_transform(static_cast<float>(wv * static_cast<double>(w)), static_cast<float>(hv * static_cast<double>(h)),
                          t);
  } else {
    const double zy = 1.0 + hv, zx = d.same_zoom ? zy : 1.0 + draw(1, d.width_lower, d.width_upper);
    zoom_transform(static_cast<float>(zx), static_cast<float>(zy), h, w, t);
  }
}

bool check_image_f32(const KernelDesc& desc, std::string* why_not) {
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.dtype != DType::f32 && t.dtype != DType::u8) {
        if (why_not) {
          *why_not = where(desc) + ": only float32 images are supported, got " + std::string(dtype_name(t.dtype));
        }
        return false;
      }
    }
  }
  return true;
}

bool check_affine(const KernelDesc& desc, AffineParams* out, std::string* why_not) {
  const std::string fill = desc.attrs.s("fill_mode"), interpolation = desc.attrs.s("interpolation");
  NNFIT_CHECK(parse_affine_fill(fill, &out->fill), InvalidArgument, where(desc), ": fill_mode \"", fill,
              "\" is not one of ", kAffineFillNames);
  NNFIT_CHECK(parse_affine_interpolation(interpolation, &out->interpolation), InvalidArgument, where(desc),
              ": interpolation \"", interpolation, "\" is not one of ", kAffineInterpolationNames);
  out->fill_value = static_cast<float>(desc.attrs.f_or("fill_value", 0.0));
  // The image is input 0 (affine_transform, its grad's dy, random_affine's x).
  const Shape& x = desc.inputs.at(0).shape;
  NNFIT_CHECK(x.rank() == 4, InvalidArgument, where(desc), ": expected an [N,H,W,C] image, got ", x.to_string());
  out->n = x[0];
  out->h = x[1];
  out->w = x[2];
  out->c = x[3];
  return check_image_f32(desc, why_not);
}

}  // namespace nnfit
