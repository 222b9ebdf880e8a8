// Private: the seam between nnfit's core and the MPI plugin (libnnfit_mpi.so, built from
// src/dist/mpi/ where CMake finds MPI). communicator.cpp loads it with load_plugin() when a
// launcher started the process with several ranks, or when make_mpi_communicator is called,
// and calls these; the plugin fills the table (Note [Plugin symbols]).
#pragma once
#include <memory>

#include "nnfit/core/plugin.h"
#include "nnfit/dist/communicator.h"

namespace nnfit::dist {

struct MpiPlugin {
  PluginHeader header;
  // The MPI communicator over MPI_COMM_WORLD (initializes MPI; finalized when destroyed).
  std::unique_ptr<Communicator> (*make_communicator)(const CommunicatorOptions& options);
  // Async-signal-safe: notify_termination_signal's work (Note [Launcher termination]).
  void (*notify_termination_signal)();
};

}  // namespace nnfit::dist

// The plugin's one exported function.
extern "C" const nnfit::PluginHeader* nnfit_mpi_plugin();  // &the MpiPlugin's header (Note [Plugin entry type])
