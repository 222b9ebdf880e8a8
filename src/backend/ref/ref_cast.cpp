// ref:cast: float32 <-> float16 / bfloat16 (round to nearest even, NaN kept; core/dtype.h),
// and float16 <-> bfloat16 through float32, which holds both exactly; int32 and int64 to
// each float type (keras.ops.cast of argmax's indices), and each float type to int32,
// truncating toward zero as NumPy and TensorFlow do (NaN gives 0, values past int32's
// range its nearest bound).
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>

#include "nnfit/backend/kernel.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

float load(DType t, const void* p, std::int64_t i) {
  if (t == DType::f32) return static_cast<const float*>(p)[i];
  if (t == DType::i32) return static_cast<float>(static_cast<const std::int32_t*>(p)[i]);
  if (t == DType::i64) return static_cast<float>(static_cast<const std::int64_t*>(p)[i]);
  const std::uint16_t bits = static_cast<const std::uint16_t*>(p)[i];
  return t == DType::bf16 ? bf16_to_float(bits) : f16_to_float(bits);
}

void store(DType t, void* p, std::int64_t i, float v) {
  if (t == DType::f32) {
    static_cast<float*>(p)[i] = v;
  } else if (t == DType::i32) {
    constexpr float lo = static_cast<float>(std::numeric_limits<std::int32_t>::min());
    constexpr float hi = 2147483520.0f;  // the largest float below 2^31
    static_cast<std::int32_t*>(p)[i] = std::isnan(v) ? 0 : static_cast<std::int32_t>(std::trunc(std::clamp(v, lo, hi)));
  } else {
    static_cast<std::uint16_t*>(p)[i] = t == DType::bf16 ? float_to_bf16(v) : float_to_f16(v);
  }
}

class RefCast final : public Kernel {
 public:
  RefCast(DType from, DType to, std::int64_t n) : from_(from), to_(to), n_(n) {}
  void run(const KernelArgs& args) override {
    for (std::int64_t i = 0; i < n_; ++i) store(to_, args.outputs[0], i, load(from_, args.inputs[0], i));
  }

 private:
  DType from_, to_;
  std::int64_t n_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_cast(const KernelDesc& desc, std::string* why_not) {
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == 1 &&
                  desc.inputs[0].shape.numel() == desc.outputs[0].shape.numel(),
              InvalidArgument, "cast at node '", desc.node_name, "': expected one input and one output of its size");
  const DType from = desc.inputs[0].dtype, to = desc.outputs[0].dtype;
  const bool integer_in = from == DType::i32 || from == DType::i64;
  if (!(is_floating(from) || integer_in) || !(is_floating(to) || (to == DType::i32 && is_floating(from)))) {
    if (why_not) *why_not = "casts between floating types, integers to floats and floats to int32 only";
    return nullptr;
  }
  return std::make_unique<RefCast>(from, to, desc.inputs[0].shape.numel());
}

}  // namespace nnfit
