// Where the doctor finds its tables: beside an installed binary (share/nnfit/compat,
// relative to the executable), else the source tree's data/compat; --data-dir overrides.
// The install case runs `cmake --install` of this build into a temporary prefix.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "fake_root.h"

namespace nnfit::doctor::testing {
namespace {

std::string run(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  if (status) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

TEST(DoctorTablesDir, InstalledLayoutWinsOverTheSourceTree) {
  FakeRoot prefix;
  prefix.write("/bin/nnfit", "");
  EXPECT_EQ(find_compat_dir(prefix.path() + "/bin/nnfit"), source_compat_dir());  // no tables installed yet
  prefix.write("/share/nnfit/compat/cuda_driver.csv", "cuda_version\n");
  EXPECT_EQ(find_compat_dir(prefix.path() + "/bin/nnfit"), prefix.path() + "/share/nnfit/compat");
  EXPECT_EQ(find_compat_dir(""), source_compat_dir());
  EXPECT_EQ(source_compat_dir(), NNFIT_SOURCE_DIR "/data/compat");
}

// cmake --install into a temporary prefix; the installed binary must read the installed
// tables (a model added only to the installed gpu_models.csv is recognized), and
// --data-dir must still override them.
TEST(DoctorTablesDir, InstalledNnfitDoctorFindsItsTables) {
  if (FILE* f = std::fopen(NNFIT_CLI, "r")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << "the nnfit CLI is not built at " << NNFIT_CLI;
  }
  if (std::system("cmake --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no cmake on PATH";
  FakeRoot prefix;
  int status = -1;
  std::string log = run("cmake --install " NNFIT_BINARY_DIR " --prefix " + prefix.path() + " 2>&1", &status);
  ASSERT_EQ(status, 0) << log;
  const std::string installed = prefix.path() + "/share/nnfit/compat";
  ASSERT_TRUE(std::filesystem::exists(installed + "/cuda_driver.csv")) << log;
  ASSERT_TRUE(std::filesystem::exists(prefix.path() + "/bin/nnfit")) << log;
  for (const CsvTable* t : tables().all()) {
    std::string name = std::filesystem::path(t->file).filename().string();
    EXPECT_TRUE(std::filesystem::exists(installed + "/" + name)) << name;
  }
  {
    std::ofstream models(installed + "/gpu_models.csv", std::ios::app);
    models << "Installed Test GPU,8.9,https://example.invalid/installed-only,row present only in the installed copy\n";
  }
  FakeRoot machine;
  machine.driver("550.54.14");
  machine.gpu("0000:01:00.0", "Installed Test GPU");
  std::string cmd = "env -u CUDA_VISIBLE_DEVICES -u LD_LIBRARY_PATH -u CUDA_HOME -u CUDA_PATH " + prefix.path() +
                    "/bin/nnfit doctor --json --root " + machine.path();
  auto json = nlohmann::json::parse(run(cmd + " 2>/dev/null", &status));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(json["facts"]["gpus"][0]["compute_capability"], "8.9");
  // --data-dir overrides the installed copy: the source tables do not know the model.
  json = nlohmann::json::parse(run(cmd + " --data-dir " + source_compat_dir() + " 2>/dev/null", &status));
  EXPECT_EQ(json["facts"]["gpus"][0]["compute_capability"], "");
  // A --data-dir without tables is a usage error naming the missing file.
  std::string err = run(cmd + " --data-dir " + machine.path() + " 2>&1", &status);
  EXPECT_EQ(status, 2);
  EXPECT_NE(err.find("cuda_driver.csv"), std::string::npos) << err;
}

}  // namespace
}  // namespace nnfit::doctor::testing
