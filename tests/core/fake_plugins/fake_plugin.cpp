// A plugin for plugin_test.cpp, built three ways (tests/core/fake_plugins.cmake): with this
// build's id, with another build's, and needing a library that is not installed. Like the
// real plugins it links nothing of nnfit: env_flags() is the test binary's.
#include "core/fake_plugins/fake_plugin.h"

#if NNFIT_FAKE_NEEDS_VENDOR
extern "C" int nnfit_test_vendor_answer();  // fake_vendor.cpp, absent at run time
#endif

namespace nnfit::testing {
namespace {

const std::vector<EnvFlag>& env_flags_in_plugin() {
#if NNFIT_FAKE_NEEDS_VENDOR
  (void)nnfit_test_vendor_answer();
#endif
  return env_flags();
}

const FakePlugin kPlugin = {{NNFIT_FAKE_BUILD_ID}, &env_flags_in_plugin};

}  // namespace
}  // namespace nnfit::testing

extern "C" const nnfit::PluginHeader* nnfit_fake_plugin() { return &nnfit::testing::kPlugin.header; }
