// DeviceQueues (nnfit/backend/device_queues.h): what queues without graphs answer.
#include "nnfit/backend/device_queues.h"

#include "nnfit/core/error.h"

namespace nnfit {

// DeviceQueues without graphs (Note [Captured steps]): every graph call is refused.
void DeviceQueues::begin_capture(Queue) { throw Unsupported("these device queues cannot capture graphs"); }
int DeviceQueues::end_capture(Queue) { throw Unsupported("these device queues cannot capture graphs"); }
void DeviceQueues::launch_graph(Queue, int) { throw Unsupported("these device queues have no graphs"); }
void DeviceQueues::drop_graph(int) {}

}  // namespace nnfit
