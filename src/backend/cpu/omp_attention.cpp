// OpenMP kernels of masked_softmax and masked_softmax_grad (graph/attention_op_defs.cpp):
// rows of [G·T, S] split statically over threads, each row in float (the reference works
// in double), so results match ref:<op> to float rounding and repeat for a thread count.
#include <cmath>

#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

constexpr float kMaskedScore = -1e9f;  // Keras's Softmax fill (ref_attention.cpp)

class OmpMaskedSoftmax final : public Kernel {
 public:
  OmpMaskedSoftmax(bool grad, std::int64_t g, std::int64_t t, std::int64_t s, std::int64_t heads, bool zero_rows)
      : grad_(grad), g_(g), t_(t), s_(s), heads_(heads), zero_rows_(zero_rows) {}

  void run(const KernelArgs& a) override {
    const auto* m = static_cast<const float*>(a.inputs[grad_ ? 2 : 1]);
    auto* out = static_cast<float*>(a.outputs[0]);
    const std::int64_t rows = g_ * t_, s = s_;
#pragma omp parallel for schedule(static) if (rows * s >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* mr = m + ((r / t_) / heads_ * t_ + r % t_) * s;
      float* o = out + r * s;
      if (grad_) {
        const float* y = static_cast<const float*>(a.inputs[0]) + r * s;
        const float* dy = static_cast<const float*>(a.inputs[1]) + r * s;
        float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (std::int64_t j = 0; j < s; ++j) dot += dy[j] * y[j];
#pragma omp simd
        for (std::int64_t j = 0; j < s; ++j) o[j] = mr[j] != 0.0f ? y[j] * (dy[j] - dot) : 0.0f;
        continue;
      }
      const float* x = static_cast<const float*>(a.inputs[0]) + r * s;
      float mx = -INFINITY;
      int any = 0;
#pragma omp simd reduction(max : mx) reduction(| : any)
      for (std::int64_t j = 0; j < s; ++j) {
        const bool keep = mr[j] != 0.0f;
        mx = std::max(mx, keep ? x[j] : kMaskedScore);
        any |= keep ? 1 : 0;
      }
      if (!any && zero_rows_) {
        for (std::int64_t j = 0; j < s; ++j) o[j] = 0.0f;
        continue;
      }
      float sum = 0.0f;
      for (std::int64_t j = 0; j < s; ++j) {
        o[j] = std::exp((mr[j] != 0.0f ? x[j] : kMaskedScore) - mx);
        sum += o[j];
      }
      const float k = 1.0f / sum;
#pragma omp simd
      for (std::int64_t j = 0; j < s; ++j) o[j] *= k;
    }
  }

 private:
  bool grad_;
  std::int64_t g_, t_, s_, heads_;
  bool zero_rows_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_masked_softmax(const KernelDesc& d, std::string* why_not) {
  for (const auto* list : {&d.inputs, &d.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.dtype != DType::f32) {
        if (why_not) *why_not = d.op + ": only float32 is supported";
        return nullptr;
      }
    }
  }
  const bool grad = d.op == "masked_softmax_grad";
  const Shape& x = d.inputs.at(0).shape;
  const std::int64_t heads = x[0] / d.inputs.at(grad ? 2 : 1).shape[0];
  return std::make_unique<OmpMaskedSoftmax>(grad, x[0], x[1], x[2], heads, d.attrs.i_or("zero_masked_rows", 0) != 0);
}

}  // namespace nnfit
