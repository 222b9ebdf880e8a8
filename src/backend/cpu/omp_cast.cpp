// omp:cast: the float32 <-> bfloat16 conversions as vectorizable bit arithmetic (round to
// nearest even, NaN kept quiet: the same bits as core/dtype.cpp's float_to_bf16, which the
// conformance test checks), split over threads; float16 through core/dtype.cpp's scalar
// conversions, split over threads (no F16C without -march).
#include <cstdint>
#include <cstring>

#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class OmpCast final : public Kernel {
 public:
  OmpCast(DType from, DType to, std::int64_t n) : from_(from), to_(to), n_(n) {}
  void run(const KernelArgs& args) override {
    const std::int64_t n = n_;
    if (from_ == DType::f32 && to_ == DType::bf16) {
      const auto* __restrict x = static_cast<const std::uint32_t*>(args.inputs[0]);
      auto* __restrict y = static_cast<std::uint16_t*>(args.outputs[0]);
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t b = x[i];
        const bool nan = (b & 0x7fffffffu) > 0x7f800000u;
        y[i] = static_cast<std::uint16_t>(nan ? (b >> 16) | 0x40u : (b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
      }
    } else if (from_ == DType::bf16 && to_ == DType::f32) {
      const auto* __restrict x = static_cast<const std::uint16_t*>(args.inputs[0]);
      auto* __restrict y = static_cast<std::uint32_t*>(args.outputs[0]);
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<std::uint32_t>(x[i]) << 16;
    } else if (from_ == DType::f32 && to_ == DType::f16) {
      const auto* x = static_cast<const float*>(args.inputs[0]);
      auto* y = static_cast<std::uint16_t*>(args.outputs[0]);
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) y[i] = float_to_f16(x[i]);
    } else {  // f16 -> f32
      const auto* x = static_cast<const std::uint16_t*>(args.inputs[0]);
      auto* y = static_cast<float*>(args.outputs[0]);
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) y[i] = f16_to_float(x[i]);
    }
  }

 private:
  DType from_, to_;
  std::int64_t n_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_cast(const KernelDesc& desc, std::string* why_not) {
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == 1 &&
                  desc.inputs[0].shape.numel() == desc.outputs[0].shape.numel(),
              InvalidArgument, "cast at node '", desc.node_name, "': expected one input and one output of its size");
  const DType from = desc.inputs[0].dtype, to = desc.outputs[0].dtype;
  const bool f32_in = from == DType::f32 && is_low_precision(to), f32_out = to == DType::f32 && is_low_precision(from);
  if (!f32_in && !f32_out) {
    if (why_not) *why_not = "casts between float32 and float16 / bfloat16 only";
    return nullptr;
  }
  return std::make_unique<OmpCast>(from, to, desc.inputs[0].shape.numel());
}

}  // namespace nnfit
