// Private: the seam between nnfit's core and the NCCL plugin (libnnfit_nccl.so, built from
// src/dist/nccl/ where CMake finds NCCL and the CUDA toolkit). nccl_host.cpp loads it with
// load_plugin() when make_nccl_communicator is called (Note [Plugin symbols]).
#pragma once
#include <memory>

#include "nnfit/core/plugin.h"
#include "nnfit/dist/communicator.h"

namespace nnfit::dist {

struct NcclPlugin {
  PluginHeader header;
  // As make_nccl_communicator in nnfit/dist/nccl_communicator.h.
  std::unique_ptr<Communicator> (*make_communicator)(std::shared_ptr<Communicator> host, int device_index,
                                                     void* compute_stream, const CommunicatorOptions& options);
};

}  // namespace nnfit::dist

// The plugin's one exported function.
extern "C" const nnfit::PluginHeader* nnfit_nccl_plugin();  // &the NcclPlugin's header (Note [Plugin entry type])
