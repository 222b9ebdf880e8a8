// Private: the kernel families that register_cpu_kernels() and register_ref_kernels()
// are made of. Each family lives in its own folder and registers itself here explicitly.
#pragma once
#include "nnfit/backend/kernel_registry.h"

namespace nnfit {

// src/backend/cpu/onednn_*.cpp: matmul, convolution, pooling, eltwise, softmax.
void register_onednn_kernels(KernelRegistry& registry);
// src/backend/cpu/omp_*.cpp: losses, batch norm, dropout, optimizer updates, bias, misc.
void register_omp_kernels(KernelRegistry& registry);
// The kernels of `device` when a plugin provides them: the CUDA plugin's, registered into a
// registry of their own when this first asks (backend_registry.cpp loads the plugin; Note
// [Plugin kernels]). Null for the CPU, or when the plugin cannot load (why in *why_not).
const KernelRegistry* plugin_kernel_registry(DeviceType device, std::string* why_not);
// src/backend/ref/ref_nn_*.cpp: reference kernels of the oneDNN family's ops.
void register_ref_nn_kernels(KernelRegistry& registry);
// src/backend/ref/ref_train_*.cpp: reference kernels of the OpenMP family's ops.
void register_ref_train_kernels(KernelRegistry& registry);

}  // namespace nnfit
