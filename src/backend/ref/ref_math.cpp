// Reference kernels of the tensor-algebra ops (graph/math_op_defs.cpp): plain loops in
// output order calling math_fns.h's element functions, the ones the CUDA functors call.
// Broadcasting reads each operand through its BroadcastIndex; what sums over broadcast or
// reduced axes (the gradients, reduce, cumulative) scatters into double accumulators (in the
// planned workspace: a step allocates nothing), a different order from the device's
// per-element gathers, so the two check each other.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "backend/common/math_fns.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// run() is f(args); the double accumulators live in the planned workspace, so a step
// allocates nothing.
class FnKernel final : public Kernel {
 public:
  FnKernel(std::function<void(const KernelArgs&)> f, std::size_t workspace_bytes) : f_(std::move(f)), bytes_(workspace_bytes) {}
  std::size_t workspace_bytes() const override { return bytes_; }
  void run(const KernelArgs& a) override { f_(a); }

 private:
  std::function<void(const KernelArgs&)> f_;
  std::size_t bytes_;
};

std::unique_ptr<Kernel> fn(std::function<void(const KernelArgs&)> f, std::size_t workspace_bytes = 0) {
  return std::make_unique<FnKernel>(std::move(f), workspace_bytes);
}

// `count` doubles of the workspace, each set to `value`.
double* doubles(const KernelArgs& a, std::size_t first, std::int64_t count, double value) {
  double* p = static_cast<double*>(a.workspace) + first;
  for (std::int64_t i = 0; i < count; ++i) p[i] = value;
  return p;
}

std::size_t double_bytes(std::int64_t count) { return static_cast<std::size_t>(count) * sizeof(double); }

const Shape& shape_of(const std::vector<TensorDesc>& list, std::size_t i, const KernelDesc& d) {
  NNFIT_CHECK(i < list.size(), InvalidArgument, d.op, " at node '", d.node_name, "': too few tensors");
  return list[i].shape;
}

std::vector<std::int64_t> axes_attr(const Attrs& a) { return a.has("axes") ? a.ints("axes") : std::vector<std::int64_t>{}; }

std::unique_ptr<Kernel> make_reduce(const KernelDesc& d) {
  const Shape& x = shape_of(d.inputs, 0, d);
  const ReduceKind k = reduce_kind(d.attrs.s("kind"));
  const Shape kept = reduced_shape(x, reduce_axes(x, axes_attr(d.attrs), "reduce"), true);
  const BroadcastIndex yi = broadcast_index(kept, x);
  const std::int64_t n = x.numel(), m = kept.numel();
  if (d.op == "reduce") {
    return fn([=](const KernelArgs& a) {
      const float* xs = a.in(0);
      float* y = a.out(0);
      double* acc = doubles(a, 0, m, k == ReduceKind::prod ? 1.0 : 0.0);
      auto* mx = reinterpret_cast<float*>(acc + m);
      for (std::int64_t j = 0; j < m; ++j) {
        mx[j] = k == ReduceKind::min ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
      }
      for (std::int64_t e = 0; e < n; ++e) {
        const std::int64_t j = yi(e);
        if (k == ReduceKind::sum || k == ReduceKind::mean) acc[j] += xs[e];
        else if (k == ReduceKind::prod) acc[j] *= xs[e];
        else if (k == ReduceKind::min) mx[j] = min_step(mx[j], xs[e]);
        else mx[j] = max_step(mx[j], xs[e]);  // max, and logsumexp's shift
      }
      if (k == ReduceKind::logsumexp) {
        for (std::int64_t e = 0; e < n; ++e) {
          const std::int64_t j = yi(e);
          acc[j] += std::exp(static_cast<double>(xs[e]) - mx[j]);
        }
      }
      for (std::int64_t j = 0; j < m; ++j) {
        y[j] = k == ReduceKind::min || k == ReduceKind::max ? mx[j]
               : k == ReduceKind::logsumexp                 ? logsumexp_finish(mx[j], static_cast<float>(acc[j]))
               : k == ReduceKind::mean                      ? static_cast<float>(acc[j] / static_cast<double>(n / m))
                                                            : static_cast<float>(acc[j]);
      }
    }, double_bytes(m) + static_cast<std::size_t>(m) * sizeof(float));
  }
  return fn([=](const KernelArgs& a) {  // reduce_grad: x, y, dy -> dx
    const float *xs = a.in(0), *y = a.in(1), *dy = a.in(2);
    float* dx = a.out(0);
    // min, max: the ties of each group; prod: each group's zeros and product of its nonzeros.
    double *count = doubles(a, 0, m, 0.0), *nonzero = doubles(a, static_cast<std::size_t>(m), m, 1.0);
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t j = yi(e);
      if (k == ReduceKind::min || k == ReduceKind::max) count[j] += xs[e] == y[j];
      if (k == ReduceKind::prod) xs[e] == 0.0f ? void(count[j] += 1) : void(nonzero[j] *= xs[e]);
    }
    for (std::int64_t e = 0; e < n; ++e) {
      const std::int64_t j = yi(e);
      const double others = count[j] > 1 ? 0.0 : nonzero[j];  // x == 0: the others' product
      const double extra = k == ReduceKind::min || k == ReduceKind::max ? count[j]
                           : k == ReduceKind::mean                      ? static_cast<double>(n / m)
                                                                        : others;
      dx[e] = reduce_grad_fn(k, xs[e], y[j], dy[j], static_cast<float>(extra));
    }
  }, double_bytes(2 * m));
}

std::unique_ptr<Kernel> make_where(const KernelDesc& d) {
  if (d.op == "where") {
    const Shape& y = shape_of(d.outputs, 0, d);
    const BroadcastIndex c = broadcast_index(shape_of(d.inputs, 0, d), y), ia = broadcast_index(shape_of(d.inputs, 1, d), y),
                         ib = broadcast_index(shape_of(d.inputs, 2, d), y);
    const std::int64_t n = y.numel();
    return fn([=](const KernelArgs& a) {
      const float *cond = a.in(0), *x = a.in(1), *z = a.in(2);
      float* o = a.out(0);
      for (std::int64_t i = 0; i < n; ++i) o[i] = cond[c(i)] != 0.0f ? x[ia(i)] : z[ib(i)];
    });
  }
  const Shape& y = shape_of(d.inputs, 1, d);  // where_grad: cond, dy -> da, db
  const Shape &sa = shape_of(d.outputs, 0, d), &sb = shape_of(d.outputs, 1, d);
  const BroadcastIndex c = broadcast_index(shape_of(d.inputs, 0, d), y), ia = broadcast_index(sa, y), ib = broadcast_index(sb, y);
  const std::int64_t n = y.numel(), na = sa.numel(), nb = sb.numel();
  return fn([=](const KernelArgs& a) {
    const float *cond = a.in(0), *dy = a.in(1);
    double *da = doubles(a, 0, na, 0.0), *db = doubles(a, static_cast<std::size_t>(na), nb, 0.0);
    for (std::int64_t i = 0; i < n; ++i) (cond[c(i)] != 0.0f ? da[ia(i)] : db[ib(i)]) += dy[i];
    for (std::int64_t j = 0; j < na; ++j) a.out(0)[j] = static_cast<float>(da[j]);
    for (std::int64_t j = 0; j < nb; ++j) a.out(1)[j] = static_cast<float>(db[j]);
  }, double_bytes(na + nb));
}

std::unique_ptr<Kernel> make_arg_reduce(const KernelDesc& d) {
  const AxisSplit v = axis_split(shape_of(d.inputs, 0, d), d.attrs.i("axis"));
  const bool argmax = d.attrs.s("kind") == "argmax";
  return fn([=](const KernelArgs& a) {
    const float* x = a.in(0);
    auto* y = static_cast<std::int32_t*>(a.outputs[0]);
    for (std::int64_t o = 0; o < v.outer; ++o) {
      for (std::int64_t i = 0; i < v.inner; ++i) {
        std::int64_t best = 0;  // the first on ties; the first NaN wins, as NumPy
        for (std::int64_t r = 1; r < v.axis; ++r) {
          const float b = x[(o * v.axis + best) * v.inner + i], e = x[(o * v.axis + r) * v.inner + i];
          if (b != b) break;
          if (e != e || (argmax ? e > b : e < b)) best = r;
        }
        y[o * v.inner + i] = static_cast<std::int32_t>(best);
      }
    }
  });
}

// argsort: each line's positions sorted by argsort_before (a stable sort: the oracle the
// CUDA kernel's ranks are checked against).
std::unique_ptr<Kernel> make_argsort(const KernelDesc& d) {
  const AxisSplit v = axis_split(shape_of(d.inputs, 0, d), d.attrs.i("axis"));
  const bool descending = d.attrs.i_or("descending", 0) != 0;
  return fn([=](const KernelArgs& a) {
    const float* x = a.in(0);
    auto* y = static_cast<std::int32_t*>(a.outputs[0]);
    std::vector<std::int64_t> order(static_cast<std::size_t>(v.axis));
    for (std::int64_t o = 0; o < v.outer; ++o) {
      for (std::int64_t i = 0; i < v.inner; ++i) {
        const auto at = [&](std::int64_t r) { return x[(o * v.axis + r) * v.inner + i]; };
        std::iota(order.begin(), order.end(), std::int64_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t q) {
          return argsort_before(at(p), p, at(q), q, descending);
        });
        for (std::int64_t r = 0; r < v.axis; ++r) y[(o * v.axis + r) * v.inner + i] = static_cast<std::int32_t>(order[static_cast<std::size_t>(r)]);
      }
    }
  });
}

// cumulative: y_k = x_0 ∘ … ∘ x_k along the axis (from its end with reverse).
// cumulative_grad: dx_k = Σ_{j ≥ k} dy_j (cumsum), Σ_{j ≥ k} dy_j·y_j / x_k (cumprod, x_k ≠ 0).
std::unique_ptr<Kernel> make_cumulative(const KernelDesc& d) {
  const AxisSplit v = axis_split(shape_of(d.inputs, 0, d), d.attrs.i("axis"));
  const bool prod = d.attrs.s("kind") == "cumprod", reverse = d.attrs.i_or("reverse", 0) != 0, grad = d.op == "cumulative_grad";
  return fn([=](const KernelArgs& a) {
    const float* x = a.in(0);
    float* y = a.out(0);
    for (std::int64_t o = 0; o < v.outer; ++o) {
      for (std::int64_t i = 0; i < v.inner; ++i) {
        // Position s of the walk: forward for the op, backward for its gradient.
        auto at = [&](std::int64_t s, bool backward) {
          const std::int64_t k = backward != reverse ? v.axis - 1 - s : s;
          return (o * v.axis + k) * v.inner + i;
        };
        double acc = prod && !grad ? 1.0 : 0.0;
        for (std::int64_t s = 0; s < v.axis; ++s) {
          const std::int64_t e = at(s, grad);
          if (!grad) {
            acc = prod ? acc * x[e] : acc + x[e];
            y[e] = static_cast<float>(acc);
          } else {
            acc += prod ? static_cast<double>(a.in(2)[e]) * a.in(1)[e] : a.in(2)[e];
            y[e] = static_cast<float>(prod ? acc / x[e] : acc);
          }
        }
      }
    }
  });
}

}  // namespace

std::unique_ptr<Kernel> make_ref_math(const KernelDesc& d, std::string* why_not) {
  if (d.op == "arg_reduce") {
    if (d.inputs.size() != 1 || d.inputs[0].dtype != DType::f32) {
      if (why_not) *why_not = "arg_reduce: only float32 x is supported";
      return nullptr;
    }
    return make_arg_reduce(d);
  }
  if (d.op == "argsort") {
    if (d.inputs.size() != 1 || d.inputs[0].dtype != DType::f32) {
      if (why_not) *why_not = "argsort: only float32 x is supported";
      return nullptr;
    }
    return make_argsort(d);
  }
  if (!all_float32(d, why_not)) return nullptr;
  if (d.op == "nan_to_num") {
    const NanToNumValues v = nan_to_num_values(d.attrs);
    const std::int64_t n = shape_of(d.inputs, 0, d).numel();
    return fn([=](const KernelArgs& a) {
      for (std::int64_t i = 0; i < n; ++i) a.out(0)[i] = nan_to_num_fn(a.in(0)[i], v);
    });
  }
  if (d.op == "unary" || d.op == "unary_grad") {
    const UnaryKind k = unary_kind(d.attrs.s("kind"));
    const std::int64_t n = shape_of(d.inputs, 0, d).numel();
    if (d.op == "unary") {
      return fn([=](const KernelArgs& a) {
        for (std::int64_t i = 0; i < n; ++i) a.out(0)[i] = unary_fn(k, a.in(0)[i]);
      });
    }
    return fn([=](const KernelArgs& a) {
      for (std::int64_t i = 0; i < n; ++i) a.out(0)[i] = unary_grad_fn(k, a.in(0)[i], a.in(1)[i]);
    });
  }
  if (d.op == "binary" || d.op == "binary_grad") {
    const BinaryKind k = binary_kind(d.attrs.s("kind"));
    const Shape& y = d.op == "binary" ? shape_of(d.outputs, 0, d) : shape_of(d.inputs, 2, d);
    const Shape &sa = shape_of(d.inputs, 0, d), &sb = shape_of(d.inputs, 1, d);
    const BroadcastIndex ia = broadcast_index(sa, y), ib = broadcast_index(sb, y);
    const std::int64_t n = y.numel(), na = sa.numel(), nb = sb.numel();
    if (d.op == "binary") {
      return fn([=](const KernelArgs& a) {
        for (std::int64_t i = 0; i < n; ++i) a.out(0)[i] = binary_fn(k, a.in(0)[ia(i)], a.in(1)[ib(i)]);
      });
    }
    return fn([=](const KernelArgs& a) {
      double *da = doubles(a, 0, na, 0.0), *db = doubles(a, static_cast<std::size_t>(na), nb, 0.0);
      for (std::int64_t i = 0; i < n; ++i) {
        const GradPair g = binary_grad_fn(k, a.in(0)[ia(i)], a.in(1)[ib(i)], a.in(2)[i]);
        da[ia(i)] += g.a;
        db[ib(i)] += g.b;
      }
      for (std::int64_t j = 0; j < na; ++j) a.out(0)[j] = static_cast<float>(da[j]);
      for (std::int64_t j = 0; j < nb; ++j) a.out(1)[j] = static_cast<float>(db[j]);
    }, double_bytes(na + nb));
  }
  if (d.op == "reduce" || d.op == "reduce_grad") return make_reduce(d);
  if (d.op == "where" || d.op == "where_grad") return make_where(d);
  if (d.op == "cumulative" || d.op == "cumulative_grad") return make_cumulative(d);
  if (d.op == "broadcast_to") {
    const Shape& y = shape_of(d.outputs, 0, d);
    const BroadcastIndex ix = broadcast_index(shape_of(d.inputs, 0, d), y);
    const std::int64_t n = y.numel();
    return fn([=](const KernelArgs& a) {
      for (std::int64_t i = 0; i < n; ++i) a.out(0)[i] = a.in(0)[ix(i)];
    });
  }
  throw InvalidArgument("internal: make_ref_math has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
