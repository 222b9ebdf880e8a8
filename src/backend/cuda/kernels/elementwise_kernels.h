// Private to the CUDA backend: own kernels of the element-wise ops (Note [Kernel/launcher
// split]): bias_add (+grad), add_n, activation (+grad), sub/mul/maximum/minimum
// (+minmax_grad), scale, cast and reshape, at float32, bfloat16 and float16. Arithmetic in
// float32 whatever the storage type; column sums (bias_add_grad) in two passes, partial
// sums over 64-row chunks then the chunks in order, so the result does not depend on the
// launch shape and the device adds in the order the host-run check did.
#pragma once
#include <algorithm>
#include <array>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/train_op_checks.h"
#include "backend/cuda/kernels/activation_fns.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

template <class T>
struct BiasAddFn {
  const void* x;
  const void* b;
  void* y;
  std::int64_t channels;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, load<T>(x, i) + load<T>(b, i % channels)); }
};

inline constexpr std::int64_t kRowsPerPartial = 64;

// partial[chunk * C + c] = Σ of x[r, c] over the chunk's rows.
template <class T>
struct ColumnPartialFn {
  const void* x;
  float* partial;
  std::int64_t rows, channels;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t chunk = i / channels, c = i % channels;
    const std::int64_t end = (chunk + 1) * kRowsPerPartial < rows ? (chunk + 1) * kRowsPerPartial : rows;
    float s = 0.0f;
    for (std::int64_t r = chunk * kRowsPerPartial; r < end; ++r) s += load<T>(x, r * channels + c);
    partial[i] = s;
  }
};

template <class Out>
struct ColumnFinishFn {
  const float* partial;
  void* out;
  std::int64_t chunks, channels;
  NNFIT_HD void operator()(std::int64_t c) const {
    float s = 0.0f;
    for (std::int64_t k = 0; k < chunks; ++k) s += partial[k * channels + c];
    store<Out>(out, c, s);
  }
};

inline constexpr int kAddNInputs = 8;  // per pass; more inputs take more passes

template <class T>
struct AddNFn {
  std::array<const void*, kAddNInputs> x;
  int count;
  bool accumulate;  // add y's current value (a pass after the first)
  void* y;
  NNFIT_HD void operator()(std::int64_t i) const {
    float s = accumulate ? load<T>(y, i) : 0.0f;
    for (int k = 0; k < count; ++k) s += load<T>(x[k], i);
    store<T>(y, i, s);
  }
};

template <class T>
struct ActivationFn {
  const void* x;
  void* y;
  ActParams act;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, act_forward(act, load<T>(x, i))); }
};

template <class T>
struct ActivationGradFn {
  const void* t;
  const void* dy;
  void* dx;
  ActParams act;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(dx, i, act_backward(act, load<T>(t, i), load<T>(dy, i))); }
};

enum class BinaryOp { sub, mul, maximum, minimum };

template <class T>
struct BinaryFn {
  const void* a;
  const void* b;
  void* y;
  BinaryOp op;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float x = load<T>(a, i), z = load<T>(b, i);
    float r = 0.0f;
    switch (op) {
      case BinaryOp::sub: r = x - z; break;
      case BinaryOp::mul: r = x * z; break;
      case BinaryOp::maximum: r = x >= z ? x : z; break;
      case BinaryOp::minimum: r = x <= z ? x : z; break;
    }
    store<T>(y, i, r);
  }
};

// The gradient goes to the input chosen, to `a` on ties (TensorFlow's rule).
template <class T>
struct MinMaxGradFn {
  const void* a;
  const void* b;
  const void* dy;
  void* da;
  void* db;
  bool maximum;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float x = load<T>(a, i), z = load<T>(b, i), g = load<T>(dy, i);
    const bool to_a = maximum ? x >= z : x <= z;
    store<T>(da, i, to_a ? g : 0.0f);
    store<T>(db, i, to_a ? 0.0f : g);
  }
};

template <class T>
struct ScaleFn {
  const void* x;
  void* y;
  float factor, offset;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, load<T>(x, i) * factor + offset); }
};

template <class From, class To>
struct CastFn {
  const void* x;
  void* y;
  NNFIT_HD void operator()(std::int64_t i) const { store<To>(y, i, load<From>(x, i)); }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_bias_add(const KernelDesc& desc, std::string* why_not) {
  ChannelGeometry g;
  if (!floats_are<T>(desc, why_not) || !check_bias_add(as_f32(desc), &g, why_not)) return nullptr;
  const std::int64_t n = g.rows * g.channels, c = g.channels;
  return launch_kernel([n, c](const KernelArgs& a) {
    Launch::run(BiasAddFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], c}, n, a.ctx);
  });
}

// db in dy's type, or float32 where a cast to float32 was folded into the op
// (fuse_output_casts: the mixed policies' float32 bias gradients).
template <class Launch, class T>
std::unique_ptr<Kernel> make_bias_add_grad(const KernelDesc& desc, std::string* why_not) {
  ChannelGeometry g;
  const bool f32_out = !desc.outputs.empty() && desc.outputs[0].dtype == DType::f32;
  KernelDesc in_only = desc;
  if (f32_out) in_only.outputs[0].dtype = dtype_of<T>();
  if (!floats_are<T>(in_only, why_not) || !check_bias_add_grad(as_f32(desc), &g, why_not)) return nullptr;
  const std::int64_t rows = g.rows, c = g.channels, chunks = std::max<std::int64_t>(1, (rows + kRowsPerPartial - 1) / kRowsPerPartial);
  return launch_kernel(
      [rows, c, chunks, f32_out](const KernelArgs& a) {
        auto* partial = static_cast<float*>(a.workspace);
        Launch::run(ColumnPartialFn<T>{a.inputs[0], partial, rows, c}, chunks * c, a.ctx);
        if (f32_out) {
          Launch::run(ColumnFinishFn<float>{partial, a.outputs[0], chunks, c}, c, a.ctx);
        } else {
          Launch::run(ColumnFinishFn<T>{partial, a.outputs[0], chunks, c}, c, a.ctx);
        }
      },
      aligned_bytes(static_cast<std::size_t>(chunks * c) * sizeof(float)));
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_add_n(const KernelDesc& desc, std::string* why_not) {
  std::int64_t n = 0;
  if (!floats_are<T>(desc, why_not) || !check_add_n(as_f32(desc), &n, why_not)) return nullptr;
  const int k = static_cast<int>(desc.inputs.size());
  return launch_kernel([n, k](const KernelArgs& a) {
    for (int first = 0; first < k; first += kAddNInputs) {
      AddNFn<T> f{{}, std::min(kAddNInputs, k - first), first > 0, a.outputs[0]};
      for (int j = 0; j < f.count; ++j) f.x[j] = a.inputs[first + j];
      Launch::run(f, n, a.ctx);
    }
  });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_activation(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const KernelDesc f32 = as_f32(desc);
  const std::int64_t n = checked_elementwise(f32).numel();
  const ActParams act = act_params(parse_activation_args(f32));
  if (desc.op == "activation") {
    return launch_kernel([n, act](const KernelArgs& a) { Launch::run(ActivationFn<T>{a.inputs[0], a.outputs[0], act}, n, a.ctx); });
  }
  return launch_kernel([n, act](const KernelArgs& a) {
    Launch::run(ActivationGradFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], act}, n, a.ctx);
  });
}

// Shapes of sub/mul/maximum/minimum/minmax_grad/scale: every tensor like input 0.
inline std::int64_t checked_same_shapes(const KernelDesc& d, std::size_t inputs, std::size_t outputs) {
  NNFIT_CHECK(d.inputs.size() == inputs && d.outputs.size() == outputs, InvalidArgument, d.op, " at node '",
              d.node_name, "': expected ", inputs, " inputs and ", outputs, " outputs");
  for (const auto* list : {&d.inputs, &d.outputs}) {
    for (const TensorDesc& t : *list) {
      NNFIT_CHECK(t.shape == d.inputs[0].shape, InvalidArgument, d.op, " at node '", d.node_name,
                  "': every tensor must have shape ", d.inputs[0].shape.to_string(), ", got ", t.shape.to_string());
    }
  }
  return d.inputs[0].shape.numel();
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_merge(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  if (desc.op == "minmax_grad") {
    const std::int64_t n = checked_same_shapes(desc, 3, 2);
    const bool maximum = desc.attrs.s("kind") == "maximum";
    return launch_kernel([n, maximum](const KernelArgs& a) {
      Launch::run(MinMaxGradFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], a.outputs[1], maximum}, n, a.ctx);
    });
  }
  if (desc.op == "scale") {
    const std::int64_t n = checked_same_shapes(desc, 1, 1);
    const float factor = static_cast<float>(desc.attrs.f("factor")), offset = static_cast<float>(desc.attrs.f_or("offset", 0.0));
    return launch_kernel([n, factor, offset](const KernelArgs& a) {
      Launch::run(ScaleFn<T>{a.inputs[0], a.outputs[0], factor, offset}, n, a.ctx);
    });
  }
  const std::int64_t n = checked_same_shapes(desc, 2, 1);
  const BinaryOp op = desc.op == "sub"       ? BinaryOp::sub
                      : desc.op == "mul"     ? BinaryOp::mul
                      : desc.op == "maximum" ? BinaryOp::maximum
                                             : BinaryOp::minimum;
  return launch_kernel([n, op](const KernelArgs& a) {
    Launch::run(BinaryFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], op}, n, a.ctx);
  });
}

template <class Launch, class From>
std::unique_ptr<Kernel> make_cast(const KernelDesc& desc, std::string* why_not) {
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == 1 &&
                  desc.inputs[0].shape.numel() == desc.outputs[0].shape.numel(),
              InvalidArgument, "cast at node '", desc.node_name, "': expected one input and one output of its size");
  const DType to = desc.outputs[0].dtype;
  if (desc.inputs[0].dtype != dtype_of<From>() || !is_floating(to)) {
    if (why_not) *why_not = "casts between floating types only";
    return nullptr;
  }
  const std::int64_t n = desc.inputs[0].shape.numel();
  return launch_kernel([n, to](const KernelArgs& a) {
    if (to == DType::f32) Launch::run(CastFn<From, float>{a.inputs[0], a.outputs[0]}, n, a.ctx);
    else if (to == DType::bf16) Launch::run(CastFn<From, Bf16>{a.inputs[0], a.outputs[0]}, n, a.ctx);
    else Launch::run(CastFn<From, F16>{a.inputs[0], a.outputs[0]}, n, a.ctx);
  });
}

// The planner aliases y to x, so this copies only when they differ.
template <class Launch>
std::unique_ptr<Kernel> make_reshape(const KernelDesc& desc, std::string* why_not) {
  std::size_t bytes = 0;  // check_reshape's shape rule holds for every dtype
  if (!check_reshape(desc, &bytes, why_not)) return nullptr;
  return launch_kernel([bytes](const KernelArgs& a) { Launch::copy(a.outputs[0], a.inputs[0], bytes, a.ctx); });
}

template <class Launch>
void register_elementwise_kernels(KernelRegistry& r) {
  add_float_kernels(r, "bias_add", make_bias_add<Launch, float>, make_bias_add<Launch, Bf16>, make_bias_add<Launch, F16>);
  add_float_kernels(r, "bias_add_grad", make_bias_add_grad<Launch, float>, make_bias_add_grad<Launch, Bf16>,
                    make_bias_add_grad<Launch, F16>);
  add_float_kernels(r, "add_n", make_add_n<Launch, float>, make_add_n<Launch, Bf16>, make_add_n<Launch, F16>);
  for (const char* op : {"activation", "activation_grad"}) {
    add_float_kernels(r, op, make_activation<Launch, float>, make_activation<Launch, Bf16>, make_activation<Launch, F16>);
  }
  for (const char* op : {"sub", "mul", "maximum", "minimum", "minmax_grad", "scale"}) {
    add_float_kernels(r, op, make_merge<Launch, float>, make_merge<Launch, Bf16>, make_merge<Launch, F16>);
  }
  add_float_kernels(r, "cast", make_cast<Launch, float>, make_cast<Launch, Bf16>, make_cast<Launch, F16>);
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    r.add("reshape", DeviceType::cuda, d, {"cuda:reshape", make_reshape<Launch>});
  }
}

}  // namespace nnfit::cuda
