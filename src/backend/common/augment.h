// The sampling math of the random image augmentation ops (graph/augment_op_defs.cpp),
// shared by their kernels and tests: the per-sample draws (from backend/common/random.h's
// counter-based generator, so a step's draws are a pure function of run seed, node seed,
// step and sample), the transforms Keras 3's RandomTranslation/Rotation/Zoom build, and
// TensorFlow's ImageProjectiveTransformV3 (what keras.ops.image.affine_transform runs on
// the TensorFlow backend): its fill modes, bilinear and nearest taps, in float as TF does.
#pragma once
#include <cstdint>
#include <string>

#include "backend/common/augment_math.h"
#include "nnfit/backend/kernel.h"

namespace nnfit {

// Parse Keras's names; false for any other.
bool parse_affine_fill(const std::string& name, AffineFill* out);
bool parse_affine_interpolation(const std::string& name, AffineInterpolation* out);
inline constexpr const char* kAffineFillNames = "reflect, wrap, constant, nearest";
inline constexpr const char* kAffineInterpolationNames = "bilinear, nearest";

// The flip modes of RandomFlip; one draw per sample flips every axis the mode names.
bool parse_flip_mode(const std::string& name, bool* horizontal, bool* vertical);
inline constexpr const char* kFlipModeNames = "horizontal, vertical, horizontal_and_vertical";

// affine_map_coordinate, affine_taps, the transforms and augment_uniform: augment_math.h.

// Geometry and settings of affine_transform, affine_transform_grad and random_affine.
struct AffineParams {
  std::int64_t n = 0, h = 0, w = 0, c = 0;
  AffineFill fill = AffineFill::reflect;
  AffineInterpolation interpolation = AffineInterpolation::bilinear;
  float fill_value = 0.0f;
};
// Sample n of y = the transform of x, one transform per sample (t [n, 8]); x and y
// [n, h, w, c]. Each touches sample n alone, so kernels may run samples in parallel.
void affine_apply_sample(const AffineParams& p, const float* x, const float* t, float* y, std::int64_t n);
// The adjoint: sample n of dx = the transposed sampling of dy (zeroed first; fill taps get
// nothing).
void affine_apply_adjoint_sample(const AffineParams& p, const float* dy, const float* t, float* dx, std::int64_t n);

// random_affine's draws for sample n: kind translation (factors are fractions of h and w),
// rotation (fractions of a full turn, height_* only), zoom (1 + factor; width_* < -1
// means "the height's zoom"). Writes the sample's 8-float transform.
struct AffineDraw {
  std::string kind;
  double height_lower = 0, height_upper = 0, width_lower = 0, width_upper = 0;
  bool same_zoom = false;  // zoom: width zoom = height zoom (Keras's width_factor None)
};
// (augment_math.h's, with the kind named as the op's attribute names it.)
void draw_affine_transform(const AffineDraw& d, std::uint64_t key, std::int64_t n, std::int64_t h, std::int64_t w,
                           float* t);

// Kernel desc checks; throw InvalidArgument for a malformed desc, return false (with the
// reason) for a dtype the kernels do not take.
bool check_affine(const KernelDesc& desc, AffineParams* out, std::string* why_not);
bool check_image_f32(const KernelDesc& desc, std::string* why_not);

}  // namespace nnfit
