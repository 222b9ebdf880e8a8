// Reference kernels of prelu and prelu_grad (graph/prelu_op_defs.cpp). x is walked row by
// row (every index but the last axis); each row's alpha starts at an offset from the
// row's index and steps by 0 or 1 along the last axis. dalpha sums x * dy over the
// negative inputs of every position alpha is shared by, in double.
#include <vector>

#include "backend/common/nn_op_geometry.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// x's rows and, per row, the offset of its first alpha.
struct PreluView {
  std::int64_t rows = 0, cols = 0;
  std::int64_t alpha_step = 0;        // along the last axis: 1, or 0 when shared
  std::vector<std::int64_t> offsets;  // per row
  std::int64_t alpha_numel = 0;
};

PreluView prelu_view(const Shape& x, const Shape& alpha) {
  PreluView v;
  const std::int64_t rank = x.rank();
  v.cols = rank == 0 ? 1 : x[rank - 1];
  v.rows = v.cols == 0 ? 0 : x.numel() / v.cols;
  v.alpha_numel = alpha.numel();
  // alpha's strides on x's axes: 0 on the batch axis and on shared (size-1) axes.
  std::vector<std::int64_t> stride(static_cast<std::size_t>(rank), 0);
  std::int64_t s = 1;
  for (std::int64_t d = rank - 1; d >= 1; --d) {
    if (alpha[d - 1] != 1) stride[static_cast<std::size_t>(d)] = s;
    s *= alpha[d - 1];
  }
  v.alpha_step = rank >= 2 ? stride[static_cast<std::size_t>(rank - 1)] : 0;
  v.offsets.resize(static_cast<std::size_t>(v.rows));
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rank), 0);
  for (std::int64_t r = 0; r < v.rows; ++r) {
    std::int64_t off = 0;
    for (std::int64_t d = 0; d + 1 < rank; ++d) off += idx[static_cast<std::size_t>(d)] * stride[static_cast<std::size_t>(d)];
    v.offsets[static_cast<std::size_t>(r)] = off;
    for (std::int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < x[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return v;
}

class RefPrelu final : public Kernel {
 public:
  RefPrelu(bool grad, PreluView v) : grad_(grad), v_(std::move(v)) {}

  void run(const KernelArgs& args) override {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    const auto* alpha = static_cast<const float*>(args.inputs[1]);
    if (!grad_) {
      auto* y = static_cast<float*>(args.outputs[0]);
      for (std::int64_t r = 0; r < v_.rows; ++r) {
        const float* a = alpha + v_.offsets[static_cast<std::size_t>(r)];
        for (std::int64_t c = 0; c < v_.cols; ++c) {
          const float xv = x[r * v_.cols + c];
          y[r * v_.cols + c] = xv > 0.0f ? xv : a[c * v_.alpha_step] * xv;
        }
      }
      return;
    }
    const auto* dy = static_cast<const float*>(args.inputs[2]);
    auto* dx = static_cast<float*>(args.outputs[0]);
    auto* dalpha = static_cast<float*>(args.outputs[1]);
    std::vector<double> acc(static_cast<std::size_t>(v_.alpha_numel), 0.0);
    for (std::int64_t r = 0; r < v_.rows; ++r) {
      const std::int64_t off = v_.offsets[static_cast<std::size_t>(r)];
      for (std::int64_t c = 0; c < v_.cols; ++c) {
        const std::int64_t i = r * v_.cols + c, a = off + c * v_.alpha_step;
        const float xv = x[i];
        if (xv > 0.0f) {
          dx[i] = dy[i];
        } else {
          dx[i] = alpha[a] * dy[i];
          acc[static_cast<std::size_t>(a)] += static_cast<double>(xv) * dy[i];
        }
      }
    }
    for (std::int64_t a = 0; a < v_.alpha_numel; ++a) dalpha[a] = static_cast<float>(acc[static_cast<std::size_t>(a)]);
  }

 private:
  bool grad_;
  PreluView v_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_prelu(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  NNFIT_CHECK(d.inputs.size() >= 2 && d.inputs[1].shape.rank() == d.inputs[0].shape.rank() - 1, InvalidArgument,
              d.op, ": alpha must have x's rank minus the batch axis");
  return std::make_unique<RefPrelu>(d.op == "prelu_grad", prelu_view(d.inputs[0].shape, d.inputs[1].shape));
}

}  // namespace nnfit
