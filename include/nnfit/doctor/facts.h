// What the doctor's probes found on a machine: plain data, no behaviour. Probes fill a
// Facts; rules read it and never touch the filesystem, so the rules are tested from
// hand-built fake roots and the report of a real machine comes from the same code.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nnfit::doctor {

// Something a probe could not read or parse (a corrupt version.json, an unreadable
// directory). Reported as a warning finding, never thrown.
struct ProbeProblem {
  std::string path;
  std::string what;
};

struct GpuFacts {
  int index = 0;
  std::string name;
  std::string compute_capability;  // "8.6"; empty when unknown
  std::int64_t memory_bytes = 0;   // 0 when unknown
  std::string source;              // "nvml" or the /proc information file
};

struct DriverFacts {
  bool loaded = false;                 // kernel module version known (or WSL driver found)
  std::string version;                 // "535.104.05" (kernel module, or NVML's)
  std::string source;                  // "nvml", "/proc/driver/nvidia/version", "wsl"
  std::string cuda_version;            // newest CUDA the driver supports, "12.2"; may be empty
  std::string userspace_version;       // suffix of libnvidia-ml.so.<v> / libcuda.so.<v>
  std::string userspace_library;       // the file the suffix came from
  bool wsl = false;                    // /usr/lib/wsl/lib/libcuda.so* present
  std::string nvml_error;              // why NVML was not used, when it was not
  bool nvidia_pci_device = false;      // an NVIDIA display/3D controller on the PCI bus
};

struct ToolkitFacts {
  std::string path;             // as found ("/usr/local/cuda-12.2")
  std::string version;          // "12.2.140" or "12.2"; empty when unknown
  std::string version_source;   // "version.json", "version.txt", "dist-info", "cuda.h"
  bool wheel_assembled = false; // dist-info folders beside bin/
  bool has_nvcc = false;
};

// A CUDA library (cuDNN, cuBLAS, NCCL) found by its header or its wheel metadata.
struct LibraryFacts {
  std::string name;     // "cudnn", "cublas", "nccl"
  std::string version;  // "9.19.0"
  std::string path;     // header or dist-info it came from
  std::string source;   // "header", "dist-info", "cudnnGetVersion"
  // The CUDA major the build is for, when something says so (cuDNN: the toolkit's
  // nvidia-cudnn-cuNN dist-info, or the Debian package libcudnnN-dev-cuda-NN /
  // libcudnn8-dev "+cudaNN.M"); empty when unknown.
  std::string cuda_major;
  std::string cuda_major_source;
};

struct PackageFacts {
  std::string name;       // normalized: lower case, '_' -> '-' ("tensorflow-cpu")
  std::string version;
  std::string installer;  // "pip" or "conda"
  std::string build;      // conda build string, when known
  // What the framework was built for, when the package says so.
  std::optional<bool> cuda_build;
  std::string cuda_version;  // "12.2"
  std::string cudnn_version; // "8" (TF gives only the major)
  std::vector<std::string> cuda_archs;  // "sm_80", "compute_90"
};

struct PythonEnvFacts {
  std::string kind;  // "system", "venv", "conda"
  std::string path;
  std::string python_version;  // "3.11.2" or "3.11"; empty when unknown
  std::vector<std::string> site_dirs;
  std::vector<PackageFacts> packages;
  const PackageFacts* find(const std::string& name) const;
};

// MPI, found without initializing it (docs/design/doctor.md, "MPI"): the first mpirun on
// PATH, the mpi.h a compiler sees first, and the libmpi sonames the loader finds.
struct MpiFacts {
  std::string mpirun;                 // in-root path of the first mpirun/mpiexec on PATH, resolved
  std::string mpirun_implementation;  // "Open MPI", "MPICH", "Intel MPI"; empty when unknown
  std::string mpirun_version;         // from `mpirun --version` (this machine only), else empty
  std::string mpirun_source;          // "mpirun --version" or "file name"
  std::string header;                 // first mpi.h found
  std::string header_implementation;
  std::string header_version;
  std::vector<std::string> libraries;  // "libmpi.so.40" found by the loader, in search order
  bool found() const { return !mpirun.empty() || !header.empty() || !libraries.empty(); }
};

// oneDNN: what nnfit was built with and what its process loaded are filled by the CLI
// (the doctor module depends on core only, Note [oneDNN versions from the CLI]); the probe
// adds what the loader resolves for libdnnl.so.N on the probed root and its header.
struct OneDnnFacts {
  std::string compiled;        // DNNL_VERSION_* nnfit was compiled with, "2.6.3"
  std::string loaded;          // dnnl_version() of the library this nnfit process loaded
  std::string loaded_path;     // the file that library came from (dladdr)
  std::string loader_soname;   // newest libdnnl.so.N the loader search finds, "libdnnl.so.2"
  std::string loader_path;     // the file it resolves to, "/usr/lib/x86_64-linux-gnu/libdnnl.so.2.6"
  std::string loader_version;  // from that file name, "2.6"; empty when the name has none
  std::string header;          // dnnl_version.h found (a development package)
  std::string header_version;
};

struct NnfitFacts {
  std::string version;
  std::vector<std::string> backends;  // "cpu", "cuda"
  // The communicator plugins, as backends are listed: "mpi compiled, available (...)",
  // "nccl compiled, unavailable (plugin not loaded: ...)"; empty under --no-load.
  std::vector<std::string> communicators;
  std::string cuda_compiled;          // empty when built without CUDA
  // The GPU code nnfit's CUDA kernels were built for: "sm_80" (machine code), "compute_80"
  // (PTX the driver JIT-compiles); empty without CUDA.
  std::vector<std::string> cuda_architectures;
  std::string openmp_version;         // _OPENMP date, "201511"
  std::vector<std::string> cpu_features;  // "avx2", "avx512f", "avx512_bf16", "amx"
  std::map<std::string, std::string> env_flags;  // NNFIT_* and other declared flags set in the process
};

struct Facts {
  std::string root = "/";
  bool libraries_loaded = false;
  DriverFacts driver;
  std::vector<GpuFacts> gpus;
  std::optional<std::string> cuda_visible_devices;
  std::vector<ToolkitFacts> toolkits;
  std::string default_toolkit;     // where /usr/local/cuda points, inside the root
  std::string nvcc_on_path;        // toolkit dir of the first nvcc on PATH
  std::vector<LibraryFacts> libraries;
  // cuDNN / cudart sonames the dynamic loader would find, and in which directory.
  std::map<std::string, std::string> loader_finds;  // "libcudnn.so.9" -> dir
  std::vector<std::string> loader_dirs;              // search order used
  std::map<std::string, std::string> env;            // LD_LIBRARY_PATH, CUDA_HOME, CUDA_PATH
  // CUDA_HOME / CUDA_PATH with symlinks resolved inside the root, and each
  // LD_LIBRARY_PATH entry likewise, in order.
  std::map<std::string, std::string> env_resolved;
  std::vector<std::string> ld_library_path_resolved;
  std::vector<PythonEnvFacts> envs;
  MpiFacts mpi;
  OneDnnFacts onednn;
  NnfitFacts nnfit;
  std::vector<ProbeProblem> problems;
};

}  // namespace nnfit::doctor
