// OpenMP kernels of resize and resize_grad (graph/resize_op_defs.cpp). Both are separable
// passes over rows of the output they write, so threads never share an output element and
// no atomics are needed: resize blends the input rows an output row reads (its height
// taps) into one [W, C] row of thread-private workspace, then each output pixel blends the
// columns its width taps name. resize_grad runs the same passes with the transposed taps
// (backend/common/resize_taps.h): input row iy gathers the dy rows that read it, so the
// adjoint is a gather too, deterministic at any thread count. Sums are float, in tap order
// (TF's kernels also blend rows before columns).
#include <omp.h>

#include <algorithm>

#include "backend/common/resize_taps.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpResize final : public Kernel {
 public:
  // rows/cols: the taps from the image being read (x for resize, dy for resize_grad) to the
  // one being written; in_h/in_w and out_h/out_w are those images' spatial sizes.
  OmpResize(ResizeTaps rows, ResizeTaps cols, std::int64_t n, std::int64_t c, std::int64_t in_h, std::int64_t in_w,
            std::int64_t out_h, std::int64_t out_w)
      : rows_(std::move(rows)), cols_(std::move(cols)), n_(n), c_(c), in_h_(in_h), in_w_(in_w), out_h_(out_h),
        out_w_(out_w), threads_(omp_get_max_threads()) {}

  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(threads_) * static_cast<std::size_t>(in_w_ * c_) * sizeof(float);
  }

  void run(const KernelArgs& args) override {
    const auto* in = static_cast<const float*>(args.inputs[0]);
    auto* out = static_cast<float*>(args.outputs[0]);
    auto* scratch = static_cast<float*>(args.workspace);
    const std::int64_t row_len = in_w_ * c_;
    const std::int64_t out_rows = n_ * out_h_;
    const bool parallel = out_rows * out_w_ * c_ >= kOmpMinParallelElements;
#pragma omp parallel num_threads(parallel ? threads_ : 1)
    {
      float* blended = scratch + static_cast<std::int64_t>(omp_get_thread_num()) * row_len;
#pragma omp for schedule(static)
      for (std::int64_t r = 0; r < out_rows; ++r) {
        const std::int64_t n = r / out_h_, oy = r % out_h_;
        blend_rows(in + n * in_h_ * row_len, oy, row_len, blended);
        blend_columns(blended, out + r * out_w_ * c_);
      }
    }
  }

 private:
  // blended = Σ over the height taps of output row oy of weight · image row index.
  void blend_rows(const float* image, std::int64_t oy, std::int64_t row_len, float* blended) const {
    std::fill(blended, blended + row_len, 0.0f);
    const auto y = static_cast<std::size_t>(oy);
    for (auto a = static_cast<std::size_t>(rows_.offsets[y]); a < static_cast<std::size_t>(rows_.offsets[y + 1]); ++a) {
      const float w = rows_.weight[a];
      const float* src = image + rows_.index[a] * row_len;
#pragma omp simd
      for (std::int64_t i = 0; i < row_len; ++i) blended[i] += w * src[i];
    }
  }

  // Each output pixel ox of the row = Σ over its width taps of weight · blended pixel index.
  void blend_columns(const float* blended, float* out_row) const {
    for (std::size_t ox = 0; ox < static_cast<std::size_t>(out_w_); ++ox) {
      float* dst = out_row + static_cast<std::int64_t>(ox) * c_;
      std::fill(dst, dst + c_, 0.0f);
      for (auto b = static_cast<std::size_t>(cols_.offsets[ox]); b < static_cast<std::size_t>(cols_.offsets[ox + 1]); ++b) {
        const float w = cols_.weight[b];
        const float* src = blended + cols_.index[b] * c_;
#pragma omp simd
        for (std::int64_t k = 0; k < c_; ++k) dst[k] += w * src[k];
      }
    }
  }

  ResizeTaps rows_, cols_;
  std::int64_t n_, c_, in_h_, in_w_, out_h_, out_w_;
  int threads_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_resize(const KernelDesc& desc, std::string* why_not) {
  ResizeGeometry g;
  if (!check_resize(desc, &g, why_not)) return nullptr;
  ResizeTaps rows = resize_taps(g.method, g.antialias, g.h, g.oh);
  ResizeTaps cols = resize_taps(g.method, g.antialias, g.w, g.ow);
  if (desc.op == "resize_grad") {
    return std::make_unique<OmpResize>(transpose_taps(rows, g.h), transpose_taps(cols, g.w), g.n, g.c, g.oh, g.ow,
                                       g.h, g.w);
  }
  return std::make_unique<OmpResize>(std::move(rows), std::move(cols), g.n, g.c, g.h, g.w, g.oh, g.ow);
}

}  // namespace nnfit
