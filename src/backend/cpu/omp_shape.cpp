// OpenMP kernels of the data-movement ops: pad, crop, transpose, repeat, repeat_grad
// (graph/shape_op_defs.cpp), concat and slice (graph/merge_op_defs.cpp). The reference
// kernels (ref_shape.cpp, ref_merge.cpp) walk rows with a running index; here each thread
// takes a static share of the rows and walks them the same way from its first row, so
// every output element gets the same value (repeat_grad adds its slices in the same order):
// bit-identical. One copy too big to split by rows (concat or slice on axis 0) is split
// into equal byte ranges.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/shape_rows.h"
#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// Copies n floats, split over the team when there are enough of them.
void parallel_copy(float* dst, const float* src, std::int64_t n) {
#pragma omp parallel if (n >= kOmpMinParallelElements)
  {
    std::int64_t begin = 0, end = 0;
    omp_row_range(omp_get_thread_num(), omp_get_num_threads(), n, &begin, &end);
    if (begin < end) std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(end - begin) * sizeof(float));
  }
}

// Walks the rows of a shape (every index but the last axis) from row `first` on, keeping
// the multi-index and one offset computed from it as the reference's running loops do:
// a thread divides once to find its first row, then only adds (a 64-bit division costs
// about 40 cycles, as much as copying a short row).
class RowWalker {
 public:
  // Row r's offset is Σ_d (index_d + shift[d])·strides[d] over every axis but the last,
  // plus shift.back()·strides.back() (shift empty: zeros).
  RowWalker(const Shape& shape, const std::vector<std::int64_t>& strides, const std::vector<std::int64_t>& shift,
            std::int64_t first)
      : shape_(shape), strides_(strides), idx_(static_cast<std::size_t>(shape.rank()), 0) {
    const std::int64_t rank = shape.rank();
    for (std::int64_t d = rank - 2; d >= 0; --d) {
      idx_[static_cast<std::size_t>(d)] = first % shape[d];
      first /= shape[d];
    }
    for (std::int64_t d = 0; d < rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      const std::int64_t shifted = (d + 1 < rank ? idx_[u] : 0) + (shift.empty() ? 0 : shift[u]);
      at_ += shifted * strides[u];
    }
  }
  std::int64_t at() const { return at_; }
  void next() {
    for (std::int64_t d = shape_.rank() - 2; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      at_ += strides_[u];
      if (++idx_[u] < shape_[d]) return;
      at_ -= idx_[u] * strides_[u];
      idx_[u] = 0;
    }
  }

 private:
  const Shape& shape_;
  const std::vector<std::int64_t>& strides_;
  std::vector<std::int64_t> idx_;
  std::int64_t at_ = 0;
};

// ref_shape.cpp's pad and crop: the same row function (shape_rows.h), rows split over threads.
class OmpPadCrop final : public Kernel {
 public:
  explicit OmpPadCrop(PadCropPlan plan) : p_(std::move(plan)) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    const std::int64_t big_n = p_.big.numel(), small_n = p_.small.numel();
    if (p_.pad) {
      const float value = p_.value;
#pragma omp parallel for simd schedule(static) if (big_n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < big_n; ++i) y[i] = value;
    }
    if (p_.small.rank() == 0) {
      *y = *x;
      return;
    }
    if (small_n == 0) return;
    const std::int64_t row = p_.row, rows = small_n / row;
#pragma omp parallel if (small_n >= kOmpMinParallelElements)
    {
      std::int64_t begin = 0, end = 0;
      omp_row_range(omp_get_thread_num(), omp_get_num_threads(), rows, &begin, &end);
      if (begin < end) {
        RowWalker big(p_.small, p_.big_strides, p_.offset, begin);
        for (std::int64_t r = begin; r < end; ++r, big.next()) pad_crop_row(p_, x, y, r * row, big.at());
      }
    }
  }

 private:
  PadCropPlan p_;
};

// ref_shape.cpp's transpose: the same row function (shape_rows.h), rows split over threads.
class OmpTranspose final : public Kernel {
 public:
  OmpTranspose(const Shape& x, const std::vector<std::int64_t>& perm) : p_(transpose_plan(x, perm)) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    if (transpose_without_rows(p_, x, y)) return;
    const std::int64_t n = p_.y_shape.numel(), last = p_.last, rows = n / last;
#pragma omp parallel if (n >= kOmpMinParallelElements)
    {
      std::int64_t begin = 0, end = 0;
      omp_row_range(omp_get_thread_num(), omp_get_num_threads(), rows, &begin, &end);
      if (begin < end) {
        RowWalker src(p_.y_shape, p_.step, {}, begin);
        for (std::int64_t r = begin; r < end; ++r, src.next()) transpose_row(p_, x, src.at(), y + r * last);
      }
    }
  }

 private:
  TransposePlan p_;
};

// repeat: y[o, a * r + k, i] = x[o, a, i]; grad: dx[o, a, i] = sum_k dy[o, a * r + k, i],
// the k in order as the reference adds them.
class OmpRepeat final : public Kernel {
 public:
  OmpRepeat(bool grad, const Shape& x, std::int64_t axis, std::int64_t repeats) : grad_(grad), r_(repeats) {
    for (std::int64_t d = 0; d < x.rank(); ++d) (d < axis ? outer_ : d == axis ? axis_ : inner_) *= x[d];
  }
  void run(const KernelArgs& args) override {
    const auto* in = static_cast<const float*>(args.inputs[0]);
    auto* out = static_cast<float*>(args.outputs[0]);
    const std::int64_t slices = outer_ * axis_, inner = inner_, r = r_;
    const auto bytes = static_cast<std::size_t>(inner) * sizeof(float);
    const bool grad = grad_;
#pragma omp parallel for schedule(static) if (slices * inner * r >= kOmpMinParallelElements)
    for (std::int64_t s = 0; s < slices; ++s) {
      const std::int64_t small = s * inner;
      for (std::int64_t k = 0; k < r; ++k) {
        const std::int64_t big = (s * r + k) * inner;
        if (!grad) {
          std::memcpy(out + big, in + small, bytes);
        } else if (k == 0) {
          std::memcpy(out + small, in + big, bytes);
        } else {
          for (std::int64_t i = 0; i < inner; ++i) out[small + i] += in[big + i];
        }
      }
    }
  }

 private:
  bool grad_;
  std::int64_t r_, outer_ = 1, axis_ = 1, inner_ = 1;
};

// concat: output row o is every input's row o in turn; slice: output row o is a window of
// input row o. Rows are split over the team; a single row is one parallel_copy per piece.
class OmpConcatSlice final : public Kernel {
 public:
  OmpConcatSlice(std::vector<std::int64_t> pieces, std::int64_t outer, std::int64_t in_row, std::int64_t skip)
      : pieces_(std::move(pieces)), outer_(outer), in_row_(in_row), skip_(skip) {}
  void run(const KernelArgs& a) override {
    auto* y = static_cast<float*>(a.outputs[0]);
    std::int64_t out_row = 0;
    for (std::int64_t p : pieces_) out_row += p;
    const std::size_t k_count = pieces_.size();
    const bool slice = in_row_ > 0;
    if (outer_ == 1) {
      float* dst = y;
      for (std::size_t k = 0; k < k_count; ++k) {
        parallel_copy(dst, static_cast<const float*>(a.inputs[k]) + (slice ? skip_ : 0), pieces_[k]);
        dst += pieces_[k];
      }
      return;
    }
#pragma omp parallel for schedule(static) if (outer_ * out_row >= kOmpMinParallelElements)
    for (std::int64_t o = 0; o < outer_; ++o) {
      float* dst = y + o * out_row;
      for (std::size_t k = 0; k < k_count; ++k) {
        const float* src = slice ? static_cast<const float*>(a.inputs[0]) + o * in_row_ + skip_
                                 : static_cast<const float*>(a.inputs[k]) + o * pieces_[k];
        std::memcpy(dst, src, static_cast<std::size_t>(pieces_[k]) * sizeof(float));
        dst += pieces_[k];
      }
    }
  }

 private:
  std::vector<std::int64_t> pieces_;  // floats each input adds to an output row
  std::int64_t outer_;
  std::int64_t in_row_;  // slice: the input row's length (0 for concat)
  std::int64_t skip_;    // slice: floats skipped at the start of an input row
};

}  // namespace

std::unique_ptr<Kernel> make_omp_shape(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  const Shape& x = d.inputs.at(0).shape;
  if (d.op == "pad") {
    return std::make_unique<OmpPadCrop>(PadCropPlan(true, x, d.outputs.at(0).shape, d.attrs.ints("before"),
                                                    static_cast<float>(d.attrs.f_or("value", 0.0))));
  }
  if (d.op == "crop") return std::make_unique<OmpPadCrop>(PadCropPlan(false, d.outputs.at(0).shape, x, d.attrs.ints("begin"), 0.0f));
  if (d.op == "transpose") return std::make_unique<OmpTranspose>(x, d.attrs.ints("perm"));
  if (d.op == "repeat") return std::make_unique<OmpRepeat>(false, x, d.attrs.i("axis"), d.attrs.i("repeats"));
  if (d.op == "repeat_grad") {
    return std::make_unique<OmpRepeat>(true, d.outputs.at(0).shape, d.attrs.i("axis"), d.attrs.i("repeats"));
  }
  const std::int64_t axis = d.attrs.i("axis");
  if (d.op == "concat") {
    std::vector<std::int64_t> pieces;
    for (const TensorDesc& t : d.inputs) {
      const AxisView v = axis_view(t.shape, axis);
      pieces.push_back(v.axis * v.inner);
    }
    return std::make_unique<OmpConcatSlice>(std::move(pieces), axis_view(d.outputs.at(0).shape, axis).outer, 0, 0);
  }
  if (d.op == "slice") {
    const AxisView v = axis_view(x, axis);
    return std::make_unique<OmpConcatSlice>(std::vector<std::int64_t>{d.attrs.i("size") * v.inner}, v.outer,
                                            v.axis * v.inner, d.attrs.i("begin") * v.inner);
  }
  throw InvalidArgument("internal: make_omp_shape has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
