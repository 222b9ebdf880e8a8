// Python environment probe: the system interpreter's dist-packages, --env virtualenvs,
// and conda environments (~/.conda/environments.txt, the envs/ of conda installs). Only
// packages that decide GPU compatibility are kept. Frameworks are read without importing
// them: TensorFlow's build_info.py, torch/version.py, jax's CUDA plugin wheel name, and
// conda build strings ("py3.11_cuda12.1_cudnn8.9.2_0").
#include <nlohmann/json.hpp>
#include <set>

#include "probes.h"
#include "pattern.h"

namespace nnfit::doctor {
namespace {

bool matters(const std::string& name) {
  static const std::set<std::string> kNames = {
      "tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "tf-nightly", "tf-keras", "keras",
      "torch", "pytorch", "pytorch-cuda", "jax", "jaxlib", "cudatoolkit", "cudnn", "nccl", "cuda-version",
      "cuda-toolkit", "cuda-cudart", "cuda-nvcc", "tensorflow-base", "python"};
  return kNames.count(name) || starts_with(name, "nvidia-") || starts_with(name, "jax-cuda");
}

void read_tf_build_info(const RootFs& fs, const std::string& site, PackageFacts& pkg) {
  const std::string path = site + "/tensorflow/python/platform/build_info.py";
  auto text = fs.read(path);
  if (!text) return;
  auto key = [&](const std::string& k) -> std::string {
    // ('key', value) in the OrderedDict form, or 'key': value in the old dict form.
    const Pattern re("'" + Pattern::escape(k) + "'[[:space:]]*[,:][[:space:]]*('([^']*)'|True|False|None|\\[([^]]*)\\])");
    auto m = re.search(*text);
    if (!m) return "\x01";
    if (m->matched(2)) return (*m)[2];
    if (m->matched(3)) return "[" + (*m)[3] + "]";
    return (*m)[1];
  };
  std::string is_cuda = key("is_cuda_build");
  if (is_cuda == "\x01") {
    fs.problem(path, "no 'is_cuda_build' entry; cannot tell what TensorFlow was built for");
    return;
  }
  pkg.cuda_build = is_cuda == "True";
  if (std::string v = key("cuda_version"); v != "\x01" && v != "None") pkg.cuda_version = v;
  if (std::string v = key("cudnn_version"); v != "\x01" && v != "None") pkg.cudnn_version = v;
  if (std::string v = key("cuda_compute_capabilities"); v.size() > 1 && v[0] == '[') {
    static const Pattern kArch("'((sm|compute)_[0-9]+[a-z]?)'");
    for (const PatternMatch& m : kArch.find_all(v)) pkg.cuda_archs.push_back(m[1]);
  }
}

void read_torch_version(const RootFs& fs, const std::string& site, PackageFacts& pkg) {
  const std::string path = site + "/torch/version.py";
  auto text = fs.read(path);
  if (!text) return;
  static const Pattern kCuda("(^|\n)cuda(:[[:space:]]*Optional\\[str\\])?[[:space:]]*=[[:space:]]*(None|'([^']*)')");
  auto m = kCuda.search(*text);
  if (!m) {
    fs.problem(path, "no 'cuda = ...' line; cannot tell what PyTorch was built for");
    return;
  }
  pkg.cuda_build = m->matched(4);
  if (m->matched(4)) pkg.cuda_version = (*m)[4];
  static const Pattern kVersion("(^|\n)__version__[[:space:]]*=[[:space:]]*'([^']*)'");
  if (auto v = kVersion.search(*text)) pkg.version = (*v)[2];
}

void scan_site(const RootFs& fs, const std::string& site, PythonEnvFacts& env) {
  env.site_dirs.push_back(site);
  for (const auto& entry : fs.list(site)) {
    if (!ends_with(entry, ".dist-info") && !ends_with(entry, ".egg-info")) continue;
    auto [name, version] = dist_info_name(entry);
    if (!matters(name)) continue;
    PackageFacts pkg;
    pkg.name = name;
    pkg.version = version;
    // Debian/Ubuntu's own packages are built for the distro's Python; pip's rules do not apply.
    pkg.installer = starts_with(site, "/usr/lib/python3/") ? "distro" : "pip";
    if (starts_with(name, "tensorflow") || name == "tf-nightly") read_tf_build_info(fs, site, pkg);
    if (name == "torch") read_torch_version(fs, site, pkg);
    static const Pattern kJaxPlugin("jax-cuda([0-9]+)-(plugin|pjrt)");
    // Monolithic CUDA jaxlibs (up to 0.4.29) carry the build in the local version:
    // "0.4.13+cuda12.cudnn89".
    static const Pattern kJaxlibCuda("\\+cuda([0-9]+)(\\.cudnn([0-9])([0-9]+))?");
    if (auto m = kJaxPlugin.match(name)) {
      pkg.cuda_build = true;
      pkg.cuda_version = (*m)[1];
    } else if (name == "jaxlib") {
      if (auto j = kJaxlibCuda.search(version)) {
        pkg.cuda_build = true;
        pkg.cuda_version = (*j)[1];
        if (j->matched(2)) pkg.cudnn_version = (*j)[3] + "." + (*j)[4];
      }
    }
    env.packages.push_back(pkg);
  }
}

std::vector<std::string> site_dirs_of(const RootFs& fs, const std::string& prefix) {
  std::vector<std::string> out;
  std::set<std::string> seen;  // venvs link lib64 -> lib
  for (const char* lib : {"/lib", "/lib64"}) {
    for (const auto& entry : fs.list(prefix + lib)) {
      std::string site = prefix + lib + "/" + entry + "/site-packages";
      if (starts_with(entry, "python3") && fs.is_dir(site) && seen.insert(fs.resolve(site)).second) {
        out.push_back(site);
      }
    }
  }
  return out;
}

std::string python_of_site(const std::string& site) {
  static const Pattern kPy("/python([0-9]+\\.[0-9]+)t?/");
  if (auto m = kPy.search(site)) return (*m)[1];
  return "";
}

void scan_conda_meta(const RootFs& fs, const std::string& prefix, PythonEnvFacts& env) {
  for (const auto& entry : fs.list(prefix + "/conda-meta")) {
    if (!ends_with(entry, ".json")) continue;
    const std::string path = prefix + "/conda-meta/" + entry;
    auto text = fs.read(path, 64 << 20);
    if (!text) continue;
    PackageFacts pkg;
    try {
      auto j = nlohmann::json::parse(*text);
      pkg.name = j.at("name").get<std::string>();
      pkg.version = j.at("version").get<std::string>();
      pkg.build = j.value("build", "");
    } catch (const std::exception& e) {
      fs.problem(path, std::string("malformed conda-meta record: ") + e.what());
      continue;
    }
    pkg.installer = "conda";
    if (pkg.name == "python") env.python_version = pkg.version;
    if (!matters(pkg.name) || pkg.name == "python") continue;
    static const Pattern kCuda("cuda([0-9]+\\.[0-9]+)"), kCudnn("cudnn([0-9]+)");
    if (pkg.name == "pytorch" || starts_with(pkg.name, "tensorflow")) {
      if (auto m = kCuda.search(pkg.build)) {
        pkg.cuda_build = true;
        pkg.cuda_version = (*m)[1];
        if (auto c = kCudnn.search(pkg.build)) pkg.cudnn_version = (*c)[1];
      } else if (pkg.build.find("cpu") != std::string::npos) {
        pkg.cuda_build = false;
      }
    }
    env.packages.push_back(pkg);
  }
}

PythonEnvFacts scan_prefix(const RootFs& fs, const std::string& prefix, const std::string& kind) {
  PythonEnvFacts env;
  env.kind = kind;
  env.path = prefix;
  if (auto cfg = fs.read(prefix + "/pyvenv.cfg")) {
    static const Pattern kVer("(^|\n)(version|version_info)[[:space:]]*=[[:space:]]*([0-9.]+)");
    if (auto m = kVer.search(*cfg)) env.python_version = (*m)[3];
  }
  if (kind == "conda") scan_conda_meta(fs, prefix, env);
  for (const auto& site : site_dirs_of(fs, prefix)) {
    scan_site(fs, site, env);
    if (env.python_version.empty()) env.python_version = python_of_site(site);
  }
  return env;
}

std::vector<std::string> homes(const RootFs& fs) {
  std::vector<std::string> out = {"/root"};
  for (const auto& user : fs.list("/home")) out.push_back("/home/" + user);
  return out;
}

}  // namespace

const PackageFacts* PythonEnvFacts::find(const std::string& name) const {
  for (const auto& p : packages) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

void probe_python(const RootFs& fs, const ProbeOptions& options, Facts& facts) {
  // System interpreter: Debian's dist-packages and pip's /usr/local ones.
  PythonEnvFacts system;
  system.kind = "system";
  system.path = "/usr";
  std::vector<std::string> sites;
  if (fs.is_dir("/usr/lib/python3/dist-packages")) sites.push_back("/usr/lib/python3/dist-packages");
  for (const auto& entry : fs.list("/usr/local/lib")) {
    if (starts_with(entry, "python3") && fs.is_dir("/usr/local/lib/" + entry + "/dist-packages")) {
      sites.push_back("/usr/local/lib/" + entry + "/dist-packages");
    }
  }
  for (const auto& entry : fs.list("/usr/lib")) {
    if (starts_with(entry, "python3.") && fs.is_dir("/usr/lib/" + entry)) {
      auto v = Version::parse(entry.substr(6));
      if (v && (system.python_version.empty() || *Version::parse(system.python_version) < *v)) {
        system.python_version = v->str();
      }
    }
  }
  if (fs.exists("/usr/bin/python3")) {
    std::string real = fs.resolve("/usr/bin/python3");
    if (auto v = Version::parse(real.substr(real.rfind('/') + 1)); v && v->parts().size() >= 2) {
      system.python_version = v->str();
    }
  }
  for (const auto& s : sites) scan_site(fs, s, system);
  if (!sites.empty()) facts.envs.push_back(system);

  std::set<std::string> seen;
  for (const auto& venv : options.venvs) {
    std::string real = fs.resolve(venv);
    if (!seen.insert(real).second) continue;
    if (!fs.is_dir(real)) {
      fs.problem(venv, "--env path is not a directory");
      continue;
    }
    bool conda = fs.is_dir(real + "/conda-meta");
    if (!conda && !fs.exists(real + "/pyvenv.cfg")) {
      fs.problem(venv, "--env path has neither pyvenv.cfg nor conda-meta/; scanned anyway");
    }
    facts.envs.push_back(scan_prefix(fs, real, conda ? "conda" : "venv"));
  }

  // pyenv interpreters, kept only when they hold something that matters (a machine often
  // has a dozen bare ones).
  for (const auto& home : homes(fs)) {
    for (const auto& v : fs.list(home + "/.pyenv/versions")) {
      std::string prefix = fs.resolve(home + "/.pyenv/versions/" + v);
      if (!fs.is_dir(prefix) || !seen.insert(prefix).second) continue;
      PythonEnvFacts env = scan_prefix(fs, prefix, fs.is_dir(prefix + "/conda-meta") ? "conda" : "pyenv");
      if (env.python_version.empty()) env.python_version = v;
      if (!env.packages.empty()) facts.envs.push_back(env);
    }
  }

  // conda: the registry file, then the usual install locations and their envs/.
  std::vector<std::string> prefixes;
  std::vector<std::string> installs = {"/opt/conda", "/opt/miniconda3", "/opt/anaconda3"};
  for (const auto& home : homes(fs)) {
    if (auto text = fs.read(home + "/.conda/environments.txt")) {
      for (auto line : split(*text, '\n')) {
        line = trim(line);
        if (!line.empty()) prefixes.push_back(line);
      }
    }
    for (const char* d : {"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".conda"}) {
      installs.push_back(home + "/" + d);
    }
  }
  for (const auto& inst : installs) {
    prefixes.push_back(inst);
    for (const auto& e : fs.list(inst + "/envs")) prefixes.push_back(inst + "/envs/" + e);
  }
  for (const auto& p : prefixes) {
    if (!fs.is_dir(p + "/conda-meta")) continue;  // stale registry line or not an env
    std::string real = fs.resolve(p);
    if (!seen.insert(real).second) continue;
    facts.envs.push_back(scan_prefix(fs, real, "conda"));
  }
}

}  // namespace nnfit::doctor
