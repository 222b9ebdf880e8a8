// The host buffer cache (Note [Host buffer cache]): large buffers freed are handed out
// again by exact size, most recent first; small ones and a full cache go back to the
// system; trim empties it. Sanitizer builds bypass it (limit 0), and these tests say so.
#include <gtest/gtest.h>

#include <cstring>

#include "nnfit/core/host_buffer_cache.h"
#include "nnfit/core/tensor.h"

namespace nnfit {
namespace {

namespace hbc = host_buffer_cache;

TEST(HostBufferCache, ReusesAFreedBatchBufferOfTheSameSize) {
  if (hbc::stats().limit_bytes == 0) GTEST_SKIP() << "sanitizer build: the cache is bypassed";
  hbc::trim();
  const Shape batch{128, 28, 28};
  const void* first;
  {
    Tensor a = Tensor::uninitialized(batch, DType::f32);
    first = a.raw();
    std::memset(a.raw(), 7, a.nbytes());
  }
  const auto before = hbc::stats();
  EXPECT_EQ(before.cached_bytes, std::size_t{128 * 28 * 28 * 4});
  Tensor b = Tensor::uninitialized(batch, DType::f32);
  EXPECT_EQ(b.raw(), first) << "the same size comes back from the cache";
  EXPECT_EQ(hbc::stats().hits, before.hits + 1);
  EXPECT_EQ(hbc::stats().cached_bytes, 0u);
  // zeros() clears a recycled buffer.
  b = Tensor();
  Tensor z = Tensor::zeros(batch, DType::f32);
  EXPECT_EQ(z.raw(), first);
  for (std::int64_t i = 0; i < z.numel(); ++i) ASSERT_EQ(z.data<float>()[i], 0.0f) << i;
}

TEST(HostBufferCache, OtherSizesAndSmallBuffersAreNotServedFromIt) {
  if (hbc::stats().limit_bytes == 0) GTEST_SKIP() << "sanitizer build: the cache is bypassed";
  hbc::trim();
  { Tensor a = Tensor::uninitialized(Shape{1 << 18}, DType::f32); }  // 1 MiB, cached
  const auto s0 = hbc::stats();
  EXPECT_EQ(s0.cached_bytes, std::size_t{1} << 20);
  Tensor other = Tensor::uninitialized(Shape{(1 << 18) + 16}, DType::f32);
  EXPECT_EQ(hbc::stats().misses, s0.misses + 1);
  EXPECT_EQ(hbc::stats().cached_bytes, std::size_t{1} << 20) << "a different size leaves it cached";
  { Tensor small = Tensor::uninitialized(Shape{100}, DType::f32); }
  EXPECT_EQ(hbc::stats().cached_bytes, std::size_t{1} << 20) << "small buffers are not cached";
  hbc::trim();
  EXPECT_EQ(hbc::stats().cached_bytes, 0u);
}

TEST(HostBufferCache, HoldsNoMoreThanItsLimit) {
  const auto limits = hbc::stats();
  if (limits.limit_bytes == 0) GTEST_SKIP() << "sanitizer build: the cache is bypassed";
  hbc::trim();
  const std::size_t each = 16u << 20;
  std::vector<Tensor> many;
  for (std::size_t i = 0; i < limits.limit_bytes / each + 4; ++i) {
    many.push_back(Tensor::uninitialized(Shape{static_cast<std::int64_t>(each)}, DType::u8));
  }
  many.clear();
  EXPECT_LE(hbc::stats().cached_bytes, limits.limit_bytes);
  EXPECT_GE(hbc::stats().cached_bytes, limits.limit_bytes - each);
  hbc::trim();
}

}  // namespace
}  // namespace nnfit
