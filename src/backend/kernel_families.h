// Private: the kernel families that register_cpu_kernels() and register_ref_kernels()
// are made of. Which op each family serves, with which factory and dtypes, is the op
// table's (src/graph/ops.yaml, Note [Op table]); register_table_kernels() is generated from
// it, and each family's kernels live in its own folder.
#pragma once
#include <initializer_list>

#include "nnfit/backend/kernel_registry.h"

namespace nnfit {

// Each op lists the families that serve it in the order the registry tries them (Note
// [Op table]): as a rule oneDNN, then OpenMP, then the reference, which is always last. An
// OpenMP kernel that beats oneDNN on some descs only (omp:conv2d_backprop_filter: bfloat16
// over one input channel) is listed first and declines the rest.
enum class KernelFamily {
  onednn,  // src/backend/cpu/onednn_*.cpp: matmul, convolution, pooling, eltwise, softmax
  omp,     // src/backend/cpu/omp_*.cpp: OpenMP loops over the reference's element functions
  ref,     // src/backend/ref/: naive loops, the test oracle
};
const char* kernel_family_name(KernelFamily family);

// Registers every kernel of `families` the op table lists, as "<family>:<op>", op by op in
// the order each op lists them (generated from src/graph/ops.yaml into op_table_kernels.cpp).
void register_table_kernels(KernelRegistry& registry, std::initializer_list<KernelFamily> families);

// The kernels of `device` when a plugin provides them: the CUDA plugin's, registered into a
// registry of their own when this first asks (backend_registry.cpp loads the plugin; Note
// [Plugin kernels]). Null for the CPU, or when the plugin cannot load (why in *why_not).
const KernelRegistry* plugin_kernel_registry(DeviceType device, std::string* why_not);

}  // namespace nnfit
