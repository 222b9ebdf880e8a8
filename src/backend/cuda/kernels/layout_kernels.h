// Private to the CUDA backend: own kernels of the data-movement ops (pad, crop, transpose,
// slice, concat, repeat, repeat_grad) and of softmax and log_softmax (+grads) (Note
// [Kernel/launcher split]), at float32, bfloat16 and float16.
// Every data-movement op is one functor, BoxCopyFn: it walks a box of up to 8 axes and
// copies element idx from the input at Σ (idx[a] / div[a] + shift[a]) · in_stride[a] to
// the output at Σ idx[a] · out_stride[a] + out_base, writing `fill` where the input index
// leaves the input (pad). Transpose permutes in_stride, crop and slice shift, repeat
// divides, concat is one box per input at its offset along the axis. Softmax is one index
// per row walking the row (max, then the sum of exponentials), as the reference does.
#pragma once
#include <math.h>

#include <array>

#include "backend/common/nn_op_geometry.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

inline constexpr int kMaxBoxRank = 8;

struct Box {
  int rank = 0;
  std::array<std::int64_t, kMaxBoxRank> dims{}, out_stride{}, in_stride{}, in_extent{}, shift{}, div{};
  std::int64_t out_base = 0;
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int a = 0; a < rank; ++a) n *= dims[a];
    return n;
  }
};

template <class T>
struct BoxCopyFn {
  const void* x;
  void* y;
  Box box;
  float fill;
  NNFIT_HD void operator()(std::int64_t i) const {
    std::int64_t out = box.out_base, in = 0;
    bool inside = true;
    for (int a = box.rank - 1; a >= 0; --a) {
      const std::int64_t idx = i % box.dims[a];
      i /= box.dims[a];
      out += idx * box.out_stride[a];
      const std::int64_t src = idx / box.div[a] + box.shift[a];
      inside = inside && src >= 0 && src < box.in_extent[a];
      in += src * box.in_stride[a];
    }
    store<T>(y, out, inside ? load<T>(x, in) : fill);
  }
};

// dx[o, a, i] = Σ_k dy[o, a·r + k, i].
template <class T>
struct RepeatGradFn {
  const void* dy;
  void* dx;
  std::int64_t axis, inner, repeats;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t i = e % inner, oa = e / inner;
    float s = 0.0f;
    for (std::int64_t k = 0; k < repeats; ++k) s += load<T>(dy, (oa * repeats + k) * inner + i);
    store<T>(dx, e, s);
  }
};

// One index per row: softmax or log_softmax of x, or their gradient from (y, dy).
template <class T>
struct SoftmaxRowFn {
  const void* a;  // x, or y for a gradient
  const void* dy;  // null for the forward ops
  void* out;
  std::int64_t cols;
  bool log;
  NNFIT_HD void operator()(std::int64_t r) const {
    const std::int64_t base = r * cols;
    if (dy) {
      float dot = 0.0f;
      for (std::int64_t c = 0; c < cols; ++c) dot += log ? load<T>(dy, base + c) : load<T>(dy, base + c) * load<T>(a, base + c);
      for (std::int64_t c = 0; c < cols; ++c) {
        const float y = load<T>(a, base + c), g = load<T>(dy, base + c);
        store<T>(out, base + c, log ? g - expf(y) * dot : y * (g - dot));
      }
      return;
    }
    float m = load<T>(a, base);
    for (std::int64_t c = 1; c < cols; ++c) m = fmaxf(m, load<T>(a, base + c));
    float s = 0.0f;
    for (std::int64_t c = 0; c < cols; ++c) s += expf(load<T>(a, base + c) - m);
    const float lse = m + logf(s);
    for (std::int64_t c = 0; c < cols; ++c) {
      const float x = load<T>(a, base + c);
      store<T>(out, base + c, log ? x - lse : expf(x - m) / s);
    }
  }
};

// The packed strides of `s`.
inline std::array<std::int64_t, kMaxBoxRank> packed_strides(const Shape& s) {
  std::array<std::int64_t, kMaxBoxRank> st{};
  std::int64_t at = 1;
  for (std::int64_t d = s.rank(); d-- > 0;) {
    st[static_cast<std::size_t>(d)] = at;
    at *= s[d];
  }
  return st;
}

// The identity box over `out` reading `in` of the same rank (each op then edits it).
inline Box identity_box(const KernelDesc& desc, const Shape& out, const Shape& in) {
  NNFIT_CHECK(out.rank() <= kMaxBoxRank && in.rank() == out.rank(), InvalidArgument, desc.op, " at node '", desc.node_name,
              "': the CUDA kernel takes ranks up to ", kMaxBoxRank, " with input and output of one rank, got ",
              in.to_string(), " and ", out.to_string());
  Box b;
  b.rank = static_cast<int>(out.rank());
  b.out_stride = packed_strides(out);
  b.in_stride = packed_strides(in);
  for (int a = 0; a < b.rank; ++a) {
    b.dims[a] = out[a];
    b.in_extent[a] = in[a];
    b.div[a] = 1;
  }
  return b;
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_layout(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  NNFIT_CHECK(!desc.inputs.empty() && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '", desc.node_name,
              "': expected inputs and one output");
  const Shape& x = desc.inputs[0].shape;
  const Shape& y = desc.outputs[0].shape;
  const std::string& op = desc.op;
  if (op == "repeat_grad") {
    const std::int64_t axis = desc.attrs.i("axis"), repeats = desc.attrs.i("repeats");
    std::int64_t inner = 1;
    for (std::int64_t d = axis + 1; d < y.rank(); ++d) inner *= y[d];
    const std::int64_t n = y.numel();
    return launch_kernel([n, axis, inner, repeats](const KernelArgs& a) {
      Launch::run(RepeatGradFn<T>{a.inputs[0], a.outputs[0], axis, inner, repeats}, n, a.ctx);
    });
  }
  std::vector<Box> boxes;  // one per input (concat), else one
  float fill = 0.0f;
  if (op == "concat") {
    const std::int64_t axis = desc.attrs.i("axis");
    std::int64_t at = 0;
    for (const TensorDesc& in : desc.inputs) {
      Box b = identity_box(desc, in.shape, in.shape);
      b.out_stride = packed_strides(y);
      b.out_base = at * b.out_stride[static_cast<std::size_t>(axis)];
      at += in.shape[axis];
      boxes.push_back(b);
    }
    NNFIT_CHECK(at == y[axis], InvalidArgument, "concat at node '", desc.node_name, "': inputs add up to ", at,
                " along axis ", axis, ", the output has ", y[axis]);
  } else {
    Box b = identity_box(desc, y, x);
    if (op == "pad") {
      const std::vector<std::int64_t>& before = desc.attrs.ints("before");
      for (int a = 0; a < b.rank; ++a) b.shift[a] = -before.at(static_cast<std::size_t>(a));
      fill = static_cast<float>(desc.attrs.f_or("value", 0.0));
    } else if (op == "crop") {
      const std::vector<std::int64_t>& begin = desc.attrs.ints("begin");
      for (int a = 0; a < b.rank; ++a) b.shift[a] = begin.at(static_cast<std::size_t>(a));
    } else if (op == "slice") {
      b.shift[static_cast<std::size_t>(desc.attrs.i("axis"))] = desc.attrs.i("begin");
    } else if (op == "repeat") {
      b.div[static_cast<std::size_t>(desc.attrs.i("axis"))] = desc.attrs.i("repeats");
    } else {  // transpose: output axis a reads input axis perm[a]
      const std::vector<std::int64_t>& perm = desc.attrs.ints("perm");
      const auto xs = packed_strides(x);
      for (int a = 0; a < b.rank; ++a) {
        b.in_stride[a] = xs[static_cast<std::size_t>(perm.at(static_cast<std::size_t>(a)))];
        b.in_extent[a] = x[perm[static_cast<std::size_t>(a)]];
      }
    }
    boxes.push_back(b);
  }
  return launch_kernel([boxes, fill](const KernelArgs& a) {
    for (std::size_t k = 0; k < boxes.size(); ++k) {
      Launch::run(BoxCopyFn<T>{a.inputs[boxes.size() > 1 ? k : 0], a.outputs[0], boxes[k], fill}, boxes[k].numel(), a.ctx);
    }
  });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_softmax(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const Shape s = checked_elementwise(as_f32(desc));
  const std::int64_t cols = s.dim(-1), rows = cols == 0 ? 0 : s.numel() / cols;
  const bool log = desc.op.rfind("log_", 0) == 0, grad = desc.op.find("_grad") != std::string::npos;
  return launch_kernel([rows, cols, log, grad](const KernelArgs& a) {
    Launch::run(SoftmaxRowFn<T>{a.inputs[0], grad ? a.inputs[1] : nullptr, a.outputs[0], cols, log}, rows, a.ctx);
  });
}

template <class Launch>
void register_layout_kernels(KernelRegistry& r) {
  for (const char* op : {"pad", "crop", "transpose", "slice", "concat", "repeat", "repeat_grad"}) {
    add_float_kernels(r, op, make_layout<Launch, float>, make_layout<Launch, Bf16>, make_layout<Launch, F16>);
  }
  for (const char* op : {"softmax", "softmax_grad", "log_softmax", "log_softmax_grad"}) {
    add_float_kernels(r, op, make_softmax<Launch, float>, make_softmax<Launch, Bf16>, make_softmax<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
