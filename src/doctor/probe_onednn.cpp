// oneDNN probe: the libdnnl.so.N the dynamic loader resolves on the probed root (the file
// name carries the version, libdnnl.so.2 -> libdnnl.so.2.6) and the installed header's
// version. What nnfit itself was built with and loaded comes from the CLI (Note [oneDNN
// versions from the CLI] in docs/design/doctor.md); library_path_of() serves it.
#include <dlfcn.h>


#include "probes.h"
#include "pattern.h"

namespace nnfit::doctor {

std::string library_path_of(const void* symbol) {
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

void probe_onednn(const RootFs& fs, Facts& facts) {
  OneDnnFacts& dnnl = facts.onednn;
  for (const char* soname : {"libdnnl.so.3", "libdnnl.so.2", "libdnnl.so.1"}) {
    for (const auto& d : facts.loader_dirs) {
      if (!fs.exists(d + "/" + soname)) continue;
      facts.loader_finds[soname] = d;
      if (dnnl.loader_soname.empty()) {
        dnnl.loader_soname = soname;
        dnnl.loader_path = fs.resolve(d + "/" + soname);
        std::string file = dnnl.loader_path.substr(dnnl.loader_path.rfind('/') + 1);
        // Only a file name longer than the soname carries a version ("libdnnl.so.2.6").
        if (file.size() > std::string(soname).size() && starts_with(file, std::string(soname) + ".")) {
          if (auto v = Version::parse(file.substr(std::string("libdnnl.so.").size()))) dnnl.loader_version = v->str();
        }
      }
      break;
    }
  }
  for (const char* h : {"/usr/include/oneapi/dnnl/dnnl_version.h", "/usr/include/dnnl_version.h",
                        "/usr/local/include/oneapi/dnnl/dnnl_version.h", "/usr/local/include/dnnl_version.h",
                        "/opt/intel/oneapi/dnnl/latest/include/oneapi/dnnl/dnnl_version.h"}) {
    auto text = fs.read(h);
    if (!text) continue;
    auto field = [&](const char* name) {
      const Pattern re(std::string("#[[:space:]]*define[[:space:]]+") + name + "[[:space:]]+([0-9]+)");
      auto m = re.search(*text);
      return m ? (*m)[1] : std::string();
    };
    std::string major = field("DNNL_VERSION_MAJOR");
    if (major.empty()) {
      fs.problem(h, "no DNNL_VERSION_MAJOR macro");
      continue;
    }
    dnnl.header = h;
    dnnl.header_version = major + "." + field("DNNL_VERSION_MINOR") + "." + field("DNNL_VERSION_PATCH");
    break;
  }
}

}  // namespace nnfit::doctor
