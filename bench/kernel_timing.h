// Timing one kernel run and the median of a set of timings, for the kernel benches that run
// kernels alternately in one process (omp_kernels_bench.cpp, pool_bench.cpp,
// conv_bench.cpp), and a kernel bound to copies of its inputs.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/backend/kernel.h"
#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/tensor.h"

namespace nnfit::bench {

// Microseconds of one kernel.run(args).
inline double time_us(Kernel& kernel, const KernelArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  kernel.run(args);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Kernel `impl` of `desc` over copies of `inputs`, with zeroed outputs and workspace.
struct BoundKernel {
  std::unique_ptr<Kernel> kernel;
  std::vector<Tensor> inputs, outputs;
  Tensor workspace;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;

  double time_us(const StepContext& ctx = {}) {
    return bench::time_us(*kernel, KernelArgs{in_ptrs.data(), out_ptrs.data(), workspace.raw(), &ctx});
  }
};

// Exits naming the kernel and its reason when it declines.
inline BoundKernel bind(const std::string& impl, const KernelDesc& desc, const std::vector<Tensor>& inputs) {
  BoundKernel b;
  std::string why;
  b.kernel = kernel_registry().create(impl, desc, DeviceType::cpu, &why);
  if (!b.kernel) {
    std::fprintf(stderr, "%s declined: %s\n", impl.c_str(), why.c_str());
    std::exit(1);
  }
  for (const Tensor& t : inputs) b.inputs.push_back(t.clone());
  for (const TensorDesc& d : desc.outputs) b.outputs.push_back(Tensor::zeros(d.shape, d.dtype));
  for (Tensor& t : b.inputs) b.in_ptrs.push_back(t.raw());
  for (Tensor& t : b.outputs) b.out_ptrs.push_back(t.raw());
  b.workspace = Tensor::zeros(Shape{static_cast<std::int64_t>(b.kernel->workspace_bytes()) + 1}, DType::u8);
  return b;
}

}  // namespace nnfit::bench
