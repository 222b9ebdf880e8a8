// Private to the CUDA backend: own kernels of gather (Embedding's lookup), l2_normalize
// (+grad) and scale_by (+grad) (Note [Kernel/launcher split]), at float32, bfloat16 and
// float16, with the reference's formulas (ref_gather.cpp, ref_merge.cpp, ref_attention.cpp).
// gather: one index per output element; an id outside the table writes NaN (a device
// kernel cannot throw; the CPU kernels name the id). gather_grad, a scatter-add, sorts the
// ids first (scatter_noise_kernels.h).
// l2_normalize: one index per (outer, inner) walking its axis. scale_by_grad, a sum over
// the whole tensor: one index adds every element in order.
#pragma once
#include <math.h>

#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

template <class T>
struct GatherFn {
  const void* table;
  const void* ids;
  bool ids64;
  void* y;
  std::int64_t rows, width;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t i = e / width, j = e % width;
    const std::int64_t id = ids64 ? static_cast<const std::int64_t*>(ids)[i] : static_cast<const std::int32_t*>(ids)[i];
    store<T>(y, e, id >= 0 && id < rows ? load<T>(table, id * width + j) : bits_float(0x7fc00000u));
  }
};

inline constexpr double kL2Floor = 1e-12;  // Keras's floor on the squared norm

template <class T>
struct L2NormalizeFn {  // one index per (outer, inner)
  const void* x;
  const void* dy;  // gradient only
  void* out;
  std::int64_t axis, inner;
  NNFIT_HD void operator()(std::int64_t k) const {
    const std::int64_t o = k / inner, i = k % inner, base = o * axis * inner + i;
    float ss = 0.0f;
    for (std::int64_t j = 0; j < axis; ++j) ss += load<T>(x, base + j * inner) * load<T>(x, base + j * inner);
    const bool floored = ss < static_cast<float>(kL2Floor);
    const float norm = sqrtf(floored ? static_cast<float>(kL2Floor) : ss);
    if (!dy) {
      for (std::int64_t j = 0; j < axis; ++j) store<T>(out, base + j * inner, load<T>(x, base + j * inner) / norm);
      return;
    }
    float dot = 0.0f;
    for (std::int64_t j = 0; j < axis; ++j) dot += load<T>(dy, base + j * inner) * load<T>(x, base + j * inner) / norm;
    for (std::int64_t j = 0; j < axis; ++j) {
      const float g = load<T>(dy, base + j * inner), yj = load<T>(x, base + j * inner) / norm;
      store<T>(out, base + j * inner, floored ? g / norm : (g - yj * dot) / norm);
    }
  }
};

template <class T>
struct ScaleByFn {
  const void* x;
  const void* s;
  void* y;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, load<T>(x, i) * load<T>(s, 0)); }
};

template <class T>
struct DotFn {  // one index: Σ x·dy in order
  const void* x;
  const void* dy;
  void* out;
  std::int64_t n;
  NNFIT_HD void operator()(std::int64_t) const {
    double s = 0.0;
    for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(load<T>(x, i)) * load<T>(dy, i);
    store<T>(out, 0, static_cast<float>(s));
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_gather(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  NNFIT_CHECK(desc.inputs.size() == 2 && desc.outputs.size() == 1 && desc.inputs[0].shape.rank() == 2, InvalidArgument,
              "gather at node '", desc.node_name, "': expected a table [V, D], ids and one output");
  const DType ids = desc.inputs[1].dtype;
  if (ids != DType::i32 && ids != DType::i64) {
    if (why_not) *why_not = "cuda:gather takes int32 or int64 ids";
    return nullptr;
  }
  const std::int64_t rows = desc.inputs[0].shape[0], width = desc.inputs[0].shape[1];
  const std::int64_t n = desc.inputs[1].shape.numel() * width;
  NNFIT_CHECK(desc.outputs[0].shape.numel() == n, InvalidArgument, "gather at node '", desc.node_name,
              "': the output must hold one table row per id");
  const bool ids64 = ids == DType::i64;
  return launch_kernel([rows, width, n, ids64](const KernelArgs& a) {
    Launch::run(GatherFn<T>{a.inputs[0], a.inputs[1], ids64, a.outputs[0], rows, width}, n, a.ctx);
  });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_l2_normalize(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "l2_normalize_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 2u : 1u) && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", grad ? 2 : 1, " inputs and one output");
  const Shape& s = desc.inputs[0].shape;
  const std::int64_t axis_index = desc.attrs.i("axis");
  NNFIT_CHECK(axis_index >= 0 && axis_index < s.rank(), InvalidArgument, desc.op, " at node '", desc.node_name,
              "': axis ", axis_index, " out of range for ", s.to_string());
  std::int64_t outer = 1, axis = 1, inner = 1;
  for (std::int64_t d = 0; d < s.rank(); ++d) (d < axis_index ? outer : d == axis_index ? axis : inner) *= s[d];
  return launch_kernel([outer, axis, inner, grad](const KernelArgs& a) {
    Launch::run(L2NormalizeFn<T>{a.inputs[0], grad ? a.inputs[1] : nullptr, a.outputs[0], axis, inner}, outer * inner, a.ctx);
  });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_scale_by(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  NNFIT_CHECK(desc.inputs.size() == 2 && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '", desc.node_name,
              "': expected 2 inputs and one output");
  const std::int64_t n = desc.inputs[0].shape.numel();
  if (desc.op == "scale_by_grad") {
    return launch_kernel([n](const KernelArgs& a) { Launch::run(DotFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], n}, 1, a.ctx); });
  }
  return launch_kernel([n](const KernelArgs& a) { Launch::run(ScaleByFn<T>{a.inputs[0], a.inputs[1], a.outputs[0]}, n, a.ctx); });
}

template <class Launch>
void register_misc_kernels(KernelRegistry& r) {
  add_float_kernels(r, "gather", make_gather<Launch, float>, make_gather<Launch, Bf16>, make_gather<Launch, F16>);
  for (const char* op : {"l2_normalize", "l2_normalize_grad"}) {
    add_float_kernels(r, op, make_l2_normalize<Launch, float>, make_l2_normalize<Launch, Bf16>, make_l2_normalize<Launch, F16>);
  }
  for (const char* op : {"scale_by", "scale_by_grad"}) {
    add_float_kernels(r, op, make_scale_by<Launch, float>, make_scale_by<Launch, Bf16>, make_scale_by<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
