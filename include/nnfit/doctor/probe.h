// Probing a machine (or a filesystem tree standing in for one) into Facts.
// Every probe reads real files; a file it cannot read or parse becomes a ProbeProblem
// in the result, never an exception, so one corrupt version.json cannot hide the rest.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "nnfit/doctor/facts.h"

namespace nnfit::doctor {

struct ProbeOptions {
  // Every path is read inside `root` ("/" for this machine). With another root, home
  // directories are DIR/root and DIR/home/*, and no library is loaded.
  std::string root = "/";
  // The process environment the probes consult (CUDA_HOME, LD_LIBRARY_PATH, PATH,
  // CUDA_VISIBLE_DEVICES, NNFIT_*). process_environment() gives the real one.
  std::map<std::string, std::string> env;
  // Extra virtual environments (--env), as paths inside `root`.
  std::vector<std::string> venvs;
  // dlopen NVML and cuDNN and run `mpirun --version`; ignored (false) unless root is "/".
  bool load_libraries = true;
};

std::map<std::string, std::string> process_environment();

// requires: nothing; ensures: never throws on anything found on disk.
Facts probe(const ProbeOptions& options);

// The shared object a symbol of this process comes from ("" when not from one): the CLI
// passes &dnnl_version to record which libdnnl its process really loaded.
std::string library_path_of(const void* symbol);

}  // namespace nnfit::doctor
