// One sample of each augmentation kernel (augment_kernel.h). The formulas are Keras's and
// TF's as docs/design/ops.md states them; the sampling math is augment.cpp's.
#include "backend/common/augment_kernel.h"

#include <algorithm>
#include <cmath>

#include "backend/common/random.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// y = sample n of x, mirrored where `flip` along the axes `horizontal`, `vertical` name.
void flip_sample(const AffineParams& g, bool horizontal, bool vertical, bool flip, const float* x, float* y,
                 std::int64_t n) {
  for (std::int64_t r = 0; r < g.h; ++r) {
    const std::int64_t sr = flip && vertical ? g.h - 1 - r : r;
    for (std::int64_t col = 0; col < g.w; ++col) {
      const std::int64_t sc = flip && horizontal ? g.w - 1 - col : col;
      const float* src = x + ((n * g.h + sr) * g.w + sc) * g.c;
      std::copy(src, src + g.c, y + ((n * g.h + r) * g.w + col) * g.c);
    }
  }
}

// random_contrast (dy null): y = clip((x - m) f + m, lower, upper), m image n's channel
// mean in double; random_contrast_grad: g = dy where the unclipped value lies in the range
// (TF's clip_by_value gradient), dx = f g + (1 - f) mean(g) over the image's pixels.
void contrast_sample(const AugmentParams& p, float f, const float* x, const float* dy, float* out, std::int64_t n,
                     double* mean) {
  const AffineParams& g = p.image;
  const std::int64_t pixels = g.h * g.w;
  std::fill(mean, mean + g.c, 0.0);
  for (std::int64_t px = 0; px < pixels; ++px) {
    for (std::int64_t ch = 0; ch < g.c; ++ch) mean[ch] += x[(n * pixels + px) * g.c + ch];
  }
  for (std::int64_t ch = 0; ch < g.c; ++ch) mean[ch] /= static_cast<double>(pixels);
  for (std::int64_t ch = 0; ch < g.c; ++ch) {
    const auto m = static_cast<float>(mean[ch]);
    double sum = 0.0;
    for (std::int64_t px = 0; px < pixels; ++px) {
      const std::int64_t i = (n * pixels + px) * g.c + ch;
      const float z = (x[i] - m) * f + m;
      if (!dy) {
        out[i] = std::min(std::max(z, p.value_lower), p.value_upper);
      } else {
        out[i] = z >= p.value_lower && z <= p.value_upper ? dy[i] : 0.0f;  // g, before the mean's share
        sum += out[i];
      }
    }
    if (!dy) continue;
    const double share = (1.0 - f) * sum / static_cast<double>(pixels);
    for (std::int64_t px = 0; px < pixels; ++px) {
      const std::int64_t i = (n * pixels + px) * g.c + ch;
      out[i] = static_cast<float>(f * out[i] + share);
    }
  }
}

}  // namespace

std::uint64_t augment_step_key(const KernelArgs& args, std::uint64_t seed) {
  return dropout_key(args.ctx->seed, seed, static_cast<std::uint64_t>(args.ctx->step));
}

bool check_augment(const KernelDesc& desc, AugmentParams* out, std::string* why_not) {
  const std::string& op = desc.op;
  NNFIT_CHECK(!desc.inputs.empty() && desc.inputs[0].shape.rank() == 4, InvalidArgument, op, " at node '",
              desc.node_name, "': expected an [N,H,W,C] image");
  out->seed = static_cast<std::uint64_t>(desc.attrs.i_or("seed", 0));
  const Shape& x = desc.inputs[0].shape;
  out->image.n = x[0];
  out->image.h = x[1];
  out->image.w = x[2];
  out->image.c = x[3];
  if (op == "random_flip" || op == "random_flip_grad") {
    if (!check_image_f32(desc, why_not)) return false;
    out->op = op == "random_flip" ? AugmentOp::random_flip : AugmentOp::random_flip_grad;
    NNFIT_CHECK(parse_flip_mode(desc.attrs.s("mode"), &out->horizontal, &out->vertical), InvalidArgument, op,
                " at node '", desc.node_name, "': mode \"", desc.attrs.s("mode"), "\" is not one of ", kFlipModeNames);
    return true;
  }
  if (op == "random_contrast" || op == "random_contrast_grad") {
    if (!check_image_f32(desc, why_not)) return false;
    out->op = op == "random_contrast" ? AugmentOp::random_contrast : AugmentOp::random_contrast_grad;
    out->factor_lower = desc.attrs.f_or("factor_lower", 1.0);
    out->factor_upper = desc.attrs.f_or("factor_upper", 1.0);
    out->value_lower = static_cast<float>(desc.attrs.f("value_lower"));
    out->value_upper = static_cast<float>(desc.attrs.f("value_upper"));
    return true;
  }
  NNFIT_CHECK(op == "random_affine" || op == "affine_transform" || op == "affine_transform_grad", InvalidArgument,
              "internal: no augmentation kernel for op '", op, "'");
  if (!check_affine(desc, &out->image, why_not)) return false;
  out->op = op == "random_affine"      ? AugmentOp::random_affine
            : op == "affine_transform" ? AugmentOp::affine_transform
                                       : AugmentOp::affine_transform_grad;
  if (op == "random_affine") {
    AffineDraw& d = out->draw;
    d.kind = desc.attrs.s("kind");
    d.height_lower = desc.attrs.f("height_lower");
    d.height_upper = desc.attrs.f("height_upper");
    d.width_lower = desc.attrs.f_or("width_lower", 0.0);
    d.width_upper = desc.attrs.f_or("width_upper", 0.0);
    d.same_zoom = desc.attrs.i_or("same_zoom", 0) != 0;
  }
  return true;
}

std::int64_t augment_scratch_doubles(const AugmentParams& p) {
  const bool contrast = p.op == AugmentOp::random_contrast || p.op == AugmentOp::random_contrast_grad;
  return contrast ? p.image.c : 0;
}

void augment_sample(const AugmentParams& p, const KernelArgs& args, std::uint64_t key, std::int64_t n, double* scratch) {
  const auto* in = static_cast<const float*>(args.inputs[0]);
  auto* out = static_cast<float*>(args.outputs[0]);
  // Sample n draws the numbers of its row of the global batch (Note [Random draws by
  // global row]); its tensors are indexed by n.
  const auto draw = static_cast<std::int64_t>(random_index_offset(args.ctx->row_offset, args.ctx->rows, p.image.n)) + n;
  switch (p.op) {
    case AugmentOp::random_flip: {
      // Keras: flip where uniform() <= 0.5, one draw per sample for every axis of the mode.
      auto* flips = static_cast<std::uint8_t*>(args.outputs[1]);
      flips[n] = augment_uniform(key, draw, 0) <= 0.5 ? 1 : 0;
      return flip_sample(p.image, p.horizontal, p.vertical, flips[n] != 0, in, out, n);
    }
    case AugmentOp::random_flip_grad:
      return flip_sample(p.image, p.horizontal, p.vertical, static_cast<const std::uint8_t*>(args.inputs[1])[n] != 0,
                         in, out, n);
    case AugmentOp::random_affine: {
      auto* t = static_cast<float*>(args.outputs[1]);
      draw_affine_transform(p.draw, key, draw, p.image.h, p.image.w, t + 8 * n);
      return affine_apply_sample(p.image, in, t, out, n);
    }
    case AugmentOp::affine_transform:
      return affine_apply_sample(p.image, in, static_cast<const float*>(args.inputs[1]), out, n);
    case AugmentOp::affine_transform_grad:
      return affine_apply_adjoint_sample(p.image, in, static_cast<const float*>(args.inputs[1]), out, n);
    case AugmentOp::random_contrast: {
      auto* factor = static_cast<float*>(args.outputs[1]);
      factor[n] = static_cast<float>(p.factor_lower +
                                     (p.factor_upper - p.factor_lower) * (1.0 - augment_uniform(key, draw, 0)));
      return contrast_sample(p, factor[n], in, nullptr, out, n, scratch);
    }
    case AugmentOp::random_contrast_grad:
      return contrast_sample(p, static_cast<const float*>(args.inputs[2])[n], static_cast<const float*>(args.inputs[1]),
                             in, out, n, scratch);
  }
}

}  // namespace nnfit
