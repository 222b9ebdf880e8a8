// `nnfit ops [--json]`: the op table (src/graph/ops.yaml: inputs, attributes, rules) with,
// per op, the kernels registered for each backend and dtype, so anyone can see what runs
// where. A float16 / bfloat16 op that the
// CPU has no native kernel for runs as its float32 kernel through the widening adapter
// (Note [Compute dtype]); those rows are listed as `widen:<impl>`, the name select()
// gives them, so the listing is what NNFIT_VERBOSE=1 would report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "nnfit/backend/backend.h"
#include "nnfit/backend/kernel_registry.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/graph/op_table.h"

namespace nnfit::cli {
namespace {

struct KernelRow {
  std::string backend;  // "cpu" or "cuda"
  std::string impl;
  std::vector<DType> dtypes;
};

struct OpRow {
  std::string name;
  const OpTableRow* table = nullptr;  // null for a registration of an op outside the table
  std::vector<KernelRow> kernels;
};

const char* backend_name(DeviceType d) { return d == DeviceType::cuda ? "cuda" : "cpu"; }

KernelRow& row_for(std::vector<KernelRow>& rows, const std::string& backend, const std::string& impl) {
  for (KernelRow& r : rows) {
    if (r.backend == backend && r.impl == impl) return r;
  }
  rows.push_back({backend, impl, {}});
  return rows.back();
}

// Registry rows grouped by (backend, implementation) in registration order; then, on the
// CPU, the widened float32 kernels for the low-precision dtypes no kernel takes natively
// (not for in-place updates: their variables and slots stay float32).
std::vector<OpRow> catalogue_rows(const KernelRegistry& registry) {
  std::map<std::string, OpRow> ops;
  for (const OpTableRow& r : op_table()) {
    OpRow& op = ops[std::string(r.name)];
    op.name = r.name;
    op.table = &r;
  }
  for (const RegisteredKernel& k : registry.entries()) {
    OpRow& op = ops[k.op];
    op.name = k.op;
    row_for(op.kernels, backend_name(k.device), k.impl).dtypes.push_back(k.dtype);
  }
  std::vector<OpRow> out;
  for (auto& [name, op] : ops) {
    const bool in_place = has_op_def(name) && !op_def(name).mutated_inputs.empty();
    std::set<DType> native;
    std::vector<std::string> f32_impls;
    for (const KernelRow& r : op.kernels) {
      if (r.backend != "cpu") continue;
      native.insert(r.dtypes.begin(), r.dtypes.end());
      if (std::find(r.dtypes.begin(), r.dtypes.end(), DType::f32) != r.dtypes.end()) f32_impls.push_back(r.impl);
    }
    std::vector<DType> widen;
    for (DType d : {DType::bf16, DType::f16}) {
      if (!native.count(d)) widen.push_back(d);
    }
    if (!in_place && !widen.empty()) {
      for (const std::string& impl : f32_impls) op.kernels.push_back({"cpu", "widen:" + impl, widen});
    }
    // cpu before cuda; within a backend, registration order (fastest first).
    std::stable_sort(op.kernels.begin(), op.kernels.end(),
                     [](const KernelRow& a, const KernelRow& b) { return a.backend < b.backend; });
    out.push_back(std::move(op));
  }
  return out;
}

std::string dtype_list(const std::vector<DType>& dtypes, const char* sep) {
  std::string s;
  for (DType d : dtypes) s += (s.empty() ? "" : sep) + std::string(dtype_name(d));
  return s;
}

nlohmann::json to_json(const std::vector<OpRow>& ops) {
  nlohmann::json list = nlohmann::json::array();
  for (const OpRow& op : ops) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelRow& k : op.kernels) {
      nlohmann::json dtypes = nlohmann::json::array();
      for (DType d : k.dtypes) dtypes.push_back(std::string(dtype_name(d)));
      kernels.push_back({{"backend", k.backend}, {"impl", k.impl}, {"dtypes", dtypes}});
    }
    nlohmann::json entry = {{"name", op.name}, {"kernels", kernels}};
    if (op.table != nullptr) {
      entry["inputs"] = std::string(op.table->inputs);
      entry["attrs"] = std::string(op.table->attrs);
      entry["shape_rule"] = std::string(op.table->shape_rule);
      entry["grad_rule"] = std::string(op.table->grad_rule);
    }
    list.push_back(std::move(entry));
  }
  return {{"ops", list}};
}

void print_table(const std::vector<OpRow>& ops) {
  std::size_t op_w = 2, impl_w = 14;
  for (const OpRow& op : ops) {
    op_w = std::max(op_w, op.name.size());
    for (const KernelRow& k : op.kernels) impl_w = std::max(impl_w, k.impl.size());
  }
  std::printf("%-*s  %-7s  %-*s  %s\n", int(op_w), "op", "backend", int(impl_w), "implementation", "dtypes");
  int cpu_ops = 0, cuda_ops = 0;
  for (const OpRow& op : ops) {
    bool first = true, cpu = false, cuda = false;
    for (const KernelRow& k : op.kernels) {
      std::printf("%-*s  %-7s  %-*s  %s\n", int(op_w), first ? op.name.c_str() : "", k.backend.c_str(), int(impl_w),
                  k.impl.c_str(), dtype_list(k.dtypes, ",").c_str());
      first = false;
      (k.backend == "cuda" ? cuda : cpu) = true;
    }
    if (first) std::printf("%-*s  (no kernel)\n", int(op_w), op.name.c_str());
    cpu_ops += cpu;
    cuda_ops += cuda;
  }
  std::string cuda_status;
  for (const BackendInfo& b : backend_infos()) {
    // A build without CUDA says "not built"; one whose plugin does not load says why.
    if (b.name == "cuda") cuda_status = b.compiled ? "built; " + b.detail : b.detail.rfind("not built", 0) == 0 ? "not built" : b.detail;
  }
  std::printf("\n%zu ops: %d with CPU kernels, %d with CUDA kernels (CUDA backend: %s)\n", ops.size(), cpu_ops,
              cuda_ops, cuda_status.c_str());
}

}  // namespace

Subcommand add_ops_command(CLI::App& parent) {
  auto json = std::make_shared<bool>(false);
  CLI::App* app = parent.add_subcommand("ops", "List the op catalogue and the kernels each backend has per dtype");
  app->add_flag("--json", *json, "print JSON: {\"ops\": [{\"name\", \"inputs\", \"attrs\", \"shape_rule\", \"grad_rule\", \"kernels\": [{\"backend\", \"impl\", \"dtypes\"}]}]}");
  return {app, [json] {
            const std::vector<OpRow> ops = catalogue_rows(kernel_registry());
            if (*json) {
              std::printf("%s\n", to_json(ops).dump(1).c_str());
            } else {
              print_table(ops);
            }
            return 0;
          }};
}

}  // namespace nnfit::cli
