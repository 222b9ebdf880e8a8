// Private: the kernel families that register_cpu_kernels() and register_ref_kernels()
// are made of. Which op each family serves, with which factory and dtypes, is the op
// table's (src/graph/ops.yaml, Note [Op table]); register_table_kernels() is generated from
// it, and each family's kernels live in its own folder.
#pragma once
#include "nnfit/backend/kernel_registry.h"

namespace nnfit {

// In registration order within an op's list: fastest first, the reference last.
enum class KernelFamily {
  onednn,  // src/backend/cpu/onednn_*.cpp: matmul, convolution, pooling, eltwise, softmax
  omp,     // src/backend/cpu/omp_*.cpp: OpenMP loops over the reference's element functions
  ref,     // src/backend/ref/: naive loops, the test oracle
};
const char* kernel_family_name(KernelFamily family);

// Registers every kernel of `family` the op table lists, as "<family>:<op>" (generated
// from src/graph/ops.yaml into op_table_kernels.cpp).
void register_table_kernels(KernelRegistry& registry, KernelFamily family);

// The kernels of `device` when a plugin provides them: the CUDA plugin's, registered into a
// registry of their own when this first asks (backend_registry.cpp loads the plugin; Note
// [Plugin kernels]). Null for the CPU, or when the plugin cannot load (why in *why_not).
const KernelRegistry* plugin_kernel_registry(DeviceType device, std::string* why_not);

}  // namespace nnfit
