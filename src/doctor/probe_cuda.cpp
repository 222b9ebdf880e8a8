// CUDA toolkit and library probe. A toolkit's version comes from version.json (11.1+),
// version.txt (<= 11.0), the dist-info folders of a toolkit assembled from NVIDIA's
// wheels (no version.json), or include/cuda.h, in that order. cuDNN/cuBLAS/NCCL come from
// their headers' version macros; "what the loader finds" walks LD_LIBRARY_PATH, then
// /etc/ld.so.conf(.d), then the default directories, as ld.so does.
#include <dlfcn.h>

#include <nlohmann/json.hpp>
#include <cctype>
#include <set>

#include "probes.h"
#include "pattern.h"

namespace nnfit::doctor {
namespace {

// A numeric version macro: at most 9 digits, so std::stoi of it cannot overflow.
std::string macro_value(const std::string& text, const std::string& name) {
  return define_value(text, name, "0123456789", 9);
}

void read_toolkit_version(const RootFs& fs, ToolkitFacts& tk) {
  const std::string json_path = tk.path + "/version.json";
  if (auto text = fs.read(json_path)) {
    try {
      auto j = nlohmann::json::parse(*text);
      // cuda.version may be date-stamped ("12.2.20230823"): only major.minor is trusted,
      // the patch comes from cuda_cudart (formats.md §2.1).
      std::string sdk = j.at("cuda").at("version").get<std::string>();
      auto v = Version::parse(sdk);
      if (!v) throw std::runtime_error("cuda.version '" + sdk + "' is not a version");
      tk.version = v->major_minor();
      if (j.contains("cuda_cudart")) {
        auto rt = Version::parse(j["cuda_cudart"].value("version", ""));
        if (rt && rt->major_minor() == tk.version) tk.version = rt->str();
      }
      tk.version_source = "version.json";
      return;
    } catch (const std::exception& e) {
      fs.problem(json_path, std::string("corrupt version.json: ") + e.what());
    }
  }
  if (auto text = fs.read(tk.path + "/version.txt")) {
    static const Pattern kTxt("CUDA Version[[:space:]]+([0-9]+\\.[0-9]+(\\.[0-9]+)?)");
    if (auto m = kTxt.search(*text)) {
      tk.version = (*m)[1];
      tk.version_source = "version.txt";
      return;
    }
    fs.problem(tk.path + "/version.txt", "no 'CUDA Version X.Y' line");
  }
  for (const std::string& dir : {tk.path + "/dist-info", tk.path}) {
    for (const auto& entry : fs.list(dir)) {
      if (!ends_with(entry, ".dist-info")) continue;
      auto [name, version] = dist_info_name(entry);
      if (name == "nvidia-cuda-runtime" || name == "nvidia-cuda-runtime-cu12" || name == "nvidia-cuda-runtime-cu11") {
        tk.wheel_assembled = true;
        tk.version = version;
        tk.version_source = "dist-info (" + entry + ")";
      } else if (starts_with(name, "nvidia-")) {
        tk.wheel_assembled = true;
      }
    }
  }
  if (!tk.version.empty()) return;
  for (const char* header : {"/include/cuda.h", "/targets/x86_64-linux/include/cuda.h"}) {
    if (auto text = fs.read(tk.path + header)) {
      std::string code = macro_value(*text, "CUDA_VERSION");
      if (!code.empty()) {
        int v = std::stoi(code);
        tk.version = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
        tk.version_source = "cuda.h";
        return;
      }
    }
  }
}

void add_library(Facts& facts, LibraryFacts lib) {
  for (const auto& l : facts.libraries) {
    if (l.name == lib.name && l.path == lib.path) return;
  }
  facts.libraries.push_back(std::move(lib));
}

// The CUDA major a cuDNN installation was built for, when its packaging says so: the
// nvidia-cudnn-cuNN dist-info of a toolkit assembled from wheels, or, for system headers,
// the Debian/Ubuntu dev package that owns them (libcudnn9-dev-cuda-12, or libcudnn8-dev
// whose version ends "+cuda12.2"). The header itself does not say.
void cudnn_variant(const RootFs& fs, const std::string& include_dir, int cudnn_major, LibraryFacts& lib) {
  std::string prefix = include_dir.substr(0, include_dir.rfind("/include"));
  if (prefix != "/usr") {
    for (const std::string& dir : {prefix + "/dist-info", prefix}) {
      for (const auto& entry : fs.list(dir)) {
        auto [name, version] = dist_info_name(entry);
        auto v = Version::parse(version);
        if (!ends_with(entry, ".dist-info") || !starts_with(name, "nvidia-cudnn-cu") || !v || v->major() != cudnn_major) {
          continue;
        }
        lib.cuda_major = name.substr(std::string("nvidia-cudnn-cu").size());
        if (lib.cuda_major.empty() || lib.cuda_major.size() > 4 ||
            lib.cuda_major.find_first_not_of("0123456789") != std::string::npos) {
          lib.cuda_major.clear();  // not nvidia-cudnn-cuNN: says nothing about the CUDA build
          continue;
        }
        lib.cuda_major_source = dir + "/" + entry;
        return;
      }
    }
    return;
  }
  auto status = fs.read("/var/lib/dpkg/status", 64 << 20);
  if (!status) return;
  // Scanned by hand: a stanza at a time, in one pass over a file of up to 64 MiB.
  std::size_t start = 0;
  while (start < status->size()) {
    std::size_t end = status->find("\n\n", start);
    if (end == std::string::npos) end = status->size();
    const std::string stanza = "\n" + status->substr(start, end - start) + "\n";
    start = end + 2;
    // "Package: libcudnnN-dev" or "Package: libcudnnN-dev-cuda-M", a whole line.
    const std::string key = "\nPackage: libcudnn";
    const std::size_t at = stanza.find(key);
    if (at == std::string::npos) continue;
    std::size_t i = at + key.size(), digits = i;
    while (digits < stanza.size() && std::isdigit(static_cast<unsigned char>(stanza[digits]))) ++digits;
    const std::string n = stanza.substr(i, digits - i);
    if (n.empty() || n.size() > 9 || std::stoi(n) != cudnn_major || stanza.compare(digits, 4, "-dev") != 0) continue;
    i = digits + 4;
    std::string major;
    if (stanza.compare(i, 6, "-cuda-") == 0) {
      std::size_t e = i + 6;
      while (e < stanza.size() && std::isdigit(static_cast<unsigned char>(stanza[e]))) ++e;
      major = stanza.substr(i + 6, e - i - 6);
      i = e;
      if (major.empty()) continue;
    }
    if (stanza[i] != '\n') continue;
    if (stanza.find("\nStatus: install ok installed") == std::string::npos) continue;
    const std::string package = stanza.substr(at + 10, i - at - 10);
    if (major.empty()) {  // libcudnn8-dev's "Version: 8.9.2.26-1+cuda12.1"
      const std::size_t v = stanza.find("\nVersion: ");
      const std::size_t line_end = v == std::string::npos ? v : stanza.find('\n', v + 1);
      const std::size_t plus = v == std::string::npos ? v : stanza.find("+cuda", v);
      if (plus != std::string::npos && plus < line_end) {
        std::size_t e = plus + 5;
        while (e < line_end && std::isdigit(static_cast<unsigned char>(stanza[e]))) ++e;
        major = stanza.substr(plus + 5, e - plus - 5);
      }
    }
    if (major.empty() || major.size() > 4) continue;
    lib.cuda_major = major;
    lib.cuda_major_source = "/var/lib/dpkg/status (" + package + ")";
    return;
  }
}

void probe_headers(const RootFs& fs, const std::string& include_dir, Facts& facts) {
  if (auto text = fs.read(include_dir + "/cudnn_version.h")) {
    std::string a = macro_value(*text, "CUDNN_MAJOR"), b = macro_value(*text, "CUDNN_MINOR"),
                c = macro_value(*text, "CUDNN_PATCHLEVEL");
    if (a.empty()) {
      fs.problem(include_dir + "/cudnn_version.h", "no CUDNN_MAJOR macro");
    } else {
      LibraryFacts lib{"cudnn", a + "." + b + "." + c, include_dir + "/cudnn_version.h", "header", "", ""};
      cudnn_variant(fs, include_dir, std::stoi(a), lib);
      add_library(facts, lib);
    }
  } else if (auto old = fs.read(include_dir + "/cudnn.h")) {
    std::string a = macro_value(*old, "CUDNN_MAJOR");  // cuDNN <= 7 kept the macros here
    if (!a.empty()) {
      add_library(facts, {"cudnn", a + "." + macro_value(*old, "CUDNN_MINOR") + "." +
                              macro_value(*old, "CUDNN_PATCHLEVEL"),
                          include_dir + "/cudnn.h", "header", "", ""});
    }
  }
  if (auto text = fs.read(include_dir + "/cublas_api.h")) {
    std::string a = macro_value(*text, "CUBLAS_VER_MAJOR");
    if (!a.empty()) {
      add_library(facts, {"cublas", a + "." + macro_value(*text, "CUBLAS_VER_MINOR") + "." +
                              macro_value(*text, "CUBLAS_VER_PATCH"),
                          include_dir + "/cublas_api.h", "header", "", ""});
    }
  }
  if (auto text = fs.read(include_dir + "/nccl.h")) {
    std::string a = macro_value(*text, "NCCL_MAJOR");
    if (!a.empty()) {
      add_library(facts, {"nccl", a + "." + macro_value(*text, "NCCL_MINOR") + "." + macro_value(*text, "NCCL_PATCH"),
                          include_dir + "/nccl.h", "header", "", ""});
    }
  }
}

std::vector<std::string> ld_so_conf_dirs(const RootFs& fs) {
  std::vector<std::string> dirs;
  std::vector<std::string> files = {"/etc/ld.so.conf"};
  for (const auto& f : fs.list("/etc/ld.so.conf.d")) {
    if (ends_with(f, ".conf")) files.push_back("/etc/ld.so.conf.d/" + f);
  }
  for (const auto& f : files) {
    auto text = fs.read(f);
    if (!text) continue;
    for (auto line : split(*text, '\n')) {
      line = trim(line);
      if (line.empty() || line[0] == '#' || starts_with(line, "include")) continue;
      dirs.push_back(line);
    }
  }
  return dirs;
}

void probe_loader(const RootFs& fs, const ProbeOptions& options, Facts& facts) {
  std::vector<std::string> dirs;
  if (auto it = options.env.find("LD_LIBRARY_PATH"); it != options.env.end()) {
    for (const auto& d : split(it->second, ':')) {
      if (!d.empty()) dirs.push_back(d);
    }
  }
  for (const auto& d : ld_so_conf_dirs(fs)) dirs.push_back(d);
  for (const char* d : {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}) {
    dirs.push_back(d);
  }
  facts.loader_dirs = dirs;
  const char* kSonames[] = {"libcudnn.so.7", "libcudnn.so.8", "libcudnn.so.9", "libcudart.so.10.0",
                            "libcudart.so.10.1", "libcudart.so.10.2", "libcudart.so.11.0", "libcudart.so.12",
                            "libcudart.so.13", "libcublas.so.11", "libcublas.so.12", "libcublas.so.13",
                            "libnccl.so.2", "libcuda.so.1"};
  for (const char* soname : kSonames) {
    for (const auto& d : dirs) {
      if (fs.exists(d + "/" + soname)) {
        facts.loader_finds[soname] = d;
        break;
      }
    }
  }
}

// cudnnGetVersion from the cuDNN the loader resolves: the version a framework would get.
void probe_cudnn_runtime(Facts& facts) {
  for (const char* soname : {"libcudnn.so.9", "libcudnn.so.8"}) {
    void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) continue;
    using GetVersion = std::size_t (*)();
    if (auto f = reinterpret_cast<GetVersion>(dlsym(lib, "cudnnGetVersion"))) {
      std::size_t v = f();  // 9.x: major*10000 + minor*100 + patch; 8.x: major*1000 + minor*100 + patch
      std::string text = v >= 90000 ? std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
                                          std::to_string(v % 100)
                                    : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 100) + "." +
                                          std::to_string(v % 100);
      std::string where = facts.loader_finds.count(soname) ? facts.loader_finds.at(soname) + "/" + soname : soname;
      add_library(facts, {"cudnn", text, where, "cudnnGetVersion", "", ""});
    }
    dlclose(lib);
    return;
  }
}

std::string toolkit_of_nvcc(const RootFs& fs, const ProbeOptions& options) {
  auto it = options.env.find("PATH");
  if (it == options.env.end()) return "";
  for (const auto& d : split(it->second, ':')) {
    if (d.empty() || !fs.exists(d + "/nvcc")) continue;
    std::string real = fs.resolve(d + "/nvcc");
    std::size_t slash = real.rfind("/bin/nvcc");
    if (slash != std::string::npos) return real.substr(0, slash);
    return "";  // a wrapper script elsewhere; its toolkit is not known from the path
  }
  return "";
}

}  // namespace

std::pair<std::string, std::string> dist_info_name(const std::string& dir) {
  std::string stem = dir;
  for (const char* ext : {".dist-info", ".egg-info"}) {
    if (ends_with(stem, ext)) stem.resize(stem.size() - std::string(ext).size());
  }
  std::size_t dash = stem.find('-');
  std::string name = stem.substr(0, dash);
  std::string version = dash == std::string::npos ? "" : stem.substr(dash + 1);
  if (std::size_t py = version.find("-py"); py != std::string::npos) version.resize(py);
  for (char& c : name) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return {name, version};
}

void probe_cuda(const RootFs& fs, const ProbeOptions& options, Facts& facts) {
  std::vector<std::string> candidates;
  for (const auto& entry : fs.list("/usr/local")) {
    if (entry == "cuda" || starts_with(entry, "cuda-")) candidates.push_back("/usr/local/" + entry);
  }
  candidates.push_back("/opt/cuda");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto it = options.env.find(var); it != options.env.end() && !it->second.empty()) {
      facts.env[var] = it->second;
      facts.env_resolved[var] = fs.resolve(it->second);
      candidates.push_back(it->second);
    }
  }
  if (auto it = options.env.find("LD_LIBRARY_PATH"); it != options.env.end()) {
    facts.env["LD_LIBRARY_PATH"] = it->second;
    for (const auto& d : split(it->second, ':')) {
      if (!d.empty()) facts.ld_library_path_resolved.push_back(fs.resolve(d));
    }
  }
  facts.nvcc_on_path = toolkit_of_nvcc(fs, options);
  if (!facts.nvcc_on_path.empty()) candidates.push_back(facts.nvcc_on_path);
  if (fs.exists("/usr/local/cuda")) facts.default_toolkit = fs.resolve("/usr/local/cuda");

  std::set<std::string> seen;
  for (const auto& c : candidates) {
    if (!fs.is_dir(c)) continue;
    std::string real = fs.resolve(c);
    if (!seen.insert(real).second) continue;
    if (!fs.is_dir(real + "/bin") && !fs.is_dir(real + "/lib64") && !fs.exists(real + "/version.json") &&
        !fs.exists(real + "/version.txt")) {
      continue;
    }
    ToolkitFacts tk;
    tk.path = real;
    tk.has_nvcc = fs.exists(real + "/bin/nvcc");
    read_toolkit_version(fs, tk);
    if (tk.version.empty()) fs.problem(real, "CUDA toolkit without a readable version (version.json, version.txt, dist-info, cuda.h)");
    facts.toolkits.push_back(tk);
    probe_headers(fs, real + "/include", facts);
  }
  probe_headers(fs, "/usr/include", facts);
  probe_headers(fs, "/usr/include/x86_64-linux-gnu", facts);
  probe_loader(fs, options, facts);
  if (facts.libraries_loaded) probe_cudnn_runtime(facts);
}

}  // namespace nnfit::doctor
