// The conformance harness at float16 and bfloat16 (issue 16): a float32 desc and inputs
// are turned into the same desc at `dtype` with the inputs rounded to it; every kernel the
// registry holds for that dtype (oneDNN's bf16 primitives) and the kernel select() picks
// (which may be the widened float32 one) run on them, and their outputs are compared with
// the float32 reference kernel on the rounded inputs, within the dtype's tolerance relative
// to the output's largest magnitude.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "harness.h"

namespace nnfit::testing {

// Relative tolerances: a few units of the format's rounding (bf16 2^-8, f16 2^-11) after
// float32 accumulation and one rounding of the output.
inline float low_precision_tolerance(DType dtype) { return dtype == DType::bf16 ? 1.6e-2f : 2.5e-3f; }

inline Tensor to_dtype(const Tensor& t, DType dtype) {
  if (t.dtype() != DType::f32 || dtype == DType::f32) return t.clone();
  Tensor out = Tensor::zeros(t.shape(), dtype);
  auto* bits = static_cast<std::uint16_t*>(out.raw());
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    bits[i] = dtype == DType::bf16 ? float_to_bf16(t.data<float>()[i]) : float_to_f16(t.data<float>()[i]);
  }
  return out;
}

inline Tensor to_f32(const Tensor& t) {
  if (!is_low_precision(t.dtype())) return t.clone();
  Tensor out = Tensor::zeros(t.shape(), DType::f32);
  const auto* bits = static_cast<const std::uint16_t*>(t.raw());
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    out.data<float>()[i] = t.dtype() == DType::bf16 ? bf16_to_float(bits[i]) : f16_to_float(bits[i]);
  }
  return out;
}

// `desc` with its float32 tensors at `dtype` (inputs only with `inputs_only`: the outputs stay
// float32, as when a cast to float32 is folded into the op).
inline KernelDesc at_dtype(const KernelDesc& desc, DType dtype, bool inputs_only = false) {
  KernelDesc out = desc;
  std::vector<std::vector<TensorDesc>*> lists{&out.inputs};
  if (!inputs_only) lists.push_back(&out.outputs);
  for (auto* list : lists) {
    for (TensorDesc& t : *list) {
      if (t.dtype == DType::f32) t.dtype = dtype;
    }
  }
  return out;
}

// Returns how many native (non-widened) kernels were checked.
inline int expect_low_precision_matches_reference(const KernelDesc& f32, const std::vector<Tensor>& inputs,
                                                  DType dtype, StepContext ctx = {}, bool f32_outputs = false) {
  const KernelRegistry& reg = kernel_registry();
  const KernelDesc low = at_dtype(f32, dtype, f32_outputs);
  std::vector<Tensor> low_in, rounded;
  for (const Tensor& t : inputs) {
    low_in.push_back(to_dtype(t, dtype));
    rounded.push_back(to_f32(low_in.back()));
  }
  std::string why;
  auto ref = reg.create("ref:" + f32.op, f32, DeviceType::cpu, &why);
  EXPECT_NE(ref, nullptr) << why;
  if (!ref) return 0;
  const std::vector<Tensor> want = run_kernel(*ref, f32, rounded, ctx);
  const float rtol = low_precision_tolerance(dtype);
  const auto check = [&](Kernel& k, const std::string& name) {
    const std::vector<Tensor> got = run_kernel(k, low, low_in, ctx);
    for (std::size_t i = 0; i < f32.outputs.size(); ++i) {
      float scale = 1e-6f;
      if (want[i].dtype() == DType::f32) {  // not an integer output (an argmax byte): compared exactly
        for (std::int64_t e = 0; e < want[i].numel(); ++e) scale = std::max(scale, std::fabs(want[i].data<float>()[e]));
      }
      expect_close(want[i], to_f32(got[i]), rtol * scale, 0.0f,
                   name + " at " + std::string(dtype_name(dtype)) + " output " + std::to_string(i));
    }
  };
  int native = 0;
  for (const std::string& name : reg.implementations(f32.op, DeviceType::cpu, dtype)) {
    std::string reason;
    auto k = reg.create(name, low, DeviceType::cpu, &reason);
    if (!k) continue;  // oneDNN has no fast implementation of it on this CPU
    check(*k, name);
    ++native;
  }
  SelectedKernel chosen = reg.select(low, DeviceType::cpu);
  check(*chosen.kernel, chosen.impl_name);
  return native;
}

}  // namespace nnfit::testing
