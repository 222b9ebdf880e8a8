// The op table as data: one row per op of src/graph/ops.yaml, generated at build time
// (Note [Op table] below). The catalogue (op_def()), the CPU kernel registrations, `nnfit ops`
// and the coverage tests all come from the same rows, so an op is declared once.
#pragma once
#include <array>
#include <span>
#include <string_view>

namespace nnfit {

// Note [Op table]
// ~~~~~~~~~~~~~~~
// An op is declared once, in src/graph/ops.yaml: its inputs, attributes, shape rule,
// gradient rule, flags and, per CPU kernel family, the factory and key dtypes (in the spirit
// of PyTorch's native_functions.yaml). scripts/gen_op_table.py, run by CMake when the table
// changes, generates the catalogue op_def() reads (graph) and register_table_kernels()
// (backend), so the module drawing holds: each generated file lands in its own module's
// library and only references functions of that module. The rules stay C++ functions in
// namespace nnfit::op_rules::<family> (src/graph/<family>_op_defs.cpp) and the kernels
// factories in their files; the table only names them, and the linker checks each name.
// A generator over a data file, not a constexpr C++ table, because the table must name
// things of two modules (rules in graph, kernels in backend) that may not include each
// other; and because only the two generated files recompile when it changes. `nnfit ops`
// and tests/graph/op_table_test.cpp read op_table(); the test checks the registry, the CUDA
// plugin's ops, docs/design/ops.md and each op's conformance case and gradient check
// against it. Adding an op: its table entry, its rules and kernels, its tests.

// One kernel family's registration of an op on the CPU.
struct OpTableKernel {
  std::string_view family;  // "onednn", "omp" or "ref"
  std::string_view dtypes;  // key dtypes, space separated: "f32 bf16 f16"
};

struct OpTableRow {
  std::string_view name;
  std::string_view inputs;      // "x, gamma, beta"; `?` optional, `...` variadic
  std::string_view attrs;       // attribute keys, comma separated
  std::string_view shape_rule;  // "<family>::<function>" in nnfit::op_rules
  std::string_view grad_rule;   // the same, or "none" / "zero" (nothing flows back)
  std::string_view mutates;     // input indices written in place, comma separated
  std::string_view dtypes;      // "own" where the shape rule sets its outputs' dtypes
  std::array<OpTableKernel, 3> kernels;  // in registration order; empty family past the last
  bool cuda = false;            // the CUDA plugin has a kernel (own or vendor)

  bool has_kernel(std::string_view family) const {
    for (const OpTableKernel& k : kernels) {
      if (k.family == family) return true;
    }
    return false;
  }
};

// Every row, in the table's order (grouped by family, as docs/design/ops.md).
std::span<const OpTableRow> op_table();

}  // namespace nnfit
