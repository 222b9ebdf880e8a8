// Reference max/avg pooling over depth, height and width (NDHWC) and their gradients, with
// ref_nn_pool.cpp's rules: only window positions inside the input take part (padding never
// wins a max and is not counted in an average, as TensorFlow), and a max tie sends the
// gradient to the first position in row-major (depth, height, width) window order.
#include <algorithm>
#include <vector>

#include "backend/ref/ref_nn_kernel.h"

namespace nnfit {

namespace {

// The in-bounds part of one output position's window: [lo[a], hi[a]) on each axis a.
struct Span3 {
  std::int64_t lo[3], hi[3];
  std::int64_t count() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};

std::int64_t x_index(const Window3d& g, std::int64_t n, std::int64_t d, std::int64_t h, std::int64_t w,
                     std::int64_t c) {
  return (((n * g.in[0] + d) * g.in[1] + h) * g.in[2] + w) * g.c + c;
}

// Calls fn(y_index, span, n, c) for every output element, in y's order.
template <typename Fn>
void for_each_output(const Window3d& g, Fn fn) {
  std::int64_t yi = 0;
  std::int64_t p[3];
  for (std::int64_t n = 0; n < g.n; ++n)
    for (p[0] = 0; p[0] < g.out[0]; ++p[0])
      for (p[1] = 0; p[1] < g.out[1]; ++p[1])
        for (p[2] = 0; p[2] < g.out[2]; ++p[2]) {
          Span3 s;
          for (std::size_t a = 0; a < 3; ++a) {
            const std::int64_t start = p[a] * g.stride[a] - g.pad_before[a];
            s.lo[a] = std::max<std::int64_t>(start, 0);
            s.hi[a] = std::min(start + g.k[a], g.in[a]);
          }
          for (std::int64_t c = 0; c < g.c; ++c) fn(yi++, s, n, c);
        }
}

// Calls fn(x_index) for every in-bounds position of the window, in row-major order.
template <typename Fn>
void for_each_in_window(const Window3d& g, const Span3& s, std::int64_t n, std::int64_t c, Fn fn) {
  for (std::int64_t d = s.lo[0]; d < s.hi[0]; ++d)
    for (std::int64_t h = s.lo[1]; h < s.hi[1]; ++h)
      for (std::int64_t w = s.lo[2]; w < s.hi[2]; ++w) fn(x_index(g, n, d, h, w, c));
}

// Index in x of the window's first maximum. Every window holds at least one input position
// (TF's padding never makes a window of padding alone).
std::int64_t first_argmax(const Window3d& g, const float* x, const Span3& s, std::int64_t n, std::int64_t c) {
  std::int64_t best = -1;
  for_each_in_window(g, s, n, c, [&](std::int64_t i) {
    if (best < 0 || x[i] > x[best]) best = i;
  });
  return best;
}

}  // namespace

std::unique_ptr<Kernel> make_ref_max_pool3d(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for_each_output(g, [&](std::int64_t yi, const Span3& s, std::int64_t n, std::int64_t c) {
      y[yi] = x[first_argmax(g, x, s, n, c)];
    });
  });
}

std::unique_ptr<Kernel> make_ref_max_pool3d_grad(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  // attr relu=1 (set by the fusion pass): x is a relu output and the relu's gradient is
  // folded in, dx *= [x > 0].
  const bool relu = desc.attrs.i_or("relu", 0) != 0;
  return std::make_unique<RefKernel>([g, relu](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[2]);
    float* dx = static_cast<float*>(args.outputs[0]);
    std::vector<double> acc(static_cast<std::size_t>(g.input_shape().numel()), 0.0);
    for_each_output(g, [&](std::int64_t yi, const Span3& s, std::int64_t n, std::int64_t c) {
      acc[static_cast<std::size_t>(first_argmax(g, x, s, n, c))] += dy[yi];
    });
    for (std::size_t i = 0; i < acc.size(); ++i) {
      dx[i] = relu && !(x[i] > 0.0f) ? 0.0f : static_cast<float>(acc[i]);
    }
  });
}

std::unique_ptr<Kernel> make_ref_avg_pool3d(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    for_each_output(g, [&](std::int64_t yi, const Span3& s, std::int64_t n, std::int64_t c) {
      double sum = 0.0;
      for_each_in_window(g, s, n, c, [&](std::int64_t i) { sum += x[i]; });
      y[yi] = static_cast<float>(sum / static_cast<double>(s.count()));
    });
  });
}

std::unique_ptr<Kernel> make_ref_avg_pool3d_grad(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    float* dx = static_cast<float*>(args.outputs[0]);
    std::vector<double> acc(static_cast<std::size_t>(g.input_shape().numel()), 0.0);
    for_each_output(g, [&](std::int64_t yi, const Span3& s, std::int64_t n, std::int64_t c) {
      const double share = dy[yi] / static_cast<double>(s.count());
      for_each_in_window(g, s, n, c, [&](std::int64_t i) { acc[static_cast<std::size_t>(i)] += share; });
    });
    for (std::size_t i = 0; i < acc.size(); ++i) dx[i] = static_cast<float>(acc[i]);
  });
}

}  // namespace nnfit
