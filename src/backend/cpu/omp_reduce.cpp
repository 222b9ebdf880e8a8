// OpenMP kernels of the reductions over the [outer, reduced, inner] view: one thread per
// block of outer rows, the inner axis (channels, for a channels-last global pooling)
// vectorized, float accumulation in the output row. Results match ref:<op> to float
// rounding (the reference sums in double); the split is static, so a thread count gives
// one result.
#include <cmath>

#include "backend/common/reduce_view.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpReduceMean final : public Kernel {
 public:
  explicit OmpReduceMean(ReduceView v) : v_(v) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    const std::int64_t R = v_.reduced, I = v_.inner;
    const float scale = 1.0f / static_cast<float>(R);
#pragma omp parallel for schedule(static) if (v_.outer * R * I >= kOmpMinParallelElements)
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      float* yo = y + o * I;
      const float* xo = x + o * R * I;
      for (std::int64_t i = 0; i < I; ++i) yo[i] = 0.0f;
      for (std::int64_t r = 0; r < R; ++r) {
#pragma omp simd
        for (std::int64_t i = 0; i < I; ++i) yo[i] += xo[r * I + i];
      }
      for (std::int64_t i = 0; i < I; ++i) yo[i] *= scale;
    }
  }

 private:
  ReduceView v_;
};

class OmpReduceMax final : public Kernel {
 public:
  explicit OmpReduceMax(ReduceView v) : v_(v) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    auto* y = static_cast<float*>(a.outputs[0]);
    const std::int64_t R = v_.reduced, I = v_.inner;
#pragma omp parallel for schedule(static) if (v_.outer * R * I >= kOmpMinParallelElements)
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      float* yo = y + o * I;
      const float* xo = x + o * R * I;
      for (std::int64_t i = 0; i < I; ++i) yo[i] = xo[i];
      for (std::int64_t r = 1; r < R; ++r) {
        for (std::int64_t i = 0; i < I; ++i) {
          const float v = xo[r * I + i];
          // A NaN wins and stays (v > NaN is false; yo[i] != yo[i] holds for NaN).
          yo[i] = (v > yo[i] || (v != v && yo[i] == yo[i])) ? v : yo[i];
        }
      }
    }
  }

 private:
  ReduceView v_;
};

class OmpReduceMeanGrad final : public Kernel {
 public:
  explicit OmpReduceMeanGrad(ReduceView v) : v_(v) {}
  void run(const KernelArgs& a) override {
    const auto* dy = static_cast<const float*>(a.inputs[0]);
    auto* dx = static_cast<float*>(a.outputs[0]);
    const std::int64_t R = v_.reduced, I = v_.inner;
    const float scale = 1.0f / static_cast<float>(R);
#pragma omp parallel for schedule(static) if (v_.outer * R * I >= kOmpMinParallelElements)
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      for (std::int64_t r = 0; r < R; ++r) {
#pragma omp simd
        for (std::int64_t i = 0; i < I; ++i) dx[(o * R + r) * I + i] = dy[o * I + i] * scale;
      }
    }
  }

 private:
  ReduceView v_;
};

// dy split evenly among the positions equal to the maximum (the reference's rule).
class OmpReduceMaxGrad final : public Kernel {
 public:
  explicit OmpReduceMaxGrad(ReduceView v) : v_(v) {}
  void run(const KernelArgs& a) override {
    const auto* x = static_cast<const float*>(a.inputs[0]);
    const auto* y = static_cast<const float*>(a.inputs[1]);
    const auto* dy = static_cast<const float*>(a.inputs[2]);
    auto* dx = static_cast<float*>(a.outputs[0]);
    const std::int64_t R = v_.reduced, I = v_.inner;
#pragma omp parallel for schedule(static) if (v_.outer * R * I >= kOmpMinParallelElements)
    for (std::int64_t o = 0; o < v_.outer; ++o) {
      for (std::int64_t i = 0; i < I; ++i) {
        const float m = y[o * I + i];
        std::int64_t ties = 0;
        for (std::int64_t r = 0; r < R; ++r) ties += x[(o * R + r) * I + i] == m;
        const float g = ties > 0 ? dy[o * I + i] / static_cast<float>(ties) : 0.0f;
        for (std::int64_t r = 0; r < R; ++r) dx[(o * R + r) * I + i] = x[(o * R + r) * I + i] == m ? g : 0.0f;
      }
    }
  }

 private:
  ReduceView v_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_reduce(const KernelDesc& d, std::string* why_not) {
  for (const auto* list : {&d.inputs, &d.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.dtype != DType::f32) {
        if (why_not) *why_not = d.op + ": only float32 is supported";
        return nullptr;
      }
    }
  }
  const Shape& x = d.op == "reduce_mean_grad" ? d.outputs.at(0).shape : d.inputs.at(0).shape;
  const ReduceView v = reduce_view(x, d.attrs.ints("axes"));
  if (d.op == "reduce_mean") return std::make_unique<OmpReduceMean>(v);
  if (d.op == "reduce_max") return std::make_unique<OmpReduceMax>(v);
  if (d.op == "reduce_mean_grad") return std::make_unique<OmpReduceMeanGrad>(v);
  return std::make_unique<OmpReduceMaxGrad>(v);
}

}  // namespace nnfit
