// The plugin loader (nnfit/core/plugin.h): where plugins are looked for, dlopen, the entry
// point and the build-id check, each failure one Unsupported naming the file or library.
#include "nnfit/core/plugin.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"

#ifndef NNFIT_BUILD_ID
#error "NNFIT_BUILD_ID is set by cmake/plugins.cmake"
#endif

namespace nnfit {
namespace fs = std::filesystem;

namespace {

// The object that holds this function: the executable (its l_name is empty) or the shared
// object (a Python extension module) nnfit's core is linked into.
struct CoreObject {
  fs::path path;
  bool is_executable = true;
};

CoreObject core_object() {
  Dl_info info{};
  link_map* map = nullptr;
  CoreObject core;
  if (dladdr1(reinterpret_cast<void*>(&core_build_id), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) &&
      map && map->l_name && *map->l_name) {
    core.path = map->l_name;
    core.is_executable = false;
    return core;
  }
  std::error_code ec;
  core.path = fs::read_symlink("/proc/self/exe", ec);
  return core;
}

std::string joined(const std::vector<std::string>& dirs) {
  std::string s;
  for (const std::string& d : dirs) s += (s.empty() ? "" : ", ") + d;
  return s;
}

}  // namespace

const char* core_build_id() { return NNFIT_BUILD_ID; }

std::vector<std::string> plugin_search_dirs() {
  std::vector<std::string> dirs;
  if (const auto env = env_flag("NNFIT_PLUGIN_DIR"); env && !env->empty()) {
    std::size_t start = 0;
    while (start <= env->size()) {
      const std::size_t end = std::min(env->find(':', start), env->size());
      if (end > start) dirs.push_back(env->substr(start, end - start));
      start = end + 1;
    }
    return dirs;
  }
  const fs::path origin = core_object().path.parent_path();
  if (origin.empty()) return dirs;
  dirs.push_back(origin.string());
  dirs.push_back((origin / ".." / "lib" / "nnfit").lexically_normal().string());
  return dirs;
}

const PluginHeader& load_plugin(const PluginSpec& spec) {
  static std::mutex mutex;
  static std::map<std::string, const PluginHeader*> loaded;  // by file name; plugins are never unloaded
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(spec.file); it != loaded.end()) return *it->second;

  const std::vector<std::string> dirs = plugin_search_dirs();
  const bool from_env = env_flag("NNFIT_PLUGIN_DIR").value_or("") != "";
  const std::string set_dir = "set NNFIT_PLUGIN_DIR to the directory that holds " + std::string(spec.file);
  fs::path path;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(dir) / spec.file, ec)) {
      path = fs::path(dir) / spec.file;
      break;
    }
  }
  if (path.empty()) {
    throw Unsupported(std::string("cannot load ") + spec.feature + ": its plugin " + spec.file + " is in none of " +
                          (dirs.empty() ? std::string("(no directory)") : joined(dirs)) +
                          (from_env ? " (NNFIT_PLUGIN_DIR)" : ""),
                      "install it beside the nnfit binary (cmake --install puts it in <prefix>/lib/nnfit; a build "
                      "without the vendor toolkit has none), or " + set_dir);
  }
  // A core inside a shared object that was loaded RTLD_LOCAL (Python loads extension
  // modules so) would hide its symbols from the plugin: make them global first
  // (Note [Plugin symbols]).
  const CoreObject core = core_object();
  if (!core.is_executable) dlopen(core.path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | (spec.global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!handle) {
    const char* why = dlerror();
    throw Unsupported(std::string("cannot load ") + spec.feature + ": " + (why ? why : path.string()),
                      std::string("install ") + spec.install + " (or add its directory to LD_LIBRARY_PATH), or point "
                          "NNFIT_PLUGIN_DIR at a " + spec.file + " built for the libraries this machine has");
  }
  using Entry = const PluginHeader* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, spec.entry));
  if (!entry) {
    throw Unsupported(path.string() + " is not nnfit's plugin for " + spec.feature + ": it has no " + spec.entry,
                      "install the plugin of this nnfit build, or " + set_dir);
  }
  const PluginHeader* header = entry();
  if (!header || !header->build_id || std::strcmp(header->build_id, core_build_id()) != 0) {
    throw Unsupported(path.string() + " comes from another build of nnfit (" +
                          (header && header->build_id ? header->build_id : "no build id") + ", this one is " +
                          core_build_id() + ")",
                      "install the plugin built with this nnfit beside it, or " + set_dir);
  }
  loaded[spec.file] = header;
  return *header;
}

}  // namespace nnfit
