// Private to the CUDA backend: every activation kind of docs/design/ops.md and its
// gradient as NNFIT_HD float functions (the device computes in float32, as cuDNN does; the
// reference kernel computes in double, and the cuda-host test holds these to it within a
// few float32 ulps). The formulas are ref_nn_eltwise.cpp's, term for term.
#pragma once
#include <math.h>

#include <cmath>

#include "backend/common/hd.h"
#include "backend/common/nn_op_geometry.h"

namespace nnfit::cuda {

// ActivationArgs in float, without the host-only parts.
struct ActParams {
  ActivationKind kind = ActivationKind::linear;
  float alpha = 0.0f, max_value = 0.0f, threshold = 0.0f;
  bool capped = false;  // max_value given
};

inline ActParams act_params(const ActivationArgs& a) {
  ActParams p;
  p.kind = a.kind;
  p.alpha = static_cast<float>(a.alpha);
  p.capped = std::isfinite(a.max_value);
  p.max_value = p.capped ? static_cast<float>(a.max_value) : 0.0f;
  p.threshold = static_cast<float>(a.threshold);
  return p;
}

inline constexpr float kSeluAlpha = 1.6732632423543772848f;
inline constexpr float kSeluScale = 1.0507009873554804934f;
inline constexpr float kSqrt2OverPi = 0.7978845608028654f;

NNFIT_HD float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
NNFIT_HD float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
NNFIT_HD float softplusf(float x) { return x > 30.0f ? x : log1pf(expf(x)); }
NNFIT_HD float hard_sigmoidf(float x) { return clampf(x + 3.0f, 0.0f, 6.0f) / 6.0f; }

NNFIT_HD float act_forward(const ActParams& a, float x) {
  switch (a.kind) {
    case ActivationKind::linear: return x;
    case ActivationKind::relu: return x > 0.0f ? x : 0.0f;
    case ActivationKind::sigmoid: return sigmoidf(x);
    case ActivationKind::tanh: return tanhf(x);
    case ActivationKind::gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case ActivationKind::elu: return x > 0.0f ? x : a.alpha * expm1f(x);
    case ActivationKind::selu: return kSeluScale * (x > 0.0f ? x : kSeluAlpha * expm1f(x));
    case ActivationKind::softplus: return softplusf(x);
    case ActivationKind::softsign: return x / (1.0f + fabsf(x));
    case ActivationKind::hard_sigmoid: return hard_sigmoidf(x);
    case ActivationKind::exponential: return expf(x);
    case ActivationKind::leaky_relu: return x > 0.0f ? x : a.alpha * x;
    case ActivationKind::relu6: return clampf(x, 0.0f, 6.0f);
    case ActivationKind::silu: return x * sigmoidf(x);
    case ActivationKind::mish: return x * tanhf(softplusf(x));
    case ActivationKind::hard_silu: return x * hard_sigmoidf(x);
    case ActivationKind::gelu_tanh: return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
    case ActivationKind::hard_sigmoid_keras2: return clampf(0.2f * x + 0.5f, 0.0f, 1.0f);
    case ActivationKind::relu_keras: {
      float y = a.threshold != 0.0f ? (x > a.threshold ? x : 0.0f) : (x > 0.0f ? x : 0.0f);
      if (a.capped) y = clampf(y, 0.0f, a.max_value);
      const float below = a.threshold - x;
      return y - a.alpha * (below > 0.0f ? below : 0.0f);
    }
  }
  return x;
}

// t is y for relu, sigmoid and tanh, x for every other kind (activation_grad_reads_output).
NNFIT_HD float act_backward(const ActParams& a, float t, float dy) {
  switch (a.kind) {
    case ActivationKind::linear: return dy;
    case ActivationKind::relu: return t > 0.0f ? dy : 0.0f;
    case ActivationKind::sigmoid: return dy * t * (1.0f - t);
    case ActivationKind::tanh: return dy * (1.0f - t * t);
    case ActivationKind::gelu: {
      const float cdf = 0.5f * (1.0f + erff(t * 0.70710678118654752f));
      return dy * (cdf + t * 0.3989422804014327f * expf(-0.5f * t * t));
    }
    case ActivationKind::elu: return dy * (t > 0.0f ? 1.0f : a.alpha * expf(t));
    case ActivationKind::selu: return dy * kSeluScale * (t > 0.0f ? 1.0f : kSeluAlpha * expf(t));
    case ActivationKind::softplus: return dy * sigmoidf(t);
    case ActivationKind::softsign: return dy / ((1.0f + fabsf(t)) * (1.0f + fabsf(t)));
    case ActivationKind::hard_sigmoid: return t > -3.0f && t < 3.0f ? dy / 6.0f : 0.0f;
    case ActivationKind::exponential: return dy * expf(t);
    case ActivationKind::leaky_relu: return t > 0.0f ? dy : a.alpha * dy;
    case ActivationKind::relu6: return t > 0.0f && t < 6.0f ? dy : 0.0f;
    case ActivationKind::silu: {
      const float s = sigmoidf(t);
      return dy * s * (1.0f + t * (1.0f - s));
    }
    case ActivationKind::mish: {
      const float th = tanhf(softplusf(t));
      return dy * (th + t * (1.0f - th * th) * sigmoidf(t));
    }
    case ActivationKind::hard_silu: return dy * (t <= -3.0f ? 0.0f : t >= 3.0f ? 1.0f : (2.0f * t + 3.0f) / 6.0f);
    case ActivationKind::gelu_tanh: {
      const float u = kSqrt2OverPi * (t + 0.044715f * t * t * t), th = tanhf(u);
      const float du = kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * t * t);
      return dy * (0.5f * (1.0f + th) + 0.5f * t * (1.0f - th * th) * du);
    }
    case ActivationKind::hard_sigmoid_keras2: return t > -2.5f && t < 2.5f ? 0.2f * dy : 0.0f;
    case ActivationKind::relu_keras: {
      float g = 0.0f;
      if (t > a.threshold && !(a.capped && (t <= 0.0f || t >= a.max_value))) g = 1.0f;
      if (t < a.threshold) g += a.alpha;
      return dy * g;
    }
  }
  return dy;
}

}  // namespace nnfit::cuda
