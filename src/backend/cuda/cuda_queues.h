// Private: the CUDA DeviceQueues (in the CUDA plugin; nnfit/backend/device_queues.h).
#pragma once
#include <memory>

#include "nnfit/backend/device_queues.h"

namespace nnfit {

// throws: Unsupported when cuda:`device_index` cannot be used; BackendError naming the call
// when a stream or event cannot be made.
std::unique_ptr<DeviceQueues> make_cuda_queues_impl(int device_index, int num_events);

}  // namespace nnfit
