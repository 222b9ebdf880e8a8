// Reference kernels of layer_norm and layer_norm_grad (graph/layer_norm_op_defs.cpp), row
// by row over x's last axis, statistics in double:
//   mean, var = population moments of the row; rstd = 1 / sqrt(var + epsilon)
//   y = (x - mean) * rstd * gamma + beta
//   dbeta = sum over rows of dy; dgamma = sum over rows of dy * xhat
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma
// Mode rms_scaling (Keras's LayerNormalization(rms_scaling=True)) does not centre the row:
//   z = x * rstd (rstd still from the variance about the mean); y = z * gamma + beta
//   dgamma = sum over rows of dy * z; dx = rstd * (g - xhat * mean(g * z))
// Mode rms (Keras's RMSNormalization) is rms_scaling with the mean taken as 0: rstd =
// 1 / sqrt(mean(x²) + epsilon), and the same gradient with xhat = z.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/norm_operands.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class RefLayerNorm final : public Kernel {
 public:
  RefLayerNorm(bool grad, std::int64_t rows, std::int64_t cols, double epsilon, LayerNormMode mode)
      : grad_(grad), rms_(!mode.centred), zero_mean_(mode.zero_mean), rows_(rows), cols_(cols), epsilon_(epsilon) {}

  void run(const KernelArgs& args) override { grad_ ? backward(args) : forward(args); }

 private:
  void forward(const KernelArgs& args) const {
    const auto [x, gamma, beta, y, mean_out, rstd_out] = NormForwardOperands(args);
    for (std::int64_t r = 0; r < rows_; ++r) {
      const float* xr = x + r * cols_;
      double mean = 0.0;
      if (!zero_mean_) {
        for (std::int64_t c = 0; c < cols_; ++c) mean += xr[c];
        mean /= static_cast<double>(cols_);
      }
      double var = 0.0;
      for (std::int64_t c = 0; c < cols_; ++c) var += (xr[c] - mean) * (xr[c] - mean);
      var /= static_cast<double>(cols_);
      const double rstd = 1.0 / std::sqrt(var + epsilon_);
      const double shift = rms_ ? 0.0 : mean;
      for (std::int64_t c = 0; c < cols_; ++c) {
        y[r * cols_ + c] = static_cast<float>((xr[c] - shift) * rstd * gamma[c] + beta[c]);
      }
      mean_out[r] = static_cast<float>(mean);
      rstd_out[r] = static_cast<float>(rstd);
    }
  }

  void backward(const KernelArgs& args) const {
    const auto [x, dy, gamma, mean, rstd, dx, dgamma, dbeta] = NormBackwardOperands(args);
    std::vector<double> dg(static_cast<std::size_t>(cols_), 0.0), db(static_cast<std::size_t>(cols_), 0.0);
    for (std::int64_t r = 0; r < rows_; ++r) {
      const float* xr = x + r * cols_;
      const float* dyr = dy + r * cols_;
      const double shift = rms_ ? 0.0 : mean[r];
      double mean_g = 0.0, mean_gx = 0.0;
      for (std::int64_t c = 0; c < cols_; ++c) {
        const double z = (xr[c] - shift) * static_cast<double>(rstd[r]);
        const double g = static_cast<double>(dyr[c]) * gamma[c];
        mean_g += g;
        mean_gx += g * z;
        dg[static_cast<std::size_t>(c)] += dyr[c] * z;
        db[static_cast<std::size_t>(c)] += dyr[c];
      }
      mean_g = rms_ ? 0.0 : mean_g / static_cast<double>(cols_);
      mean_gx /= static_cast<double>(cols_);
      for (std::int64_t c = 0; c < cols_; ++c) {
        const double xhat = (xr[c] - mean[r]) * static_cast<double>(rstd[r]);
        const double g = static_cast<double>(dyr[c]) * gamma[c];
        dx[r * cols_ + c] = static_cast<float>(rstd[r] * (g - mean_g - xhat * mean_gx));
      }
    }
    for (std::int64_t c = 0; c < cols_; ++c) {
      dgamma[c] = static_cast<float>(dg[static_cast<std::size_t>(c)]);
      dbeta[c] = static_cast<float>(db[static_cast<std::size_t>(c)]);
    }
  }

  bool grad_, rms_, zero_mean_;
  std::int64_t rows_, cols_;
  double epsilon_;
};

// group_norm over x [N, S..., C] seen as [N, S, G, C/G]: statistics per (n, g) over S and
// C/G, in double; the backward pass is layer_norm's within each group, with gamma per channel.
class RefGroupNorm final : public Kernel {
 public:
  RefGroupNorm(bool grad, std::int64_t n, std::int64_t s, std::int64_t c, std::int64_t groups, double epsilon)
      : grad_(grad), n_(n), s_(s), c_(c), g_(groups), epsilon_(epsilon) {}

  void run(const KernelArgs& args) override { grad_ ? backward(args) : forward(args); }

 private:
  // Calls f(index into x, channel) for every element of group g of sample i.
  template <typename F>
  void each(std::int64_t i, std::int64_t g, F&& f) const {
    const std::int64_t width = c_ / g_;
    for (std::int64_t p = 0; p < s_; ++p) {
      for (std::int64_t k = 0; k < width; ++k) {
        const std::int64_t ch = g * width + k;
        f((i * s_ + p) * c_ + ch, ch);
      }
    }
  }

  void forward(const KernelArgs& args) const {
    const auto operands = NormForwardOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& gamma = operands.gamma;
    const auto& beta = operands.beta;
    const auto& y = operands.y;
    const auto& mean_out = operands.stat0;
    const auto& rstd_out = operands.stat1;
    const double count = static_cast<double>(s_ * (c_ / g_));
    for (std::int64_t i = 0; i < n_; ++i) {
      for (std::int64_t g = 0; g < g_; ++g) {
        double mean = 0.0, var = 0.0;
        each(i, g, [&](std::int64_t at, std::int64_t) { mean += x[at]; });
        mean /= count;
        each(i, g, [&](std::int64_t at, std::int64_t) { var += (x[at] - mean) * (x[at] - mean); });
        const double rstd = 1.0 / std::sqrt(var / count + epsilon_);
        each(i, g, [&](std::int64_t at, std::int64_t ch) {
          y[at] = static_cast<float>((x[at] - mean) * rstd * gamma[ch] + beta[ch]);
        });
        mean_out[i * g_ + g] = static_cast<float>(mean);
        rstd_out[i * g_ + g] = static_cast<float>(rstd);
      }
    }
  }

  void backward(const KernelArgs& args) const {
    const auto operands = NormBackwardOperands(args);  // named references, not a binding: clang 14 cannot capture one
    const auto& x = operands.x;
    const auto& dy = operands.dy;
    const auto& gamma = operands.gamma;
    const auto& mean = operands.stat0;
    const auto& rstd = operands.stat1;
    const auto& dx = operands.dx;
    const auto& dgamma = operands.dgamma;
    const auto& dbeta = operands.dbeta;
    std::vector<double> dg(static_cast<std::size_t>(c_), 0.0), db(static_cast<std::size_t>(c_), 0.0);
    const double count = static_cast<double>(s_ * (c_ / g_));
    for (std::int64_t i = 0; i < n_; ++i) {
      for (std::int64_t g = 0; g < g_; ++g) {
        const double m = mean[i * g_ + g], r = rstd[i * g_ + g];
        double mean_g = 0.0, mean_gx = 0.0;
        each(i, g, [&](std::int64_t at, std::int64_t ch) {
          const double xhat = (x[at] - m) * r, gd = static_cast<double>(dy[at]) * gamma[ch];
          mean_g += gd;
          mean_gx += gd * xhat;
          dg[static_cast<std::size_t>(ch)] += dy[at] * xhat;
          db[static_cast<std::size_t>(ch)] += dy[at];
        });
        mean_g /= count;
        mean_gx /= count;
        each(i, g, [&](std::int64_t at, std::int64_t ch) {
          const double xhat = (x[at] - m) * r, gd = static_cast<double>(dy[at]) * gamma[ch];
          dx[at] = static_cast<float>(r * (gd - mean_g - xhat * mean_gx));
        });
      }
    }
    for (std::int64_t ch = 0; ch < c_; ++ch) {
      dgamma[ch] = static_cast<float>(dg[static_cast<std::size_t>(ch)]);
      dbeta[ch] = static_cast<float>(db[static_cast<std::size_t>(ch)]);
    }
  }

  bool grad_;
  std::int64_t n_, s_, c_, g_;
  double epsilon_;
};

// standardize over x [rows, K] (Keras's Normalization): s = max(sqrt(var), 1e-7) per
// column; y = (x - mean) / s, or with invert x·s + mean; standardize_grad: dx = dy / s
// (dy·s with invert).
class RefStandardize final : public Kernel {
 public:
  RefStandardize(bool grad, bool invert, std::int64_t rows, std::int64_t cols)
      : grad_(grad), invert_(invert), rows_(rows), cols_(cols) {}

  void run(const KernelArgs& args) override {
    const auto [x, mean, var, y] = StandardizeOperands(args, grad_);
    for (std::int64_t r = 0; r < rows_; ++r) {
      for (std::int64_t c = 0; c < cols_; ++c) y[r * cols_ + c] = standardize_element(x[r * cols_ + c], grad_ ? 0.0f : mean[c], var[c], invert_);
    }
  }

 private:
  bool grad_, invert_;
  std::int64_t rows_, cols_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_standardize(const KernelDesc& d, std::string* /*why_not*/) {
  const Shape& x = d.inputs.at(0).shape;
  const std::int64_t cols = x.dim(-1);
  return std::make_unique<RefStandardize>(d.op == "standardize_grad", d.attrs.i_or("invert", 0) != 0,
                                          cols > 0 ? x.numel() / cols : 0, cols);
}

std::unique_ptr<Kernel> make_ref_group_norm(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  const Shape& x = d.inputs.at(0).shape;
  NNFIT_CHECK(x.rank() >= 2, InvalidArgument, d.op, ": x needs a batch and a channel axis");
  const std::int64_t n = x[0], c = x.dim(-1), s = n == 0 || c == 0 ? 0 : x.numel() / (n * c);
  const std::int64_t groups = d.attrs.i("groups");
  NNFIT_CHECK(groups > 0 && c % groups == 0, InvalidArgument, d.op, ": groups ", groups, " must divide ", c);
  return std::make_unique<RefGroupNorm>(d.op == "group_norm_grad", n, s, c, groups, d.attrs.f("epsilon"));
}

std::unique_ptr<Kernel> make_ref_layer_norm(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  const Shape& x = d.inputs.at(0).shape;
  NNFIT_CHECK(x.rank() >= 1, InvalidArgument, d.op, ": x needs at least one axis");
  const std::int64_t cols = x.dim(-1), rows = cols == 0 ? 0 : x.numel() / cols;
  return std::make_unique<RefLayerNorm>(d.op == "layer_norm_grad", rows, cols, d.attrs.f("epsilon"),
                                        layer_norm_mode(d.attrs));
}

}  // namespace nnfit
