// The cuda-host harness (cuda_host_harness.h).
#include "cuda_host/cuda_host_harness.h"

#include "backend/cuda/kernels/all_kernels.h"
#include "nnfit/backend/backend.h"

namespace nnfit::testing {

const KernelRegistry& cuda_host_registry() {
  static const KernelRegistry kRegistry = [] {
    KernelRegistry r;
    cuda::register_own_kernels<cuda::HostLaunch>(r);
    return r;
  }();
  return kRegistry;
}

namespace {

CudaMode g_mode = CudaMode::host;

// run_kernel on cuda:0: inputs, outputs (poisoned like run_kernel's) and the workspace in
// device memory, copied back after a synchronize.
std::vector<Tensor> run_on_device(Kernel& kernel, const KernelDesc& desc, const std::vector<Tensor>& inputs,
                                  const StepContext& ctx) {
  const std::unique_ptr<Backend> backend = make_backend(Device{DeviceType::cuda, 0});
  Allocator& alloc = backend->allocator();
  std::vector<void*> buffers;
  const auto upload = [&](const Tensor& t) {
    void* p = alloc.allocate(std::max<std::size_t>(t.nbytes(), 1));
    backend->copy(p, t.raw(), t.nbytes(), CopyKind::host_to_device);
    buffers.push_back(p);
    return p;
  };
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : inputs) in_ptrs.push_back(upload(t));
  std::vector<Tensor> outs;
  std::vector<void*> out_ptrs;
  for (const TensorDesc& d : desc.outputs) {
    Tensor poison = Tensor::zeros(d.shape, d.dtype);
    std::memset(poison.raw(), 0xff, poison.nbytes());
    out_ptrs.push_back(upload(poison));
    outs.push_back(std::move(poison));
  }
  void* ws = kernel.workspace_bytes() ? alloc.allocate(kernel.workspace_bytes()) : nullptr;
  kernel.run(KernelArgs{in_ptrs.data(), out_ptrs.data(), ws, &ctx});
  backend->synchronize();
  std::vector<Tensor> result;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    backend->copy(outs[i].raw(), out_ptrs[i], outs[i].nbytes(), CopyKind::device_to_host);
    result.push_back(outs[i]);
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Tensor back = inputs[i].clone();
    backend->copy(back.raw(), in_ptrs[i], back.nbytes(), CopyKind::device_to_host);
    result.push_back(back);
  }
  if (ws) alloc.deallocate(ws);
  for (void* p : buffers) alloc.deallocate(p);
  return result;
}

}  // namespace

void set_cuda_mode(CudaMode mode) { g_mode = mode; }

std::string cuda_device_unavailable_reason() {
  for (const BackendInfo& b : backend_infos()) {
    if (b.name != "cuda") continue;
    if (!b.compiled) return "this nnfit was built without CUDA: " + b.detail;
    if (!b.available) return "no usable CUDA device: " + b.detail;
    return "";
  }
  return "no cuda entry in backend_infos()";
}

std::vector<Tensor> run_cuda(const KernelDesc& desc, const std::vector<Tensor>& inputs, const StepContext& ctx) {
  const KernelRegistry& registry = g_mode == CudaMode::host ? cuda_host_registry() : kernel_registry();
  std::string why;
  auto k = registry.create("cuda:" + desc.op, desc, DeviceType::cuda, &why);
  EXPECT_NE(k, nullptr) << "cuda:" << desc.op << " declined: " << why;
  if (!k) return {};
  return g_mode == CudaMode::host ? run_kernel(*k, desc, inputs, ctx) : run_on_device(*k, desc, inputs, ctx);
}

namespace {

// Runs `kernel` (at `dtype`) and ref:<op> (float32 on the rounded inputs), compares.
void compare_with_reference(const KernelDesc& f32, const std::vector<Tensor>& inputs, DType dtype, float atol, float rtol,
                            const StepContext& ctx,
                            const std::function<std::vector<Tensor>(const KernelDesc&, const std::vector<Tensor>&)>& run,
                            bool f32_outputs = false) {
  SCOPED_TRACE(f32.op + " at " + std::string(dtype_name(dtype)) + " " + f32.attrs.to_string());
  std::string why;
  auto ref = kernel_registry().create("ref:" + f32.op, f32, DeviceType::cpu, &why);
  ASSERT_NE(ref, nullptr) << "no reference kernel: " << why;
  const KernelDesc low = at_dtype(f32, dtype, f32_outputs);
  std::vector<Tensor> low_in, rounded;
  for (const Tensor& t : inputs) {
    low_in.push_back(to_dtype(t, dtype));
    rounded.push_back(to_f32(low_in.back()));
  }
  std::vector<Tensor> want = run_kernel(*ref, f32, rounded, ctx);
  std::vector<Tensor> got = run(low, low_in);
  if (got.empty()) return;
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    // Where the reference itself gives NaN (masked_mean's 0/0 over an all-masked row, as
    // Keras), a NaN is the right answer: equal both sides, so the rest is compared.
    if (want[i].dtype() == DType::f32 && is_floating(got[i].dtype())) {
      got[i] = to_f32(got[i]);
      for (std::int64_t e = 0; e < want[i].numel(); ++e) {
        float& w = want[i].data<float>()[e];
        float& g = got[i].data<float>()[e];
        if (std::isnan(w) && std::isnan(g)) w = g = 0.0f;
      }
    }
    const std::string what = i < f32.outputs.size() ? "output " + std::to_string(i)
                                                    : "input " + std::to_string(i - f32.outputs.size()) + " after the run";
    if (dtype == DType::f32 || !is_floating(got[i].dtype())) {
      expect_close(want[i], got[i], atol, rtol, what);
      continue;
    }
    float scale = 1e-6f;
    for (std::int64_t e = 0; e < want[i].numel(); ++e) scale = std::max(scale, std::fabs(want[i].data<float>()[e]));
    expect_close(want[i], got[i], low_precision_tolerance(dtype) * scale, 0.0f, what);
  }
}

}  // namespace

void expect_device_kernel_matches_reference(const std::string& impl, const KernelDesc& f32, const std::vector<Tensor>& inputs,
                                            DType dtype, float atol, float rtol, bool f32_outputs) {
  compare_with_reference(f32, inputs, dtype, atol, rtol, StepContext{},
                         [&](const KernelDesc& low, const std::vector<Tensor>& in) -> std::vector<Tensor> {
                           std::string why;
                           auto k = kernel_registry().create(impl, low, DeviceType::cuda, &why);
                           EXPECT_NE(k, nullptr) << impl << " declined: " << why;
                           if (!k) return {};
                           return run_on_device(*k, low, in, StepContext{});
                         },
                         f32_outputs);
}

void expect_cuda_host_folded_cast_matches_reference(const KernelDesc& f32, const std::vector<Tensor>& inputs, DType dtype) {
  compare_with_reference(
      f32, inputs, dtype, 0.0f, 0.0f, StepContext{},
      [&](const KernelDesc& low, const std::vector<Tensor>& in) { return run_cuda(low, in, StepContext{}); }, true);
}

void expect_cuda_host_matches_reference(const KernelDesc& f32, const std::vector<Tensor>& inputs, DType dtype,
                                        float atol, float rtol, StepContext ctx) {
  compare_with_reference(f32, inputs, dtype, atol, rtol, ctx,
                         [&](const KernelDesc& low, const std::vector<Tensor>& in) { return run_cuda(low, in, ctx); });
}

}  // namespace nnfit::testing
