// HostAllocator: exact accounting, alignment, the hard limit, tensors returning memory.
#include <gtest/gtest.h>

#include <cstdint>

#include "nnfit/core/error.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {
namespace {

TEST(HostAllocator, CountsAlignsAndTracksPeak) {
  HostAllocator a;
  void* p = a.allocate(100);
  void* q = a.allocate(1000, 128);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 128, 0u);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.in_use_bytes, 128 + 1024);
  EXPECT_EQ(s.allocations, 2);
  a.deallocate(p);
  s = a.stats();
  EXPECT_EQ(s.in_use_bytes, 1024);
  EXPECT_EQ(s.peak_bytes, 128 + 1024);
  EXPECT_EQ(s.frees, 1);
  a.reset_peak();
  EXPECT_EQ(a.stats().peak_bytes, 1024);
  a.deallocate(q);
  EXPECT_EQ(a.stats().in_use_bytes, 0);
}

TEST(HostAllocator, HardLimitThrowsOutOfMemoryAndCounts) {
  HostAllocator a(4096);
  void* p = a.allocate(4000);
  try {
    a.allocate(200);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
    EXPECT_FALSE(e.hint().empty());
    ASSERT_NE(e.details(), nullptr);
    EXPECT_EQ(e.details()->request_bytes, 256);
    EXPECT_EQ(e.details()->limit_bytes, 4096);
    EXPECT_EQ(e.details()->stats.in_use_bytes, 4032);
    EXPECT_EQ(e.details()->stats.ooms, 1);
  }
  EXPECT_EQ(a.stats().ooms, 1);
  a.deallocate(p);
  EXPECT_NO_THROW(a.deallocate(a.allocate(4096)));
}

TEST(HostAllocator, TensorsGiveMemoryBack) {
  HostAllocator a;
  {
    Tensor t = allocate_tensor(a, Shape{10, 10}, DType::f32);
    Tensor view = t.slice_rows(2, 4);
    EXPECT_EQ(a.stats().in_use_bytes, 448);
    t = Tensor();
    EXPECT_EQ(a.stats().in_use_bytes, 448);  // the view still holds the buffer
  }
  EXPECT_EQ(a.stats().in_use_bytes, 0);
  EXPECT_THROW(a.deallocate(reinterpret_cast<void*>(0x1000)), InvalidArgument);
}

}  // namespace
}  // namespace nnfit
