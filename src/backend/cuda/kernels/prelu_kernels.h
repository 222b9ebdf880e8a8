// Private to the CUDA backend: own kernels of prelu and prelu_grad (Note [Kernel/launcher
// split]) at float32, bfloat16 and float16, the reference's formulas (ref_prelu.cpp).
// alpha has x's shape without the batch axis, with 1 on the axes it is shared along.
// Forward and dx: one index per element of x, its alpha found from its coordinates.
// dalpha: one index per element of alpha, summing x·dy over the negative inputs of every
// position it is shared by, in a fixed order (no atomics: launch-shape independent).
#pragma once
#include <array>

#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

inline constexpr int kPreluMaxRank = 8;

struct PreluGeometry {
  int rank = 0;
  std::array<std::int64_t, kPreluMaxRank> dims{};          // x's shape
  std::array<std::int64_t, kPreluMaxRank> alpha_stride{};  // per x axis: 0 on the batch and shared axes
  std::int64_t numel = 0, alpha_numel = 0;

  NNFIT_HD std::int64_t alpha_index(std::int64_t i) const {
    std::int64_t a = 0;
    for (int d = rank - 1; d >= 0; --d) {
      a += (i % dims[d]) * alpha_stride[d];
      i /= dims[d];
    }
    return a;
  }
  // Element j (of numel / alpha_numel) of the x positions alpha element `a` is shared by:
  // j walks the batch and shared axes in order; the other axes take a's coordinates.
  NNFIT_HD std::int64_t position(std::int64_t a, std::int64_t j) const {
    std::int64_t x = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      std::int64_t coord;
      if (alpha_stride[d] != 0) {
        coord = (a / alpha_stride[d]) % dims[d];
      } else {
        coord = j % dims[d];
        j /= dims[d];
      }
      x += coord * stride;
      stride *= dims[d];
    }
    return x;
  }
};

inline PreluGeometry prelu_geometry(const Shape& x, const Shape& alpha) {
  PreluGeometry g;
  g.rank = static_cast<int>(x.rank());
  g.numel = x.numel();
  g.alpha_numel = alpha.numel();
  std::int64_t s = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    g.dims[static_cast<std::size_t>(d)] = x[d];
    if (d >= 1 && alpha[d - 1] != 1) g.alpha_stride[static_cast<std::size_t>(d)] = s;
    if (d >= 1) s *= alpha[d - 1];
  }
  return g;
}

template <class T>
struct PreluFn {
  const void* x;
  const void* alpha;
  void* y;
  PreluGeometry geo;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float v = load<T>(x, i);
    store<T>(y, i, v > 0.0f ? v : load<T>(alpha, geo.alpha_index(i)) * v);
  }
};

template <class T>
struct PreluGradXFn {
  const void* x;
  const void* alpha;
  const void* dy;
  void* dx;
  PreluGeometry geo;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float d = load<T>(dy, i);
    store<T>(dx, i, load<T>(x, i) > 0.0f ? d : load<T>(alpha, geo.alpha_index(i)) * d);
  }
};

template <class T>
struct PreluGradAlphaFn {
  const void* x;
  const void* dy;
  void* dalpha;
  PreluGeometry geo;
  NNFIT_HD void operator()(std::int64_t a) const {
    const std::int64_t shared = geo.numel / geo.alpha_numel;
    float s = 0.0f;
    for (std::int64_t j = 0; j < shared; ++j) {
      const std::int64_t i = geo.position(a, j);
      const float v = load<T>(x, i);
      if (!(v > 0.0f)) s += v * load<T>(dy, i);
    }
    store<T>(dalpha, a, s);
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_prelu(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "prelu_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 3u : 2u) && desc.outputs.size() == (grad ? 2u : 1u), InvalidArgument, desc.op,
              " at node '", desc.node_name, "': expected ", grad ? "3 inputs and 2 outputs" : "2 inputs and 1 output");
  const Shape& x = desc.inputs[0].shape;
  const Shape& alpha = desc.inputs[1].shape;
  NNFIT_CHECK(x.rank() >= 1 && alpha.rank() == x.rank() - 1, InvalidArgument, desc.op,
              ": alpha must have x's rank minus the batch axis");
  NNFIT_CHECK(x.rank() <= kPreluMaxRank, Unsupported, "cuda:", desc.op, " takes x of rank up to ", kPreluMaxRank, ", got ",
              x.to_string());
  for (std::int64_t d = 1; d < x.rank(); ++d) {
    NNFIT_CHECK(alpha[d - 1] == 1 || alpha[d - 1] == x[d], InvalidArgument, desc.op, ": alpha ", alpha.to_string(),
                " does not match x ", x.to_string(), " (each axis: x's size, or 1 where alpha is shared)");
  }
  const PreluGeometry geo = prelu_geometry(x, alpha);
  if (!grad) {
    return launch_kernel([geo](const KernelArgs& a) {
      if (geo.numel) Launch::run(PreluFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], geo}, geo.numel, a.ctx);
    });
  }
  return launch_kernel([geo](const KernelArgs& a) {
    if (geo.numel) Launch::run(PreluGradXFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], geo}, geo.numel, a.ctx);
    if (geo.alpha_numel) Launch::run(PreluGradAlphaFn<T>{a.inputs[0], a.inputs[2], a.outputs[1], geo}, geo.alpha_numel, a.ctx);
  });
}

template <class Launch>
void register_prelu_kernels(KernelRegistry& r) {
  for (const char* op : {"prelu", "prelu_grad"}) {
    add_float_kernels(r, op, make_prelu<Launch, float>, make_prelu<Launch, Bf16>, make_prelu<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
