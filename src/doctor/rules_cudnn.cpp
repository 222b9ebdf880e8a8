// cuDNN <-> CUDA toolkit pairing: cuDNN ships one build per CUDA major (cudnn-..._cuda12-
// archive, nvidia-cudnn-cu12, libcudnn9-cuda-12), and each build loads that major's
// libcublas/libcublasLt. A cuDNN in (or beside) a toolkit of another major fails at its
// first convolution. The build's major comes from its packaging when known; otherwise
// cudnn_cuda.csv says which majors that cuDNN release exists for at all.
#include <algorithm>

#include "rules_util.h"

namespace nnfit::doctor {
namespace {

// The toolkit a cuDNN header goes with: the one it is installed in, else (system headers)
// the one /usr/local/cuda points at, else the only one.
const ToolkitFacts* toolkit_for(const Facts& facts, const LibraryFacts& lib) {
  for (const auto& tk : facts.toolkits) {
    if (lib.path.rfind(tk.path + "/", 0) == 0) return &tk;
  }
  for (const auto& tk : facts.toolkits) {
    if (!facts.default_toolkit.empty() && tk.path == facts.default_toolkit) return &tk;
  }
  return facts.toolkits.size() == 1 ? &facts.toolkits[0] : nullptr;
}

std::string majors_text(const std::vector<int>& majors) {
  std::string out;
  for (std::size_t i = 0; i < majors.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == majors.size() ? " and " : ", ") + std::to_string(majors[i]) + ".x";
  }
  return out;
}

// The install command for cuDNN `version` built for CUDA `major`, in the form the
// installed one came in.
std::string variant_fix(const LibraryFacts& lib, const ToolkitFacts& tk, int major) {
  auto v = Version::parse(lib.version);
  std::string m = std::to_string(major), cudnn_major = v ? std::to_string(v->major()) : "9";
  if (lib.cuda_major_source.find(".dist-info") != std::string::npos) {
    return "replace it with the build for CUDA " + m + ": pip install --no-deps --target <dir> nvidia-cudnn-cu" + m + "==" +
           lib.version + ".* and copy its include/ and lib/ into " + tk.path;
  }
  if (lib.cuda_major_source.find("dpkg") != std::string::npos) {
    return cudnn_major == "8" ? "install the libcudnn8 / libcudnn8-dev packages built +cuda" + m +
                                    ".x (apt-cache policy libcudnn8 lists them), e.g. sudo apt install "
                                    "libcudnn8-dev=<version>+cuda" + m + ".<minor> libcudnn8=<version>+cuda" + m + ".<minor>"
                              : "sudo apt install libcudnn" + cudnn_major + "-cuda-" + m + " libcudnn" + cudnn_major +
                                    "-dev-cuda-" + m + " (and remove the -cuda-" + lib.cuda_major + " ones)";
  }
  return "install the cuDNN " + lib.version + " archive for CUDA " + m + " (cudnn-linux-x86_64-" + lib.version + ".*_cuda" +
         m + "-archive) into " + tk.path;
}

}  // namespace

void check_cudnn_toolkits(const Facts& facts, const CompatTables& tables, std::vector<Check>& out) {
  for (const auto& lib : facts.libraries) {
    if (lib.name != "cudnn" || lib.source != "header") continue;
    const ToolkitFacts* tk = toolkit_for(facts, lib);
    auto v = Version::parse(lib.version);
    auto tv = tk ? Version::parse(tk->version) : std::nullopt;
    if (!v || !tv) continue;
    std::string id = "cudnn-cuda:" + lib.path;
    std::string tk_text = "the CUDA " + tk->version + " toolkit at " + tk->path;
    int want = tv->major();
    if (!lib.cuda_major.empty()) {
      const auto cuda_major = Version::parse(lib.cuda_major);  // bounded, where std::stoi threw
      const int have = cuda_major ? cuda_major->major() : -1;
      std::string who = "cuDNN " + lib.version + " (built for CUDA " + lib.cuda_major + ")";
      if (have == want) {
        out.push_back({id, Status::kOk, who + " matches " + tk_text, "from " + lib.cuda_major_source, ""});
      } else {
        out.push_back({id, Status::kFail, who + " does not match " + tk_text,
                       lib.path + " is cuDNN's build for CUDA " + lib.cuda_major + " (" + lib.cuda_major_source +
                           "); it loads libcublasLt.so." + lib.cuda_major + ", which a CUDA " + std::to_string(want) +
                           " toolkit does not ship: cuDNN calls fail with CUDNN_STATUS_NOT_INITIALIZED or "
                           "'libcublasLt.so." + lib.cuda_major + ": cannot open shared object file'",
                       variant_fix(lib, *tk, want)});
      }
      continue;
    }
    Version known = tables.newest_known_cudnn();
    if (Version({known.major(), known.minor()}) < Version({v->major(), v->minor()})) continue;  // newer than the tables
    std::vector<int> majors = tables.cudnn_cuda_majors(*v);
    if (majors.empty()) continue;  // the table has no CUDA list for this release
    if (std::find(majors.begin(), majors.end(), want) != majors.end()) {
      out.push_back({id, Status::kOk, "cuDNN " + lib.version + " exists for " + tk_text,
                     "cuDNN " + v->major_minor() + " was released for CUDA " + majors_text(majors) +
                         "; which build this is, the files do not say",
                     ""});
      continue;
    }
    std::string newest = tables.newest_cudnn_for_cuda(want);
    out.push_back({id, Status::kFail, "cuDNN " + lib.version + " has no build for " + tk_text,
                   "cuDNN " + v->major_minor() + " was released only for CUDA " + majors_text(majors) +
                       " (data/compat/cudnn_cuda.csv), so " + lib.path + " is a build for another CUDA major: its "
                       "libraries load that major's libcublas/libcudart, which this toolkit does not ship",
                   newest.empty() ? "install a cuDNN built for CUDA " + std::to_string(want)
                                  : "install a cuDNN release built for CUDA " + std::to_string(want) + " (newest known: " +
                                        newest + ") into " + tk->path});
  }
}

}  // namespace nnfit::doctor
