// The augmentation kernels (graph/augment_op_defs.cpp) one sample at a time, shared by the
// reference kernels (ref_augment.cpp: samples in order) and the OpenMP kernels
// (omp_augment.cpp: samples split over threads). A sample's draws are keyed by its index
// (augment.h's augment_uniform) and it reads and writes only its own image, so any split
// gives the reference's bits.
#pragma once
#include <cstdint>
#include <string>

#include "backend/common/augment.h"
#include "nnfit/backend/kernel.h"

namespace nnfit {

enum class AugmentOp {
  random_flip,
  random_flip_grad,
  random_affine,
  affine_transform,
  affine_transform_grad,
  random_contrast,
  random_contrast_grad,
};

// Everything a kernel of one augmentation op needs, read from its desc.
struct AugmentParams {
  AugmentOp op = AugmentOp::random_flip;
  AffineParams image;  // n, h, w, c; the affine ops' fill and interpolation
  AffineDraw draw;     // random_affine
  bool horizontal = false, vertical = false;  // random_flip(_grad)
  double factor_lower = 1.0, factor_upper = 1.0;  // random_contrast
  float value_lower = 0.0f, value_upper = 0.0f;   // random_contrast(_grad)
  std::uint64_t seed = 0;
};

// Throws InvalidArgument for a malformed desc; false (with the reason) for a dtype the
// kernels do not take.
bool check_augment(const KernelDesc& desc, AugmentParams* out, std::string* why_not);

// Doubles of scratch augment_sample needs (random_contrast's channel means).
std::int64_t augment_scratch_doubles(const AugmentParams& p);

// Runs sample n of the op: draws its settings from `key` (dropout_key of the run seed, the
// node seed and the step) where the op is random, writes them to the op's second output,
// and writes sample n of the first output. `scratch`: augment_scratch_doubles(p), this
// caller's own.
void augment_sample(const AugmentParams& p, const KernelArgs& args, std::uint64_t key, std::int64_t n, double* scratch);

// The key of this step's draws for a node seeded `seed`.
std::uint64_t augment_step_key(const KernelArgs& args, std::uint64_t seed);

}  // namespace nnfit
