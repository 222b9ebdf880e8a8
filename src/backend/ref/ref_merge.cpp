// Reference kernels of the merge ops (graph/merge_op_defs.cpp): plain loops, sums in
// double. Axis ops see their tensor as [outer, axis, inner]. They are also what runs on
// the CPU today: each is one pass over memory, which -O3 vectorizes.
#include <cmath>
#include <cstring>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/shape_rows.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class Binary final : public Kernel {
 public:
  Binary(std::string op, std::int64_t n) : op_(std::move(op)), n_(n) {}
  void run(const KernelArgs& a) override {
    const float *x = a.in(0), *y = a.in(1);
    float* z = a.out(0);
    if (op_ == "sub") for (std::int64_t i = 0; i < n_; ++i) z[i] = x[i] - y[i];
    else if (op_ == "mul") for (std::int64_t i = 0; i < n_; ++i) z[i] = x[i] * y[i];
    else if (op_ == "maximum") for (std::int64_t i = 0; i < n_; ++i) z[i] = x[i] >= y[i] ? x[i] : y[i];
    else for (std::int64_t i = 0; i < n_; ++i) z[i] = x[i] <= y[i] ? x[i] : y[i];
  }

 private:
  std::string op_;
  std::int64_t n_;
};

// d/da and d/db of maximum (kind "maximum") or minimum: the gradient goes to the input
// that was chosen, to `a` on ties (TensorFlow's rule).
class MinMaxGrad final : public Kernel {
 public:
  MinMaxGrad(bool max, std::int64_t n) : max_(max), n_(n) {}
  void run(const KernelArgs& args) override {
    const float *a = args.in(0), *b = args.in(1), *dy = args.in(2);
    float *da = args.out(0), *db = args.out(1);
    for (std::int64_t i = 0; i < n_; ++i) {
      const bool to_a = max_ ? a[i] >= b[i] : a[i] <= b[i];
      da[i] = to_a ? dy[i] : 0.0f;
      db[i] = to_a ? 0.0f : dy[i];
    }
  }

 private:
  bool max_;
  std::int64_t n_;
};

class Scale final : public Kernel {
 public:
  Scale(float factor, float offset, std::int64_t n) : factor_(factor), offset_(offset), n_(n) {}
  void run(const KernelArgs& a) override {
    const float* x = a.in(0);
    float* y = a.out(0);
    for (std::int64_t i = 0; i < n_; ++i) y[i] = x[i] * factor_ + offset_;
  }

 private:
  float factor_, offset_;
  std::int64_t n_;
};

class Concat final : public Kernel {
 public:
  Concat(std::vector<AxisView> ins, AxisView outv) : ins_(std::move(ins)), out_(outv) {}
  void run(const KernelArgs& a) override {
    float* y = a.out(0);
    for (std::int64_t o = 0; o < out_.outer; ++o) {
      float* dst = y + o * out_.axis * out_.inner;
      for (std::size_t k = 0; k < ins_.size(); ++k) {
        const std::int64_t n = ins_[k].axis * ins_[k].inner;
        std::memcpy(dst, a.in(k) + o * n, static_cast<std::size_t>(n) * sizeof(float));
        dst += n;
      }
    }
  }

 private:
  std::vector<AxisView> ins_;
  AxisView out_;
};

class Slice final : public Kernel {
 public:
  Slice(AxisView v, std::int64_t begin, std::int64_t size) : v_(v), begin_(begin), size_(size) {}
  void run(const KernelArgs& a) override {
    const float* x = a.in(0);
    float* y = a.out(0);
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      std::memcpy(y + o * size_ * v_.inner, x + (o * v_.axis + begin_) * v_.inner,
                  static_cast<std::size_t>(size_ * v_.inner) * sizeof(float));
    }
  }

 private:
  AxisView v_;
  std::int64_t begin_, size_;
};

class BatchMatmul final : public Kernel {
 public:
  BatchMatmul(Shape a, Shape b, bool ta, bool tb) : a_(std::move(a)), b_(std::move(b)), ta_(ta), tb_(tb) {}
  void run(const KernelArgs& args) override {
    const std::int64_t batch = a_[0], m = ta_ ? a_[2] : a_[1], k = ta_ ? a_[1] : a_[2], n = tb_ ? b_[1] : b_[2];
    const float *a = args.in(0), *b = args.in(1);
    float* c = args.out(0);
    for (std::int64_t p = 0; p < batch; ++p) {
      const float* ap = a + p * a_[1] * a_[2];
      const float* bp = b + p * b_[1] * b_[2];
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (std::int64_t q = 0; q < k; ++q) {
            const float av = ta_ ? ap[q * a_[2] + i] : ap[i * a_[2] + q];
            const float bv = tb_ ? bp[j * b_[2] + q] : bp[q * b_[2] + j];
            sum += static_cast<double>(av) * bv;
          }
          c[(p * m + i) * n + j] = static_cast<float>(sum);
        }
      }
    }
  }

 private:
  Shape a_, b_;
  bool ta_, tb_;
};

constexpr double kL2Epsilon = 1e-12;  // Keras's l2_normalize floor on the squared norm

// y = x / sqrt(max(sum x^2, eps)); grad: (dy - y * sum(dy * y)) / norm while the sum is
// above the floor, dy / norm on it.
class L2Normalize final : public Kernel {
 public:
  L2Normalize(AxisView v, bool grad) : v_(v), grad_(grad) {}
  void run(const KernelArgs& a) override {
    const float* x = a.in(0);
    const float* dy = grad_ ? a.in(1) : nullptr;
    float* y = a.out(0);
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      for (std::int64_t i = 0; i < v_.inner; ++i) {
        auto at = [&](std::int64_t j) { return (o * v_.axis + j) * v_.inner + i; };
        double ss = 0;
        for (std::int64_t j = 0; j < v_.axis; ++j) ss += static_cast<double>(x[at(j)]) * x[at(j)];
        const bool floored = ss < kL2Epsilon;
        const double norm = std::sqrt(floored ? kL2Epsilon : ss);
        if (!grad_) {
          for (std::int64_t j = 0; j < v_.axis; ++j) y[at(j)] = static_cast<float>(x[at(j)] / norm);
          continue;
        }
        double dot = 0;
        for (std::int64_t j = 0; j < v_.axis; ++j) dot += static_cast<double>(dy[at(j)]) * x[at(j)] / norm;
        for (std::int64_t j = 0; j < v_.axis; ++j) {
          const double yj = x[at(j)] / norm;
          y[at(j)] = static_cast<float>(floored ? dy[at(j)] / norm : (dy[at(j)] - yj * dot) / norm);
        }
      }
    }
  }

 private:
  AxisView v_;
  bool grad_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_merge(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  const Shape& s = d.inputs.at(0).shape;
  if (d.op == "sub" || d.op == "mul" || d.op == "maximum" || d.op == "minimum") {
    return std::make_unique<Binary>(d.op, s.numel());
  }
  if (d.op == "minmax_grad") return std::make_unique<MinMaxGrad>(d.attrs.s("kind") == "maximum", s.numel());
  if (d.op == "scale") {
    return std::make_unique<Scale>(static_cast<float>(d.attrs.f("factor")), static_cast<float>(d.attrs.f_or("offset", 0.0)),
                                   s.numel());
  }
  if (d.op == "concat") {
    std::vector<AxisView> ins;
    for (const TensorDesc& t : d.inputs) ins.push_back(axis_view(t.shape, d.attrs.i("axis")));
    return std::make_unique<Concat>(std::move(ins), axis_view(d.outputs.at(0).shape, d.attrs.i("axis")));
  }
  if (d.op == "slice") return std::make_unique<Slice>(axis_view(s, d.attrs.i("axis")), d.attrs.i("begin"), d.attrs.i("size"));
  if (d.op == "batch_matmul") {
    return std::make_unique<BatchMatmul>(s, d.inputs.at(1).shape, d.attrs.i_or("transpose_a", 0) != 0,
                                         d.attrs.i_or("transpose_b", 0) != 0);
  }
  if (d.op == "l2_normalize" || d.op == "l2_normalize_grad") {
    return std::make_unique<L2Normalize>(axis_view(s, d.attrs.i("axis")), d.op == "l2_normalize_grad");
  }
  throw InvalidArgument("internal: make_ref_merge has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
