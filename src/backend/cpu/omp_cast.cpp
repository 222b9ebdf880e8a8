// omp:cast: float32 <-> bfloat16 / float16 with backend/common/low_precision.h's loops.
#include <cstdint>
#include <cstring>

#include "backend/common/low_precision.h"
#include "backend/cpu/omp_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

class OmpCast final : public Kernel {
 public:
  OmpCast(DType from, DType to, std::int64_t n) : from_(from), to_(to), n_(n) {}
  void run(const KernelArgs& args) override {
    if (from_ == DType::f32) {
      low_precision::from_f32(to_, static_cast<const float*>(args.inputs[0]), args.outputs[0], n_);
    } else {
      low_precision::to_f32(from_, args.inputs[0], static_cast<float*>(args.outputs[0]), n_);
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
