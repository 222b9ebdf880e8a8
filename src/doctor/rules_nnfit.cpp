// Rules about nnfit itself and the CPU-side libraries around it: the nnfit check (version,
// backends, CPU features, OpenMP, oneDNN, MPI, NNFIT_* flags), a misspelled flag, an
// mpirun from another MPI than the mpi.h programs compile against, a oneDNN older
// than the one nnfit was built with, and whether each GPU runs nnfit's CUDA code.
#include <algorithm>
#include <cstdlib>

#include "nnfit/core/env_flags.h"
#include "rules_util.h"

namespace nnfit::doctor {
namespace {

// MPICH and Intel MPI share one ABI and launcher protocol (Hydra/PMI); Open MPI differs.
std::string mpi_family(const std::string& implementation) {
  if (implementation == "Open MPI") return "Open MPI";
  if (implementation == "MPICH" || implementation == "Intel MPI") return "MPICH";
  return "";
}

std::string with_version(const std::string& name, const std::string& version) {
  return version.empty() ? name : name + " " + version;
}

std::string library_implementation(const std::string& path) {
  bool open_mpi = path.ends_with("libmpi.so.40") || path.ends_with("libmpi.so.20");
  return path.substr(path.rfind('/') + 1) + (open_mpi ? " (Open MPI)" : " (MPICH ABI)");
}

// Short, for the check's title: "Open MPI 4.1.4", "MPICH 4.0.2 (mpi.h only)", "none".
std::string mpi_summary(const MpiFacts& m) {
  if (!m.mpirun.empty()) {
    // Without --version output (--root, --no-load), a header of the same MPI tells the version.
    std::string version = m.mpirun_version;
    if (version.empty() && m.header_implementation == m.mpirun_implementation) version = m.header_version;
    return with_version(m.mpirun_implementation.empty() ? "unknown" : m.mpirun_implementation, version);
  }
  if (!m.header.empty()) return with_version(m.header_implementation, m.header_version) + " (mpi.h only)";
  if (!m.libraries.empty()) return library_implementation(m.libraries[0]);
  return "none";
}

std::string mpi_detail(const MpiFacts& m) {
  if (!m.found()) return "no mpirun on PATH, no mpi.h, no libmpi found by the loader";
  std::string d;
  if (!m.mpirun.empty()) {
    d += "mpirun " + m.mpirun + " (" + with_version(m.mpirun_implementation.empty() ? "unknown" : m.mpirun_implementation,
                                                  m.mpirun_version) + ", from its " + m.mpirun_source + ")";
  }
  if (!m.header.empty()) {
    d += (d.empty() ? "" : ", ") + std::string("mpi.h ") + m.header + " (" +
         with_version(m.header_implementation, m.header_version) + ")";
  }
  for (const auto& l : m.libraries) d += (d.empty() ? "" : ", ") + library_implementation(l) + " in " + l.substr(0, l.rfind('/'));
  return d;
}

std::string onednn_summary(const OneDnnFacts& o) {
  if (!o.compiled.empty() && !o.loaded.empty()) {
    return o.compiled == o.loaded ? "oneDNN " + o.compiled : "oneDNN built " + o.compiled + ", loaded " + o.loaded;
  }
  if (!o.compiled.empty()) return "oneDNN built " + o.compiled;
  if (!o.loader_soname.empty()) return "oneDNN " + (o.loader_version.empty() ? o.loader_soname : o.loader_version) + " on the system";
  return "oneDNN not reported";
}

std::string onednn_detail(const OneDnnFacts& o) {
  std::string d = "built with " + (o.compiled.empty() ? std::string("(not reported)") : o.compiled) + ", loaded " +
                  (o.loaded.empty() ? std::string("(not reported)") : o.loaded +
                   (o.loaded_path.empty() ? "" : " from " + o.loaded_path));
  d += "; the loader resolves " +
       (o.loader_soname.empty() ? std::string("no libdnnl.so.N")
                                : o.loader_soname + " -> " + o.loader_path +
                                      (o.loader_version.empty() ? "" : " (" + o.loader_version + ")"));
  if (!o.header.empty()) d += "; header " + o.header + " (" + o.header_version + ")";
  return d;
}

void check_mpi(const Facts& facts, std::vector<Check>& out) {
  const MpiFacts& m = facts.mpi;
  std::string run = mpi_family(m.mpirun_implementation), build = mpi_family(m.header_implementation);
  if (run.empty() || build.empty() || run == build) return;
  std::string bin = m.mpirun.substr(0, m.mpirun.rfind('/'));
  std::string want = m.header_implementation == "Open MPI" ? "mpirun.openmpi" : "mpirun.mpich";
  out.push_back({"mpi", Status::kWarn,
                 "mpirun is " + m.mpirun_implementation + "'s but mpi.h is " + m.header_implementation + "'s",
                 "mpirun (" + m.mpirun + ") and the mpi.h programs compile against (" + m.header + ", " +
                     with_version(m.header_implementation, m.header_version) +
                     ") come from different MPI implementations: a program built with this mpi.h and launched "
                     "with this mpirun starts as N separate processes that all report rank 0 of 1, or fails in "
                     "MPI_Init",
                 "launch with " + m.header_implementation + "'s mpirun (Debian/Ubuntu: sudo update-alternatives --set mpirun "
                     "/usr/bin/" + want + "), or put its bin/ directory ahead of " + bin + " on PATH"});
}

void check_onednn(const Facts& facts, std::vector<Check>& out) {
  const OneDnnFacts& o = facts.onednn;
  auto built = Version::parse(o.compiled), loaded = Version::parse(o.loaded);
  if (!built || !loaded) return;
  if (!(Version({loaded->major(), loaded->minor()}) < Version({built->major(), built->minor()}))) return;
  out.push_back({"onednn", Status::kWarn,
                 "nnfit was built with oneDNN " + o.compiled + " but loads " + o.loaded,
                 "the libdnnl found at run time" + (o.loaded_path.empty() ? std::string() : " (" + o.loaded_path + ")") +
                     " is older than the headers nnfit was compiled with: primitives or fixes of " +
                     built->major_minor() + " are missing, and a missing symbol aborts at first use",
                 "install oneDNN " + built->major_minor() + " or newer where the loader finds it (Debian: sudo apt install "
                     "libdnnl" + std::to_string(built->major()) + "), or rebuild nnfit against the oneDNN you have"});
}

}  // namespace

// Which of nnfit's GPU code a GPU of compute capability `cc` ("8.6") runs: machine code of
// its major at or below its minor, else PTX at or below it (JIT-compiled once), else none.
void check_cuda_code(const Facts& facts, std::vector<Check>& out) {
  const std::vector<std::string>& archs = facts.nnfit.cuda_architectures;
  if (archs.empty()) return;
  std::string built;
  for (const auto& a : archs) {
    if (!built.empty()) built += ", ";  // piecewise: GCC 12's -Wrestrict false positive
    built += a;
  }
  for (const GpuFacts& gpu : facts.gpus) {
    const std::string id = "nnfit-cuda-code:" + std::to_string(gpu.index);
    const auto v = Version::parse(gpu.compute_capability);
    if (!v) {
      out.push_back({id, Status::kWarn, "cuda:" + std::to_string(gpu.index) + " " + gpu.name + ": compute capability unknown",
                     "nnfit's CUDA code is built for " + built + "; the doctor could not tell whether this GPU runs it", ""});
      continue;
    }
    const int cc = v->major() * 10 + v->minor();
    std::string sass, ptx;
    for (const auto& a : archs) {
      const int n = std::atoi(a.substr(a.find('_') + 1).c_str());
      if (a.rfind("sm_", 0) == 0 && n / 10 == cc / 10 && n <= cc && (sass.empty() || n > std::atoi(sass.c_str() + 3))) sass = a;
      if (a.rfind("compute_", 0) == 0 && n <= cc && (ptx.empty() || n > std::atoi(ptx.c_str() + 8))) ptx = a;
    }
    const std::string gpu_name = "cuda:" + std::to_string(gpu.index) + " " + gpu.name + " (compute capability " +
                                 gpu.compute_capability + ")";
    const std::string rebuild = "rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc) +
                                " (this GPU only) or the cuda-release preset (sm_75 to sm_100)";
    if (!sass.empty()) {
      out.push_back({id, Status::kOk, gpu_name + " runs nnfit's " + sass + " code", "nnfit's CUDA code is built for " + built, ""});
    } else if (!ptx.empty()) {
      out.push_back({id, Status::kWarn, gpu_name + " runs nnfit's kernels JIT-compiled from " + ptx + " PTX",
                     "nnfit's CUDA code is built for " + built + ": no machine code for this GPU, so the driver compiles the "
                     "PTX at the first launch of each kernel (seconds; then cached in ~/.nv/ComputeCache)",
                     rebuild});
    } else {
      out.push_back({id, Status::kFail, gpu_name + " cannot run nnfit's CUDA kernels",
                     "nnfit's CUDA code is built for " + built + ": no machine code for compute capability " +
                         gpu.compute_capability + " and no PTX at or below it",
                     rebuild});
    }
  }
}

void check_nnfit(const Facts& facts, std::vector<Check>& out) {
  const NnfitFacts& n = facts.nnfit;
  // Appending piecewise (not `sep + word`) also keeps GCC 12's -Wrestrict false positive away.
  auto append = [](std::string& list, const char* sep, const std::string& word) {
    if (!list.empty()) list += sep;
    list += word;
  };
  std::string features, backends, compiled, flags, communicators;
  for (const auto& f : n.cpu_features) append(features, " ", f);
  for (const auto& b : n.backends) {
    append(backends, "; ", b);
    if (b.find(" not compiled") == std::string::npos) append(compiled, " ", b.substr(0, b.find(' ')));
  }
  for (const auto& c : n.communicators) append(communicators, "; ", c);
  for (const auto& [k, v] : n.env_flags) append(flags, " ", k + "=" + v);
  out.push_back({"nnfit", Status::kOk,
                 "nnfit " + (n.version.empty() ? std::string("(library)") : n.version) + " (backends: " +
                     (compiled.empty() ? std::string("?") : compiled) + "; CPU: " +
                     (features.empty() ? std::string("baseline") : features) + "; " + onednn_summary(facts.onednn) +
                     "; MPI: " + mpi_summary(facts.mpi) + ")",
                 "backends: " + (backends.empty() ? std::string("not reported") : backends) +
                     "; CPU features: " + (features.empty() ? std::string("none detected") : features) +
                     "; OpenMP: " + (n.openmp_version.empty() ? std::string("not reported") : n.openmp_version) +
                     "; oneDNN: " + onednn_detail(facts.onednn) + "; MPI: " + mpi_detail(facts.mpi) +
                     "; communicators: " + (communicators.empty() ? std::string("not probed") : communicators) +
                     "; NNFIT_* set: " + (flags.empty() ? std::string("none") : flags),
                 ""});
  // A backend or communicator built as a plugin that does not load on this machine
  // (docs/design/cuda.md, "Plugins"): nnfit runs on the CPU (or one process), and says
  // which library is missing.
  std::vector<std::string> plugins = n.backends;
  plugins.insert(plugins.end(), n.communicators.begin(), n.communicators.end());
  for (const auto& b : plugins) {
    const std::string marker = "(plugin not loaded: ";
    const std::size_t at = b.find(marker);
    if (at == std::string::npos) continue;
    const std::string name = b.substr(0, b.find(' '));
    std::string why = b.substr(at + marker.size());
    if (!why.empty() && why.back() == ')') why.pop_back();
    const bool backend = name == "cuda";
    out.push_back({"nnfit-plugin:" + name, Status::kWarn,
                   backend ? "nnfit's " + name + " backend is built but its plugin does not load: nnfit runs on the CPU"
                           : "nnfit's " + name + " communicator is built but its plugin does not load: " +
                                 (name == "mpi" ? "mpirun starts no data-parallel job" : "NCCL is not there for data-parallel GPUs"),
                   why,
                   "install the library named above, or set NNFIT_PLUGIN_DIR to the directory holding a libnnfit_" +
                       name + ".so that loads here"});
  }
  check_onednn(facts, out);
  check_mpi(facts, out);
  check_cuda_code(facts, out);
  // Which dtype policies run natively on this CPU (oneDNN's bf16 / f16 primitives), and
  // what the others cost: their ops compute in float32 and round.
  const auto has = [&](const char* f) {
    return std::find(n.cpu_features.begin(), n.cpu_features.end(), f) != n.cpu_features.end();
  };
  const bool bf16 = has("avx512_bf16") || has("amx_bf16"), fp16 = has("avx512_fp16");
  const std::string bf16_isa = has("amx_bf16") ? "AMX" : "AVX-512 BF16";
  out.push_back({"dtype-policies", Status::kOk,  // information, not a problem: every policy runs
                 std::string("mixed_bfloat16: ") + (bf16 ? "native (" + bf16_isa + ")" : "emulated") +
                     "; mixed_float16: " + (fp16 ? "native (AVX-512 FP16)" : "emulated") + " on this CPU",
                 "native: oneDNN's bf16/f16 matmuls, convolutions, pooling and activations; emulated: those ops "
                 "compute in float32 on the rounded values and round their outputs (same numerics, no speedup). "
                 "CPU features: " + (features.empty() ? std::string("none detected") : features),
                 bf16 ? "" : "train in float32 here, or on a CPU with AVX-512 BF16 or AMX (or a GPU) for mixed_bfloat16"});
  // A misspelled flag is silently ignored by everything else; say so here.
  for (const auto& [name, value] : n.env_flags) {
    bool declared = false;
    for (const EnvFlag& f : env_flags()) declared = declared || f.name == name;
    if (!declared && name.rfind("NNFIT_", 0) == 0) {
      std::string known;
      for (const EnvFlag& f : env_flags()) {
        if (f.name.rfind("NNFIT_", 0) == 0) known += (known.empty() ? "" : ", ") + std::string(f.name);
      }
      out.push_back({"env:" + name, Status::kWarn, name + " is not an nnfit flag; it has no effect",
                     "nnfit reads only declared flags: " + known, "unset " + name + " or correct its spelling"});
    }
  }
}

std::vector<std::string> cuda_architectures_from_cmake(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t end = std::min(list.find_first_of(";,", at), list.size());
    std::string item = list.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    const bool real = item.size() > 5 && item.compare(item.size() - 5, 5, "-real") == 0;
    const bool virt = item.size() > 8 && item.compare(item.size() - 8, 8, "-virtual") == 0;
    const std::string n = item.substr(0, item.find('-'));
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;  // "native", "all": unknown here
    if (!virt) out.push_back(std::string("sm_").append(n));
    if (!real) out.push_back(std::string("compute_").append(n));
  }
  return out;
}

}  // namespace nnfit::doctor
