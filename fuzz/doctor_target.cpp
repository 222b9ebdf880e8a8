// Fuzz target for the files `nnfit doctor --root DIR` reads: the input fills a fixed set of
// the paths its probes look at (Note [Multi-file inputs]), then probes, rules and both
// report forms run as the CLI runs them. The probes promise never to throw on anything
// found on disk, so here even an nnfit::Error is returned only for the record.
#include <string_view>

#include "fuzz_input.h"
#include "fuzz_targets.h"
#include "nnfit/core/error.h"
#include "nnfit/doctor/compat_tables.h"
#include "nnfit/doctor/probe.h"
#include "nnfit/doctor/report.h"
#include "nnfit/doctor/rules.h"

namespace nnfit::fuzz {

// What a machine with a driver, a CUDA toolkit, cuDNN, NCCL, MPI, oneDNN and Python
// frameworks in a venv and a conda env holds, one file per input part in this order.
constexpr const char* kDoctorFiles[] = {
    "proc/driver/nvidia/version",
    "proc/driver/nvidia/gpus/0000:01:00.0/information",
    "usr/local/cuda-12.2/version.json",
    "usr/local/cuda-12.2/include/cuda.h",
    "usr/local/cuda-12.2/include/cudnn_version.h",
    "usr/local/cuda-12.2/include/cublas_api.h",
    "usr/include/nccl.h",
    "usr/include/mpi.h",
    "usr/include/oneapi/dnnl/dnnl_version.h",
    "etc/ld.so.conf.d/cuda.conf",
    "root/venv/pyvenv.cfg",
    "root/venv/lib/python3.11/site-packages/tensorflow-2.15.0.dist-info/METADATA",
    "root/venv/lib/python3.11/site-packages/tensorflow/python/platform/build_info.py",
    "root/venv/lib/python3.11/site-packages/torch/version.py",
    "opt/conda/conda-meta/pytorch-2.1.0-py3.11_cuda12.1_cudnn8.9.2_0.json",
    "usr/local/cuda-12.2/version.txt",
    "usr/include/cudnn_version.h",
    "var/lib/dpkg/status",
    "root/venv/lib/python3.11/site-packages/nvidia_cuda_runtime_cu12-12.2.140.dist-info/METADATA",
};

std::string fuzz_doctor_root(const std::uint8_t* data, std::size_t size) {
  static const doctor::CompatTables tables = doctor::load_compat_tables(doctor::default_compat_dir());
  const std::string root = fresh_dir("root");
  const std::vector<std::string_view> parts =
      split_files({reinterpret_cast<const char*>(data), size}, std::size(kDoctorFiles));
  for (std::size_t i = 0; i < parts.size(); ++i) write_file(std::string("root/") + kDoctorFiles[i], parts[i]);
  write_file("root/usr/local/cuda-12.2/bin/nvcc", "");
  try {
    doctor::ProbeOptions options;
    options.root = root;
    options.env = {{"PATH", "/usr/local/cuda-12.2/bin:/usr/bin"}, {"CUDA_HOME", "/usr/local/cuda-12.2"}};
    options.venvs = {"/root/venv"};
    options.load_libraries = false;
    doctor::Facts facts = doctor::probe(options);
    doctor::complete_facts(facts, tables);
    const std::vector<doctor::Check> checks = doctor::run_rules(facts, tables);
    (void)doctor::format_text(checks, facts);
    (void)doctor::format_json(checks, facts);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nnfit::fuzz
