// The two public registration entry points, each a list of families; the rows come from the
// op table (register_table_kernels, generated from src/graph/ops.yaml).
#include "backend/kernel_families.h"

namespace nnfit {

const char* kernel_family_name(KernelFamily family) {
  switch (family) {
    case KernelFamily::onednn: return "onednn";
    case KernelFamily::omp: return "omp";
    case KernelFamily::ref: return "ref";
  }
  return "?";
}

void register_cpu_kernels(KernelRegistry& registry) {
  register_table_kernels(registry, {KernelFamily::onednn, KernelFamily::omp});
}

void register_ref_kernels(KernelRegistry& registry) { register_table_kernels(registry, {KernelFamily::ref}); }

}  // namespace nnfit
