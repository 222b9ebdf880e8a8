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
#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(static_cast<std::size_t>(s.rank()), 1);
  for (std::int64_t d = s.rank() - 2; d >= 0; --d) st[static_cast<std::size_t>(d)] = st[static_cast<std::size_t>(d) + 1] * s[d + 1];
  return st;
}

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

class OmpPadCrop final : public Kernel {
 public:
  OmpPadCrop(bool pad, Shape small, Shape big, std::vector<std::int64_t> offset, float value)
      : pad_(pad), value_(value), small_(std::move(small)), big_(std::move(big)), offset_(std::move(offset)),
        big_strides_(strides_of(big_)) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    const std::int64_t big_n = big_.numel(), small_n = small_.numel();
    if (pad_) {
      const float value = value_;
#pragma omp parallel for simd schedule(static) if (big_n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < big_n; ++i) y[i] = value;
    }
    if (small_.rank() == 0) {
      *y = *x;
      return;
    }
    if (small_n == 0) return;
    const std::int64_t row = small_[small_.rank() - 1], rows = small_n / row;
    const auto bytes = static_cast<std::size_t>(row) * sizeof(float);
#pragma omp parallel if (small_n >= kOmpMinParallelElements)
    {
      std::int64_t begin = 0, end = 0;
      omp_row_range(omp_get_thread_num(), omp_get_num_threads(), rows, &begin, &end);
      if (begin < end) {
        RowWalker big(small_, big_strides_, offset_, begin);
        for (std::int64_t r = begin; r < end; ++r, big.next()) {
          if (pad_) {
            std::memcpy(y + big.at(), x + r * row, bytes);
          } else {
            std::memcpy(y + r * row, x + big.at(), bytes);
          }
        }
      }
    }
  }

 private:
  bool pad_;
  float value_;
  Shape small_, big_;
  std::vector<std::int64_t> offset_, big_strides_;
};

class OmpTranspose final : public Kernel {
 public:
  OmpTranspose(const Shape& x, const std::vector<std::int64_t>& perm) {
    const auto xs = strides_of(x);
    std::vector<std::int64_t> dims;
    for (std::int64_t p : perm) {
      dims.push_back(x[p]);
      step_.push_back(xs[static_cast<std::size_t>(p)]);
    }
    y_shape_ = Shape(dims);
  }
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    const std::int64_t rank = y_shape_.rank(), n = y_shape_.numel();
    if (n == 0) return;
    if (rank == 0) {
      *y = *x;
      return;
    }
    const std::int64_t last = y_shape_[rank - 1], last_step = step_.back(), rows = n / last;
#pragma omp parallel if (n >= kOmpMinParallelElements)
    {
      std::int64_t begin = 0, end = 0;
      omp_row_range(omp_get_thread_num(), omp_get_num_threads(), rows, &begin, &end);
      if (begin < end) {
        RowWalker src(y_shape_, step_, {}, begin);
        for (std::int64_t r = begin; r < end; ++r, src.next()) {
          const float* in = x + src.at();
          float* out = y + r * last;
          for (std::int64_t j = 0; j < last; ++j) out[j] = in[j * last_step];
        }
      }
    }
  }

 private:
  Shape y_shape_;
  std::vector<std::int64_t> step_;
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

struct AxisView {
  std::int64_t outer = 1, axis = 1, inner = 1;
};

AxisView view(const Shape& s, std::int64_t axis) {
  AxisView v;
  for (std::int64_t d = 0; d < s.rank(); ++d) (d < axis ? v.outer : d == axis ? v.axis : v.inner) *= s[d];
  return v;
}

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
    return std::make_unique<OmpPadCrop>(true, x, d.outputs.at(0).shape, d.attrs.ints("before"),
                                        static_cast<float>(d.attrs.f_or("value", 0.0)));
  }
  if (d.op == "crop") return std::make_unique<OmpPadCrop>(false, d.outputs.at(0).shape, x, d.attrs.ints("begin"), 0.0f);
  if (d.op == "transpose") return std::make_unique<OmpTranspose>(x, d.attrs.ints("perm"));
  if (d.op == "repeat") return std::make_unique<OmpRepeat>(false, x, d.attrs.i("axis"), d.attrs.i("repeats"));
  if (d.op == "repeat_grad") {
    return std::make_unique<OmpRepeat>(true, d.outputs.at(0).shape, d.attrs.i("axis"), d.attrs.i("repeats"));
  }
  const std::int64_t axis = d.attrs.i("axis");
  if (d.op == "concat") {
    std::vector<std::int64_t> pieces;
    for (const TensorDesc& t : d.inputs) {
      const AxisView v = view(t.shape, axis);
      pieces.push_back(v.axis * v.inner);
    }
    return std::make_unique<OmpConcatSlice>(std::move(pieces), view(d.outputs.at(0).shape, axis).outer, 0, 0);
  }
  if (d.op == "slice") {
    const AxisView v = view(x, axis);
    return std::make_unique<OmpConcatSlice>(std::vector<std::int64_t>{d.attrs.i("size") * v.inner}, v.outer,
                                            v.axis * v.inner, d.attrs.i("begin") * v.inner);
  }
  throw InvalidArgument("internal: make_omp_shape has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
