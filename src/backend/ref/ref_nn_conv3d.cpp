// Reference conv3d, fused_conv3d and their two gradients in NDHWC/DHWIO: ref_nn_conv.cpp's
// textbook sums with a depth axis, over (n, od, oh, ow, kd, kh, kw, c, o) with TensorFlow
// padding from Window3d. Tap k of output position p reads input p*s - pad_before + k*d on
// each axis; a position outside the input is padding and contributes nothing. Output
// channel o reads only its group's input channels, through filter row c - group * C/G.
#include <vector>

#include "backend/ref/ref_nn_kernel.h"

namespace nnfit {

namespace {

// Index helpers for the three layouts.
struct Idx3 {
  const Window3d& g;
  std::int64_t x(std::int64_t n, const std::int64_t* p, std::int64_t c) const {
    return (((n * g.in[0] + p[0]) * g.in[1] + p[1]) * g.in[2] + p[2]) * g.c + c;
  }
  std::int64_t y(std::int64_t n, const std::int64_t* p, std::int64_t o) const {
    return (((n * g.out[0] + p[0]) * g.out[1] + p[1]) * g.out[2] + p[2]) * g.o + o;
  }
  // Filter element (kd, kh, kw, ci, o), ci counting within the group.
  std::int64_t f(const std::int64_t* k, std::int64_t ci, std::int64_t o) const {
    return (((k[0] * g.k[1] + k[1]) * g.k[2] + k[2]) * g.group_c() + ci) * g.o + o;
  }
};

// Calls fn(c, ci, o) for every (input channel, its index in the group, output channel) pair
// that the grouping connects.
template <typename Fn>
void for_each_channel_pair(const Window3d& g, Fn fn) {
  const std::int64_t gc = g.group_c(), go = g.group_o();
  for (std::int64_t o = 0; o < g.o; ++o) {
    const std::int64_t c0 = (o / go) * gc;
    for (std::int64_t ci = 0; ci < gc; ++ci) fn(c0 + ci, ci, o);
  }
}

// Calls fn(n, out, tap, in) for every (output position, window tap) whose input position
// `in` lies inside the input; each is a pointer to three coordinates (depth, height, width).
template <typename Fn>
void for_each_tap(const Window3d& g, Fn fn) {
  std::int64_t p[3], k[3], i[3];
  for (std::int64_t n = 0; n < g.n; ++n)
    for (p[0] = 0; p[0] < g.out[0]; ++p[0])
      for (p[1] = 0; p[1] < g.out[1]; ++p[1])
        for (p[2] = 0; p[2] < g.out[2]; ++p[2])
          for (k[0] = 0; k[0] < g.k[0]; ++k[0])
            for (k[1] = 0; k[1] < g.k[1]; ++k[1])
              for (k[2] = 0; k[2] < g.k[2]; ++k[2]) {
                bool inside = true;
                for (std::size_t a = 0; a < 3; ++a) {
                  i[a] = p[a] * g.stride[a] - g.pad_before[a] + k[a] * g.dilation[a];
                  inside = inside && i[a] >= 0 && i[a] < g.in[a];
                }
                if (inside) fn(n, static_cast<const std::int64_t*>(p), static_cast<const std::int64_t*>(k),
                               static_cast<const std::int64_t*>(i));
              }
}

}  // namespace

std::unique_ptr<Kernel> make_ref_conv3d(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  const bool fused = desc.op == "fused_conv3d";
  const ActivationKind act = fused ? parse_activation_kind(desc, "activation") : ActivationKind::linear;
  return std::make_unique<RefKernel>([g, fused, act](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    const float* bias = fused ? static_cast<const float*>(args.inputs[2]) : nullptr;
    float* y = static_cast<float*>(args.outputs[0]);
    const Idx3 at{g};
    std::vector<double> acc(static_cast<std::size_t>(g.output_shape().numel()), 0.0);
    for_each_tap(g, [&](std::int64_t n, const std::int64_t* p, const std::int64_t* k, const std::int64_t* i) {
      for_each_channel_pair(g, [&](std::int64_t c, std::int64_t ci, std::int64_t o) {
        acc[static_cast<std::size_t>(at.y(n, p, o))] +=
            static_cast<double>(x[at.x(n, i, c)]) * w[at.f(k, ci, o)];
      });
    });
    for (std::size_t j = 0; j < acc.size(); ++j) {
      double v = acc[j];
      if (fused) v = ref_activation(act, v + bias[static_cast<std::int64_t>(j) % g.o]);
      y[j] = static_cast<float>(v);
    }
  });
}

std::unique_ptr<Kernel> make_ref_conv3d_backprop_input(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    const float* w = static_cast<const float*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    const Idx3 at{g};
    std::vector<double> acc(static_cast<std::size_t>(g.input_shape().numel()), 0.0);
    for_each_tap(g, [&](std::int64_t n, const std::int64_t* p, const std::int64_t* k, const std::int64_t* i) {
      for_each_channel_pair(g, [&](std::int64_t c, std::int64_t ci, std::int64_t o) {
        acc[static_cast<std::size_t>(at.x(n, i, c))] +=
            static_cast<double>(dy[at.y(n, p, o)]) * w[at.f(k, ci, o)];
      });
    });
    for (std::size_t j = 0; j < acc.size(); ++j) dx[j] = static_cast<float>(acc[j]);
  });
}

std::unique_ptr<Kernel> make_ref_conv3d_backprop_filter(const KernelDesc& desc, std::string* /*why_not*/) {
  const Window3d g = checked_window3d(desc);
  return std::make_unique<RefKernel>([g](const KernelArgs& args) {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* dy = static_cast<const float*>(args.inputs[1]);
    float* dw = static_cast<float*>(args.outputs[0]);
    const Idx3 at{g};
    std::vector<double> acc(static_cast<std::size_t>(g.filter_shape().numel()), 0.0);
    for_each_tap(g, [&](std::int64_t n, const std::int64_t* p, const std::int64_t* k, const std::int64_t* i) {
      for_each_channel_pair(g, [&](std::int64_t c, std::int64_t ci, std::int64_t o) {
        acc[static_cast<std::size_t>(at.f(k, ci, o))] +=
            static_cast<double>(x[at.x(n, i, c)]) * dy[at.y(n, p, o)];
      });
    });
    for (std::size_t j = 0; j < acc.size(); ++j) dw[j] = static_cast<float>(acc[j]);
  });
}

}  // namespace nnfit
