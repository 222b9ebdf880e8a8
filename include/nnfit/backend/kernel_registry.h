// KernelRegistry: for each (op, device type, dtype) an ordered list of implementations,
// fastest first, ending in the reference kernel. select() returns the first that accepts
// the desc; every rejection's reason is kept and printed with NNFIT_VERBOSE=1 (oneDNN's
// implementation-list pattern).
//
// Registration is explicit: register_cpu_kernels() / register_ref_kernels() are called by
// kernel_registry() when it first builds the registry; nothing registers from a static
// constructor. After construction the registry is immutable and safe to share. The CUDA
// kernels come from the CUDA plugin, in a registry of their own that the process-wide one
// defers to for DeviceType::cuda, built when first asked for (Note [Plugin kernels]).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "nnfit/backend/kernel.h"
#include "nnfit/core/device.h"

namespace nnfit {

struct KernelImpl {
  std::string name;  // "onednn:matmul", "ref:matmul"
  KernelFactory factory;
};

// One registration: implementation `impl` serves `op` on `device` for key dtype `dtype`.
struct RegisteredKernel {
  std::string op;
  DeviceType device;
  DType dtype;
  std::string impl;
};

struct SelectedKernel {
  std::unique_ptr<Kernel> kernel;
  std::string impl_name;
  std::vector<std::string> rejections;  // "onednn:conv2d: dilation unsupported"
};

class KernelRegistry {
 public:
  // The dtype key is the dtype of the op's first input (of its first output if it has none).
  void add(const std::string& op, DeviceType device, DType dtype, KernelImpl impl);

  // Throws Unsupported listing every rejection when no implementation accepts.
  SelectedKernel select(const KernelDesc& desc, DeviceType device) const;
  // Only the implementation named `impl_name` (for conformance tests); null if it declines.
  std::unique_ptr<Kernel> create(const std::string& impl_name, const KernelDesc& desc,
                                 DeviceType device, std::string* why_not) const;
  // Implementation names for (op, device, dtype), in order.
  std::vector<std::string> implementations(const std::string& op, DeviceType device,
                                           DType dtype) const;
  std::vector<std::string> ops(DeviceType device) const;
  // Every registration, keys in (op, device, dtype) order and each key's list in order
  // (what `nnfit ops` prints). On the process-wide registry this loads the CUDA plugin
  // where the build has one, and lists its kernels when it loads.
  std::vector<RegisteredKernel> entries() const;

 private:
  friend const KernelRegistry& kernel_registry();
  // The registry holding `device`'s kernels: this one, or the plugin's (null when it cannot
  // load, why in *why_not) where this is the process-wide registry.
  const KernelRegistry* registry_for(DeviceType device, std::string* why_not) const;

  std::map<std::tuple<std::string, DeviceType, DType>, std::vector<KernelImpl>> impls_;
  bool defers_to_plugins_ = false;  // kernel_registry()'s: non-CPU devices are plugins' (Note [Plugin kernels])
};

// The process-wide registry with every built-in kernel (built once, then read-only).
const KernelRegistry& kernel_registry();

// Registration functions, one per kernel family.
void register_ref_kernels(KernelRegistry& registry);
void register_cpu_kernels(KernelRegistry& registry);

// DType used as the registry key of a desc.
DType kernel_key_dtype(const KernelDesc& desc);

}  // namespace nnfit
