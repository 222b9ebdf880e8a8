// Proposing a framework version for the detected driver and GPUs. The tables list
// releases newest first; the first release (and CUDA variant) that passes the same
// driver and GPU-architecture rules the checks use is the proposal.
#include "nnfit/doctor/target.h"


#include "rules_util.h"
#include "pattern.h"

namespace nnfit::doctor {
namespace {

bool gpus_covered(const Facts& facts, const CompatTables& tables, const Version& cuda) {
  Version mm({cuda.major(), cuda.minor()});
  for (const auto& gpu : facts.gpus) {
    auto range = tables.cuda_range_for(gpu.compute_capability);
    if (!range) continue;
    if (range->first && mm < *range->first) return false;
    if (range->last && *range->last < mm) return false;
  }
  return true;
}

// Pass 0 asks for native driver support; pass 1 accepts minor-version compatibility, so
// a proposal is the newest release that needs no caveat when one exists.
bool runs(const Facts& facts, const CompatTables& tables, const Version& cuda, int pass) {
  Status s = driver_supports(facts, tables, cuda).status;
  return (pass == 0 ? s == Status::kOk : s != Status::kFail) && gpus_covered(facts, tables, cuda);
}

std::string yml(const std::string& name, const std::string& python, const std::vector<std::string>& conda,
                const std::vector<std::string>& pip) {
  std::string out = "# written by nnfit doctor --target\nname: " + name + "\nchannels:\n  - conda-forge\ndependencies:\n";
  out += "  - python=" + python + "\n";
  for (const auto& c : conda) out += "  - " + c + "\n";
  out += "  - pip\n  - pip:\n";
  for (const auto& p : pip) out += "    - " + p + "\n";
  return out;
}

std::vector<Version> versions_in(const std::string& text) {
  std::vector<Version> out;
  static const Pattern kV("[0-9]+\\.[0-9]+");
  for (const PatternMatch& m : kV.find_all(text)) out.push_back(*Version::parse(m[0]));
  return out;
}

// The system interpreter's major.minor when the release supports it (so the proposal
// matches what is installed), else the newest Python the release supports.
std::string pick_python(const Facts& facts, const std::string& lo, const std::string& hi) {
  auto vlo = Version::parse(lo), vhi = Version::parse(hi);
  for (const auto& env : facts.envs) {
    auto py = Version::parse(env.python_version);
    if (env.kind != "system" || !py || !vlo || !vhi) continue;
    Version mm({py->major(), py->minor()});
    if (!(mm < *vlo) && !(*vhi < mm)) return mm.major_minor();
  }
  return vhi ? vhi->major_minor() : hi;
}

}  // namespace

TargetProposal propose_target(const Facts& facts, const CompatTables& tables, const std::string& framework) {
  TargetProposal p;
  p.check.id = "target:" + framework;
  bool gpu = facts.driver.loaded && !facts.driver.version.empty();
  for (int pass = 0; pass < 2; ++pass) {
  if (framework == "tensorflow") {
    const CsvTable& t = tables.tensorflow_gpu;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      std::string v = t.cell(r, "tf_version");
      std::string py = pick_python(facts, t.cell(r, "python_min"), t.cell(r, "python_max"));
      if (!gpu) {
        p.check.title = "--target tensorflow: tensorflow-cpu " + v + " (no NVIDIA driver)";
        p.environment_yml = yml("tensorflow-" + v, py, {}, {"tensorflow-cpu==" + v});
        return p;
      }
      auto cuda = Version::parse(t.cell(r, "cuda"));
      if (!cuda || !runs(facts, tables, *cuda, pass)) continue;
      bool extra = t.cell(r, "pip_and_cuda_extra").rfind("yes", 0) == 0;
      p.check.title = "--target tensorflow: tensorflow " + v + " (CUDA " + t.cell(r, "cuda") + ", cuDNN " +
                      t.cell(r, "cudnn") + ", Python " + t.cell(r, "python_min") + "-" + t.cell(r, "python_max") + ")";
      p.check.fix = extra ? "pip install \"tensorflow[and-cuda]==" + v + "\""
                          : "conda install -c conda-forge cudatoolkit=" + t.cell(r, "cuda") + " cudnn=" +
                                t.cell(r, "cudnn") + " && pip install tensorflow==" + v;
      p.environment_yml =
          extra ? yml("tensorflow-" + v, py, {}, {"tensorflow[and-cuda]==" + v})
                : yml("tensorflow-" + v, py, {"cudatoolkit=" + t.cell(r, "cuda"), "cudnn=" + t.cell(r, "cudnn")},
                      {"tensorflow==" + v});
      return p;
    }
  } else if (framework == "torch") {
    const CsvTable& t = tables.pytorch_cuda;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      std::string v = t.cell(r, "torch_version");
      auto range = versions_in(t.cell(r, "python_versions"));
      std::string py = range.size() >= 2 ? pick_python(facts, range[0].str(), range[1].str()) : "3.12";
      if (!gpu) {
        p.check.title = "--target torch: torch " + v + " CPU build (no NVIDIA driver)";
        p.check.fix = "pip install torch==" + v + ".* --index-url https://download.pytorch.org/whl/cpu";
        p.environment_yml = yml("torch-" + v, py, {}, {"--index-url https://download.pytorch.org/whl/cpu", "torch==" + v + ".*"});
        return p;
      }
      std::optional<Version> best;
      for (const auto& c : versions_in(t.cell(r, "cuda_versions"))) {
        if (c.major() < 7) continue;  // release names in the cell, not CUDA
        if (runs(facts, tables, c, pass) && (!best || *best < c)) best = c;
      }
      if (!best) continue;
      std::string tag = "cu" + std::to_string(best->major()) + std::to_string(best->minor());
      std::string index = "https://download.pytorch.org/whl/" + tag;
      p.check.title = "--target torch: torch " + v + " with CUDA " + best->major_minor() + " (" + tag + ")";
      p.check.fix = "pip install torch==" + v + ".* --index-url " + index;
      p.environment_yml = yml("torch-" + v, py, {}, {"--index-url " + index, "torch==" + v + ".*"});
      return p;
    }
  } else if (framework == "jax") {
    std::string v = tables.jax_cuda.rows.empty() ? "" : tables.jax_cuda.cell(0, "jax_version");
    auto jv = Version::parse(v);
    std::string pin = jv ? jv->major_minor() + ".*" : "*";
    std::string extra;
    if (gpu) {
      for (int major : {13, 12}) {
        if (runs(facts, tables, Version({major, major == 13 ? 0 : 1}), pass)) {
          extra = "[cuda" + std::to_string(major) + "]";
          break;
        }
      }
    }
    if (!gpu || !extra.empty()) {
      p.check.title = "--target jax: jax" + extra + " " + pin + (gpu ? "" : " CPU build (no NVIDIA driver)");
      p.check.fix = "pip install \"jax" + extra + "==" + pin + "\"";
      p.environment_yml = yml("jax-" + pin, "3.13", {}, {"jax" + extra + "==" + pin});
      return p;
    }
  }
  }
  p.check.status = Status::kFail;
  p.check.title = "--target " + framework + ": no release in the tables runs with driver " + facts.driver.version +
                  " on the detected GPUs";
  p.check.fix = "upgrade the NVIDIA driver (sudo ubuntu-drivers install) and run nnfit doctor again";
  return p;
}

}  // namespace nnfit::doctor
