// Text and JSON renderings of a doctor run.
#include "nnfit/doctor/report.h"

#include <nlohmann/json.hpp>

#include "nnfit/core/env_flags.h"

namespace nnfit::doctor {
namespace {

const char* mark(Status s) {
  switch (s) {
    case Status::kOk: return "✓";
    case Status::kWarn: return "!";
    case Status::kFail: return "✗";
  }
  return "✗";
}

nlohmann::ordered_json facts_json(const Facts& f) {
  using json = nlohmann::ordered_json;
  json j;
  j["root"] = f.root;
  j["libraries_loaded"] = f.libraries_loaded;
  j["driver"] = {{"loaded", f.driver.loaded},         {"version", f.driver.version},
                 {"source", f.driver.source},         {"cuda_version", f.driver.cuda_version},
                 {"userspace_version", f.driver.userspace_version}, {"wsl", f.driver.wsl},
                 {"nvml_error", f.driver.nvml_error}, {"nvidia_pci_device", f.driver.nvidia_pci_device}};
  j["gpus"] = json::array();
  for (const auto& g : f.gpus) {
    j["gpus"].push_back({{"index", g.index}, {"name", g.name}, {"compute_capability", g.compute_capability},
                         {"memory_bytes", g.memory_bytes}, {"source", g.source}});
  }
  j["cuda_visible_devices"] = f.cuda_visible_devices ? json(*f.cuda_visible_devices) : json(nullptr);
  j["toolkits"] = json::array();
  for (const auto& t : f.toolkits) {
    j["toolkits"].push_back({{"path", t.path}, {"version", t.version}, {"version_source", t.version_source},
                             {"wheel_assembled", t.wheel_assembled}, {"has_nvcc", t.has_nvcc}});
  }
  j["default_toolkit"] = f.default_toolkit;
  j["nvcc_on_path"] = f.nvcc_on_path;
  j["libraries"] = json::array();
  for (const auto& l : f.libraries) {
    json lib = {{"name", l.name}, {"version", l.version}, {"path", l.path}, {"source", l.source}};
    if (!l.cuda_major.empty()) {
      lib["cuda_major"] = l.cuda_major;
      lib["cuda_major_source"] = l.cuda_major_source;
    }
    j["libraries"].push_back(lib);
  }
  j["loader_finds"] = f.loader_finds;
  j["env"] = f.env;
  j["python_envs"] = json::array();
  for (const auto& e : f.envs) {
    json pk = json::array();
    for (const auto& p : e.packages) {
      json q = {{"name", p.name}, {"version", p.version}, {"installer", p.installer}};
      if (!p.build.empty()) q["build"] = p.build;
      if (p.cuda_build) q["cuda_build"] = *p.cuda_build;
      if (!p.cuda_version.empty()) q["cuda_version"] = p.cuda_version;
      if (!p.cudnn_version.empty()) q["cudnn_version"] = p.cudnn_version;
      if (!p.cuda_archs.empty()) q["cuda_archs"] = p.cuda_archs;
      pk.push_back(q);
    }
    j["python_envs"].push_back(
        {{"kind", e.kind}, {"path", e.path}, {"python_version", e.python_version}, {"packages", pk}});
  }
  j["mpi"] = {{"mpirun", f.mpi.mpirun},
              {"mpirun_implementation", f.mpi.mpirun_implementation},
              {"mpirun_version", f.mpi.mpirun_version},
              {"mpirun_source", f.mpi.mpirun_source},
              {"header", f.mpi.header},
              {"header_implementation", f.mpi.header_implementation},
              {"header_version", f.mpi.header_version},
              {"libraries", f.mpi.libraries}};
  j["onednn"] = {{"compiled", f.onednn.compiled},           {"loaded", f.onednn.loaded},
                 {"loaded_path", f.onednn.loaded_path},     {"loader_soname", f.onednn.loader_soname},
                 {"loader_path", f.onednn.loader_path},     {"loader_version", f.onednn.loader_version},
                 {"header", f.onednn.header},               {"header_version", f.onednn.header_version}};
  j["nnfit"] = {{"version", f.nnfit.version},
                {"backends", f.nnfit.backends},
                {"communicators", f.nnfit.communicators},
                {"cpu_features", f.nnfit.cpu_features},
                {"cuda_architectures", f.nnfit.cuda_architectures},
                {"openmp_version", f.nnfit.openmp_version},
                {"env_flags", f.nnfit.env_flags}};
  // Every declared flag with its meaning and the value in effect (ARCHITECTURE.md: the
  // doctor lists them).
  json declared = json::array();
  for (const EnvFlag& flag : env_flags()) {
    auto it = f.nnfit.env_flags.find(std::string(flag.name));
    declared.push_back({{"name", flag.name},
                        {"default", flag.default_value},
                        {"value", it == f.nnfit.env_flags.end() ? json(nullptr) : json(it->second)},
                        {"help", flag.help}});
  }
  j["nnfit"]["declared_env_flags"] = declared;
  j["problems"] = json::array();
  for (const auto& p : f.problems) j["problems"].push_back({{"path", p.path}, {"what", p.what}});
  return j;
}

}  // namespace

std::string format_text(const std::vector<Check>& checks, const Facts& facts) {
  std::string out = "nnfit doctor" + (facts.root == "/" ? std::string() : " (root " + facts.root + ")") + "\n";
  if (!facts.libraries_loaded) out += "  (library loading skipped: NVML and cuDNN were not loaded)\n";
  int warn = 0, fail = 0;
  for (const auto& c : checks) {
    out += std::string(mark(c.status)) + " " + c.title + "\n";
    if (c.status == Status::kOk) continue;
    (c.status == Status::kWarn ? warn : fail)++;
    if (!c.detail.empty()) out += "    cause: " + c.detail + "\n";
    if (!c.fix.empty()) out += "    fix:   " + c.fix + "\n";
  }
  out += "\n";
  if (fail == 0 && warn == 0) {
    out += "✓ no problems found\n";
  } else {
    out += std::string(fail ? "✗ " : "! ") + std::to_string(fail) + " problem(s), " + std::to_string(warn) +
           " warning(s)\n";
  }
  return out;
}

std::string format_json(const std::vector<Check>& checks, const Facts& facts) {
  nlohmann::ordered_json j;
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& c : checks) {
    j["checks"].push_back(
        {{"id", c.id}, {"status", status_name(c.status)}, {"title", c.title}, {"detail", c.detail}, {"fix", c.fix}});
  }
  j["facts"] = facts_json(facts);
  // Paths and versions come from disk; never let invalid UTF-8 throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace nnfit::doctor
