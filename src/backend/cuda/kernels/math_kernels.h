// Private to the CUDA backend: own kernels of the tensor-algebra ops (graph/math_op_defs.cpp)
// at float32, bfloat16 and float16, arithmetic in float32. Every element goes through
// math_fns.h's functions, the reference kernels' own (Note [Kernel/launcher split]).
// Broadcasting reads operands through BroadcastIndex; sums over broadcast or reduced axes
// are gathers, one index per element of the smaller tensor walking its BroadcastGroup in
// order (no atomics, so a result does not depend on the launch shape).
#pragma once
#include "backend/common/math_fns.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

template <class T>
struct UnaryFn {
  const void* x;
  const void* dy;  // unary_grad only
  void* y;
  UnaryKind kind;
  bool grad;
  NNFIT_HD void operator()(std::int64_t i) const {
    const float v = load<T>(x, i);
    store<T>(y, i, grad ? unary_grad_fn(kind, v, load<T>(dy, i)) : unary_fn(kind, v));
  }
};

template <class T>
struct NanToNumFn {
  const void* x;
  void* y;
  NanToNumValues v;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, nan_to_num_fn(load<T>(x, i), v)); }
};

template <class T>
struct BinaryBroadcastFn {
  const void* a;
  const void* b;
  void* y;
  BinaryKind kind;
  BroadcastIndex ia, ib;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, binary_fn(kind, load<T>(a, ia(i)), load<T>(b, ib(i)))); }
};

// da (second: db) at operand element j: the sum over the outputs j went to.
template <class T>
struct BinaryGradFn {
  const void* a;
  const void* b;
  const void* dy;
  void* out;
  BinaryKind kind;
  BroadcastIndex ia, ib;
  BroadcastGroup group;
  bool second;
  NNFIT_HD void operator()(std::int64_t j) const {
    float s = 0.0f;
    for (std::int64_t r = 0; r < group.size; ++r) {
      const std::int64_t o = group(j, r);
      const GradPair g = binary_grad_fn(kind, load<T>(a, ia(o)), load<T>(b, ib(o)), load<T>(dy, o));
      s += second ? g.b : g.a;
    }
    store<T>(out, j, s);
  }
};

template <class T>
struct WhereFn {
  const void* cond;
  const void* a;
  const void* b;
  void* y;
  BroadcastIndex ic, ia, ib;
  NNFIT_HD void operator()(std::int64_t i) const {
    store<T>(y, i, load<T>(cond, ic(i)) != 0.0f ? load<T>(a, ia(i)) : load<T>(b, ib(i)));
  }
};

template <class T>
struct WhereGradFn {
  const void* cond;
  const void* dy;
  void* out;
  BroadcastIndex ic;
  BroadcastGroup group;
  bool to_a;
  NNFIT_HD void operator()(std::int64_t j) const {
    float s = 0.0f;
    for (std::int64_t r = 0; r < group.size; ++r) {
      const std::int64_t o = group(j, r);
      if ((load<T>(cond, ic(o)) != 0.0f) == to_a) s += load<T>(dy, o);
    }
    store<T>(out, j, s);
  }
};

// One index per output element j: its group of x (y seen as broadcast to x).
template <class T>
struct ReduceKindFn {
  const void* x;
  void* y;
  ReduceKind kind;
  BroadcastGroup group;
  NNFIT_HD void operator()(std::int64_t j) const {
    float acc = kind == ReduceKind::prod ? 1.0f : 0.0f;
    float m = kind == ReduceKind::min ? INFINITY : -INFINITY;
    for (std::int64_t r = 0; r < group.size; ++r) {
      const float v = load<T>(x, group(j, r));
      if (kind == ReduceKind::sum || kind == ReduceKind::mean) acc += v;
      else if (kind == ReduceKind::prod) acc *= v;
      else if (kind == ReduceKind::min) m = min_step(m, v);
      else m = max_step(m, v);  // max and logsumexp
    }
    if (kind == ReduceKind::mean) acc /= static_cast<float>(group.size);
    if (kind == ReduceKind::logsumexp) {
      for (std::int64_t r = 0; r < group.size; ++r) acc += expf(load<T>(x, group(j, r)) - m);
    }
    const bool extreme = kind == ReduceKind::min || kind == ReduceKind::max;
    store<T>(y, j, extreme ? m : kind == ReduceKind::logsumexp ? logsumexp_finish(m, acc) : acc);
  }
};

// One index per element e of x: its group j = yi(e), walked for min's ties and for the
// product of the others where x is 0.
template <class T>
struct ReduceGradKindFn {
  const void* x;
  const void* y;
  const void* dy;
  void* dx;
  ReduceKind kind;
  BroadcastIndex yi;
  BroadcastGroup group;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t j = yi(e);
    const float v = load<T>(x, e), yv = load<T>(y, j);
    float extra = 0.0f;
    if (kind == ReduceKind::mean) {
      extra = static_cast<float>(group.size);
    } else if ((kind == ReduceKind::min || kind == ReduceKind::max) && v == yv) {
      for (std::int64_t r = 0; r < group.size; ++r) extra += load<T>(x, group(j, r)) == yv ? 1.0f : 0.0f;
    } else if (kind == ReduceKind::prod && v == 0.0f) {
      extra = 1.0f;
      for (std::int64_t r = 0; r < group.size; ++r) {
        const std::int64_t o = group(j, r);
        if (o != e) extra *= load<T>(x, o);
      }
    }
    store<T>(dx, e, reduce_grad_fn(kind, v, yv, load<T>(dy, j), extra));
  }
};

template <class T>
struct ArgReduceFn {
  const void* x;
  std::int32_t* y;
  AxisSplit v;
  bool argmax;
  NNFIT_HD void operator()(std::int64_t out) const {
    const std::int64_t o = out / v.inner, i = out % v.inner;
    std::int64_t best = 0;  // the first on ties; the first NaN wins, as NumPy
    float b = load<T>(x, o * v.axis * v.inner + i);
    for (std::int64_t r = 1; r < v.axis && b == b; ++r) {
      const float e = load<T>(x, (o * v.axis + r) * v.inner + i);
      if (e != e || (argmax ? e > b : e < b)) {
        best = r;
        b = e;
      }
    }
    y[out] = static_cast<std::int32_t>(best);
  }
};

// argsort: one index per element, which counts the elements of its line that go before it
// (argsort_before, a total order) and writes its position at that rank: the reference's
// stable sort, in parallel over a line's elements (O(n) work each).
template <class T>
struct ArgsortFn {
  const void* x;
  std::int32_t* y;
  AxisSplit v;
  bool descending;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t i = e % v.inner, r = (e / v.inner) % v.axis, o = e / (v.inner * v.axis);
    const float me = load<T>(x, e);
    std::int64_t rank = 0;
    for (std::int64_t q = 0; q < v.axis; ++q) {
      rank += argsort_before(load<T>(x, (o * v.axis + q) * v.inner + i), q, me, r, descending) ? 1 : 0;
    }
    y[(o * v.axis + rank) * v.inner + i] = static_cast<std::int32_t>(r);
  }
};

// One index per line (outer, inner) along the axis, walked in order (ref_math.cpp's rule).
template <class T>
struct CumulativeFn {
  const void* x;
  const void* y;   // cumulative_grad: the forward output
  const void* dy;  // cumulative_grad
  void* out;
  AxisSplit v;
  bool prod, reverse, grad;
  NNFIT_HD void operator()(std::int64_t line) const {
    const std::int64_t o = line / v.inner, i = line % v.inner;
    float acc = prod && !grad ? 1.0f : 0.0f;
    for (std::int64_t s = 0; s < v.axis; ++s) {
      const std::int64_t k = grad != reverse ? v.axis - 1 - s : s;
      const std::int64_t e = (o * v.axis + k) * v.inner + i;
      if (!grad) {
        acc = prod ? acc * load<T>(x, e) : acc + load<T>(x, e);
        store<T>(out, e, acc);
      } else {
        acc += prod ? load<T>(dy, e) * load<T>(y, e) : load<T>(dy, e);
        store<T>(out, e, prod ? acc / load<T>(x, e) : acc);
      }
    }
  }
};

template <class T>
struct BroadcastToFn {
  const void* x;
  void* y;
  BroadcastIndex ix;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(y, i, load<T>(x, ix(i))); }
};

inline void expect_counts(const KernelDesc& d, std::size_t inputs, std::size_t outputs) {
  NNFIT_CHECK(d.inputs.size() == inputs && d.outputs.size() == outputs, InvalidArgument, d.op, " at node '", d.node_name,
              "': expected ", inputs, " inputs and ", outputs, " outputs");
}

inline std::vector<std::int64_t> math_axes(const Attrs& a) { return a.has("axes") ? a.ints("axes") : std::vector<std::int64_t>{}; }

template <class Launch, class T>
std::unique_ptr<Kernel> make_math_reduce(const KernelDesc& desc) {
  const bool grad = desc.op == "reduce_grad";
  expect_counts(desc, grad ? 3 : 1, 1);
  const Shape& x = desc.inputs[0].shape;
  const ReduceKind kind = reduce_kind(desc.attrs.s("kind"));
  const Shape kept = reduced_shape(x, reduce_axes(x, math_axes(desc.attrs), desc.op.c_str()), true);
  const BroadcastGroup group = broadcast_group(kept, x);
  if (!grad) {
    const std::int64_t m = kept.numel();
    return launch_kernel([=](const KernelArgs& a) { Launch::run(ReduceKindFn<T>{a.inputs[0], a.outputs[0], kind, group}, m, a.ctx); });
  }
  const BroadcastIndex yi = broadcast_index(kept, x);
  const std::int64_t n = x.numel();
  return launch_kernel([=](const KernelArgs& a) {
    Launch::run(ReduceGradKindFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], kind, yi, group}, n, a.ctx);
  });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_math_broadcast(const KernelDesc& desc) {
  if (desc.op == "binary" || desc.op == "binary_grad") {
    const bool grad = desc.op == "binary_grad";
    expect_counts(desc, grad ? 3 : 2, grad ? 2 : 1);
    const BinaryKind kind = binary_kind(desc.attrs.s("kind"));
    const Shape& y = grad ? desc.inputs[2].shape : desc.outputs[0].shape;
    const Shape &sa = desc.inputs[0].shape, &sb = desc.inputs[1].shape;
    const BroadcastIndex ia = broadcast_index(sa, y), ib = broadcast_index(sb, y);
    if (!grad) {
      const std::int64_t n = y.numel();
      return launch_kernel([=](const KernelArgs& a) {
        Launch::run(BinaryBroadcastFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], kind, ia, ib}, n, a.ctx);
      });
    }
    const BroadcastGroup ga = broadcast_group(sa, y), gb = broadcast_group(sb, y);
    const std::int64_t na = sa.numel(), nb = sb.numel();
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(BinaryGradFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], kind, ia, ib, ga, false}, na, a.ctx);
      Launch::run(BinaryGradFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[1], kind, ia, ib, gb, true}, nb, a.ctx);
    });
  }
  if (desc.op == "where") {
    expect_counts(desc, 3, 1);
    const Shape& y = desc.outputs[0].shape;
    const BroadcastIndex ic = broadcast_index(desc.inputs[0].shape, y), ia = broadcast_index(desc.inputs[1].shape, y),
                         ib = broadcast_index(desc.inputs[2].shape, y);
    const std::int64_t n = y.numel();
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(WhereFn<T>{a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], ic, ia, ib}, n, a.ctx);
    });
  }
  if (desc.op == "where_grad") {
    expect_counts(desc, 2, 2);
    const Shape& y = desc.inputs[1].shape;
    const Shape &sa = desc.outputs[0].shape, &sb = desc.outputs[1].shape;
    const BroadcastIndex ic = broadcast_index(desc.inputs[0].shape, y);
    const BroadcastGroup ga = broadcast_group(sa, y), gb = broadcast_group(sb, y);
    const std::int64_t na = sa.numel(), nb = sb.numel();
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(WhereGradFn<T>{a.inputs[0], a.inputs[1], a.outputs[0], ic, ga, true}, na, a.ctx);
      Launch::run(WhereGradFn<T>{a.inputs[0], a.inputs[1], a.outputs[1], ic, gb, false}, nb, a.ctx);
    });
  }
  expect_counts(desc, 1, 1);  // broadcast_to
  const Shape& y = desc.outputs[0].shape;
  const BroadcastIndex ix = broadcast_index(desc.inputs[0].shape, y);
  const std::int64_t n = y.numel();
  return launch_kernel([=](const KernelArgs& a) { Launch::run(BroadcastToFn<T>{a.inputs[0], a.outputs[0], ix}, n, a.ctx); });
}

template <class Launch, class T>
std::unique_ptr<Kernel> make_math(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  if (desc.op == "nan_to_num") {
    expect_counts(desc, 1, 1);
    const NanToNumValues v = nan_to_num_values(desc.attrs);
    const std::int64_t n = desc.inputs[0].shape.numel();
    return launch_kernel([=](const KernelArgs& a) { Launch::run(NanToNumFn<T>{a.inputs[0], a.outputs[0], v}, n, a.ctx); });
  }
  if (desc.op == "unary" || desc.op == "unary_grad") {
    const bool grad = desc.op == "unary_grad";
    expect_counts(desc, grad ? 2 : 1, 1);
    const UnaryKind kind = unary_kind(desc.attrs.s("kind"));
    const std::int64_t n = desc.inputs[0].shape.numel();
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(UnaryFn<T>{a.inputs[0], grad ? a.inputs[1] : nullptr, a.outputs[0], kind, grad}, n, a.ctx);
    });
  }
  if (desc.op == "reduce" || desc.op == "reduce_grad") return make_math_reduce<Launch, T>(desc);
  if (desc.op == "arg_reduce") {
    expect_counts(desc, 1, 1);
    NNFIT_CHECK(desc.outputs[0].dtype == DType::i32, InvalidArgument, "arg_reduce at node '", desc.node_name,
                "': the output must be int32");
    const AxisSplit v = axis_split(desc.inputs[0].shape, desc.attrs.i("axis"));
    const bool argmax = desc.attrs.s("kind") == "argmax";
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(ArgReduceFn<T>{a.inputs[0], static_cast<std::int32_t*>(a.outputs[0]), v, argmax}, v.outer * v.inner, a.ctx);
    });
  }
  if (desc.op == "argsort") {
    expect_counts(desc, 1, 1);
    NNFIT_CHECK(desc.outputs[0].dtype == DType::i32, InvalidArgument, "argsort at node '", desc.node_name,
                "': the output must be int32");
    const AxisSplit v = axis_split(desc.inputs[0].shape, desc.attrs.i("axis"));
    const bool descending = desc.attrs.i_or("descending", 0) != 0;
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(ArgsortFn<T>{a.inputs[0], static_cast<std::int32_t*>(a.outputs[0]), v, descending},
                  v.outer * v.axis * v.inner, a.ctx);
    });
  }
  if (desc.op == "cumulative" || desc.op == "cumulative_grad") {
    const bool grad = desc.op == "cumulative_grad";
    expect_counts(desc, grad ? 3 : 1, 1);
    const AxisSplit v = axis_split(desc.inputs[0].shape, desc.attrs.i("axis"));
    const bool prod = desc.attrs.s("kind") == "cumprod", reverse = desc.attrs.i_or("reverse", 0) != 0;
    return launch_kernel([=](const KernelArgs& a) {
      Launch::run(CumulativeFn<T>{a.inputs[0], grad ? a.inputs[1] : nullptr, grad ? a.inputs[2] : nullptr, a.outputs[0], v,
                                  prod, reverse, grad},
                  v.outer * v.inner, a.ctx);
    });
  }
  return make_math_broadcast<Launch, T>(desc);
}

template <class Launch>
void register_math_kernels(KernelRegistry& r) {
  for (const char* op : {"unary", "unary_grad", "binary", "binary_grad", "reduce", "reduce_grad", "where", "where_grad",
                         "arg_reduce", "argsort", "cumulative", "cumulative_grad", "broadcast_to", "nan_to_num"}) {
    add_float_kernels(r, op, make_math<Launch, float>, make_math<Launch, Bf16>, make_math<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
