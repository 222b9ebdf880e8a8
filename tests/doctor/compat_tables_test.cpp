// Table integrity: every row has a source, every CUDA version a TensorFlow or PyTorch row
// names has a driver row, and the lookups the rules depend on answer as the tables say.
#include <gtest/gtest.h>

#include <regex>

#include "fake_root.h"

namespace nnfit::doctor::testing {
namespace {

TEST(CompatTables, EveryRowHasASource) {
  for (const CsvTable* t : tables().all()) {
    std::size_t col = t->column("source_url");
    ASSERT_FALSE(t->rows.empty()) << t->file;
    for (std::size_t r = 0; r < t->rows.size(); ++r) {
      EXPECT_FALSE(t->rows[r][col].find_first_not_of(" \t") == std::string::npos) << t->file << " row " << r + 2;
    }
  }
}

TEST(CompatTables, EveryFrameworkCudaVersionHasADriverRow) {
  const CompatTables& t = tables();
  std::regex v(R"(\d+\.\d+)");
  auto check = [&](const std::string& cell, const std::string& where) {
    for (std::sregex_iterator it(cell.begin(), cell.end(), v), end; it != end; ++it) {
      Version cuda = *Version::parse(it->str());
      if (cuda.major() < 7) continue;  // release names inside the cell ("(1.8.0)")
      EXPECT_TRUE(t.min_driver(cuda).has_value()) << where << " names CUDA " << cuda.str();
    }
  };
  for (std::size_t r = 0; r < t.tensorflow_gpu.rows.size(); ++r) {
    check(t.tensorflow_gpu.cell(r, "cuda"), "tensorflow " + t.tensorflow_gpu.cell(r, "tf_version"));
  }
  for (std::size_t r = 0; r < t.pytorch_cuda.rows.size(); ++r) {
    check(t.pytorch_cuda.cell(r, "cuda_versions"), "torch " + t.pytorch_cuda.cell(r, "torch_version"));
  }
  for (std::size_t r = 0; r < t.jax_cuda.rows.size(); ++r) {
    check(t.jax_cuda.cell(r, "cuda_builds"), "jax " + t.jax_cuda.cell(r, "jax_min"));
  }
}

// pytorch_archs.csv rows name a variant the release really has (pytorch_cuda.csv), and
// every arch is an sm_XX / compute_XX target.
TEST(CompatTables, TorchArchRowsMatchTheReleaseTable) {
  const CompatTables& t = tables();
  std::regex arch(R"((sm|compute)_\d{2,3})");
  for (std::size_t r = 0; r < t.pytorch_archs.rows.size(); ++r) {
    for (const char* bound : {"torch_min", "torch_max"}) {
      Version torch = *Version::parse(t.pytorch_archs.cell(r, bound));
      auto row = t.pytorch_row(torch);
      ASSERT_TRUE(row.has_value()) << "torch " << torch.str();
      std::string tag = t.pytorch_archs.cell(r, "cuda_variant");
      std::string cuda = tag.substr(2, 2) + "." + tag.substr(4);
      EXPECT_NE(t.pytorch_cuda.cell(*row, "cuda_versions").find(cuda), std::string::npos)
          << "torch " << torch.str() << " has no " << tag;
      for (const auto& a : t.torch_archs(torch, *Version::parse(cuda))) EXPECT_TRUE(std::regex_match(a, arch)) << a;
    }
  }
}

// The CUDA 8.0-9.2 rows were added for the framework rows that name them; each must carry
// a real source (not an UNVERIFIED marker) and NVIDIA's values.
TEST(CompatTables, OldCudaDriverRowsAreSourced) {
  const CompatTables& t = tables();
  for (std::size_t r = 0; r < t.cuda_driver.rows.size(); ++r) {
    EXPECT_EQ(t.cuda_driver.cell(r, "notes").find("UNVERIFIED"), std::string::npos) << "row " << r + 2;
  }
  EXPECT_EQ(t.min_driver(*Version::parse("9.2"))->str(), "396.26");
  EXPECT_EQ(t.min_driver(*Version::parse("9.1"))->str(), "390.46");
  EXPECT_EQ(t.min_driver(*Version::parse("9.0"))->str(), "384.81");
  EXPECT_EQ(t.min_driver(*Version::parse("8.0"))->str(), "367.48");
}

TEST(CompatTables, Lookups) {
  const CompatTables& t = tables();
  EXPECT_EQ(t.min_driver(*Version::parse("12.2"))->str(), "535.54.03");
  EXPECT_EQ(t.minor_compat_min(12)->str(), "525.60.13");
  EXPECT_EQ(t.minor_compat_min(13)->str(), "580");
  EXPECT_EQ(t.newest_cuda_for_driver(*Version::parse("535.104.05"))->str(), "12.2");
  EXPECT_EQ(t.compute_capability_of("NVIDIA GeForce RTX 3090").value_or(""), "8.6");
  EXPECT_EQ(t.compute_capability_of("NVIDIA A100-SXM4-80GB").value_or(""), "8.0");
  EXPECT_EQ(t.compute_capability_of("NVIDIA A10").value_or(""), "8.6");
  EXPECT_EQ(t.compute_capability_of("NVIDIA GeForce RTX 5090").value_or(""), "12.0");
  EXPECT_FALSE(t.compute_capability_of("Matrox G200").has_value());
  auto blackwell = t.cuda_range_for("12.0");
  ASSERT_TRUE(blackwell.has_value());
  EXPECT_EQ(blackwell->first->str(), "12.8");
  EXPECT_FALSE(blackwell->last.has_value());
  EXPECT_EQ(t.cuda_range_for("3.7")->last->str(), "11.8");
}

}  // namespace
}  // namespace nnfit::doctor::testing
