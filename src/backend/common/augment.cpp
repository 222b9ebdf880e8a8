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

void draw_affine_transform(const AffineDraw& d, std::uint64_t key, std::int64_t n, std::int64_t h, std::int64_t w,
                           float* t) {
  AffineDrawRange r;
  r.kind = d.kind == "rotation"      ? AffineDrawKind::rotation
           : d.kind == "translation" ? AffineDrawKind::translation
           : d.kind == "shear"       ? AffineDrawKind::shear
                                     : AffineDrawKind::zoom;
  r.height_lower = d.height_lower;
  r.height_upper = d.height_upper;
  r.width_lower = d.width_lower;
  r.width_upper = d.width_upper;
  r.same_zoom = d.same_zoom;
  draw_affine_transform(r, key, n, h, w, t);
}

bool check_image_f32(const KernelDesc& desc, std::string* why_not) {
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.dtype != DType::f32 && t.dtype != DType::u8) {
        if (why_not) {
          *why_not = desc.where() + ": only float32 images are supported, got " + std::string(dtype_name(t.dtype));
        }
        return false;
      }
    }
  }
  return true;
}

bool check_affine(const KernelDesc& desc, AffineParams* out, std::string* why_not) {
  const std::string fill = desc.attrs.s("fill_mode"), interpolation = desc.attrs.s("interpolation");
  NNFIT_CHECK(parse_affine_fill(fill, &out->fill), InvalidArgument, desc.where(), ": fill_mode \"", fill,
              "\" is not one of ", kAffineFillNames);
  NNFIT_CHECK(parse_affine_interpolation(interpolation, &out->interpolation), InvalidArgument, desc.where(),
              ": interpolation \"", interpolation, "\" is not one of ", kAffineInterpolationNames);
  out->fill_value = static_cast<float>(desc.attrs.f_or("fill_value", 0.0));
  // The image is input 0 (affine_transform, its grad's dy, random_affine's x).
  const Shape& x = desc.inputs.at(0).shape;
  NNFIT_CHECK(x.rank() == 4, InvalidArgument, desc.where(), ": expected an [N,H,W,C] image, got ", x.to_string());
  out->n = x[0];
  out->h = x[1];
  out->w = x[2];
  out->c = x[3];
  return check_image_f32(desc, why_not);
}

}  // namespace nnfit
