// Reference activation, activation_grad, softmax and softmax_grad. activation_grad's first
// input is the forward output y for relu/sigmoid/tanh and the forward input x otherwise
// (docs/design/ops.md); softmax works on the last axis with the row maximum subtracted.
#include <algorithm>
#include <cmath>

#include "backend/ref/ref_nn_kernel.h"

namespace nnfit {

namespace {
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }
double hard_sigmoid(double x) { return std::clamp(x + 3.0, 0.0, 6.0) / 6.0; }
constexpr double kSqrt2OverPi = 0.7978845608028654;

// Keras's ReLU(negative_slope = a.alpha, max_value, threshold) (nn_op_geometry.h).
double relu_keras(const ActivationArgs& a, double x) {
  double y = a.threshold != 0.0 ? (x > a.threshold ? x : 0.0) : std::max(x, 0.0);
  if (std::isfinite(a.max_value)) y = std::clamp(y, 0.0, a.max_value);
  return y - a.alpha * std::max(a.threshold - x, 0.0);
}

double relu_keras_grad(const ActivationArgs& a, double x) {
  double g = 0.0;
  if (x > a.threshold && !(std::isfinite(a.max_value) && (x <= 0.0 || x >= a.max_value))) g = 1.0;
  if (x < a.threshold) g += a.alpha;
  return g;
}

double unary(const ActivationArgs& a, double x) {
  switch (a.kind) {
    case ActivationKind::linear: return x;
    case ActivationKind::relu: return x > 0.0 ? x : 0.0;
    case ActivationKind::sigmoid: return sigmoid(x);
    case ActivationKind::tanh: return std::tanh(x);
    case ActivationKind::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::elu: return x > 0.0 ? x : a.alpha * std::expm1(x);
    case ActivationKind::selu: return kSeluScale * (x > 0.0 ? x : kSeluAlpha * std::expm1(x));
    case ActivationKind::softplus: return softplus(x);
    case ActivationKind::softsign: return x / (1.0 + std::fabs(x));
    case ActivationKind::hard_sigmoid: return hard_sigmoid(x);
    case ActivationKind::exponential: return std::exp(x);
    case ActivationKind::leaky_relu: return x > 0.0 ? x : a.alpha * x;
    case ActivationKind::relu6: return std::clamp(x, 0.0, 6.0);
    case ActivationKind::silu: return x * sigmoid(x);
    case ActivationKind::mish: return x * std::tanh(softplus(x));
    case ActivationKind::hard_silu: return x * hard_sigmoid(x);
    case ActivationKind::gelu_tanh: return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    case ActivationKind::hard_sigmoid_keras2: return std::clamp(0.2 * x + 0.5, 0.0, 1.0);
    case ActivationKind::relu_keras: return relu_keras(a, x);
  }
  return x;
}

// t is y for relu, sigmoid and tanh, x for every other kind (activation_grad_reads_output).
double unary_grad(const ActivationArgs& a, double t, double dy) {
  switch (a.kind) {
    case ActivationKind::linear: return dy;
    case ActivationKind::relu: return t > 0.0 ? dy : 0.0;
    case ActivationKind::sigmoid: return dy * t * (1.0 - t);
    case ActivationKind::tanh: return dy * (1.0 - t * t);
    case ActivationKind::gelu: {
      const double kInvSqrt2Pi = 0.3989422804014327;
      double cdf = 0.5 * (1.0 + std::erf(t / std::sqrt(2.0)));
      return dy * (cdf + t * kInvSqrt2Pi * std::exp(-0.5 * t * t));
    }
    case ActivationKind::elu: return dy * (t > 0.0 ? 1.0 : a.alpha * std::exp(t));
    case ActivationKind::selu: return dy * kSeluScale * (t > 0.0 ? 1.0 : kSeluAlpha * std::exp(t));
    case ActivationKind::softplus: return dy * sigmoid(t);
    case ActivationKind::softsign: return dy / ((1.0 + std::fabs(t)) * (1.0 + std::fabs(t)));
    case ActivationKind::hard_sigmoid: return t > -3.0 && t < 3.0 ? dy / 6.0 : 0.0;
    case ActivationKind::exponential: return dy * std::exp(t);
    case ActivationKind::leaky_relu: return t > 0.0 ? dy : a.alpha * dy;
    case ActivationKind::relu6: return t > 0.0 && t < 6.0 ? dy : 0.0;
    case ActivationKind::silu: return dy * sigmoid(t) * (1.0 + t * (1.0 - sigmoid(t)));
    case ActivationKind::mish: {
      const double sp = softplus(t), th = std::tanh(sp);
      return dy * (th + t * (1.0 - th * th) * sigmoid(t));
    }
    case ActivationKind::hard_silu: return dy * (t <= -3.0 ? 0.0 : t >= 3.0 ? 1.0 : (2.0 * t + 3.0) / 6.0);
    case ActivationKind::gelu_tanh: {
      const double u = kSqrt2OverPi * (t + 0.044715 * t * t * t), th = std::tanh(u);
      const double du = kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * t * t);
      return dy * (0.5 * (1.0 + th) + 0.5 * t * (1.0 - th * th) * du);
    }
    case ActivationKind::hard_sigmoid_keras2: return t > -2.5 && t < 2.5 ? 0.2 * dy : 0.0;
    case ActivationKind::relu_keras: return dy * relu_keras_grad(a, t);
  }
  return dy;
}

}  // namespace

double ref_activation(const ActivationArgs& a, double x) { return unary(a, x); }
double ref_activation_grad(const ActivationArgs& a, double t, double dy) { return unary_grad(a, t, dy); }

std::unique_ptr<Kernel> make_ref_activation(const KernelDesc& desc, std::string* /*why_not*/) {
  std::int64_t count = checked_elementwise(desc).numel();
  const ActivationArgs act = parse_activation_args(desc);
  return std::make_unique<RefKernel>([count, act](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (std::int64_t i = 0; i < count; ++i) y[i] = static_cast<float>(unary(act, x[i]));
  });
}

std::unique_ptr<Kernel> make_ref_activation_grad(const KernelDesc& desc, std::string* /*why_not*/) {
  std::int64_t count = checked_elementwise(desc).numel();
  const ActivationArgs act = parse_activation_args(desc);
  return std::make_unique<RefKernel>([count, act](const KernelArgs& args) {
    const float* t = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    for (std::int64_t i = 0; i < count; ++i) {
      dx[i] = static_cast<float>(unary_grad(act, t[i], dy[i]));
    }
  });
}

std::unique_ptr<Kernel> make_ref_softmax(const KernelDesc& desc, std::string* /*why_not*/) {
  Shape s = checked_elementwise(desc);
  std::int64_t cols = s.dim(-1);
  std::int64_t rows = cols == 0 ? 0 : s.numel() / cols;
  return std::make_unique<RefKernel>([rows, cols](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      double mx = xr[0];
      for (std::int64_t c = 1; c < cols; ++c) mx = std::fmax(mx, xr[c]);
      double sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(xr[c] - mx);
      for (std::int64_t c = 0; c < cols; ++c) yr[c] = static_cast<float>(std::exp(xr[c] - mx) / sum);
    }
  });
}

std::unique_ptr<Kernel> make_ref_softmax_grad(const KernelDesc& desc, std::string* /*why_not*/) {
  Shape s = checked_elementwise(desc);
  std::int64_t cols = s.dim(-1);
  std::int64_t rows = cols == 0 ? 0 : s.numel() / cols;
  return std::make_unique<RefKernel>([rows, cols](const KernelArgs& args) {
    const float* y = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* yr = y + r * cols;
      const float* dyr = dy + r * cols;
      double dot = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) dot += static_cast<double>(dyr[c]) * yr[c];
      for (std::int64_t c = 0; c < cols; ++c) {
        dx[r * cols + c] = static_cast<float>(yr[c] * (dyr[c] - dot));
      }
    }
  });
}

// log_softmax over the last axis: x - max - log(sum(exp(x - max))); its gradient from the
// output y: dx = dy - exp(y) * sum(dy).
std::unique_ptr<Kernel> make_ref_log_softmax(const KernelDesc& desc, std::string* /*why_not*/) {
  Shape s = checked_elementwise(desc);
  std::int64_t cols = s.dim(-1);
  std::int64_t rows = cols == 0 ? 0 : s.numel() / cols;
  return std::make_unique<RefKernel>([rows, cols](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * cols;
      double mx = xr[0];
      for (std::int64_t c = 1; c < cols; ++c) mx = std::fmax(mx, xr[c]);
      double sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(xr[c] - mx);
      const double lse = mx + std::log(sum);
      for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(xr[c] - lse);
    }
  });
}

std::unique_ptr<Kernel> make_ref_log_softmax_grad(const KernelDesc& desc, std::string* /*why_not*/) {
  Shape s = checked_elementwise(desc);
  std::int64_t cols = s.dim(-1);
  std::int64_t rows = cols == 0 ? 0 : s.numel() / cols;
  return std::make_unique<RefKernel>([rows, cols](const KernelArgs& args) {
    const float* y = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) sum += dy[r * cols + c];
      for (std::int64_t c = 0; c < cols; ++c) {
        dx[r * cols + c] = static_cast<float>(dy[r * cols + c] - std::exp(static_cast<double>(y[r * cols + c])) * sum);
      }
    }
  });
}

}  // namespace nnfit
