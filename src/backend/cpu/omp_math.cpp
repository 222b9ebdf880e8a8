// OpenMP kernels of the element-wise tensor-algebra ops (unary, unary_grad, binary, where,
// broadcast_to): the reference loop of ref_math.cpp, each element through math_fns.h's
// function and read through the same BroadcastIndex, split statically over threads. Each
// output element depends on nothing else, so they equal ref:<op> bit for bit (Note
// [Bitwise slot updates] on contraction). binary_grad and where_grad whose operands both have
// dy's shape (each gradient element one term) run here too, in parallel and bit for bit the
// reference's (its double accumulator starts at 0 and takes one term); where an operand is
// broadcast, its gradient sums, and they run the reference kernel, as reduce and cumulative do.
#include "backend/common/math_fns.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// y[i] = f(i) over n outputs, parallel where large enough.
template <class F>
class OmpMap final : public Kernel {
 public:
  OmpMap(std::int64_t n, F f) : n_(n), f_(std::move(f)) {}
  void run(const KernelArgs& a) override {
    const F f = f_;
    const auto* const* in = reinterpret_cast<const float* const*>(a.inputs);
    float* y = static_cast<float*>(a.outputs[0]);
#pragma omp parallel for schedule(static) if (n_ >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n_; ++i) y[i] = f(in, i);
  }

 private:
  std::int64_t n_;
  F f_;
};

template <class F>
std::unique_ptr<Kernel> omp_map(std::int64_t n, F f) {
  return std::make_unique<OmpMap<F>>(n, std::move(f));
}

// An operand's element for output element i: i itself where the operand has the output's
// shape, 0 for one element, else BroadcastIndex's walk over the axes (a division and a
// remainder per axis, which dominated same-shape ops when every operand took it).
struct OperandIndex {
  enum class Kind { same, scalar, broadcast } kind;
  BroadcastIndex general;
  std::int64_t operator()(std::int64_t i) const {
    return kind == Kind::same ? i : kind == Kind::scalar ? 0 : general(i);
  }
};
OperandIndex operand_index(const Shape& operand, const Shape& y) {
  if (operand == y) return {OperandIndex::Kind::same, {}};
  if (operand.numel() == 1) return {OperandIndex::Kind::scalar, {}};
  return {OperandIndex::Kind::broadcast, broadcast_index(operand, y)};
}

// out0[i], out1[i] = f(i) over n elements: the gradients of an element-wise op whose
// operands have the output's shape.
template <class F>
class OmpMap2 final : public Kernel {
 public:
  OmpMap2(std::int64_t n, F f) : n_(n), f_(std::move(f)) {}
  void run(const KernelArgs& a) override {
    const F f = f_;
    const auto* const* in = reinterpret_cast<const float* const*>(a.inputs);
    float *y0 = a.out(0), *y1 = a.out(1);
#pragma omp parallel for schedule(static) if (n_ >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n_; ++i) {
      const GradPair g = f(in, i);
      y0[i] = g.a + 0.0f;  // -0 becomes +0, as the reference's 0.0 + term does
      y1[i] = g.b + 0.0f;
    }
  }

 private:
  std::int64_t n_;
  F f_;
};

template <class F>
std::unique_ptr<Kernel> omp_map2(std::int64_t n, F f) {
  return std::make_unique<OmpMap2<F>>(n, std::move(f));
}

// binary_grad (a, b, dy) and where_grad (cond, dy) with every operand of dy's shape.
std::unique_ptr<Kernel> make_omp_elementwise_grad(const KernelDesc& d, std::string* why_not) {
  const bool binary = d.op == "binary_grad";
  const Shape& y = d.inputs.at(binary ? 2 : 1).shape;
  if (d.outputs.size() != 2 || d.outputs[0].shape != y || d.outputs[1].shape != y || d.inputs.at(0).shape != y ||
      (binary && d.inputs.at(1).shape != y)) {
    if (why_not) *why_not = "an operand is broadcast: its gradient sums (the reference kernel)";
    return nullptr;
  }
  const std::int64_t n = y.numel();
  if (binary) {
    const BinaryKind k = binary_kind(d.attrs.s("kind"));
    return omp_map2(n, [k](const float* const* in, std::int64_t i) { return binary_grad_fn(k, in[0][i], in[1][i], in[2][i]); });
  }
  return omp_map2(n, [](const float* const* in, std::int64_t i) {
    return in[0][i] != 0.0f ? GradPair{in[1][i], 0.0f} : GradPair{0.0f, in[1][i]};
  });
}

}  // namespace

std::unique_ptr<Kernel> make_omp_math(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  if (d.op == "binary_grad" || d.op == "where_grad") return make_omp_elementwise_grad(d, why_not);
  NNFIT_CHECK(!d.inputs.empty() && d.outputs.size() == 1, InvalidArgument, d.op, " at node '", d.node_name,
              "': expected one output");
  const Shape& y = d.outputs[0].shape;
  const std::int64_t n = y.numel();
  if (d.op == "unary" || d.op == "unary_grad") {
    const UnaryKind k = unary_kind(d.attrs.s("kind"));
    if (d.op == "unary") return omp_map(n, [k](const float* const* in, std::int64_t i) { return unary_fn(k, in[0][i]); });
    return omp_map(n, [k](const float* const* in, std::int64_t i) { return unary_grad_fn(k, in[0][i], in[1][i]); });
  }
  if (d.op == "nan_to_num") {
    const NanToNumValues v = nan_to_num_values(d.attrs);
    return omp_map(n, [v](const float* const* in, std::int64_t i) { return nan_to_num_fn(in[0][i], v); });
  }
  if (d.op == "binary") {
    const BinaryKind k = binary_kind(d.attrs.s("kind"));
    const OperandIndex ia = operand_index(d.inputs.at(0).shape, y), ib = operand_index(d.inputs.at(1).shape, y);
    return omp_map(n, [k, ia, ib](const float* const* in, std::int64_t i) { return binary_fn(k, in[0][ia(i)], in[1][ib(i)]); });
  }
  if (d.op == "where") {
    const OperandIndex ic = operand_index(d.inputs.at(0).shape, y), ia = operand_index(d.inputs.at(1).shape, y),
                       ib = operand_index(d.inputs.at(2).shape, y);
    return omp_map(n, [ic, ia, ib](const float* const* in, std::int64_t i) {
      return in[0][ic(i)] != 0.0f ? in[1][ia(i)] : in[2][ib(i)];
    });
  }
  if (d.op == "broadcast_to") {
    const OperandIndex ix = operand_index(d.inputs.at(0).shape, y);
    return omp_map(n, [ix](const float* const* in, std::int64_t i) { return in[0][ix(i)]; });
  }
  throw InvalidArgument("internal: make_omp_math has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
