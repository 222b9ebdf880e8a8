// Row streams (Note [Row streams]): batching straight from tensor slices or a complete
// in-memory cache, through shuffle, gives exactly the batches of the element path, epoch
// after epoch; measure still counts; stages that change elements fall back.
#include <gtest/gtest.h>

#include <cstring>

#include "data/rows.h"
#include "nnfit/data/dataset.h"

namespace nnfit::data {
namespace {

std::pair<Tensor, Tensor> data(std::int64_t n) {
  Tensor x = Tensor::zeros(Shape{n, 3, 2}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i64);
  for (std::int64_t i = 0; i < n * 6; ++i) x.data<float>()[i] = static_cast<float>(i) * 0.5f;
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int64_t>()[i] = i;
  return {x, y};
}

// An identity map: it has no row stream, so what follows takes the element path.
Dataset element_path(const Dataset& ds) {
  return ds.map([](Element e) { return e; });
}

bool same(const std::vector<Element>& a, const std::vector<Element>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (std::size_t c = 0; c < a[i].size(); ++c) {
      const Tensor& p = a[i][c];
      const Tensor& q = b[i][c];
      if (p.shape() != q.shape() || p.dtype() != q.dtype() || std::memcmp(p.raw(), q.raw(), p.nbytes()) != 0) return false;
    }
  }
  return true;
}

TEST(RowStream, SlicesShuffleBatchMatchTheElementPathEveryEpoch) {
  auto [x, y] = data(103);
  for (std::int64_t buffer : {1, 10, 103, 500}) {
    const Dataset fused = Dataset::from_tensor_slices({x, y}).shuffle(buffer, ShuffleOptions{7}).batch(16);
    const Dataset plain = element_path(Dataset::from_tensor_slices({x, y})).shuffle(buffer, ShuffleOptions{7}).batch(16);
    ASSERT_NE(Dataset::from_tensor_slices({x, y}).shuffle(buffer, ShuffleOptions{7}).node()->make_row_stream(), nullptr);
    ASSERT_EQ(element_path(Dataset::from_tensor_slices({x, y})).node()->make_row_stream(), nullptr);
    for (int epoch = 0; epoch < 3; ++epoch) {
      const auto a = fused.collect();
      const auto b = plain.collect();
      ASSERT_EQ(a.size(), 7u);
      EXPECT_EQ(a.back()[0].shape(), (Shape{7, 3, 2}));
      EXPECT_TRUE(same(a, b)) << "buffer " << buffer << " epoch " << epoch;
    }
  }
}

TEST(RowStream, CacheReplaysAsRowsOnceCompleteWithTheSameBatches) {
  auto [x, y] = data(50);
  const Dataset cached = element_path(Dataset::from_tensor_slices({x, y})).cache();
  const Dataset fused = cached.shuffle(50, ShuffleOptions{3}).batch(8, /*drop_remainder=*/true);
  const Dataset plain = element_path(element_path(Dataset::from_tensor_slices({x, y})).cache())
                            .shuffle(50, ShuffleOptions{3})
                            .batch(8, true);
  EXPECT_EQ(cached.node()->make_row_stream(), nullptr) << "nothing cached yet";
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto a = fused.collect();
    ASSERT_EQ(a.size(), 6u);
    EXPECT_TRUE(same(a, plain.collect())) << "epoch " << epoch;
  }
  EXPECT_NE(cached.node()->make_row_stream(), nullptr) << "complete after the first pass";
}

TEST(RowStream, MeasureCountsRowsAndTakePathsStillWork) {
  auto [x, y] = data(20);
  auto stats = std::make_shared<StageStats>();
  const auto batches = Dataset::from_tensor_slices({x, y}).measure(stats).batch(6).collect();
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(stats->elements.load(), 20);
  // take has no row stream: the element path, same values.
  const auto taken = Dataset::from_tensor_slices({x, y}).take(12).batch(6).collect();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[1][1].data<std::int64_t>()[5], 11);
}

TEST(RowStream, RaggedCacheFallsBackToElements) {
  // Elements of varying length: the cache's spec has an unknown dimension, no table.
  const Dataset ragged = Dataset::range(1, 5)
                             .map(
                                 [](Element e) {
                                   const std::int64_t n = *e[0].data<std::int64_t>();
                                   return Element{Tensor::zeros(Shape{n}, DType::f32)};
                                 },
                                 {}, ElementSpec{{DType::f32, Shape{-1}}})
                             .cache();
  EXPECT_EQ(ragged.collect().size(), 4u);
  EXPECT_EQ(ragged.node()->make_row_stream(), nullptr);
  EXPECT_EQ(ragged.padded_batch(2).collect().size(), 2u);
}

TEST(RowStream, CacheSpanningManyChunksReplaysEveryRowExactly) {
  // 1 MiB rows: 4 rows per 4 MiB chunk (Note [Cache row storage]), so 11 rows span 3 chunks,
  // the last one partial.
  constexpr std::int64_t kRows = 11, kFloats = 256 * 1024;
  Tensor x = Tensor::zeros(Shape{kRows, kFloats}, DType::f32);
  for (std::int64_t i = 0; i < kRows * kFloats; ++i) x.data<float>()[i] = static_cast<float>(i % 9973) + static_cast<float>(i / kFloats);
  Tensor y = Tensor::zeros(Shape{kRows}, DType::u8);
  for (std::int64_t i = 0; i < kRows; ++i) y.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(200 + i);
  const Dataset cached = element_path(Dataset::from_tensor_slices({x, y})).cache();
  const auto first = cached.collect();  // records
  const auto second = cached.collect();  // replays views into the chunks
  ASSERT_EQ(second.size(), static_cast<std::size_t>(kRows));
  EXPECT_TRUE(same(first, second));
  EXPECT_EQ(*second[10][1].data<std::uint8_t>(), 210);
  EXPECT_EQ(second[7][0].data<float>()[kFloats - 1], static_cast<float>((7 * kFloats + kFloats - 1) % 9973) + 7.0f);
  // Gathered in shuffled batches, rows come from the right chunk and offset.
  const auto fused = cached.shuffle(kRows, ShuffleOptions{5}).batch(4).collect();
  const auto plain = element_path(cached).shuffle(kRows, ShuffleOptions{5}).batch(4).collect();
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_TRUE(same(fused, plain));
}

TEST(RowStream, CachedElementsThatBreakTheirSpecAreKeptWhole) {
  // A map that declares Shape{3} but returns 4 floats from the fourth element on.
  const Dataset lying = Dataset::range(0, 6)
                            .map(
                                [](Element e) {
                                  const std::int64_t i = *e[0].data<std::int64_t>();
                                  Tensor t = Tensor::zeros(Shape{i < 3 ? 3 : 4}, DType::f32);
                                  t.data<float>()[0] = static_cast<float>(i);
                                  return Element{t};
                                },
                                {}, ElementSpec{{DType::f32, Shape{3}}})
                            .cache();
  const auto first = lying.collect();
  const auto second = lying.collect();
  ASSERT_EQ(second.size(), 6u);
  EXPECT_TRUE(same(first, second));
  EXPECT_EQ(second[1][0].shape(), (Shape{3}));
  EXPECT_EQ(second[5][0].shape(), (Shape{4}));
  EXPECT_EQ(second[2][0].data<float>()[0], 2.0f);
  EXPECT_EQ(lying.node()->make_row_stream(), nullptr) << "no table for elements that break the spec";
}

}  // namespace
}  // namespace nnfit::data
