// doctor::probe(): runs the driver, CUDA and Python probes over a root and collects the
// process facts (environment variables, CPU features of the machine nnfit runs on).
#include "nnfit/doctor/probe.h"

#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "nnfit/core/env_flags.h"
#include "probes.h"

extern char** environ;

namespace nnfit::doctor {
namespace {

std::vector<std::string> cpu_features() {
  std::vector<std::string> out;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (b & (1u << 5)) out.push_back("avx2");
    if (b & (1u << 16)) out.push_back("avx512f");
    if (d & (1u << 24)) out.push_back("amx_tile");
    if (d & (1u << 22)) out.push_back("amx_bf16");
    if (d & (1u << 23)) out.push_back("avx512_fp16");
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
    if (a & (1u << 5)) out.push_back("avx512_bf16");
  }
#endif
  return out;
}

}  // namespace

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

Facts probe(const ProbeOptions& options) {
  Facts facts;
  facts.root = options.root.empty() ? "/" : options.root;
  facts.libraries_loaded = options.load_libraries && facts.root == "/";
  RootFs fs(facts.root, &facts.problems);
  probe_driver(fs, options, facts);
  probe_cuda(fs, options, facts);
  probe_python(fs, options, facts);
  probe_mpi(fs, options, facts);
  probe_onednn(fs, facts);
  facts.nnfit.cpu_features = cpu_features();
  for (const auto& [k, v] : options.env) {
    bool declared = false;
    for (const EnvFlag& f : env_flags()) declared = declared || f.name == k;
    if (starts_with(k, "NNFIT_") || declared) facts.nnfit.env_flags[k] = v;
  }
  return facts;
}

}  // namespace nnfit::doctor
