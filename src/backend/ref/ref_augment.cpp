// Reference kernels of the augmentation ops (graph/augment_op_defs.cpp). Each random op
// draws its per-sample settings with augment_uniform() from the (run seed, node seed, step)
// key, so a step repeats exactly and the next step draws anew, and writes them out for its
// gradient op; the sampling itself is backend/common/augment.h's, shared with the tests.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/common/augment.h"
#include "backend/common/random.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

std::uint64_t step_key(const KernelArgs& args, std::uint64_t node_seed) {
  return dropout_key(args.ctx->seed, node_seed, static_cast<std::uint64_t>(args.ctx->step));
}

struct Image {
  std::int64_t n = 0, h = 0, w = 0, c = 0;
};

Image image_of(const Shape& s) { return {s[0], s[1], s[2], s[3]}; }

// y = x with sample n mirrored where flips[n] (the axes `horizontal`, `vertical` name).
void apply_flips(const Image& g, bool horizontal, bool vertical, const std::uint8_t* flips, const float* x, float* y) {
  for (std::int64_t n = 0; n < g.n; ++n) {
    for (std::int64_t r = 0; r < g.h; ++r) {
      const std::int64_t sr = flips[n] && vertical ? g.h - 1 - r : r;
      for (std::int64_t col = 0; col < g.w; ++col) {
        const std::int64_t sc = flips[n] && horizontal ? g.w - 1 - col : col;
        const float* src = x + ((n * g.h + sr) * g.w + sc) * g.c;
        std::copy(src, src + g.c, y + ((n * g.h + r) * g.w + col) * g.c);
      }
    }
  }
}

class RefRandomFlip final : public Kernel {
 public:
  RefRandomFlip(bool grad, Image g, bool horizontal, bool vertical, std::uint64_t seed)
      : grad_(grad), g_(g), horizontal_(horizontal), vertical_(vertical), seed_(seed) {}
  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    if (grad_) {
      apply_flips(g_, horizontal_, vertical_, static_cast<const std::uint8_t*>(args.inputs[1]), x,
                  static_cast<float*>(args.outputs[0]));
      return;
    }
    auto* flips = static_cast<std::uint8_t*>(args.outputs[1]);
    const std::uint64_t key = step_key(args, seed_);
    // Keras: flip where uniform() <= 0.5, one draw per sample for every axis of the mode.
    for (std::int64_t n = 0; n < g_.n; ++n) flips[n] = augment_uniform(key, n, 0) <= 0.5 ? 1 : 0;
    apply_flips(g_, horizontal_, vertical_, flips, x, static_cast<float*>(args.outputs[0]));
  }

 private:
  bool grad_;
  Image g_;
  bool horizontal_, vertical_;
  std::uint64_t seed_;
};

// random_affine (draws, then samples), affine_transform (samples a given transform) and
// affine_transform_grad (the adjoint).
class RefAffine final : public Kernel {
 public:
  RefAffine(std::string op, AffineParams p, AffineDraw draw, std::uint64_t seed)
      : op_(std::move(op)), p_(p), draw_(std::move(draw)), seed_(seed) {}
  void run(const KernelArgs& args) override {
    const float* in = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    if (op_ == "random_affine") {
      auto* t = static_cast<float*>(args.outputs[1]);
      const std::uint64_t key = step_key(args, seed_);
      for (std::int64_t n = 0; n < p_.n; ++n) draw_affine_transform(draw_, key, n, p_.h, p_.w, t + 8 * n);
      affine_apply(p_, in, t, out);
    } else if (op_ == "affine_transform") {
      affine_apply(p_, in, static_cast<const float*>(args.inputs[1]), out);
    } else {
      affine_apply_adjoint(p_, in, static_cast<const float*>(args.inputs[1]), out);
    }
  }

 private:
  std::string op_;
  AffineParams p_;
  AffineDraw draw_;
  std::uint64_t seed_;
};

// Each image's mean per channel over its pixels, in double: mean[n * c + ch].
void channel_means(const Image& g, const float* x, std::vector<double>& mean) {
  mean.assign(static_cast<std::size_t>(g.n * g.c), 0.0);
  const std::int64_t pixels = g.h * g.w;
  for (std::int64_t n = 0; n < g.n; ++n) {
    for (std::int64_t p = 0; p < pixels; ++p) {
      for (std::int64_t ch = 0; ch < g.c; ++ch) {
        mean[static_cast<std::size_t>(n * g.c + ch)] += x[(n * pixels + p) * g.c + ch];
      }
    }
  }
  for (double& m : mean) m /= static_cast<double>(pixels);
}

// random_contrast: y = clip((x - mean) f + mean, value_lower, value_upper), f per sample;
// random_contrast_grad: g = dy where the unclipped value lies in the range (TF's
// clip_by_value gradient), dx = f g + (1 - f) mean(g), the mean over the image's pixels.
class RefRandomContrast final : public Kernel {
 public:
  RefRandomContrast(bool grad, Image g, const Attrs& a)
      : grad_(grad), g_(g), lower_(a.f_or("factor_lower", 1.0)), upper_(a.f_or("factor_upper", 1.0)),
        vmin_(static_cast<float>(a.f("value_lower"))), vmax_(static_cast<float>(a.f("value_upper"))),
        seed_(static_cast<std::uint64_t>(a.i_or("seed", 0))) {}
  void run(const KernelArgs& args) override {
    const std::int64_t pixels = g_.h * g_.w;
    const float* x = static_cast<const float*>(args.inputs[grad_ ? 1 : 0]);
    channel_means(g_, x, mean_);
    if (!grad_) {
      auto* factor = static_cast<float*>(args.outputs[1]);
      const std::uint64_t key = step_key(args, seed_);
      for (std::int64_t n = 0; n < g_.n; ++n) {
        factor[n] = static_cast<float>(lower_ + (upper_ - lower_) * (1.0 - augment_uniform(key, n, 0)));
      }
    }
    const float* factor = static_cast<const float*>(grad_ ? args.inputs[2] : args.outputs[1]);
    float* out = static_cast<float*>(args.outputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[0]);
    for (std::int64_t n = 0; n < g_.n; ++n) {
      const float f = factor[n];
      for (std::int64_t ch = 0; ch < g_.c; ++ch) {
        const auto m = static_cast<float>(mean_[static_cast<std::size_t>(n * g_.c + ch)]);
        double sum = 0.0;
        for (std::int64_t p = 0; p < pixels; ++p) {
          const std::int64_t i = (n * pixels + p) * g_.c + ch;
          const float z = (x[i] - m) * f + m;
          if (!grad_) {
            out[i] = std::min(std::max(z, vmin_), vmax_);
          } else {
            out[i] = z >= vmin_ && z <= vmax_ ? dy[i] : 0.0f;  // g, before the mean's share
            sum += out[i];
          }
        }
        if (!grad_) continue;
        const double share = (1.0 - f) * sum / static_cast<double>(pixels);
        for (std::int64_t p = 0; p < pixels; ++p) {
          const std::int64_t i = (n * pixels + p) * g_.c + ch;
          out[i] = static_cast<float>(f * out[i] + share);
        }
      }
    }
  }

 private:
  bool grad_;
  Image g_;
  double lower_, upper_;
  float vmin_, vmax_;
  std::uint64_t seed_;
  std::vector<double> mean_;  // sized on first use: the kernel keeps it
};

}  // namespace

std::unique_ptr<Kernel> make_ref_augment(const KernelDesc& desc, std::string* why_not) {
  const std::string& op = desc.op;
  NNFIT_CHECK(!desc.inputs.empty() && desc.inputs[0].shape.rank() == 4, InvalidArgument, op, " at node '",
              desc.node_name, "': expected an [N,H,W,C] image");
  const std::uint64_t seed = static_cast<std::uint64_t>(desc.attrs.i_or("seed", 0));
  if (op == "random_flip" || op == "random_flip_grad") {
    if (!check_image_f32(desc, why_not)) return nullptr;
    bool h = false, v = false;
    NNFIT_CHECK(parse_flip_mode(desc.attrs.s("mode"), &h, &v), InvalidArgument, op, " at node '", desc.node_name,
                "': mode \"", desc.attrs.s("mode"), "\" is not one of ", kFlipModeNames);
    return std::make_unique<RefRandomFlip>(op == "random_flip_grad", image_of(desc.inputs[0].shape), h, v, seed);
  }
  if (op == "random_contrast" || op == "random_contrast_grad") {
    if (!check_image_f32(desc, why_not)) return nullptr;
    return std::make_unique<RefRandomContrast>(op == "random_contrast_grad", image_of(desc.inputs[0].shape),
                                               desc.attrs);
  }
  AffineParams p;
  if (!check_affine(desc, &p, why_not)) return nullptr;
  AffineDraw draw;
  if (op == "random_affine") {
    draw.kind = desc.attrs.s("kind");
    draw.height_lower = desc.attrs.f("height_lower");
    draw.height_upper = desc.attrs.f("height_upper");
    draw.width_lower = desc.attrs.f_or("width_lower", 0.0);
    draw.width_upper = desc.attrs.f_or("width_upper", 0.0);
    draw.same_zoom = desc.attrs.i_or("same_zoom", 0) != 0;
  }
  return std::make_unique<RefAffine>(op, p, draw, seed);
}

}  // namespace nnfit
