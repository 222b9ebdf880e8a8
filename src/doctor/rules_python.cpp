// Rules about Python environments: what each framework was built for against the
// driver, the GPUs and the libraries the loader finds, the Python version, and packages
// that conflict inside one environment. pip-installed frameworks with NVIDIA wheels
// (torch, tensorflow[and-cuda], jax[cudaNN]) need only the driver from the system.
#include <map>
#include <set>

#include "rules_util.h"
#include "pattern.h"

namespace nnfit::doctor {
namespace {

bool is_framework(const std::string& name) {
  return name == "tensorflow" || name == "tensorflow-gpu" || name == "tensorflow-cpu" || name == "tensorflow-intel" ||
         name == "torch" || name == "pytorch" || name == "jaxlib" ||
         // jax-cudaNN-plugin is what JAX loads; jax-cudaNN-pjrt comes with it and says the same.
         (name.rfind("jax-cuda", 0) == 0 && name.size() > 7 && name.compare(name.size() - 7, 7, "-plugin") == 0);
}

bool is_tensorflow(const std::string& name) { return name.rfind("tensorflow", 0) == 0; }
bool is_torch(const std::string& name) { return name == "torch" || name == "pytorch"; }
bool is_jax(const std::string& name) { return name == "jaxlib" || name.rfind("jax-cuda", 0) == 0; }

std::vector<Version> cuda_versions_in(const std::string& text) {
  std::vector<Version> out;
  static const Pattern kV("[0-9]+\\.[0-9]+");
  for (const PatternMatch& m : kV.find_all(text)) {
    // Cells mix CUDA versions with release names ("11.1 (1.8.0)"): CUDA starts at 7.
    if (auto v = Version::parse(m[0]); v && v->major() >= 7) out.push_back(*v);
  }
  return out;
}

std::vector<std::string> split_colon(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t colon = text.find(':', start);
    if (colon == std::string::npos) colon = text.size();
    if (colon > start) out.push_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::string public_version(const std::string& v) { return v.substr(0, v.find('+')); }

std::string cu_tag(const Version& v) { return "cu" + std::to_string(v.major()) + std::to_string(v.minor()); }

// The newest torch wheel variant of this release the driver runs: natively if one exists,
// else through minor-version compatibility (PyTorch's cu12x wheels run on any 525+ driver).
std::optional<Version> torch_variant_for_driver(const Facts& facts, const CompatTables& tables, const Version& torch,
                                                const std::optional<Version>& at_least = std::nullopt) {
  auto row = tables.pytorch_row(torch);
  auto driver_cuda = Version::parse(facts.driver.cuda_version);
  if (!row || !driver_cuda) return std::nullopt;
  for (int pass = 0; pass < 2; ++pass) {
    std::optional<Version> best;
    for (const auto& v : cuda_versions_in(tables.pytorch_cuda.cell(*row, "cuda_versions"))) {
      bool runs = pass == 0 ? !(*driver_cuda < v) : driver_supports(facts, tables, v).status != Status::kFail;
      if (!runs || (at_least && v < *at_least)) continue;
      if (!best || *best < v) best = v;
    }
    if (best) return best;
  }
  return std::nullopt;
}

// Does an arch list have SASS a GPU of compute capability code `cc` (86) runs: same major,
// not newer (cubins run on later minors of their major)?
bool has_sass_for(const std::vector<std::string>& archs, int cc) {
  for (const auto& a : archs) {
    auto n = Version::parse(a.substr(a.find('_') + 1));
    if (a.rfind("sm_", 0) == 0 && n && n->major() / 10 == cc / 10 && n->major() <= cc) return true;
  }
  return false;
}

// A torch wheel whose published arch list (pytorch_archs.csv) has SASS for `cc` and whose
// CUDA the driver runs: another variant of the installed release first, else the newest
// release in the table with one. Empty when none.
std::string torch_arch_fix(const Facts& facts, const CompatTables& tables, const PackageFacts& p, int cc) {
  auto installed = Version::parse(p.version);
  std::vector<std::pair<Version, std::string>> releases;  // release, pin
  if (installed) releases.push_back({*installed, public_version(p.version)});
  for (std::size_t r = 0; r < tables.pytorch_archs.rows.size(); ++r) {
    if (auto v = Version::parse(tables.pytorch_archs.cell(r, "torch_max"))) releases.push_back({*v, v->str() + ".*"});
  }
  bool driver = facts.driver.loaded && !facts.driver.version.empty();
  for (const auto& [release, pin] : releases) {
    std::optional<Version> best;
    for (const auto& variant : tables.torch_arch_variants(release)) {
      bool runs = !driver || driver_supports(facts, tables, variant).status != Status::kFail;
      if (runs && has_sass_for(tables.torch_archs(release, variant), cc) && (!best || *best < variant)) best = variant;
    }
    if (best) return "pip install torch==" + pin + " --index-url https://download.pytorch.org/whl/" + cu_tag(*best);
  }
  return "";
}

void check_driver_for(const Facts& facts, const CompatTables& tables, const PythonEnvFacts& env,
                      const PackageFacts& p, const Version& cuda, std::vector<Check>& out) {
  std::string label = env_label(env) + "/" + p.name;
  Support s = driver_supports(facts, tables, cuda);
  std::string title = p.name + " " + p.version + " (CUDA " + cuda.major_minor() + ") in " + env_label(env) +
                      (s.status == Status::kOk ? ": driver is new enough" : ": driver too old");
  std::string fix;
  if (s.status == Status::kFail) {
    fix = driver_upgrade_fix(s.min_driver);
    if (is_torch(p.name)) {
      auto tv = Version::parse(p.version);
      if (auto variant = tv ? torch_variant_for_driver(facts, tables, *tv) : std::nullopt) {
        fix += "; or: pip install torch==" + public_version(p.version) +
               " --index-url https://download.pytorch.org/whl/" + cu_tag(*variant);
      } else if (tv && !tables.pytorch_row(*tv)) {
        // A release newer than the tables: its wheel variants are unknown, so name the
        // newest known release with a variant this driver runs.
        auto newest = Version::parse(tables.pytorch_cuda.cell(0, "torch_version"));
        if (auto v = newest ? torch_variant_for_driver(facts, tables, *newest) : std::nullopt) {
          fix += "; or: pip install torch==" + newest->str() + ".* --index-url https://download.pytorch.org/whl/" +
                 cu_tag(*v);
        }
      }
    }
    s.why += ": it fails with 'CUDA driver version is insufficient for CUDA runtime version'";
  }
  if (s.status == Status::kWarn) title = p.name + " " + p.version + " (CUDA " + cuda.major_minor() + ") in " + env_label(env);
  out.push_back({"framework-driver:" + label, s.status, title, s.why, fix});
}

void check_arch_for(const Facts& facts, const CompatTables& tables, const PythonEnvFacts& env, const PackageFacts& p,
                    const Version& cuda, std::vector<Check>& out) {
  for (const auto& gpu : facts.gpus) {
    auto cc = Version::parse(gpu.compute_capability);
    if (!cc) continue;
    std::string id = "framework-arch:" + env_label(env) + "/" + p.name + ":" + std::to_string(gpu.index);
    std::string who = p.name + " " + p.version + " in " + env_label(env);
    auto range = tables.cuda_range_for(gpu.compute_capability);
    std::string arch = range ? range->architecture : "this GPU";
    Version mm({cuda.major(), cuda.minor()});
    if (range && range->first && mm < *range->first) {
      std::string fix;
      if (is_torch(p.name)) {
        // The newest release (tables list them newest first) with a variant that covers
        // the GPU and that this driver runs.
        fix = "install a torch wheel built with CUDA >= " + range->first->str();
        for (std::size_t row = 0; row < tables.pytorch_cuda.rows.size(); ++row) {
          auto release = Version::parse(tables.pytorch_cuda.cell(row, "torch_version"));
          auto variant = release ? torch_variant_for_driver(facts, tables, *release, range->first) : std::nullopt;
          if (variant) {
            fix = "pip install torch==" + release->str() + ".* --index-url https://download.pytorch.org/whl/" +
                  cu_tag(*variant);
            break;
          }
        }
      } else if (is_tensorflow(p.name)) {
        fix = "no TensorFlow release in the tables is built with CUDA >= " + range->first->str() +
              "; use NVIDIA's TensorFlow container (nvcr.io/nvidia/tensorflow) or build TensorFlow from source with "
              "CUDA >= " + range->first->str();
      } else {
        fix = "install a build made with CUDA >= " + range->first->str();
      }
      out.push_back({id, Status::kFail, who + " cannot run on GPU " + std::to_string(gpu.index) + " (" + gpu.name + ")",
                     "built with CUDA " + mm.major_minor() + ", which predates " + arch + " (compute capability " +
                         gpu.compute_capability + " needs CUDA >= " + range->first->str() +
                         "): 'no kernel image is available for execution on the device'",
                     fix});
      continue;
    }
    if (range && range->last && *range->last < mm) {
      out.push_back({id, Status::kFail, who + " cannot run on GPU " + std::to_string(gpu.index) + " (" + gpu.name + ")",
                     "built with CUDA " + mm.major_minor() + ", which dropped " + arch + " (compute capability " +
                         gpu.compute_capability + ", last supported by CUDA " + range->last->str() + ")",
                     "install a build made with CUDA <= " + range->last->str()});
      continue;
    }
    // JAX states a lowest compute capability per CUDA major instead of an arch list.
    if (is_jax(p.name)) {
      auto pv = Version::parse(p.version);
      auto row = pv ? tables.jax_row(*pv) : std::nullopt;
      auto min_cc = row ? tables.jax_min_compute_capability(*row, cuda.major()) : std::nullopt;
      if (min_cc && *cc < *min_cc) {
        out.push_back({id, Status::kFail, who + " has no kernels for GPU " + std::to_string(gpu.index) + " (" + gpu.name + ")",
                       "JAX's CUDA " + std::to_string(cuda.major()) + " wheels of release " + pv->str() +
                           " are built for compute capability >= " + min_cc->str() + " (data/compat/jax_cuda.csv); GPU " +
                           std::to_string(gpu.index) + " is " + gpu.compute_capability,
                       "no JAX CUDA wheel covers compute capability " + gpu.compute_capability +
                           ": run JAX on the CPU (pip install jax) or build jaxlib from source for sm_" +
                           std::to_string(cc->major() * 10 + cc->minor())});
      }
      continue;
    }
    // PyTorch's version.py has no arch list: its published one per wheel variant stands in.
    std::vector<std::string> archs = p.cuda_archs;
    std::string archs_from;
    auto tv = Version::parse(p.version);
    if (archs.empty() && p.name == "torch" && tv) {
      archs = tables.torch_archs(*tv, mm);
      archs_from = " (PyTorch's published list for " + tv->major_minor() + " " + cu_tag(mm) + ")";
    }
    if (archs.empty()) continue;
    int want = cc->major() * 10 + cc->minor();
    bool sass = false, ptx = false;
    int lowest = 1 << 30;
    for (const auto& a : archs) {
      std::size_t us = a.find('_');
      auto n = Version::parse(a.substr(us + 1));
      if (!n) continue;
      int code = n->major();
      lowest = std::min(lowest, code);
      if (a.rfind("sm_", 0) == 0 && code / 10 == want / 10 && code <= want) sass = true;
      if (a.rfind("compute_", 0) == 0 && code <= want) ptx = true;
    }
    std::string list;
    for (const auto& a : archs) list += (list.empty() ? "" : " ") + a;
    list += archs_from;
    std::string fix = "use a build that lists sm_" + std::to_string(want);
    if (!sass && p.name == "torch") {
      if (std::string t = torch_arch_fix(facts, tables, p, want); !t.empty()) fix = t;
    }
    if (sass) {
      out.push_back({id, Status::kOk, who + " has kernels for GPU " + std::to_string(gpu.index),
                     "built for " + list, ""});
    } else if (ptx) {
      out.push_back({id, Status::kWarn, who + " has only PTX for GPU " + std::to_string(gpu.index) + " (" + gpu.name + ")",
                     "built for " + list + ": no SASS for compute capability " + gpu.compute_capability +
                         "; the driver JIT-compiles PTX at start-up (minutes, cached), and PTX from an older "
                         "toolchain can fail with CUDA_ERROR_INVALID_PTX",
                     fix});
    } else {
      out.push_back({id, Status::kFail, who + " has no kernels for GPU " + std::to_string(gpu.index) + " (" + gpu.name + ")",
                     "built for " + list + "; compute capability " + gpu.compute_capability +
                         (want < lowest ? " is older than every target" : " is not covered and there is no PTX to JIT"),
                     fix});
    }
  }
}

// TensorFlow without NVIDIA pip wheels loads libcudart.so.N and libcudnn.so.M from the
// system; a missing one is the classic "Could not load dynamic library" failure.
void check_tf_libraries(const Facts& facts, const CompatTables& tables, const PythonEnvFacts& env,
                        const PackageFacts& p, const Version& cuda, std::vector<Check>& out) {
  std::string label = env_label(env) + "/" + p.name;
  std::string who = p.name + " " + p.version + " in " + env_label(env);
  std::optional<int> pip_cudnn, conda_cudnn;
  bool runtime_in_env = false;
  for (const auto& q : env.packages) {
    auto v = Version::parse(q.version);
    if (q.name.rfind("nvidia-cudnn", 0) == 0 && v) pip_cudnn = v->major();
    if (q.name == "cudnn" && v) conda_cudnn = v->major();
    if (q.name.rfind("nvidia-cuda-runtime", 0) == 0 || q.name == "cudatoolkit" || q.name == "cuda-cudart") {
      runtime_in_env = true;
    }
  }
  std::vector<std::string> missing, notes;
  int want_cudnn = p.cudnn_version.empty() ? 0 : Version::parse(p.cudnn_version).value_or(Version()).major();
  if (want_cudnn > 0) {
    std::optional<int> have = pip_cudnn ? pip_cudnn : conda_cudnn;
    std::string soname = "libcudnn.so." + std::to_string(want_cudnn);
    if (have) {
      if (*have != want_cudnn) {
        missing.push_back(soname);
        notes.push_back("the environment has cuDNN " + std::to_string(*have) + " (" +
                        (pip_cudnn ? "pip" : "conda") + ")");
      }
    } else if (!facts.loader_finds.count(soname)) {
      missing.push_back(soname);
      for (const char* other : {"libcudnn.so.7", "libcudnn.so.8", "libcudnn.so.9"}) {
        if (facts.loader_finds.count(other)) {
          notes.push_back("only " + std::string(other) + " in " + facts.loader_finds.at(other));
        }
      }
    }
  }
  std::string cudart = cuda.major() >= 12 ? "libcudart.so." + std::to_string(cuda.major())
                       : cuda.major() == 11 ? "libcudart.so.11.0"
                                            : "libcudart.so." + cuda.major_minor();
  if (!runtime_in_env && !facts.loader_finds.count(cudart)) missing.push_back(cudart);
  if (missing.empty()) {
    out.push_back({"framework-libs:" + label, Status::kOk,
                   who + " finds its CUDA " + cuda.major_minor() + " / cuDNN " + p.cudnn_version + " libraries", "", ""});
    return;
  }
  std::string list, note;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  for (const auto& n : notes) note += "; " + n;
  std::string fix;
  auto tv = Version::parse(p.version);
  auto row = tv ? tables.tensorflow_row(*tv) : std::nullopt;
  if (row && tables.tensorflow_gpu.cell(*row, "pip_and_cuda_extra").rfind("yes", 0) == 0) {
    fix = "pip install \"tensorflow[and-cuda]==" + p.version + "\"";
  } else if (row) {
    fix = "conda install -c conda-forge cudatoolkit=" + tables.tensorflow_gpu.cell(*row, "cuda") +
          " cudnn=" + tables.tensorflow_gpu.cell(*row, "cudnn");
  } else {
    fix = "install CUDA " + cuda.major_minor() + " and cuDNN " + p.cudnn_version + " where the loader finds them";
  }
  out.push_back({"framework-libs:" + label, Status::kFail, who + " cannot load " + list,
                 "built for CUDA " + cuda.major_minor() + " and cuDNN " + p.cudnn_version +
                     ", the dynamic loader (LD_LIBRARY_PATH, ld.so.conf, system directories) finds no " + list + note +
                     ": TensorFlow logs \"Could not load dynamic library '" + missing[0] + "'\" and runs on the CPU",
                 fix});
}

// pip wheels (nvidia-cudnn-cuNN) bring their own cuDNN; a system cuDNN of the same major
// that LD_LIBRARY_PATH puts first is loaded instead, and an older one breaks the framework.
void check_wheel_shadowing(const Facts& facts, const PythonEnvFacts& env, const PackageFacts& p,
                           std::vector<Check>& out) {
  for (const auto& q : env.packages) {
    if (q.name.rfind("nvidia-cudnn-cu", 0) != 0) continue;
    auto wheel = Version::parse(q.version);
    if (!wheel) continue;
    std::string soname = "libcudnn.so." + std::to_string(wheel->major());
    auto it = facts.loader_finds.find(soname);
    if (it == facts.loader_finds.end()) continue;
    // Is that directory an LD_LIBRARY_PATH entry? Its resolved form finds its toolkit.
    std::vector<std::string> raw = split_colon(facts.env.count("LD_LIBRARY_PATH") ? facts.env.at("LD_LIBRARY_PATH") : "");
    std::string resolved;
    for (std::size_t i = 0; i < raw.size() && i < facts.ld_library_path_resolved.size(); ++i) {
      if (raw[i] == it->second && resolved.empty()) resolved = facts.ld_library_path_resolved[i];
    }
    if (resolved.empty()) continue;
    // The cuDNN header of the toolkit that directory belongs to tells the shadowing version.
    std::string system_version;
    for (const auto& lib : facts.libraries) {
      if (lib.name != "cudnn" || lib.source != "header") continue;
      std::string prefix = lib.path.substr(0, lib.path.find("/include/"));
      if (resolved.rfind(prefix + "/", 0) == 0) system_version = lib.version;
    }
    auto sys = Version::parse(system_version);
    bool older = sys && *sys < *wheel;
    out.push_back({"framework-shadowed:" + env_label(env) + "/" + p.name, older ? Status::kFail : Status::kWarn,
                   "LD_LIBRARY_PATH puts " + it->second + "/" + soname + " ahead of " + p.name + "'s " + q.name + " " +
                       q.version,
                   std::string(older ? "the system cuDNN " + system_version + " is older than the wheel's; " : "") +
                       p.name + " " + p.version + " in " + env_label(env) +
                       " loads the first libcudnn the loader meets, not the one it was installed with",
                   "remove " + it->second + " from LD_LIBRARY_PATH when using " + env_label(env)});
  }
}

void check_python_range(const CompatTables& tables, const PythonEnvFacts& env, const PackageFacts& p,
                        std::vector<Check>& out) {
  auto py = Version::parse(env.python_version);
  auto fv = Version::parse(p.version);
  if (!py || !fv || p.installer == "distro") return;
  Version pymm({py->major(), py->minor()});
  std::optional<Version> lo, hi;
  if (is_tensorflow(p.name)) {
    if (auto row = tables.tensorflow_row(*fv)) {
      lo = Version::parse(tables.tensorflow_gpu.cell(*row, "python_min"));
      hi = Version::parse(tables.tensorflow_gpu.cell(*row, "python_max"));
    }
  } else if (p.name == "torch") {
    if (auto row = tables.pytorch_row(*fv)) {
      static const Pattern kRange("([0-9]+\\.[0-9]+)-([0-9]+\\.[0-9]+)");
      if (auto m = kRange.search(tables.pytorch_cuda.cell(*row, "python_versions"))) {
        lo = Version::parse((*m)[1]);
        hi = Version::parse((*m)[2]);
      }
    }
  }
  if (!lo || !hi) return;
  if (pymm < *lo || *hi < pymm) {
    out.push_back({"framework-python:" + env_label(env) + "/" + p.name, Status::kFail,
                   p.name + " " + p.version + " does not support Python " + pymm.major_minor() + " (" + env_label(env) + ")",
                   "the tested range is Python " + lo->major_minor() + " to " + hi->major_minor(),
                   "create the environment with Python " + hi->major_minor() + " (conda create -n env python=" +
                       hi->major_minor() + ")"});
  }
}

void check_conflicts(const PythonEnvFacts& env, std::vector<Check>& out) {
  std::vector<std::string> tf;
  for (const auto& p : env.packages) {
    if (p.installer == "pip" && (p.name == "tensorflow" || p.name == "tensorflow-gpu" || p.name == "tensorflow-cpu" ||
                                 p.name == "tensorflow-intel")) {
      tf.push_back(p.name + " " + p.version);
    }
  }
  // tensorflow on Windows depends on tensorflow-intel; on Linux two distributions of
  // the same tensorflow/ folder overwrite each other.
  if (tf.size() > 1) {
    std::string list;
    for (const auto& t : tf) list += (list.empty() ? "" : ", ") + t;
    out.push_back({"env-conflict:" + env_label(env) + "/tensorflow", Status::kFail,
                   "conflicting TensorFlow packages in " + env_label(env) + ": " + list,
                   "each installs the same tensorflow/ package; whichever was installed last silently wins, and "
                   "uninstalling one breaks the other",
                   "pip uninstall -y tensorflow tensorflow-gpu tensorflow-cpu && pip install \"tensorflow[and-cuda]\""});
  }
  std::map<std::string, std::set<std::string>> conda_versions;
  std::map<int, std::string> cuda_majors;
  for (const auto& p : env.packages) {
    if (p.installer == "conda") conda_versions[p.name].insert(p.version);
    auto v = Version::parse(p.version);
    if (!v) continue;
    if (p.name == "cudatoolkit" || p.name == "cuda-version" || p.name == "cuda-cudart") {
      cuda_majors.emplace(v->major(), p.name + " " + p.version + " (" + p.installer + ")");
    }
    static const Pattern kPip("nvidia-cuda-runtime(-cu([0-9]+))?");
    if (auto m = kPip.match(p.name)) {
      // Version::parse bounds the number; std::stoi threw on a 100-digit package suffix.
      int major = m->matched(2) ? Version::parse((*m)[2])->major() : v->major();
      cuda_majors.emplace(major, p.name + " " + p.version + " (pip)");
    }
  }
  for (const auto& [name, versions] : conda_versions) {
    if (versions.size() < 2) continue;
    std::string list;
    for (const auto& v : versions) list += (list.empty() ? "" : ", ") + v;
    out.push_back({"env-conflict:" + env_label(env) + "/" + name, Status::kFail,
                   "two " + name + " versions recorded in " + env_label(env) + ": " + list,
                   "conda-meta holds a record for each; an interrupted or mixed install left both, and which files "
                   "are on disk is undefined",
                   "conda install --force-reinstall -p " + env.path + " " + name + "=" + *versions.rbegin()});
  }
  if (cuda_majors.size() > 1) {
    std::string list;
    for (const auto& [major, what] : cuda_majors) list += (list.empty() ? "" : ", ") + what;
    out.push_back({"env-conflict:" + env_label(env) + "/cuda", Status::kFail,
                   "two CUDA runtimes in " + env_label(env) + ": " + list,
                   "frameworks load whichever libcudart the loader meets first, not the one they were built for",
                   "keep one CUDA major: remove the other (conda remove / pip uninstall) and reinstall the framework"});
  }
}

}  // namespace

void check_python(const Facts& facts, const CompatTables& tables, std::vector<Check>& out) {
  for (const auto& env : facts.envs) {
    std::string label = env_label(env);
    std::string summary;
    for (const auto& p : env.packages) {
      if (is_framework(p.name) || p.name == "keras" || p.name == "tf-keras" || p.name == "jax") {
        summary += (summary.empty() ? "" : ", ") + p.name + " " + p.version;
      }
    }
    out.push_back({"env:" + label, Status::kOk,
                   "Python " + (env.python_version.empty() ? std::string("?") : env.python_version) + " " + env.kind +
                       " environment " + env.path,
                   summary.empty() ? "no ML framework" : summary, ""});
    check_conflicts(env, out);
    for (const auto& p : env.packages) {
      if (!is_framework(p.name)) continue;
      check_python_range(tables, env, p, out);
      std::string who = p.name + " " + p.version + " in " + label;
      if (!p.cuda_build.has_value()) continue;
      if (!*p.cuda_build) {
        out.push_back({"framework:" + label + "/" + p.name, Status::kOk, who + ": CPU build", "", ""});
        continue;
      }
      auto cuda = Version::parse(p.cuda_version);
      std::string built = "built for CUDA " + (p.cuda_version.empty() ? "?" : p.cuda_version) +
                          (p.cudnn_version.empty() ? "" : ", cuDNN " + p.cudnn_version);
      // A JAX wheel names only its CUDA major; jax_cuda.csv says which CUDA that release's
      // wheels of the major were built with, which is what the driver must run.
      if (auto pv = Version::parse(p.version); is_jax(p.name) && cuda && pv) {
        auto row = tables.jax_row(*pv);
        if (auto b = row ? tables.jax_cuda_build(*row, cuda->major()) : std::nullopt) {
          built += " (JAX " + pv->str() + "'s CUDA " + std::to_string(cuda->major()) + " wheels: CUDA " + b->major_minor() + ")";
          cuda = b;
        }
      }
      std::string title = who + ": CUDA build";
      auto fv = Version::parse(p.version);
      if (fv && is_torch(p.name) && p.name == "torch") {
        auto newest = Version::parse(tables.pytorch_cuda.cell(0, "torch_version"));
        if (newest && Version({newest->major(), newest->minor()}) < Version({fv->major(), fv->minor()})) {
          title += " (newer than the tables know)";
        }
      }
      out.push_back({"framework:" + label + "/" + p.name, Status::kOk, title, built, ""});
      if (!cuda) continue;
      if (facts.driver.loaded && !facts.driver.version.empty()) check_driver_for(facts, tables, env, p, *cuda, out);
      check_arch_for(facts, tables, env, p, *cuda, out);
      if (is_tensorflow(p.name) && p.installer == "pip") check_tf_libraries(facts, tables, env, p, *cuda, out);
      if (p.installer == "pip") check_wheel_shadowing(facts, env, p, out);
    }
  }
}

}  // namespace nnfit::doctor
