// The doctor's rules: pure functions from Facts and the compatibility tables to a list of
// checks, each ok / warn / fail with a plain-words detail and the exact fix. Rules never
// read the filesystem, so every scenario is testable from a fake root.
#pragma once
#include <string>
#include <vector>

#include "nnfit/doctor/compat_tables.h"
#include "nnfit/doctor/facts.h"

namespace nnfit::doctor {

enum class Status { kOk, kWarn, kFail };
const char* status_name(Status s);  // "ok", "warn", "fail"

struct Check {
  std::string id;      // stable, e.g. "driver", "framework-driver:peers/torch"
  Status status = Status::kOk;
  std::string title;   // one line a person reads first
  std::string detail;  // the cause, in plain words
  std::string fix;     // exact commands or pins; empty when nothing to do
};

// Fills what the tables can tell about probed facts: a GPU's compute capability from
// its model name, the driver's CUDA version from its version number.
void complete_facts(Facts& facts, const CompatTables& tables);

// Every check, in report order: driver, GPUs, toolkits, libraries, environment
// variables, Python environments, probe problems, nnfit itself.
std::vector<Check> run_rules(const Facts& facts, const CompatTables& tables);

// CMake's CUDA_ARCHITECTURES list ("75-real;80;100-virtual", or with commas) as nvcc targets: "80" is
// both "sm_80" and "compute_80", "-real" only the first, "-virtual" only the second.
std::vector<std::string> cuda_architectures_from_cmake(const std::string& list);

// 0 when no check fails, 1 otherwise.
int exit_code(const std::vector<Check>& checks);

}  // namespace nnfit::doctor
