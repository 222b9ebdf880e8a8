// The CUDA DeviceQueues (two streams, events) running the pinned double buffer on cuda:0;
// without a device the device test skips saying why, and asking for the queues is a clear
// Unsupported. The buffer's order of work is checked without a GPU in
// pinned_double_buffer_test.cpp.
#include <gtest/gtest.h>

#include <vector>

#include "nnfit/backend/backend.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/backend/pinned_double_buffer.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

int cuda_devices(std::string* why) { return cuda_device_count(why); }

TEST(CudaQueues, WithoutADeviceAskingIsAClearError) {
  std::string why;
  if (cuda_devices(&why) > 0) GTEST_SKIP() << "a CUDA device is present";
  try {
    make_cuda_queues(0, PinnedDoubleBuffer::kEvents);
    FAIL() << "queues made without a device";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
}

TEST(CudaDevice, QueuesRunTheDoubleBuffer) {
  std::string why;
  if (cuda_devices(&why) == 0) GTEST_SKIP() << "no usable CUDA device: " << why;
  constexpr std::size_t kFloats = 1 << 16, kBytes = kFloats * sizeof(float);
  auto device_memory = make_cuda_sub_allocator(0, CudaMemory::device);
  auto pinned_memory = make_cuda_sub_allocator(0, CudaMemory::pinned_host);
  void* pinned[2] = {pinned_memory->alloc(kBytes), pinned_memory->alloc(kBytes)};
  void* device[2] = {device_memory->alloc(kBytes), device_memory->alloc(kBytes)};
  void* input = device_memory->alloc(kBytes);
  auto backend = make_backend(Device{DeviceType::cuda, 0});
  {
    auto queues = make_cuda_queues(0, PinnedDoubleBuffer::kEvents);
    ASSERT_NE(queues->native(Queue::compute), queues->native(Queue::copy));
    PinnedDoubleBuffer buffer(*queues, {pinned[0], device[0]}, {pinned[1], device[1]}, kBytes);
    std::vector<float> batch(kFloats), back(kFloats);
    auto stage = [&](int n) {
      for (std::size_t i = 0; i < kFloats; ++i) batch[i] = static_cast<float>(n * 1000 + static_cast<int>(i % 997));
      buffer.stage(n, batch.data(), kBytes);
    };
    stage(0);
    for (int n = 0; n < 8; ++n) {
      if (n + 1 < 8) stage(n + 1);
      buffer.consume(n, input);
      buffer.end_step(n);
      buffer.wait_step(n);
      backend->copy(back.data(), input, kBytes, CopyKind::device_to_host);
      for (std::size_t i = 0; i < kFloats; i += 4099) {
        ASSERT_EQ(back[i], static_cast<float>(n * 1000 + static_cast<int>(i % 997))) << "step " << n << ", element " << i;
      }
    }
  }
  for (int s = 0; s < 2; ++s) pinned_memory->free(pinned[s], kBytes), device_memory->free(device[s], kBytes);
  device_memory->free(input, kBytes);
}

}  // namespace
}  // namespace nnfit
