// Reference kernels of resize and resize_grad (graph/resize_op_defs.cpp), the oracles of
// the OpenMP ones: each output pixel is the double sum, over every pair of a height tap
// and a width tap (backend/common/resize_taps.h), of weight_h * weight_w * x, with no
// separable pass; resize_grad scatters dy through the same pairs into a double workspace.
#include <algorithm>

#include "backend/common/resize_taps.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

class RefResize final : public Kernel {
 public:
  RefResize(bool grad, const ResizeGeometry& g)
      : grad_(grad),
        g_(g),
        rows_(resize_taps(g.method, g.antialias, g.h, g.oh)),
        cols_(resize_taps(g.method, g.antialias, g.w, g.ow)) {}

  std::size_t workspace_bytes() const override {
    return grad_ ? static_cast<std::size_t>(g_.n * g_.h * g_.w * g_.c) * sizeof(double) : 0;
  }

  void run(const KernelArgs& args) override {
    if (grad_) {
      backward(static_cast<const float*>(args.inputs[0]), static_cast<float*>(args.outputs[0]),
               static_cast<double*>(args.workspace));
    } else {
      forward(static_cast<const float*>(args.inputs[0]), static_cast<float*>(args.outputs[0]));
    }
  }

 private:
  // Calls f(input pixel offset, weight) for every tap pair of output pixel (oy, ox) of
  // image n; offsets count pixels, not floats.
  template <typename F>
  void for_each_pair(std::int64_t n, std::int64_t oy, std::int64_t ox, F&& f) const {
    const auto y = static_cast<std::size_t>(oy), x = static_cast<std::size_t>(ox);
    for (auto a = static_cast<std::size_t>(rows_.offsets[y]); a < static_cast<std::size_t>(rows_.offsets[y + 1]); ++a) {
      for (auto b = static_cast<std::size_t>(cols_.offsets[x]); b < static_cast<std::size_t>(cols_.offsets[x + 1]); ++b) {
        const std::int64_t pixel = (n * g_.h + rows_.index[a]) * g_.w + cols_.index[b];
        f(pixel, static_cast<double>(rows_.weight[a]) * static_cast<double>(cols_.weight[b]));
      }
    }
  }

  void forward(const float* x, float* y) const {
    for (std::int64_t n = 0; n < g_.n; ++n) {
      for (std::int64_t oy = 0; oy < g_.oh; ++oy) {
        for (std::int64_t ox = 0; ox < g_.ow; ++ox) {
          float* out = y + ((n * g_.oh + oy) * g_.ow + ox) * g_.c;
          for (std::int64_t c = 0; c < g_.c; ++c) {
            double sum = 0.0;
            for_each_pair(n, oy, ox, [&](std::int64_t pixel, double w) { sum += w * x[pixel * g_.c + c]; });
            out[c] = static_cast<float>(sum);
          }
        }
      }
    }
  }

  void backward(const float* dy, float* dx, double* acc) const {
    const std::int64_t numel = g_.n * g_.h * g_.w * g_.c;
    std::fill(acc, acc + numel, 0.0);
    for (std::int64_t n = 0; n < g_.n; ++n) {
      for (std::int64_t oy = 0; oy < g_.oh; ++oy) {
        for (std::int64_t ox = 0; ox < g_.ow; ++ox) {
          const float* d = dy + ((n * g_.oh + oy) * g_.ow + ox) * g_.c;
          for_each_pair(n, oy, ox, [&](std::int64_t pixel, double w) {
            for (std::int64_t c = 0; c < g_.c; ++c) acc[pixel * g_.c + c] += w * d[c];
          });
        }
      }
    }
    for (std::int64_t i = 0; i < numel; ++i) dx[i] = static_cast<float>(acc[i]);
  }

  bool grad_;
  ResizeGeometry g_;
  ResizeTaps rows_, cols_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_resize(const KernelDesc& desc, std::string* why_not) {
  ResizeGeometry g;
  if (!check_resize(desc, &g, why_not)) return nullptr;
  return std::make_unique<RefResize>(desc.op == "resize_grad", g);
}

}  // namespace nnfit
