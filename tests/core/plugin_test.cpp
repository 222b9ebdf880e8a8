// The plugin loader: where it looks, and one clear Unsupported for every way a plugin can
// fail to load (not there, not a plugin, a library it needs missing, another build's); a
// plugin that loads binds to this process's core (Note [Plugin symbols]).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/fake_plugins/fake_plugin.h"
#include "nnfit/core/error.h"
#include "nnfit/core/plugin.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;

PluginSpec fake(const char* file) {
  return {file, "nnfit_fake_plugin", "the fake feature", "the fake vendor library (apt-get install fake)", false};
}

// NNFIT_PLUGIN_DIR as each test sets it, restored afterwards; a temporary directory.
class PluginLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("NNFIT_PLUGIN_DIR")) saved_ = v;
    char tmpl[] = "/tmp/nnfit_plugin_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (saved_) setenv("NNFIT_PLUGIN_DIR", saved_->c_str(), 1);
    else unsetenv("NNFIT_PLUGIN_DIR");
    fs::remove_all(dir_);
  }
  // The Unsupported load_plugin throws, as "what | hint"; empty if it loads.
  static std::string load_error(const PluginSpec& spec) {
    try {
      load_plugin(spec);
    } catch (const Unsupported& e) {
      return std::string(e.what()) + " | " + e.hint();
    }
    return "";
  }
  std::optional<std::string> saved_;
  fs::path dir_;
};

TEST_F(PluginLoader, LooksBesideTheBinaryThenInItsLibDirectory) {
  unsetenv("NNFIT_PLUGIN_DIR");
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const std::vector<std::string> dirs = plugin_search_dirs();
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], exe.parent_path().string());
  EXPECT_EQ(dirs[1], (exe.parent_path().parent_path() / "lib" / "nnfit").string());
}

TEST_F(PluginLoader, TheEnvironmentReplacesTheDefaultDirectories) {
  setenv("NNFIT_PLUGIN_DIR", "/opt/a::/opt/b", 1);
  EXPECT_EQ(plugin_search_dirs(), (std::vector<std::string>{"/opt/a", "/opt/b"}));
  setenv("NNFIT_PLUGIN_DIR", "", 1);  // empty: as if unset
  EXPECT_EQ(plugin_search_dirs().size(), 2u);
}

TEST_F(PluginLoader, AMissingPluginNamesItsFileTheDirectoriesAndTheVariable) {
  setenv("NNFIT_PLUGIN_DIR", dir_.c_str(), 1);
  const std::string err = load_error(fake("libnnfit_fake_good.so"));
  EXPECT_NE(err.find("cannot load the fake feature: its plugin libnnfit_fake_good.so is in none of " + dir_.string()),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("set NNFIT_PLUGIN_DIR"), std::string::npos) << err;
}

TEST_F(PluginLoader, AFileThatIsNotALibrarySaysWhatDlopenSaid) {
  std::ofstream(dir_ / "libnnfit_fake_good.so") << std::string(256, 'x');  // longer than an ELF header
  setenv("NNFIT_PLUGIN_DIR", dir_.c_str(), 1);
  const std::string err = load_error(fake("libnnfit_fake_good.so"));
  EXPECT_NE(err.find("cannot load the fake feature: " + (dir_ / "libnnfit_fake_good.so").string() + ": invalid ELF header"),
            std::string::npos)
      << err;
}

TEST_F(PluginLoader, AMissingVendorLibraryIsNamedWithWhatToInstall) {
  setenv("NNFIT_PLUGIN_DIR", NNFIT_FAKE_PLUGIN_DIR, 1);
  const std::string err = load_error(fake("libnnfit_fake_missing.so"));
  EXPECT_NE(err.find("cannot load the fake feature: libnnfit_test_vendor.so: cannot open shared object file"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("install the fake vendor library (apt-get install fake)"), std::string::npos) << err;
  EXPECT_NE(err.find("NNFIT_PLUGIN_DIR"), std::string::npos) << err;
}

TEST_F(PluginLoader, APluginOfAnotherBuildIsRefused) {
  setenv("NNFIT_PLUGIN_DIR", NNFIT_FAKE_PLUGIN_DIR, 1);
  const std::string err = load_error(fake("libnnfit_fake_other.so"));
  EXPECT_NE(err.find("libnnfit_fake_other.so comes from another build of nnfit (0.0.0-another-build, this one is " +
                     std::string(core_build_id()) + ")"),
            std::string::npos)
      << err;
}

TEST_F(PluginLoader, APluginWithoutTheEntryPointIsRefused) {
  setenv("NNFIT_PLUGIN_DIR", NNFIT_FAKE_PLUGIN_DIR, 1);
  PluginSpec spec = fake("libnnfit_fake_good.so");
  spec.entry = "nnfit_no_such_entry";
  EXPECT_NE(load_error(spec).find("is not nnfit's plugin for the fake feature: it has no nnfit_no_such_entry"),
            std::string::npos);
}

TEST_F(PluginLoader, APluginBindsToThisProcesssCoreAndLoadsOnce) {
  setenv("NNFIT_PLUGIN_DIR", NNFIT_FAKE_PLUGIN_DIR, 1);
  const auto& plugin = reinterpret_cast<const testing::FakePlugin&>(load_plugin(fake("libnnfit_fake_good.so")));
  EXPECT_STREQ(plugin.header.build_id, core_build_id());
  // One registry of env flags in the process: the plugin's reference is the executable's.
  EXPECT_EQ(&plugin.core_env_flags(), &env_flags());
  // Loaded once: a second call returns the same table, even with the directory gone.
  setenv("NNFIT_PLUGIN_DIR", dir_.c_str(), 1);
  EXPECT_EQ(&load_plugin(fake("libnnfit_fake_good.so")), &plugin.header);
}

}  // namespace
}  // namespace nnfit
