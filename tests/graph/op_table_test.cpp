// The op table (src/graph/ops.yaml, Note [Op table]) against everything derived from it or
// kept beside it: the catalogue, the kernel registry (CPU families and the CUDA plugin's
// ops), docs/design/ops.md, and the tests every op must have (a conformance case for each
// fast kernel, a finite-difference gradient check for each gradient rule). A new op that
// misses one fails here, naming the op and what it lacks.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "nnfit/backend/kernel_registry.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/graph/op_table.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

DType dtype_of(const std::string& s) {
  static const std::map<std::string, DType> kDtypes = {{"f32", DType::f32}, {"f16", DType::f16}, {"bf16", DType::bf16},
                                                       {"i32", DType::i32}, {"i64", DType::i64}, {"u8", DType::u8},
                                                       {"boolean", DType::boolean}};
  return kDtypes.at(s);
}

// The text of every file under tests/<dir> whose name or text contains `marker` (every file
// if empty).
std::string test_sources(const std::string& dir, const std::string& marker = "") {
  std::string all;
  for (const auto& e : fs::directory_iterator(fs::path(NNFIT_SOURCE_DIR) / "tests" / dir)) {
    const std::string text = slurp(e.path());
    if (marker.empty() || text.find(marker) != std::string::npos ||
        e.path().filename().string().find(marker) != std::string::npos) {
      all += text;
    }
  }
  return all;
}

std::string quoted(std::string_view name) { return "\"" + std::string(name) + "\""; }

TEST(OpTable, IsTheCatalogue) {
  std::vector<std::string> names;
  for (const OpTableRow& r : op_table()) names.push_back(std::string(r.name));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "an op declared twice";
  EXPECT_EQ(names, op_names());
  for (const OpTableRow& r : op_table()) {
    SCOPED_TRACE(std::string(r.name));
    const OpDef& d = op_def(std::string(r.name));
    EXPECT_EQ(d.name, r.name);
    EXPECT_NE(d.infer, nullptr);
    const bool differentiable = r.grad_rule != "none" && r.grad_rule != "zero";
    EXPECT_EQ(d.grad != nullptr, differentiable);
    EXPECT_EQ(d.zero_gradient, r.grad_rule == "zero");
    EXPECT_EQ(d.own_output_dtypes, r.dtypes == "own");
    std::vector<int> mutated;
    for (const std::string& i : split(r.mutates, ',')) mutated.push_back(std::stoi(i));
    EXPECT_EQ(d.mutated_inputs, mutated);
    EXPECT_FALSE(r.inputs.empty() && r.name != "attention_mask") << "no inputs declared";
  }
}

TEST(OpTable, EveryOpHasAReferenceKernelLastAndTheFamiliesItClaims) {
  std::set<std::tuple<std::string, DType, std::string>> claimed;  // (op, dtype, impl)
  for (const OpTableRow& r : op_table()) {
    SCOPED_TRACE(std::string(r.name));
    ASSERT_TRUE(r.has_kernel("ref")) << "no reference kernel";
    for (const OpTableKernel& k : r.kernels) {
      if (k.family.empty()) continue;
      const std::string impl = std::string(k.family) + ":" + std::string(r.name);
      for (const std::string& d : split(k.dtypes, ' ')) {
        claimed.insert({std::string(r.name), dtype_of(d), impl});
        const std::vector<std::string> impls = kernel_registry().implementations(std::string(r.name), DeviceType::cpu, dtype_of(d));
        EXPECT_NE(std::find(impls.begin(), impls.end(), impl), impls.end()) << impl << " at " << d << " not registered";
        if (k.family == "ref") EXPECT_EQ(impls.back(), impl) << "the reference kernel is not last at " << d;
      }
    }
  }
  for (const RegisteredKernel& k : kernel_registry().entries()) {
    if (k.device != DeviceType::cpu) continue;
    EXPECT_TRUE(claimed.count({k.op, k.dtype, k.impl})) << k.impl << " at " << dtype_name(k.dtype) << " is not in the op table";
  }
}

TEST(OpTable, CudaKernelsAreTheOnesTheTableClaims) {
  std::set<std::string> cuda;
  for (const RegisteredKernel& k : kernel_registry().entries()) {
    if (k.device == DeviceType::cuda) cuda.insert(k.op);
  }
  if (cuda.empty()) GTEST_SKIP() << "no CUDA plugin in this build (or it does not load): nothing to compare";
  for (const OpTableRow& r : op_table()) {
    EXPECT_EQ(r.cuda, cuda.count(std::string(r.name)) != 0) << r.name << ": the table says cuda: " << (r.cuda ? "yes" : "no");
  }
}

// Each op's tests, found by its quoted name: a conformance case (tests/conformance, fast
// kernels against the reference) for every op with an OpenMP or oneDNN kernel, and a
// finite-difference gradient check (tests/graph, gradient_check_harness.h and the files using
// it; cast through the harness's bf16/f16 checks) for every op with a gradient rule. The
// gradient ops are checked through their forward op.
TEST(OpTable, EveryOpHasItsConformanceCaseAndGradientCheck) {
  const std::string conformance = test_sources("conformance");
  const std::string gradient = test_sources("graph", "gradient_check_harness");
  ASSERT_FALSE(conformance.empty());
  ASSERT_FALSE(gradient.empty());
  for (const OpTableRow& r : op_table()) {
    if (r.has_kernel("omp") || r.has_kernel("onednn")) {
      EXPECT_NE(conformance.find(quoted(r.name)), std::string::npos) << r.name << " has a fast kernel and no conformance case";
    }
    if (r.grad_rule != "none" && r.grad_rule != "zero") {
      EXPECT_NE(gradient.find(quoted(r.name)), std::string::npos) << r.name << " has a gradient rule and no gradient check";
    }
  }
}

// docs/design/ops.md has a row `| \`<op>\` |` for every op, and every such row outside the
// losses' table (whose rows are loss kinds) is an op of the table.
TEST(OpTable, TheDocsListEveryOp) {
  std::istringstream doc(slurp(fs::path(NNFIT_SOURCE_DIR) / "docs" / "design" / "ops.md"));
  std::set<std::string> rows;
  std::string line, section;
  std::set<std::string> table;
  for (const OpTableRow& r : op_table()) table.insert(std::string(r.name));
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) section = line;
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first_cell = line.substr(1, line.find(" | ") - 1);  // "`maximum`, `minimum`"
    for (std::size_t b = first_cell.find('`'); b != std::string::npos; b = first_cell.find('`', first_cell.find('`', b + 1) + 1)) {
      const std::string name = first_cell.substr(b + 1, first_cell.find('`', b + 1) - b - 1);
      rows.insert(name);
      if (section.rfind("## Losses", 0) != 0) EXPECT_TRUE(table.count(name)) << "ops.md lists " << name << ", not in the op table";
    }
  }
  for (const std::string& op : table) EXPECT_TRUE(rows.count(op)) << op << " has no row in docs/design/ops.md";
}

}  // namespace
}  // namespace nnfit
