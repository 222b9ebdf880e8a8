// The cuda-host harness (ctest label `cuda-host`): nnfit's own CUDA kernels run on the host
// through HostLaunch (Note [Kernel/launcher split]), registered exactly as own_kernels.cu
// registers them for the device but in a registry of their own, and are compared with the
// reference kernels ref:<op> by the conformance helpers (conformance/harness.h,
// low_precision.h): at float32 within a float32 tolerance, at bfloat16 and float16 against
// the float32 reference on the same rounded inputs within the format's tolerance.
// One ctest case per op: each family's file lists its cases (OpCase) and cases_test.cpp
// instantiates one test per op, and checks that every registered CUDA op has a case.
// The same cases run on cuda:0 (device mode: the kernels the real registry holds for
// DeviceType::cuda, on device memory), test suite CudaDevice; without a device each of
// those skips, naming the reason.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "conformance/low_precision.h"

namespace nnfit::testing {

// The own CUDA kernels with HostLaunch, under DeviceType::cuda (built once).
const KernelRegistry& cuda_host_registry();

// Runs cuda:<desc.op> at `dtype` (desc is the float32 form) on the host and ref:<op> at
// float32; compares every output and every input afterwards (in-place updates). At
// float32 within atol + rtol·|want|; at bfloat16 / float16 within the format's tolerance
// times the output's largest magnitude (low_precision.h).
void expect_cuda_host_matches_reference(const KernelDesc& f32, const std::vector<Tensor>& inputs, DType dtype,
                                        float atol = 1e-5f, float rtol = 1e-5f, StepContext ctx = {});

// Where the kernels under test run: HostLaunch on the host (cuda-host), or the registry's
// CUDA kernels on cuda:0. Set by the test fixture before a case runs.
enum class CudaMode { host, device };
void set_cuda_mode(CudaMode mode);
// Empty when cuda:0 can run kernels; else why not (this build has no CUDA; no device).
std::string cuda_device_unavailable_reason();

// cuda:<desc.op> run where the mode says on `inputs` (at their dtypes): outputs, then the
// inputs after the run. Fails the test (and returns nothing) if the kernel declines.
std::vector<Tensor> run_cuda(const KernelDesc& desc, const std::vector<Tensor>& inputs, const StepContext& ctx = {});

// On cuda:0 only (the caller skips without a device): the kernel `impl` of the real
// registry at `dtype` against ref:<op> at float32, as expect_cuda_host_matches_reference.
// For the vendor kernels (cuBLASLt), which have no host-run form.
void expect_device_kernel_matches_reference(const std::string& impl, const KernelDesc& f32, const std::vector<Tensor>& inputs,
                                            DType dtype, float atol, float rtol, bool f32_outputs = false);

// A cast to float32 folded into the op (fuse_output_casts): the inputs at `dtype` (bfloat16
// or float16), the outputs float32, against the float32 reference on the rounded inputs
// within the format's tolerance.
void expect_cuda_host_folded_cast_matches_reference(const KernelDesc& f32, const std::vector<Tensor>& inputs, DType dtype);

// A float32 desc of `op` (the cases' form; the harness makes the bfloat16 and float16 ones).
inline KernelDesc desc(const std::string& op, Attrs attrs, std::vector<TensorDesc> ins, std::vector<TensorDesc> outs) {
  return KernelDesc{op, std::move(attrs), std::move(ins), std::move(outs), "test/" + op};
}
inline TensorDesc f32(const Shape& s) { return {s, DType::f32}; }

// The three floating dtypes, in the order the cases run them.
inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> kAll = {DType::f32, DType::bf16, DType::f16};
  return kAll;
}

struct OpCase {
  std::string op;
  std::function<void()> check;
};

std::vector<OpCase> elementwise_cases();
std::vector<OpCase> training_cases();
std::vector<OpCase> optimizer_cases();
std::vector<OpCase> layout_cases();
std::vector<OpCase> pool_cases();
std::vector<OpCase> misc_cases();
std::vector<OpCase> norm_regularizer_cases();
std::vector<OpCase> attention_cases();
std::vector<OpCase> scatter_noise_cases();
std::vector<OpCase> augment_cases();
std::vector<OpCase> resize_cases();
std::vector<OpCase> rnn_cases();
std::vector<OpCase> math_cases();

}  // namespace nnfit::testing
