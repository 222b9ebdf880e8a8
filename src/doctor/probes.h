// The individual probes behind doctor::probe(); each fills its part of Facts.
#pragma once
#include <string>
#include <utility>

#include "nnfit/doctor/probe.h"
#include "nnfit/doctor/version.h"
#include "root_fs.h"

namespace nnfit::doctor {

// NVML (dlopen) when allowed, else /proc/driver/nvidia; WSL layout; PCI devices;
// user-space driver library versions.
void probe_driver(const RootFs& fs, const ProbeOptions& options, Facts& facts);
// Toolkits, cuDNN/cuBLAS/NCCL headers and wheels, what the loader resolves.
void probe_cuda(const RootFs& fs, const ProbeOptions& options, Facts& facts);
// System Python, --env venvs, conda environments, and the frameworks in them.
void probe_python(const RootFs& fs, const ProbeOptions& options, Facts& facts);

// mpirun on PATH (run with --version when libraries may be loaded), mpi.h, libmpi sonames.
// Uses facts.loader_dirs, so it runs after probe_cuda.
void probe_mpi(const RootFs& fs, const ProbeOptions& options, Facts& facts);
// libdnnl.so.N the loader resolves and dnnl_version.h. Runs after probe_cuda.
void probe_onednn(const RootFs& fs, Facts& facts);
// "mpirun (Open MPI) 4.1.4", MPICH's "HYDRA build details: ... Version: 4.0.2", Intel's
// "Intel(R) MPI Library ..., Version 2021.10 ...": the implementation and version; false
// for anything else.
bool parse_mpirun_version(const std::string& text, std::string& implementation, std::string& version);

// "nvidia_cuda_runtime-13.0.96.dist-info" -> {"nvidia-cuda-runtime", "13.0.96"}: the
// normalized project name (lower case, '_' -> '-') and the version.
std::pair<std::string, std::string> dist_info_name(const std::string& dir);

}  // namespace nnfit::doctor
