// The entry table of the test plugins plugin_test.cpp loads (fake_plugin.cpp).
#pragma once
#include <vector>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/plugin.h"

namespace nnfit::testing {

struct FakePlugin {
  PluginHeader header;
  // nnfit::env_flags() as the plugin sees it: the executable's, if the plugin binds to the
  // core in the process (Note [Plugin symbols]), or a copy of its own.
  const std::vector<EnvFlag>& (*core_env_flags)();
};

}  // namespace nnfit::testing
