// Private to the CUDA backend: own kernels of Keras's masking ops (Note [Kernel/launcher
// split]): sequence_mask (int32, int64 or floating values; a float32 mask, or the values'
// type at bfloat16 and float16), apply_mask,
// masked_mean and masked_mean_grad, with the reference's formulas (ref_mask.cpp),
// including masked_mean's 0/0 where every step is masked (Keras's division). The float
// ops run at float32, bfloat16 and float16, every floating tensor of one type.
#pragma once
#include <type_traits>

#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

// The mask's storage type for values of type V: the values' own at bfloat16 and float16
// (the graph gives the mask the node's compute dtype, Note [Compute dtype]), else float32.
template <class V>
using MaskOf = std::conditional_t<std::is_same_v<V, Bf16> || std::is_same_v<V, F16>, V, float>;

template <class V>
struct SequenceMaskFn {  // one index per row: 1 where any of its values differs from `value`
  const V* x;
  void* m;
  std::int64_t width;
  double value;
  NNFIT_HD static double as_double(V v) {
    if constexpr (std::is_same_v<MaskOf<V>, V>) return static_cast<double>(to_float(v));
    else return static_cast<double>(v);
  }
  NNFIT_HD void operator()(std::int64_t r) const {
    bool any = false;
    for (std::int64_t j = 0; j < width && !any; ++j) any = as_double(x[r * width + j]) != value;
    store<MaskOf<V>>(m, r, any ? 1.0f : 0.0f);
  }
};

template <class T>
struct ApplyMaskFn {
  const void* x;
  const void* m;
  void* y;
  std::int64_t width;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, load<T>(x, i) * load<T>(m, i / width)); }
};

// masked_mean over the steps of x [N, T, F] (one index per (n, f)), or its gradient (one
// index per element of dx).
template <class T>
struct MaskedMeanFn {
  const void* x;   // forward: x; gradient: dy [N, F]
  const void* m;   // [N, T]
  void* out;
  std::int64_t t, f;
  bool grad;
  NNFIT_HD void operator()(std::int64_t k) const {
    const std::int64_t i = grad ? k / (t * f) : k / f, j = k % f;
    float count = 0.0f;
    for (std::int64_t s = 0; s < t; ++s) count += load<T>(m, i * t + s);
    if (grad) {
      const std::int64_t s = (k / f) % t;
      store<T>(out, k, load<T>(x, i * f + j) * load<T>(m, i * t + s) / count);
      return;
    }
    float sum = 0.0f;
    for (std::int64_t s = 0; s < t; ++s) sum += load<T>(x, (i * t + s) * f + j) * load<T>(m, i * t + s);
    store<T>(out, k, sum / count);
  }
};

template <class Launch, class V>
std::unique_ptr<Kernel> make_sequence_mask(const KernelDesc& desc, std::string* why_not) {
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == 1, InvalidArgument, "sequence_mask at node '", desc.node_name,
              "': expected one input and one output");
  if (desc.outputs[0].dtype != dtype_of<MaskOf<V>>()) {
    if (why_not) {
      *why_not = "cuda:sequence_mask of " + std::string(dtype_name(desc.inputs[0].dtype)) + " values writes a " +
                 std::string(dtype_name(dtype_of<MaskOf<V>>())) + " mask";
    }
    return nullptr;
  }
  const std::int64_t rows = desc.outputs[0].shape.numel();
  const std::int64_t width = rows == 0 ? 0 : desc.inputs[0].shape.numel() / rows;
  const double value = desc.attrs.f("value");
  return launch_kernel([rows, width, value](const KernelArgs& a) {
    Launch::run(SequenceMaskFn<V>{static_cast<const V*>(a.inputs[0]), a.outputs[0], width, value}, rows, a.ctx);
  });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_mask_op(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  NNFIT_CHECK(desc.inputs.size() == 2 && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '", desc.node_name,
              "': expected 2 inputs and one output");
  if (desc.op == "apply_mask") {
    const std::int64_t width = desc.inputs[0].shape.dim(-1), n = desc.inputs[0].shape.numel();
    return launch_kernel([width, n](const KernelArgs& a) {
      Launch::run(ApplyMaskFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], width}, n, a.ctx);
    });
  }
  const bool grad = desc.op == "masked_mean_grad";
  const Shape& x = grad ? desc.outputs[0].shape : desc.inputs[0].shape;
  NNFIT_CHECK(x.rank() == 3, InvalidArgument, desc.op, " at node '", desc.node_name, "': x must be [N, T, F], got ", x.to_string());
  const std::int64_t t = x[1], f = x[2], n = grad ? x.numel() : x[0] * f;
  return launch_kernel([t, f, n, grad](const KernelArgs& a) {
    Launch::run(MaskedMeanFn<T>{a.inputs[grad ? 1 : 0], a.inputs[grad ? 0 : 1], a.outputs[0], t, f, grad}, n, a.ctx);
  });
}

template <class Launch>
void register_mask_kernels(KernelRegistry& r) {
  for (const char* op : {"apply_mask", "masked_mean", "masked_mean_grad"}) {
    add_float_kernels(r, op, make_mask_op<Launch, float>, make_mask_op<Launch, Bf16>, make_mask_op<Launch, F16>);
  }
  add_float_kernels(r, "sequence_mask", make_sequence_mask<Launch, float>, make_sequence_mask<Launch, Bf16>,
                    make_sequence_mask<Launch, F16>);
  r.add("sequence_mask", DeviceType::cuda, DType::i32, {"cuda:sequence_mask", make_sequence_mask<Launch, std::int32_t>});
  r.add("sequence_mask", DeviceType::cuda, DType::i64, {"cuda:sequence_mask", make_sequence_mask<Launch, std::int64_t>});
}

}  // namespace nnfit::cuda
