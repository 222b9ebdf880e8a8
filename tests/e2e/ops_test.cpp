// `nnfit ops [--json]`: every op of the catalogue once with its op table row, and for each every registration
// the kernel registry holds (backend, implementation, dtypes), plus the widened float32
// kernels a low-precision op runs on the CPU; the table says the same in columns.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "nnfit/backend/kernel_registry.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/graph/op_table.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int code = 0;
  std::string out, err;
};

class Ops : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("nnfit_ops_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result run(const std::string& args) const {
    const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
    const int status =
        std::system((std::string(NNFIT_CLI) + " " + args + " >" + out.string() + " 2>" + err.string()).c_str());
    const auto slurp = [](const fs::path& p) {
      std::ifstream in(p, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, slurp(out), slurp(err)};
  }
  // The kernels entry of `op`, or null.
  static const json* op_entry(const json& doc, const std::string& op) {
    for (const json& o : doc["ops"]) {
      if (o["name"] == op) return &o["kernels"];
    }
    return nullptr;
  }
  static std::set<std::string> dtypes_of(const json& kernels, const std::string& backend, const std::string& impl) {
    std::set<std::string> out;
    for (const json& k : kernels) {
      if (k["backend"] == backend && k["impl"] == impl) {
        for (const json& d : k["dtypes"]) out.insert(d.get<std::string>());
      }
    }
    return out;
  }
  fs::path dir_;
};

TEST_F(Ops, JsonListsEveryOpAndEveryRegistration) {
  const Result r = run("ops --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_TRUE(doc["ops"].is_array());
  std::vector<std::string> names;
  for (const json& o : doc["ops"]) {
    names.push_back(o["name"].get<std::string>());
    for (const json& k : o["kernels"]) {
      EXPECT_TRUE(k["backend"] == "cpu" || k["backend"] == "cuda") << k.dump();
      EXPECT_FALSE(k["impl"].get<std::string>().empty()) << o["name"];
      EXPECT_FALSE(k["dtypes"].empty()) << o["name"] << " " << k["impl"];
    }
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "an op listed twice";
  for (const std::string& op : nnfit::op_names()) {
    const json* kernels = op_entry(doc, op);
    ASSERT_NE(kernels, nullptr) << op << " of the catalogue is missing";
    EXPECT_TRUE(dtypes_of(*kernels, "cpu", "ref:" + op).count("float32")) << op << " has no float32 reference kernel listed";
  }
  // Each op's row of the op table: its inputs, attributes and rules.
  for (const nnfit::OpTableRow& r : nnfit::op_table()) {
    for (const json& o : doc["ops"]) {
      if (o["name"] != r.name) continue;
      EXPECT_EQ(o["inputs"], std::string(r.inputs)) << r.name;
      EXPECT_EQ(o["attrs"], std::string(r.attrs)) << r.name;
      EXPECT_EQ(o["shape_rule"], std::string(r.shape_rule)) << r.name;
      EXPECT_EQ(o["grad_rule"], std::string(r.grad_rule)) << r.name;
    }
  }
  // Every registration appears under its op, backend and implementation.
  for (const nnfit::RegisteredKernel& k : nnfit::kernel_registry().entries()) {
    const json* kernels = op_entry(doc, k.op);
    ASSERT_NE(kernels, nullptr) << k.op;
    const char* backend = k.device == nnfit::DeviceType::cuda ? "cuda" : "cpu";
    EXPECT_TRUE(dtypes_of(*kernels, backend, k.impl).count(std::string(nnfit::dtype_name(k.dtype))))
        << k.op << " " << k.impl << " " << nnfit::dtype_name(k.dtype);
  }
  // Fixed points: oneDNN's matmul takes bfloat16 natively where float16 is widened;
  // in-place optimizer updates are never widened; cast has native low-precision kernels.
  const json& matmul = *op_entry(doc, "matmul");
  EXPECT_TRUE(dtypes_of(matmul, "cpu", "onednn:matmul").count("float32"));
  EXPECT_TRUE(dtypes_of(*op_entry(doc, "bias_add"), "cpu", "widen:omp:bias_add") ==
              (std::set<std::string>{"bfloat16", "float16"}));
  for (const json& k : *op_entry(doc, "adam_update")) {
    EXPECT_NE(k["impl"].get<std::string>().rfind("widen:", 0), 0u) << "an in-place update listed as widened";
  }
  EXPECT_TRUE(dtypes_of(*op_entry(doc, "cast"), "cpu", "omp:cast") ==
              (std::set<std::string>{"float32", "float16", "bfloat16"}));
}

TEST_F(Ops, TableHasAColumnPerFieldAndASummary) {
  const Result r = run("ops");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("op ", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("backend  implementation"), std::string::npos);
  EXPECT_NE(r.out.find("onednn:matmul"), std::string::npos);
  EXPECT_NE(r.out.find(std::to_string(nnfit::op_names().size()) + " ops: "), std::string::npos) << r.out.substr(r.out.size() - 300);
  EXPECT_NE(r.out.find("CUDA backend: "), std::string::npos);
}

TEST_F(Ops, UnknownFlagIsAUsageError) {
  const Result r = run("ops --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
}

}  // namespace
