// Reference max/avg pooling and their gradients in NHWC. Only window positions inside the
// input take part: padding never wins a max and is not counted in an average (TensorFlow).
// A max tie sends the gradient to the first position in row-major window order.
#include <functional>
#include <memory>
#include <vector>

#include "backend/ref/ref_nn_kernel.h"
#include "nnfit/core/pool_argmax.h"

namespace nnfit {

namespace {

// The in-bounds part of the window of output (oh, ow): rows [h0,h1), columns [w0,w1).
struct Span {
  std::int64_t h0, h1, w0, w1;
  std::int64_t count() const { return (h1 - h0) * (w1 - w0); }
};

Span window_span(const Window2d& g, std::int64_t oh, std::int64_t ow) {
  std::int64_t h0 = oh * g.sh - g.pad_top, w0 = ow * g.sw - g.pad_left;
  Span s{h0, h0 + g.kh, w0, w0 + g.kw};
  if (s.h0 < 0) s.h0 = 0;
  if (s.w0 < 0) s.w0 = 0;
  if (s.h1 > g.h) s.h1 = g.h;
  if (s.w1 > g.w) s.w1 = g.w;
  return s;
}

std::int64_t x_index(const Window2d& g, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c) {
  return ((n * g.h + h) * g.w + w) * g.c + c;
}

// Calls fn(y_index, span, n, c) for every output element.
template <typename Fn>
void for_each_output(const Window2d& g, Fn fn) {
  std::int64_t yi = 0;
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t oh = 0; oh < g.oh; ++oh)
      for (std::int64_t ow = 0; ow < g.ow; ++ow) {
        Span s = window_span(g, oh, ow);
        for (std::int64_t c = 0; c < g.c; ++c) fn(yi++, s, n, c);
      }
}

// Index in x of the first maximum of the window (row-major), or -1 for an empty window.
std::int64_t first_argmax(const Window2d& g, const float* x, const Span& s, std::int64_t n,
                          std::int64_t c) {
  std::int64_t best = -1;
  for (std::int64_t h = s.h0; h < s.h1; ++h)
    for (std::int64_t w = s.w0; w < s.w1; ++w) {
      std::int64_t i = x_index(g, n, h, w, c);
      if (best < 0 || x[i] > x[best]) best = i;
    }
  return best;
}

std::unique_ptr<Kernel> decline_or(const KernelDesc& desc, std::string* why_not,
                                   const std::function<std::unique_ptr<Kernel>(const Window2d&)>& make) {
  if (std::string r = window_unsupported_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  return make(checked_window(desc));
}

}  // namespace

std::unique_ptr<Kernel> make_ref_max_pool2d(const KernelDesc& desc, std::string* why_not) {
  return decline_or(desc, why_not, [](const Window2d& g) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefKernel>([g](const KernelArgs& args) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      float* y = static_cast<float*>(args.outputs[0]);
      for_each_output(g, [&](std::int64_t yi, const Span& s, std::int64_t n, std::int64_t c) {
        y[yi] = x[first_argmax(g, x, s, n, c)];
      });
    });
  });
}

// max_pool2d_grad, and max_pool2d_grad_bias: the same dx, and db[c] = dx[..., c] summed
// over N, H, W in double.
std::unique_ptr<Kernel> make_ref_max_pool2d_grad(const KernelDesc& desc, std::string* why_not) {
  // attr relu=1 (set by the fusion pass): x is a relu output and the relu's gradient is
  // folded in, dx *= [x > 0].
  const bool relu = desc.attrs.i_or("relu", 0) != 0;
  const bool bias = desc.op == "max_pool2d_grad_bias";
  return decline_or(desc, why_not, [relu, bias](const Window2d& g) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefKernel>([g, relu, bias](const KernelArgs& args) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      const float* dy = static_cast<const float*>(args.inputs[2]);
      float* dx = static_cast<float*>(args.outputs[0]);
      std::vector<double> acc(static_cast<std::size_t>(g.n * g.h * g.w * g.c), 0.0);
      for_each_output(g, [&](std::int64_t yi, const Span& s, std::int64_t n, std::int64_t c) {
        acc[static_cast<std::size_t>(first_argmax(g, x, s, n, c))] += dy[yi];
      });
      for (std::size_t i = 0; i < acc.size(); ++i) {
        dx[i] = relu && !(x[i] > 0.0f) ? 0.0f : static_cast<float>(acc[i]);
      }
      if (!bias) return;
      for (std::int64_t c = 0; c < g.c; ++c) {
        double sum = 0.0;
        for (std::int64_t p = 0; p < g.n * g.h * g.w; ++p) sum += dx[p * g.c + c];
        args.out(1)[c] = static_cast<float>(sum);
      }
    });
  });
}

// max_pool2d_argmax: y as max_pool2d's, and each window's first argmax as a byte (Note
// [Pool argmax]): its position in the whole window, bit 7 when y is not > 0.
std::unique_ptr<Kernel> make_ref_max_pool2d_argmax(const KernelDesc& desc, std::string* why_not) {
  return decline_or(desc, why_not, [](const Window2d& g) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefKernel>([g](const KernelArgs& args) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      float* y = static_cast<float*>(args.outputs[0]);
      auto* at = static_cast<std::uint8_t*>(args.outputs[1]);
      for_each_output(g, [&](std::int64_t yi, const Span&, std::int64_t n, std::int64_t c) {
        const std::int64_t oh = yi / g.c / g.ow % g.oh, ow = yi / g.c % g.ow;
        const Span s = window_span(g, oh, ow);
        const std::int64_t best = first_argmax(g, x, s, n, c);
        const std::int64_t h = best / g.c / g.w % g.h, w = best / g.c % g.w;
        const std::int64_t position = (h - (oh * g.sh - g.pad_top)) * g.kw + (w - (ow * g.sw - g.pad_left));
        y[yi] = x[best];
        at[yi] = static_cast<std::uint8_t>(position | (y[yi] > 0.0f ? 0 : kArgmaxNotPositive));
      });
    });
  });
}

// fused_conv2d_max_pool_argmax: the reference convolution into a buffer of its own, then
// the reference max_pool2d_argmax over it (split_conv_pool).
std::unique_ptr<Kernel> make_ref_conv2d_max_pool_argmax(const KernelDesc& desc, std::string* why_not) {
  const ConvPoolDescs d = split_conv_pool(desc);
  std::shared_ptr<Kernel> conv = make_ref_conv2d(d.conv, why_not), pool = make_ref_max_pool2d_argmax(d.pool, why_not);
  if (!conv || !pool) return nullptr;
  const std::int64_t y1_size = d.conv.outputs[0].shape.numel();
  return std::make_unique<RefKernel>([conv, pool, y1_size](const KernelArgs& args) {
    std::vector<float> y1(static_cast<std::size_t>(y1_size));
    void* conv_out[] = {y1.data()};
    conv->run(KernelArgs{args.inputs, conv_out, nullptr, args.ctx});
    const void* pool_in[] = {y1.data()};
    pool->run(KernelArgs{pool_in, args.outputs, nullptr, args.ctx});
  });
}

// fused_conv2d_max_pool_argmax_grad: the reference max_pool2d_argmax_grad_bias into a
// buffer of its own (dy1) and db, then the reference filter gradient over x and dy1
// (split_conv_pool_grad).
std::unique_ptr<Kernel> make_ref_conv2d_max_pool_argmax_grad(const KernelDesc& desc, std::string* why_not) {
  const ConvPoolGradDescs d = split_conv_pool_grad(desc);
  std::shared_ptr<Kernel> pool = make_ref_max_pool2d_argmax_grad(d.pool, why_not),
                          filter = make_ref_conv2d_backprop_filter(d.filter, why_not);
  if (!pool || !filter) return nullptr;
  const std::int64_t dy1_size = d.pool.outputs[0].shape.numel();
  return std::make_unique<RefKernel>([pool, filter, dy1_size](const KernelArgs& args) {
    std::vector<float> dy1(static_cast<std::size_t>(dy1_size));
    const void* pool_in[] = {args.inputs[1], args.inputs[2]};
    void* pool_out[] = {dy1.data(), args.outputs[1]};
    pool->run(KernelArgs{pool_in, pool_out, nullptr, args.ctx});
    const void* filter_in[] = {args.inputs[0], dy1.data()};
    filter->run(KernelArgs{filter_in, args.outputs, nullptr, args.ctx});
  });
}

// max_pool2d_argmax_grad(_bias): dy added at each window's argmax (0 there with the relu
// gradient folded in, attr relu=1, when bit 7 says the max was not > 0); db[c] = dx[..., c]
// summed over N, H, W in double.
std::unique_ptr<Kernel> make_ref_max_pool2d_argmax_grad(const KernelDesc& desc, std::string* why_not) {
  const bool relu = desc.attrs.i_or("relu", 0) != 0;
  const bool bias = desc.op == "max_pool2d_argmax_grad_bias";
  return decline_or(desc, why_not, [relu, bias](const Window2d& g) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefKernel>([g, relu, bias](const KernelArgs& args) {
      const float* dy = static_cast<const float*>(args.inputs[0]);
      const auto* at = static_cast<const std::uint8_t*>(args.inputs[1]);
      float* dx = static_cast<float*>(args.outputs[0]);
      std::vector<double> acc(static_cast<std::size_t>(g.n * g.h * g.w * g.c), 0.0);
      for_each_output(g, [&](std::int64_t yi, const Span&, std::int64_t n, std::int64_t c) {
        const std::int64_t oh = yi / g.c / g.ow % g.oh, ow = yi / g.c % g.ow;
        const std::int64_t position = at[yi] & kArgmaxPosition;
        const std::int64_t h = oh * g.sh - g.pad_top + position / g.kw, w = ow * g.sw - g.pad_left + position % g.kw;
        if (relu && (at[yi] & kArgmaxNotPositive)) return;
        acc[static_cast<std::size_t>(x_index(g, n, h, w, c))] += dy[yi];
      });
      for (std::size_t i = 0; i < acc.size(); ++i) dx[i] = static_cast<float>(acc[i]);
      if (!bias) return;
      for (std::int64_t c = 0; c < g.c; ++c) {
        double sum = 0.0;
        for (std::int64_t p = 0; p < g.n * g.h * g.w; ++p) sum += dx[p * g.c + c];
        args.out(1)[c] = static_cast<float>(sum);
      }
    });
  });
}

std::unique_ptr<Kernel> make_ref_avg_pool2d(const KernelDesc& desc, std::string* why_not) {
  return decline_or(desc, why_not, [](const Window2d& g) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefKernel>([g](const KernelArgs& args) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      float* y = static_cast<float*>(args.outputs[0]);
      for_each_output(g, [&](std::int64_t yi, const Span& s, std::int64_t n, std::int64_t c) {
        double sum = 0.0;
        for (std::int64_t h = s.h0; h < s.h1; ++h)
          for (std::int64_t w = s.w0; w < s.w1; ++w) sum += x[x_index(g, n, h, w, c)];
        y[yi] = static_cast<float>(sum / static_cast<double>(s.count()));
      });
    });
  });
}

std::unique_ptr<Kernel> make_ref_avg_pool2d_grad(const KernelDesc& desc, std::string* why_not) {
  return decline_or(desc, why_not, [](const Window2d& g) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefKernel>([g](const KernelArgs& args) {
      const float* dy = static_cast<const float*>(args.inputs[0]);
      float* dx = static_cast<float*>(args.outputs[0]);
      std::vector<double> acc(static_cast<std::size_t>(g.n * g.h * g.w * g.c), 0.0);
      for_each_output(g, [&](std::int64_t yi, const Span& s, std::int64_t n, std::int64_t c) {
        double share = dy[yi] / static_cast<double>(s.count());
        for (std::int64_t h = s.h0; h < s.h1; ++h)
          for (std::int64_t w = s.w0; w < s.w1; ++w) acc[x_index(g, n, h, w, c)] += share;
      });
      for (std::size_t i = 0; i < acc.size(); ++i) dx[i] = static_cast<float>(acc[i]);
    });
  });
}

}  // namespace nnfit
