// Plugins: shared modules loaded with dlopen when a feature that needs a vendor library is
// first used, so a process that never asks for CUDA or MPI never maps their libraries
// (docs/design/cuda.md, "Plugins"). Two exist: libnnfit_cuda.so (the CUDA backend) and
// libnnfit_mpi.so (the MPI communicator); backend_registry.cpp and dist/communicator.cpp
// load them behind the factories that made these objects before.
//
// Note [Plugin symbols]: a plugin links nothing of nnfit's core: its references to nnfit's
// functions and objects (the kernel registry, the allocator, error types) bind at dlopen to
// the definitions the executable exports (cmake/plugins.cmake, nnfit_export_core), so there is
// one registry, one allocator and one typeinfo per error type in the process. Its entry point
// is one extern "C" function returning a table of C++ factories: plugin and core come from
// the same build (checked by a build id), so a C++ seam needs no ABI of its own.
//
// Thread safety: load_plugin may be called from any thread; callers cache its result.
#pragma once
#include <string>
#include <vector>

namespace nnfit {

// The first member of every plugin's entry table.
//
// Note [Plugin entry type]: every plugin's extern "C" entry returns `const PluginHeader*`,
// the address of its table's header, which is what load_plugin calls it as: calling a
// function through a pointer of another type is undefined (clang's -fsanitize=function
// stops there). The caller casts the header back to its table, which it begins
// (standard layout, so the two addresses are one).
struct PluginHeader {
  const char* build_id;  // NNFIT_BUILD_ID of the build that made the plugin
};

struct PluginSpec {
  const char* file;     // "libnnfit_cuda.so"
  const char* entry;    // the extern "C" function returning the plugin's table
  const char* feature;  // for messages: "the CUDA backend"
  const char* install;  // what provides the vendor libraries: "Open MPI (apt-get install libopenmpi3)"
  bool global = false;  // RTLD_GLOBAL: Open MPI's own components resolve libmpi's symbols globally
};

// The directories searched, in order: NNFIT_PLUGIN_DIR alone when set (':'-separated),
// else the directory of the binary that holds nnfit's core ($ORIGIN: the nnfit executable,
// or a Python extension module) and $ORIGIN/../lib/nnfit (the install layout).
std::vector<std::string> plugin_search_dirs();

// Loads spec.file from the first search directory that has it (once per process; later
// calls return the same table) and returns its entry table. throws: Unsupported with one
// line naming the file, or the library dlopen could not load (dlerror's text), and a hint
// (install the vendor library, or set NNFIT_PLUGIN_DIR); also when the plugin comes from
// another build of nnfit.
const PluginHeader& load_plugin(const PluginSpec& spec);

// NNFIT_BUILD_ID of this core (the plugins must carry the same).
const char* core_build_id();

}  // namespace nnfit
