// KernelRegistry: ordered implementation lists with reasons for every rejection.
#include "nnfit/backend/kernel_registry.h"

#include <algorithm>
#include <cstdio>

#include "backend/kernel_families.h"
#include "backend/widened_kernel.h"
#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"

namespace nnfit {

std::string KernelDesc::where() const {
  return node_name.empty() ? op : op + " at node '" + node_name + "'";
}

DType kernel_key_dtype(const KernelDesc& desc) {
  if (!desc.inputs.empty()) return desc.inputs[0].dtype;
  if (!desc.outputs.empty()) return desc.outputs[0].dtype;
  return DType::f32;
}

void KernelRegistry::add(const std::string& op, DeviceType device, DType dtype, KernelImpl impl) {
  impls_[{op, device, dtype}].push_back(std::move(impl));
}

const KernelRegistry* KernelRegistry::registry_for(DeviceType device, std::string* why_not) const {
  if (device == DeviceType::cpu || !defers_to_plugins_) return this;
  return plugin_kernel_registry(device, why_not);
}

SelectedKernel KernelRegistry::select(const KernelDesc& desc, DeviceType device) const {
  if (device != DeviceType::cpu && defers_to_plugins_) {
    std::string why;
    const KernelRegistry* plugin = registry_for(device, &why);
    NNFIT_CHECK(plugin != nullptr, Unsupported, "no kernel for op '", desc.op, "' on cuda: ", why);
    return plugin->select(desc, device);
  }
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
  if (device != DeviceType::cpu && defers_to_plugins_) {
    const KernelRegistry* plugin = registry_for(device, why_not);
    return plugin ? plugin->create(impl_name, desc, device, why_not) : nullptr;
  }
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
  if (device != DeviceType::cpu && defers_to_plugins_) {
    const KernelRegistry* plugin = registry_for(device, nullptr);
    return plugin ? plugin->implementations(op, device, dtype) : std::vector<std::string>{};
  }
  std::vector<std::string> names;
  auto it = impls_.find({op, device, dtype});
  if (it != impls_.end()) {
    for (const KernelImpl& impl : it->second) names.push_back(impl.name);
  }
  return names;
}

std::vector<std::string> KernelRegistry::ops(DeviceType device) const {
  if (device != DeviceType::cpu && defers_to_plugins_) {
    const KernelRegistry* plugin = registry_for(device, nullptr);
    return plugin ? plugin->ops(device) : std::vector<std::string>{};
  }
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
  if (!defers_to_plugins_) return out;
  if (const KernelRegistry* cuda = registry_for(DeviceType::cuda, nullptr)) {
    const std::vector<RegisteredKernel> more = cuda->entries();
    out.insert(out.end(), more.begin(), more.end());
    // Key order, as one registry holding both would give; a key's list keeps its order.
    std::stable_sort(out.begin(), out.end(), [](const RegisteredKernel& a, const RegisteredKernel& b) {
      return std::tie(a.op, a.device, a.dtype) < std::tie(b.op, b.device, b.dtype);
    });
  }
  return out;
}

// Note [Plugin kernels]: the CUDA kernels live in the CUDA plugin (libnnfit_cuda.so), which
// a CPU-only run must never load (its libraries cost 130-140 MiB of resident memory and
// need a CUDA install). So the process-wide registry holds the CPU and reference kernels, and for
// DeviceType::cuda defers to a second registry that backend_registry.cpp fills from the
// plugin the first time anything asks for a CUDA kernel (a CUDA model's planner, `nnfit
// ops`); both are built once, under a function-local static, and immutable afterwards, so
// the registry stays safe to share. A kernel asking for another (cuBLASLt's matmul for its
// activation) goes through kernel_registry() as any caller does: the plugin resolves that
// symbol to the executable's (Note [Plugin symbols]), so there is one registry.
const KernelRegistry& kernel_registry() {
  // Built once on first use and never modified afterwards (Note [Explicit registration]).
  static const KernelRegistry kRegistry = [] {
    KernelRegistry r;
    // Fast implementations first; reference kernels last so they catch everything.
    register_cpu_kernels(r);
    register_ref_kernels(r);
    r.defers_to_plugins_ = true;
    return r;
  }();
  return kRegistry;
}

}  // namespace nnfit
