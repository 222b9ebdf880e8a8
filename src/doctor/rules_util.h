// The groups of rules run_rules() calls, and the driver-support judgement they share.
#pragma once
#include <string>
#include <vector>

#include "nnfit/doctor/rules.h"

namespace nnfit::doctor {

struct Support {
  Status status = Status::kOk;
  std::string why;        // plain words
  std::string min_driver; // the driver a fix needs, when known
};
// Can the probed driver run code built with CUDA `cuda`? Requires a loaded driver.
Support driver_supports(const Facts& facts, const CompatTables& tables, const Version& cuda);
std::string driver_upgrade_fix(const std::string& min_driver);
std::string env_label(const PythonEnvFacts& env);

void check_driver(const Facts& facts, const CompatTables& tables, std::vector<Check>& out);
void check_gpus(const Facts& facts, const CompatTables& tables, std::vector<Check>& out);
void check_toolkits(const Facts& facts, const CompatTables& tables, std::vector<Check>& out);
void check_libraries(const Facts& facts, const CompatTables& tables, std::vector<Check>& out);
void check_cudnn_toolkits(const Facts& facts, const CompatTables& tables, std::vector<Check>& out);
void check_env_vars(const Facts& facts, std::vector<Check>& out);
void check_python(const Facts& facts, const CompatTables& tables, std::vector<Check>& out);
void check_nnfit(const Facts& facts, std::vector<Check>& out);

}  // namespace nnfit::doctor
