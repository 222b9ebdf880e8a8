// The compatibility rules. Each check states one fact about the machine; a problem's
// detail says why it breaks (in the words of the error the user would see) and its fix
// gives commands or pins. Note [Minor-version compatibility]: a CUDA 11+ binary runs on
// any driver at or above its major's compat minimum (cuda_driver.csv "N.x" rows), so a
// driver below the toolkit's own minimum is a warning there, not a failure.
#include "nnfit/doctor/rules.h"

#include <algorithm>
#include <set>

#include "rules_util.h"

namespace nnfit::doctor {

const char* status_name(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kWarn: return "warn";
    case Status::kFail: return "fail";
  }
  return "fail";
}

int exit_code(const std::vector<Check>& checks) {
  for (const auto& c : checks) {
    if (c.status == Status::kFail) return 1;
  }
  return 0;
}

void complete_facts(Facts& facts, const CompatTables& tables) {
  for (auto& gpu : facts.gpus) {
    if (gpu.compute_capability.empty()) {
      if (auto cc = tables.compute_capability_of(gpu.name)) gpu.compute_capability = *cc;
    }
  }
  if (facts.driver.cuda_version.empty()) {
    if (auto dv = Version::parse(facts.driver.version)) {
      if (auto cuda = tables.newest_cuda_for_driver(*dv)) facts.driver.cuda_version = cuda->major_minor();
    }
  }
}

std::vector<Check> run_rules(const Facts& facts, const CompatTables& tables) {
  std::vector<Check> checks;
  check_driver(facts, tables, checks);
  check_gpus(facts, tables, checks);
  check_toolkits(facts, tables, checks);
  check_libraries(facts, tables, checks);
  check_cudnn_toolkits(facts, tables, checks);
  check_env_vars(facts, checks);
  check_python(facts, tables, checks);
  for (const auto& p : facts.problems) {
    checks.push_back({"probe:" + p.path, Status::kWarn, "could not read " + p.path, p.what,
                      "fix or remove the file; the doctor skipped it and reports the rest"});
  }
  check_nnfit(facts, checks);
  return checks;
}

}  // namespace nnfit::doctor
