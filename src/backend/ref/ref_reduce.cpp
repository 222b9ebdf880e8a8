// Reference kernels of the reductions (docs/design/ops.md): plain loops over the
// [outer, reduced, inner] view, sums in double. reduce_max's gradient splits dy evenly
// among the positions equal to the maximum (TensorFlow's and JAX's rule); a NaN is the
// maximum of any group it is in.
#include <cmath>

#include "backend/common/reduce_view.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class RefReduce final : public Kernel {
 public:
  RefReduce(std::string op, ReduceView v) : op_(std::move(op)), v_(v) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* out = static_cast<float*>(a.outputs[0]);
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      for (std::int64_t i = 0; i < v_.inner; ++i) {
        auto at = [&](std::int64_t r) { return (o * v_.reduced + r) * v_.inner + i; };
        const std::int64_t y = o * v_.inner + i;
        if (op_ == "reduce_mean") {
          double sum = 0;
          for (std::int64_t r = 0; r < v_.reduced; ++r) sum += x[at(r)];
          out[y] = static_cast<float>(sum / static_cast<double>(v_.reduced));
        } else if (op_ == "reduce_max") {
          float m = x[at(0)];
          for (std::int64_t r = 1; r < v_.reduced; ++r) {
            if (x[at(r)] > m || std::isnan(x[at(r)])) m = x[at(r)];
            if (std::isnan(m)) break;
          }
          out[y] = m;
        } else if (op_ == "reduce_mean_grad") {  // x is dy here
          const double g = x[y] / static_cast<double>(v_.reduced);
          for (std::int64_t r = 0; r < v_.reduced; ++r) out[at(r)] = static_cast<float>(g);
        } else {  // reduce_max_grad: x, y, dy
          const auto* ymax = static_cast<const float*>(a.inputs[1]);
          const auto* dy = static_cast<const float*>(a.inputs[2]);
          std::int64_t ties = 0;
          for (std::int64_t r = 0; r < v_.reduced; ++r) ties += x[at(r)] == ymax[y];
          for (std::int64_t r = 0; r < v_.reduced; ++r) {
            out[at(r)] = x[at(r)] == ymax[y] ? static_cast<float>(dy[y] / static_cast<double>(ties)) : 0.0f;
          }
        }
      }
    }
  }

 private:
  std::string op_;
  ReduceView v_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_reduce(const KernelDesc& d, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  const Shape& x = d.op == "reduce_mean_grad" ? d.outputs.at(0).shape : d.inputs.at(0).shape;
  return std::make_unique<RefReduce>(d.op, reduce_view(x, d.attrs.ints("axes")));
}

}  // namespace nnfit
