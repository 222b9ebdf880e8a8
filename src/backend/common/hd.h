// NNFIT_HD: marks a function that compiles for both the host and, under nvcc, the device
// (Note [Kernel/launcher split], backend/cuda/kernels/launch.h). Under g++ it is `inline`.
#pragma once

#if defined(__CUDACC__)
#define NNFIT_HD __host__ __device__ __forceinline__
#else
#define NNFIT_HD inline
#endif
