// OpenMP kernels of the element-wise tensor-algebra ops (unary, unary_grad, binary, where,
// broadcast_to): the reference loop of ref_math.cpp, each element through math_fns.h's
// function and read through the same BroadcastIndex, split statically over threads. Each
// output element depends on nothing else, so they equal ref:<op> bit for bit (Note
// [Bitwise slot updates] on contraction). The ops that sum (the other gradients, reduce,
// cumulative) run their reference kernel.
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

}  // namespace

std::unique_ptr<Kernel> make_omp_math(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
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
    const BroadcastIndex ia = broadcast_index(d.inputs.at(0).shape, y), ib = broadcast_index(d.inputs.at(1).shape, y);
    return omp_map(n, [k, ia, ib](const float* const* in, std::int64_t i) { return binary_fn(k, in[0][ia(i)], in[1][ib(i)]); });
  }
  if (d.op == "where") {
    const BroadcastIndex ic = broadcast_index(d.inputs.at(0).shape, y), ia = broadcast_index(d.inputs.at(1).shape, y),
                         ib = broadcast_index(d.inputs.at(2).shape, y);
    return omp_map(n, [ic, ia, ib](const float* const* in, std::int64_t i) {
      return in[0][ic(i)] != 0.0f ? in[1][ia(i)] : in[2][ib(i)];
    });
  }
  if (d.op == "broadcast_to") {
    const BroadcastIndex ix = broadcast_index(d.inputs.at(0).shape, y);
    return omp_map(n, [ix](const float* const* in, std::int64_t i) { return in[0][ix(i)]; });
  }
  throw InvalidArgument("internal: make_omp_math has no kernel for op '" + d.op + "'");
}

}  // namespace nnfit
