// Reference kernels of the data-movement ops (graph/shape_op_defs.cpp): pad, crop,
// transpose, repeat and repeat_grad. pad and crop copy whole rows of the last axis;
// transpose walks the output with a running multi-index; repeat works on the
// [outer, axis, inner] view. They are also what runs on the CPU: each is one pass over
// memory.
#include <algorithm>
#include <cstring>

#include "backend/common/shape_rows.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// Calls f(row_index_vector) for every row (every index of all axes but the last) of `s`.
template <typename F>
void for_each_row(const Shape& s, F&& f) {
  const std::int64_t rank = s.rank();
  if (s.numel() == 0) return;
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rank), 0);
  const std::int64_t rows = rank == 0 ? 1 : s.numel() / s[rank - 1];
  for (std::int64_t r = 0; r < rows; ++r) {
    f(idx);
    for (std::int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < s[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
}

// pad (padded = output) and crop (padded = input): one copies rows into the bigger
// tensor at `offset`, filled with `value` first, the other out of it.
class PadCrop final : public Kernel {
 public:
  explicit PadCrop(PadCropPlan plan) : p_(std::move(plan)) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    if (p_.pad) std::fill(y, y + p_.big.numel(), p_.value);
    if (p_.small.rank() == 0) {
      *y = *x;
      return;
    }
    std::int64_t small_at = 0;
    for_each_row(p_.small, [&](const std::vector<std::int64_t>& idx) {
      std::int64_t big_at = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) big_at += (idx[d] + p_.offset[d]) * p_.big_strides[d];
      pad_crop_row(p_, x, y, small_at, big_at);
      small_at += p_.row;
    });
  }

 private:
  PadCropPlan p_;
};

// transpose: each output row by transpose_row (shape_rows.h, the OpenMP kernel's too), the
// rows in order with a running multi-index.
class Transpose final : public Kernel {
 public:
  Transpose(const Shape& x, const std::vector<std::int64_t>& perm) : p_(transpose_plan(x, perm)) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    if (transpose_without_rows(p_, x, y)) return;
    std::int64_t out = 0;
    for_each_row(p_.y_shape, [&](const std::vector<std::int64_t>& idx) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d + 1 < idx.size(); ++d) at += idx[d] * p_.step[d];
      transpose_row(p_, x, at, y + out);
      out += p_.last;
    });
  }

 private:
  TransposePlan p_;
};

// repeat: y[o, a * r + k, i] = x[o, a, i]; grad: dx[o, a, i] = sum_k dy[o, a * r + k, i].
class Repeat final : public Kernel {
 public:
  Repeat(bool grad, const Shape& x, std::int64_t axis, std::int64_t repeats) : grad_(grad), r_(repeats) {
    for (std::int64_t d = 0; d < x.rank(); ++d) (d < axis ? outer_ : d == axis ? axis_ : inner_) *= x[d];
  }
  void run(const KernelArgs& args) override {
    const auto* in = static_cast<const float*>(args.inputs[0]);
    auto* out = static_cast<float*>(args.outputs[0]);
    const std::size_t bytes = static_cast<std::size_t>(inner_) * sizeof(float);
    for (std::int64_t o = 0; o < outer_; ++o) {
      for (std::int64_t a = 0; a < axis_; ++a) {
        const std::int64_t small = (o * axis_ + a) * inner_;
        for (std::int64_t k = 0; k < r_; ++k) {
          const std::int64_t big = ((o * axis_ + a) * r_ + k) * inner_;
          if (!grad_) {
            std::memcpy(out + big, in + small, bytes);
          } else if (k == 0) {
            std::memcpy(out + small, in + big, bytes);
          } else {
            for (std::int64_t i = 0; i < inner_; ++i) out[small + i] += in[big + i];
          }
        }
      }
    }
  }

 private:
  bool grad_;
  std::int64_t r_, outer_ = 1, axis_ = 1, inner_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_shape(const KernelDesc& d, std::string* why_not) {
  if (d.inputs.at(0).dtype != DType::f32) {
    if (why_not) *why_not = d.op + ": only float32 is supported";
    return nullptr;
  }
  const Shape& x = d.inputs.at(0).shape;
  if (d.op == "pad") {
    return std::make_unique<PadCrop>(PadCropPlan(true, x, d.outputs.at(0).shape, d.attrs.ints("before"),
                                                 static_cast<float>(d.attrs.f_or("value", 0.0))));
  }
  if (d.op == "crop") return std::make_unique<PadCrop>(PadCropPlan(false, d.outputs.at(0).shape, x, d.attrs.ints("begin"), 0.0f));
  if (d.op == "transpose") return std::make_unique<Transpose>(x, d.attrs.ints("perm"));
  if (d.op == "repeat") return std::make_unique<Repeat>(false, x, d.attrs.i("axis"), d.attrs.i("repeats"));
  if (d.op == "repeat_grad") {
    return std::make_unique<Repeat>(true, d.outputs.at(0).shape, d.attrs.i("axis"), d.attrs.i("repeats"));
  }
  throw InvalidArgument("internal: make_ref_shape has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
