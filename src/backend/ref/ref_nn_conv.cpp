// Reference conv2d, fused_conv2d and their two gradients in NHWC/HWIO, written as the
// textbook sums over (n, oh, ow, kh, kw, c, o) with TensorFlow padding from Window2d; an
// input position outside [0,H)x[0,W) is padding and contributes nothing. Tap (kh, kw) of
// output (oh, ow) reads input (oh*sh - pad_top + kh*dh, ow*sw - pad_left + kw*dw); output
// channel o reads only its group's input channels, through filter row c - group * C/G.
#include <vector>

#include "backend/ref/ref_nn_kernel.h"

namespace nnfit {

namespace {

// Index helpers for the three layouts.
struct Idx {
  const Window2d& g;
  std::int64_t x(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c) const {
    return ((n * g.h + h) * g.w + w) * g.c + c;
  }
  std::int64_t y(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t o) const {
    return ((n * g.oh + h) * g.ow + w) * g.o + o;
  }
  // Filter element (kh, kw, ci, o), ci counting within the group.
  std::int64_t f(std::int64_t kh, std::int64_t kw, std::int64_t ci, std::int64_t o) const {
    return ((kh * g.kw + kw) * g.group_c() + ci) * g.o + o;
  }
};

// Calls fn(c, ci, o) for every (input channel, its index in the group, output channel) pair
// that the grouping connects.
template <typename Fn>
void for_each_channel_pair(const Window2d& g, Fn fn) {
  const std::int64_t gc = g.group_c(), go = g.group_o();
  for (std::int64_t o = 0; o < g.o; ++o) {
    const std::int64_t c0 = (o / go) * gc;
    for (std::int64_t ci = 0; ci < gc; ++ci) fn(c0 + ci, ci, o);
  }
}

// Calls fn(n, oh, ow, kh, kw, ih, iw) for every (output position, window tap) that lands
// inside the input.
template <typename Fn>
void for_each_tap(const Window2d& g, Fn fn) {
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t oh = 0; oh < g.oh; ++oh)
      for (std::int64_t ow = 0; ow < g.ow; ++ow)
        for (std::int64_t kh = 0; kh < g.kh; ++kh)
          for (std::int64_t kw = 0; kw < g.kw; ++kw) {
            std::int64_t ih = oh * g.sh - g.pad_top + kh * g.dh;
            std::int64_t iw = ow * g.sw - g.pad_left + kw * g.dw;
            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
            fn(n, oh, ow, kh, kw, ih, iw);
          }
}

}  // namespace

std::unique_ptr<Kernel> make_ref_conv2d(const KernelDesc& desc, std::string* /*why_not*/) {
  Window2d g = checked_window(desc);
  bool fused = desc.op == "fused_conv2d";
  ActivationKind act = fused ? parse_activation_kind(desc, "activation") : ActivationKind::linear;
  return std::make_unique<RefKernel>([g, fused, act](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    const float* bias = fused ? static_cast<const float*>(args.inputs[2]) : nullptr;
    float* y = static_cast<float*>(args.outputs[0]);
    Idx at{g};
    std::vector<double> acc(static_cast<std::size_t>(g.n * g.oh * g.ow * g.o), 0.0);
    for_each_tap(g, [&](auto n, auto oh, auto ow, auto kh, auto kw, auto ih, auto iw) {
      for_each_channel_pair(g, [&](auto c, auto ci, auto o) {
        acc[at.y(n, oh, ow, o)] += static_cast<double>(x[at.x(n, ih, iw, c)]) * w[at.f(kh, kw, ci, o)];
      });
    });
    for (std::size_t i = 0; i < acc.size(); ++i) {
      double v = acc[i];
      if (fused) v = ref_activation(act, v + bias[static_cast<std::int64_t>(i) % g.o]);
      y[i] = static_cast<float>(v);
    }
  });
}

std::unique_ptr<Kernel> make_ref_conv2d_backprop_input(const KernelDesc& desc, std::string* /*why_not*/) {
  Window2d g = checked_window(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    Idx at{g};
    std::vector<double> acc(static_cast<std::size_t>(g.n * g.h * g.w * g.c), 0.0);
    for_each_tap(g, [&](auto n, auto oh, auto ow, auto kh, auto kw, auto ih, auto iw) {
      for_each_channel_pair(g, [&](auto c, auto ci, auto o) {
        acc[at.x(n, ih, iw, c)] += static_cast<double>(dy[at.y(n, oh, ow, o)]) * w[at.f(kh, kw, ci, o)];
      });
    });
    for (std::size_t i = 0; i < acc.size(); ++i) dx[i] = static_cast<float>(acc[i]);
  });
}

std::unique_ptr<Kernel> make_ref_conv2d_backprop_filter(const KernelDesc& desc, std::string* /*why_not*/) {
  Window2d g = checked_window(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[1]);
    float* dw = static_cast<float*>(args.outputs[0]);
    Idx at{g};
    std::vector<double> acc(static_cast<std::size_t>(g.filter_shape().numel()), 0.0);
    for_each_tap(g, [&](auto n, auto oh, auto ow, auto kh, auto kw, auto ih, auto iw) {
      for_each_channel_pair(g, [&](auto c, auto ci, auto o) {
        acc[at.f(kh, kw, ci, o)] += static_cast<double>(x[at.x(n, ih, iw, c)]) * dy[at.y(n, oh, ow, o)];
      });
    });
    for (std::size_t i = 0; i < acc.size(); ++i) dw[i] = static_cast<float>(acc[i]);
  });
}

}  // namespace nnfit
