// KernelRegistry: ordered implementation lists with reasons for every rejection.
#include "nnfit/backend/kernel_registry.h"

#include <cstdio>

#include "backend/kernel_families.h"
#include "backend/widened_kernel.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"

namespace nnfit {

DType kernel_key_dtype(const KernelDesc& desc) {
  if (!desc.inputs.empty()) return desc.inputs[0].dtype;
  if (!desc.outputs.empty()) return desc.outputs[0].dtype;
  return DType::f32;
}

void KernelRegistry::add(const std::string& op, DeviceType device, DType dtype, KernelImpl impl) {
  impls_[{op, device, dtype}].push_back(std::move(impl));
}

SelectedKernel KernelRegistry::select(const KernelDesc& desc, DeviceType device) const {
  SelectedKernel out;
  DType dtype = kernel_key_dtype(desc);
  auto it = impls_.find({desc.op, device, dtype});
  // Note [Compute dtype]: a float16 / bfloat16 op that no kernel takes natively runs as its
  // float32 kernel through the widening adapter.
  const auto widen = [&]() {
    SelectedKernel inner = select(widened(desc), device);
    out.kernel = make_widened_kernel(desc, std::move(inner.kernel));
    out.impl_name = "widen:" + inner.impl_name;
    if (env_flag_enabled("NNFIT_VERBOSE")) {
      std::fprintf(stderr, "nnfit: %s %s -> %s\n", desc.node_name.c_str(), desc.op.c_str(), out.impl_name.c_str());
    }
    out.rejections.insert(out.rejections.end(), inner.rejections.begin(), inner.rejections.end());
    return std::move(out);
  };
  if (it == impls_.end() && device == DeviceType::cpu && widenable(desc)) return widen();
  // Kernels registered under a float32 or integer key are written for float32 data: one
  // that reads the ids first (gather_grad) must not meet a bfloat16 gradient, which it
  // would read as floats and write past a bfloat16 output. Low-precision data goes to
  // the kernels registered for its type, else widened.
  if (device == DeviceType::cpu && widenable(desc) && !is_low_precision(dtype)) return widen();
  if (it == impls_.end() && device != DeviceType::cpu) {
    NNFIT_CHECK(false, Unsupported, "no kernel for op '", desc.op, "' on ",
                device == DeviceType::cuda ? "cuda" : "cpu", " for ", dtype_name(dtype));
  }
  NNFIT_CHECK(it != impls_.end(), Unsupported, "no kernel for op '", desc.op, "' with dtype ",
              dtype_name(dtype), (desc.node_name.empty() ? "" : " (node "), desc.node_name,
              (desc.node_name.empty() ? "" : ")"));
  bool verbose = env_flag_enabled("NNFIT_VERBOSE");
  for (const KernelImpl& impl : it->second) {
    std::string why;
    std::unique_ptr<Kernel> k = impl.factory(desc, &why);
    if (k) {
      out.kernel = std::move(k);
      out.impl_name = impl.name;
      if (verbose) {
        std::fprintf(stderr, "nnfit: %s %s -> %s\n", desc.node_name.c_str(), desc.op.c_str(),
                     impl.name.c_str());
      }
      return out;
    }
    out.rejections.push_back(impl.name + ": " + (why.empty() ? "declined" : why));
    if (verbose) {
      std::fprintf(stderr, "nnfit: %s %s: %s declined: %s\n", desc.node_name.c_str(),
                   desc.op.c_str(), impl.name.c_str(), why.c_str());
    }
  }
  if (device == DeviceType::cpu && widenable(desc)) return widen();
  std::string reasons;
  for (const std::string& r : out.rejections) reasons += "\n  " + r;
  throw Unsupported("no implementation accepts op '" + desc.op + "' at node '" + desc.node_name +
                    "' " + desc.attrs.to_string() + ":" + reasons);
}

std::unique_ptr<Kernel> KernelRegistry::create(const std::string& impl_name, const KernelDesc& desc,
                                               DeviceType device, std::string* why_not) const {
  if (impl_name.rfind("widen:", 0) == 0) {  // "widen:ref:matmul": that float32 kernel, widened
    if (!widenable(desc)) {
      if (why_not) *why_not = desc.op + " has no float16 / bfloat16 tensor to widen, or updates in place";
      return nullptr;
    }
    std::unique_ptr<Kernel> inner = create(impl_name.substr(6), widened(desc), device, why_not);
    return inner ? make_widened_kernel(desc, std::move(inner)) : nullptr;
  }
  auto it = impls_.find({desc.op, device, kernel_key_dtype(desc)});
  if (it == impls_.end()) {
    if (why_not) *why_not = "no implementations registered for " + desc.op;
    return nullptr;
  }
  for (const KernelImpl& impl : it->second) {
    if (impl.name == impl_name) return impl.factory(desc, why_not);
  }
  if (why_not) *why_not = impl_name + " is not registered for " + desc.op;
  return nullptr;
}

std::vector<std::string> KernelRegistry::implementations(const std::string& op, DeviceType device,
                                                         DType dtype) const {
  std::vector<std::string> names;
  auto it = impls_.find({op, device, dtype});
  if (it != impls_.end()) {
    for (const KernelImpl& impl : it->second) names.push_back(impl.name);
  }
  return names;
}

std::vector<std::string> KernelRegistry::ops(DeviceType device) const {
  std::vector<std::string> names;
  for (const auto& [key, list] : impls_) {
    if (std::get<1>(key) == device &&
        (names.empty() || names.back() != std::get<0>(key))) {
      names.push_back(std::get<0>(key));
    }
  }
  return names;
}

std::vector<RegisteredKernel> KernelRegistry::entries() const {
  std::vector<RegisteredKernel> out;
  for (const auto& [key, list] : impls_) {
    for (const KernelImpl& impl : list) {
      out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), impl.name});
    }
  }
  return out;
}

const KernelRegistry& kernel_registry() {
  // Built once on first use and never modified afterwards (Note [Explicit registration]).
  static const KernelRegistry kRegistry = [] {
    KernelRegistry r;
    // Fast implementations first; reference kernels last so they catch everything.
    register_cpu_kernels(r);
    register_ref_kernels(r);
    register_cuda_kernels_if_built(r);
    return r;
  }();
  return kRegistry;
}

}  // namespace nnfit
