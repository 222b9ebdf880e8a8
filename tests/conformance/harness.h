// Conformance harness: runs every implementation registered for an op on the CPU device
// and compares its outputs (and any inputs it mutates) with the reference kernel
// `ref:<op>` on the same random inputs. Each op family's *_test.cpp adds cases.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/tensor.h"

namespace nnfit::testing {

inline Tensor random_tensor(const Shape& shape, std::uint64_t seed, float lo = -1.0f,
                            float hi = 1.0f) {
  Tensor t = Tensor::zeros(shape, DType::f32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

inline Tensor random_labels(std::int64_t n, std::int64_t classes, std::uint64_t seed) {
  Tensor t = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < n; ++i) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % classes);
  return t;
}

// TensorFlow's output size along one axis: "same" padding ceil(in / s), "valid" (in - k) / s + 1.
inline std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, const std::string& pad) {
  return pad == "same" ? (in + s - 1) / s : (in - k) / s + 1;
}

// Runs one kernel on copies of `inputs`; returns outputs followed by every input (the
// inputs after the run, so in-place updates are compared too).
inline std::vector<Tensor> run_kernel(Kernel& kernel, const KernelDesc& desc,
                                      const std::vector<Tensor>& inputs, const StepContext& ctx) {
  std::vector<Tensor> ins;
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : inputs) {
    ins.push_back(t.clone());
    in_ptrs.push_back(ins.back().raw());
  }
  std::vector<Tensor> outs;
  std::vector<void*> out_ptrs;
  for (const TensorDesc& d : desc.outputs) {
    outs.push_back(Tensor::zeros(d.shape, d.dtype));
    // Poison outputs so a kernel that skips elements is caught (0xffff is a NaN in both
    // float16 and bfloat16; 0xff is no argmax byte, Note [Pool argmax]).
    if (d.dtype == DType::f32) {
      float* p = outs.back().data<float>();
      for (std::int64_t i = 0; i < outs.back().numel(); ++i) p[i] = std::nanf("");
    } else if (d.dtype == DType::f16 || d.dtype == DType::bf16 || d.dtype == DType::u8) {
      std::memset(outs.back().raw(), 0xff, outs.back().nbytes());
    }
    out_ptrs.push_back(outs.back().raw());
  }
  Tensor ws = Tensor::zeros(Shape{static_cast<std::int64_t>(kernel.workspace_bytes())}, DType::u8);
  KernelArgs args{in_ptrs.data(), out_ptrs.data(), kernel.workspace_bytes() ? ws.raw() : nullptr, &ctx};
  kernel.run(args);
  outs.insert(outs.end(), ins.begin(), ins.end());
  return outs;
}

inline void expect_close(const Tensor& want, const Tensor& got, float atol, float rtol,
                         const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  if (want.dtype() != DType::f32) {
    EXPECT_EQ(0, std::memcmp(want.raw(), got.raw(), want.nbytes())) << what << ": bytes differ";
    return;
  }
  const float* a = want.data<float>();
  const float* b = got.data<float>();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    float tol = atol + rtol * std::fabs(a[i]);
    if (!(a[i] == b[i] || std::fabs(a[i] - b[i]) <= tol)) {  // equal infinities match too
      if (bad < 5) ADD_FAILURE() << what << ": element " << i << " want " << a[i] << " got " << b[i];
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.numel() << " elements differ";
}

// Checks every non-reference implementation of desc.op against ref:<op>. Fails if the
// op has no reference kernel or no other implementation accepts the desc while
// `expect_fast` is true.
inline void expect_matches_reference(const KernelDesc& desc, const std::vector<Tensor>& inputs,
                                     float atol = 1e-4f, float rtol = 1e-4f,
                                     bool expect_fast = true, StepContext ctx = {}) {
  const KernelRegistry& reg = kernel_registry();
  std::string why;
  auto ref = reg.create("ref:" + desc.op, desc, DeviceType::cpu, &why);
  ASSERT_NE(ref, nullptr) << "no reference kernel for " << desc.op << ": " << why;
  std::vector<Tensor> want = run_kernel(*ref, desc, inputs, ctx);
  int checked = 0;
  std::vector<std::string> fast;
  for (const std::string& name : reg.implementations(desc.op, DeviceType::cpu, kernel_key_dtype(desc))) {
    if (name.rfind("ref:", 0) != 0) fast.push_back(name);
  }
  for (const std::string& name : fast) {
    std::string reason;
    auto k = reg.create(name, desc, DeviceType::cpu, &reason);
    if (!k) {
      // A kernel listed before the op's general one serves some descs only
      // (omp:conv2d_backprop_filter: bfloat16 over one input channel); the last fast
      // kernel must take every desc a test expects fast.
      if (expect_fast && name == fast.back()) {
        ADD_FAILURE() << name << " declined " << desc.attrs.to_string() << ": " << reason;
      }
      continue;
    }
    std::vector<Tensor> got = run_kernel(*k, desc, inputs, ctx);
    for (std::size_t i = 0; i < want.size(); ++i) {
      expect_close(want[i], got[i], atol, rtol,
                   name + (i < desc.outputs.size() ? " output " + std::to_string(i)
                                                   : " input " + std::to_string(i - desc.outputs.size())));
    }
    ++checked;
  }
  if (expect_fast) EXPECT_GT(checked, 0) << "no fast implementation of " << desc.op << " was checked";
}

// A float32 desc of `op` with these input and output shapes (node "test/<op>").
inline KernelDesc f32_desc(const std::string& op, Attrs attrs, std::vector<Shape> ins, std::vector<Shape> outs) {
  KernelDesc d;
  d.op = op;
  d.attrs = std::move(attrs);
  for (Shape& s : ins) d.inputs.push_back({std::move(s), DType::f32});
  for (Shape& s : outs) d.outputs.push_back({std::move(s), DType::f32});
  d.node_name = "test/" + op;
  return d;
}

// Runs the reference kernel of desc on inputs and returns its first output.
inline Tensor run_reference(const KernelDesc& desc, const std::vector<Tensor>& inputs) {
  std::string why;
  auto k = kernel_registry().create("ref:" + desc.op, desc, DeviceType::cpu, &why);
  EXPECT_NE(k, nullptr) << why;
  if (!k) return {};
  return run_kernel(*k, desc, inputs, StepContext{})[0];
}

// A tensor of `shape` holding `values` in order (their count must be its size).
inline Tensor tensor_of(const Shape& shape, const std::vector<float>& values) {
  Tensor t = Tensor::zeros(shape);
  EXPECT_EQ(static_cast<std::int64_t>(values.size()), t.numel());
  for (std::size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

// Expects t to hold `want` within 1e-5, element by element.
inline void expect_values(const Tensor& t, const std::vector<float>& want) {
  ASSERT_EQ(t.numel(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], 1e-5f) << "element " << i;
}

}  // namespace nnfit::testing
