// Private to the CUDA backend: every family of own kernels, registered with one launch
// policy (tests/cuda_host: HostLaunch). The device registers the same two halves
// (own_kernels.cu: core_kernels.h; own_kernels_more.cu: more_kernels.h), so the device and
// the host-run check cannot register different lists (CudaHostCoverage checks it).
#pragma once
#include "backend/cuda/kernels/core_kernels.h"
#include "backend/cuda/kernels/more_kernels.h"

namespace nnfit::cuda {

template <class Launch>
void register_own_kernels(KernelRegistry& r) {
  register_core_kernels<Launch>(r);
  register_more_kernels<Launch>(r);
}

}  // namespace nnfit::cuda
