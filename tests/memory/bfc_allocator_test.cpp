// BfcAllocator against a fake SubAllocator: split and merge, best fit, the exact limit,
// growth, preallocation, fragmentation figures, stats invariants, the details an
// OutOfMemory carries, release, and a randomized stress test checked against a shadow model.
#include "nnfit/memory/bfc_allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "fake_sub_allocator.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

using testing::FakeSourceState;
using testing::FakeSubAllocator;

constexpr std::size_t kKiB = 1024, kMiB = 1024 * 1024;

std::unique_ptr<BfcAllocator> make(FakeSourceState& s, MemoryPolicy p = {}) {
  return std::make_unique<BfcAllocator>(std::make_unique<FakeSubAllocator>(s), p);
}

char* as_char(void* p) { return static_cast<char*>(p); }

TEST(BfcAllocator, RoundsTo64AndCountsLikeThePlanner) {
  FakeSourceState src;
  auto a = make(src);
  void* p = a->allocate(100);
  void* q = a->allocate(0);
  EXPECT_NE(p, q);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
  MemoryStats s = a->stats();
  EXPECT_EQ(s.in_use_bytes, 128 + 64);
  EXPECT_EQ(s.allocations, 2);
  EXPECT_EQ(s.reserved_bytes, static_cast<std::int64_t>(BfcAllocator::kFirstRegionBytes));
  a->deallocate(p);
  a->deallocate(q);
  s = a->stats();
  EXPECT_EQ(s.in_use_bytes, 0);
  EXPECT_EQ(s.peak_bytes, 192);
  EXPECT_EQ(s.frees, 2);
  EXPECT_EQ(s.largest_free_block_bytes, s.reserved_bytes);  // all merged back
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.0);
}

TEST(BfcAllocator, SplitsAndMergesNeighbours) {
  FakeSourceState src;
  auto a = make(src);
  char* p1 = as_char(a->allocate(kKiB));
  char* p2 = as_char(a->allocate(kKiB));
  char* p3 = as_char(a->allocate(kKiB));
  EXPECT_EQ(p2, p1 + kKiB);  // carved in address order from one region
  EXPECT_EQ(p3, p2 + kKiB);
  a->deallocate(p1);
  a->deallocate(p2);  // merges with p1's chunk
  EXPECT_EQ(as_char(a->allocate(2 * kKiB)), p1);
  a->deallocate(p1);
  a->deallocate(p3);  // merges both sides into the whole region
  MemoryStats s = a->stats();
  EXPECT_EQ(s.largest_free_block_bytes, s.reserved_bytes);
  EXPECT_EQ(src.allocs, 1);
}

TEST(BfcAllocator, TakesTheBestFittingHole) {
  FakeSourceState src;
  auto a = make(src);
  // Holes of 4 KiB, 1 KiB and 2 KiB, separated by live chunks, then the region's tail.
  std::vector<char*> live;
  char* h4 = as_char(a->allocate(4 * kKiB));
  live.push_back(as_char(a->allocate(64)));
  char* h1 = as_char(a->allocate(kKiB));
  live.push_back(as_char(a->allocate(64)));
  char* h2 = as_char(a->allocate(2 * kKiB));
  live.push_back(as_char(a->allocate(64)));
  a->deallocate(h4);
  a->deallocate(h1);
  a->deallocate(h2);
  EXPECT_EQ(as_char(a->allocate(1500)), h2);
  EXPECT_EQ(as_char(a->allocate(1000)), h1);
  EXPECT_EQ(as_char(a->allocate(3000)), h4);
}

TEST(BfcAllocator, HonoursLargeAlignments) {
  FakeSourceState src;
  auto a = make(src);
  a->allocate(64);
  for (std::size_t align : {128u, 4096u, 65536u}) {
    void* p = a->allocate(100, align);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << align;
  }
  EXPECT_THROW(a->allocate(64, 96), InvalidArgument);
}

TEST(BfcAllocator, RespectsTheLimitExactly) {
  FakeSourceState src;
  MemoryPolicy p;
  p.limit_bytes = 1000 * 1000;  // not a multiple of 64 or of a page
  auto a = make(src, p);
  const std::size_t fits = 1000 * 1000 / 64 * 64;
  void* big = a->allocate(fits);
  EXPECT_EQ(a->stats().reserved_bytes, static_cast<std::int64_t>(fits));
  try {
    a->allocate(1);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string what = e.what();
    for (const char* part : {"cpu:0", "allocating 64 bytes", "limit 976.56 KiB", "in use 976.56 KiB",
                             "largest free block 0 bytes"}) {
      EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
    }
    EXPECT_NE(e.hint().find("nnfit plan"), std::string::npos);
  }
  EXPECT_EQ(a->stats().ooms, 1);
  a->deallocate(big);
  EXPECT_THROW(a->allocate(fits + 64), OutOfMemory);
  EXPECT_EQ(a->stats().ooms, 2);
  EXPECT_LE(a->stats().reserved_bytes, p.limit_bytes);
}

TEST(BfcAllocator, GrowsWithDoublingRegionsAndGivesThemBack) {
  FakeSourceState src;
  auto a = make(src);
  std::vector<void*> ps;
  for (int i = 0; i < 4; ++i) ps.push_back(a->allocate(BfcAllocator::kFirstRegionBytes));
  // 2 MiB, 4 MiB (holds two), 8 MiB: three regions.
  EXPECT_EQ(src.allocs, 3);
  EXPECT_EQ(a->stats().reserved_bytes, static_cast<std::int64_t>(14 * kMiB));
  void* huge = a->allocate(300 * kMiB);  // above the growth cap: a region of its own
  EXPECT_EQ(src.regions.size(), 4u);
  a->deallocate(huge);
  a->deallocate(ps[0]);
  EXPECT_EQ(a->release_unused(), static_cast<std::int64_t>(302 * kMiB));
  EXPECT_EQ(a->stats().reserved_bytes, static_cast<std::int64_t>(12 * kMiB));
  EXPECT_EQ(a->release_unused(), 0);
  for (std::size_t i = 1; i < ps.size(); ++i) a->deallocate(ps[i]);
  a.reset();
  EXPECT_EQ(src.held_bytes, 0u);
  EXPECT_EQ(src.allocs, src.frees);
}

TEST(BfcAllocator, DestructorReturnsEverythingEvenWithLiveChunks) {
  FakeSourceState src;
  {
    auto a = make(src);
    a->allocate(5 * kMiB);
    a->allocate(kKiB);
  }
  EXPECT_EQ(src.held_bytes, 0u);
  EXPECT_TRUE(src.regions.empty());
}

TEST(BfcAllocator, PreallocatesAFractionOfTotalMemory) {
  FakeSourceState src;
  src.total = 64 * kMiB;
  MemoryPolicy p;
  p.preallocate_fraction = 0.25;
  auto a = make(src, p);
  EXPECT_EQ(a->stats().reserved_bytes, static_cast<std::int64_t>(16 * kMiB));
  EXPECT_EQ(src.allocs, 1);
  std::vector<void*> ps;
  for (int i = 0; i < 16; ++i) ps.push_back(a->allocate(kMiB));
  EXPECT_EQ(src.allocs, 1);  // served from the preallocation
  EXPECT_EQ(a->stats().largest_free_block_bytes, 0);
  a->allocate(1);  // and it still grows past it (no limit set)
  EXPECT_EQ(src.allocs, 2);
}

TEST(BfcAllocator, PreallocationAboveTheLimitOrRefusedIsAnError) {
  FakeSourceState src;
  src.total = 64 * kMiB;
  MemoryPolicy p;
  p.preallocate_fraction = 0.5;
  p.limit_bytes = 16 * kMiB;
  try {
    make(src, p);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the memory limit 16.00 MiB"), std::string::npos) << e.what();
  }
  p.limit_bytes = 0;
  src.fail = true;
  EXPECT_THROW(make(src, p), OutOfMemory);
  src.total = 0;
  src.fail = false;
  EXPECT_THROW(make(src, p), InvalidArgument);  // total unknown
}

TEST(BfcAllocator, SourceRefusalIsAnOutOfMemoryAndFreeRegionsAreRetried) {
  FakeSourceState src;
  src.capacity_bytes = 6 * kMiB;
  auto a = make(src);
  void* p = a->allocate(kMiB);   // region 1: 2 MiB
  void* q = a->allocate(3 * kMiB);  // region 2: 4 MiB
  a->deallocate(p);
  // 5 MiB fits neither free block; the source holds 6 MiB of 6, so region 1 (wholly
  // free) is handed back and a 5 MiB region is still impossible: OOM.
  try {
    a->allocate(5 * kMiB);
    FAIL();
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
  a->deallocate(q);
  EXPECT_NO_THROW(a->deallocate(a->allocate(5 * kMiB)));  // after releasing region 2 too
  src.fail = true;
  EXPECT_NO_THROW(a->deallocate(a->allocate(kMiB)));  // served from what is reserved
  EXPECT_EQ(a->stats().ooms, 1);
}

TEST(BfcAllocator, OutOfMemoryCarriesTheFiguresAsDetails) {
  // What the message says, structured: request, device, limit and a stats snapshot taken
  // at the refusal (the fragmented state below, ooms already counting it).
  FakeSourceState src;
  MemoryPolicy p;
  p.limit_bytes = 256 * kKiB;
  auto a = make(src, p);
  void* b[4];
  for (auto& x : b) x = a->allocate(64 * kKiB);
  a->deallocate(b[0]);
  a->deallocate(b[2]);
  try {
    a->allocate(100 * kKiB + 1);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const OutOfMemoryDetails* d = e.details();
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->device, Device{});
    EXPECT_EQ(d->request_bytes, static_cast<std::int64_t>(100 * kKiB + 64));  // rounded to 64
    EXPECT_EQ(d->limit_bytes, p.limit_bytes);
    EXPECT_EQ(d->stats.in_use_bytes, static_cast<std::int64_t>(128 * kKiB));
    EXPECT_EQ(d->stats.reserved_bytes, static_cast<std::int64_t>(256 * kKiB));
    EXPECT_EQ(d->stats.largest_free_block_bytes, static_cast<std::int64_t>(64 * kKiB));
    EXPECT_DOUBLE_EQ(d->stats.fragmentation, 0.5);
    EXPECT_EQ(d->stats.allocations, 4);
    EXPECT_EQ(d->stats.frees, 2);
    EXPECT_EQ(d->stats.ooms, 1);
    // A copy of the exception shares the snapshot; the allocator moving on does not change it.
    const OutOfMemory copy = e;
    EXPECT_EQ(copy.details(), d);
    a->deallocate(b[1]);
    EXPECT_EQ(d->stats.in_use_bytes, static_cast<std::int64_t>(128 * kKiB));
  }
  EXPECT_EQ(a->stats().ooms, 1);
  a->deallocate(b[3]);
}

TEST(BfcAllocator, ReportsFragmentation) {
  FakeSourceState src;
  MemoryPolicy p;
  p.limit_bytes = 256 * kKiB;
  auto a = make(src, p);
  void* b[4];
  for (auto& x : b) x = a->allocate(64 * kKiB);
  a->deallocate(b[0]);
  a->deallocate(b[2]);
  MemoryStats s = a->stats();
  EXPECT_EQ(s.reserved_bytes - s.in_use_bytes, static_cast<std::int64_t>(128 * kKiB));
  EXPECT_EQ(s.largest_free_block_bytes, static_cast<std::int64_t>(64 * kKiB));
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.5);
  // 128 KiB are free but not in one piece: the request fails, as it would on a device.
  EXPECT_THROW(a->allocate(128 * kKiB), OutOfMemory);
  a->deallocate(b[1]);
  s = a->stats();
  EXPECT_EQ(s.largest_free_block_bytes, static_cast<std::int64_t>(192 * kKiB));
  EXPECT_DOUBLE_EQ(s.fragmentation, 0.0);
}

TEST(BfcAllocator, RejectsForeignPointers) {
  FakeSourceState src;
  auto a = make(src);
  int x = 0;
  EXPECT_THROW(a->deallocate(&x), InvalidArgument);
  a->deallocate(nullptr);
}

TEST(BfcAllocator, TensorsGiveMemoryBack) {
  FakeSourceState src;
  auto a = make(src);
  {
    Tensor t = allocate_tensor(*a, Shape{10, 10}, DType::f32);
    EXPECT_EQ(a->stats().in_use_bytes, 448);
  }
  EXPECT_EQ(a->stats().in_use_bytes, 0);
}

// Millions of mixed-size allocations and frees (fewer under sanitizers) against a shadow
// model: every live block keeps its contents, blocks never overlap, and every figure of
// stats() matches the shadow's.
TEST(BfcAllocator, StressAgainstShadowModel) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kOps = 300000;
#else
  constexpr int kOps = 2000000;
#endif
  FakeSourceState src;
  MemoryPolicy p;
  p.limit_bytes = 48 * kMiB + 4096;
  auto a = make(src, p);
  std::mt19937_64 rng(42);
  struct Block {
    std::size_t bytes;  // rounded
    unsigned char tag;
  };
  std::map<std::uintptr_t, Block> live;  // by address, for the overlap check
  std::vector<std::uintptr_t> order;     // for picking a random victim
  std::int64_t in_use = 0, peak = 0, allocs = 0, frees = 0, ooms = 0;
  auto check_stats = [&] {
    MemoryStats s = a->stats();
    ASSERT_EQ(s.in_use_bytes, in_use);
    ASSERT_EQ(s.peak_bytes, peak);
    ASSERT_EQ(s.allocations, allocs);
    ASSERT_EQ(s.frees, frees);
    ASSERT_EQ(s.ooms, ooms);
    ASSERT_LE(s.reserved_bytes, p.limit_bytes);
    ASSERT_GE(s.reserved_bytes, s.in_use_bytes);
    ASSERT_LE(s.largest_free_block_bytes, s.reserved_bytes - s.in_use_bytes);
    ASSERT_GE(s.fragmentation, 0.0);
    ASSERT_LT(s.fragmentation, 1.0);
  };
  for (int op = 0; op < kOps; ++op) {
    const bool do_alloc = order.empty() || (rng() % 100) < (live.size() < 200 ? 55u : 45u);
    if (do_alloc) {
      // Log-uniform sizes from 1 byte to 1 MiB, an occasional large alignment.
      const std::size_t bytes = static_cast<std::size_t>(1) << (rng() % 21);
      const std::size_t req = bytes + rng() % bytes;
      const std::size_t align = rng() % 16 == 0 ? std::size_t{1} << (7 + rng() % 6) : 64;
      const std::size_t rounded = std::max<std::size_t>((req + 63) / 64 * 64, 64);
      void* ptr = nullptr;
      try {
        ptr = a->allocate(req, align);
      } catch (const OutOfMemory&) {
        ++ooms;
        // Justified only when no free block could hold it and the limit leaves no room.
        MemoryStats s = a->stats();
        ASSERT_TRUE(s.largest_free_block_bytes < static_cast<std::int64_t>(rounded + align) ||
                    s.reserved_bytes + static_cast<std::int64_t>(rounded) > p.limit_bytes);
        continue;
      }
      const auto addr = reinterpret_cast<std::uintptr_t>(ptr);
      ASSERT_EQ(addr % align, 0u);
      auto next = live.lower_bound(addr);
      if (next != live.end()) ASSERT_LE(addr + rounded, next->first) << "overlaps the next block";
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.bytes, addr) << "overlaps the previous block";
      }
      const auto tag = static_cast<unsigned char>(rng());
      std::memset(ptr, tag, req < 256 ? req : 64);
      std::memset(as_char(ptr) + rounded - 64, tag, 64);
      if (req >= 256) std::memset(as_char(ptr), tag, 64);
      live[addr] = {rounded, tag};
      order.push_back(addr);
      in_use += static_cast<std::int64_t>(rounded);
      peak = std::max(peak, in_use);
      ++allocs;
    } else {
      const std::size_t i = rng() % order.size();
      const std::uintptr_t addr = order[i];
      order[i] = order.back();
      order.pop_back();
      const Block b = live.at(addr);
      const auto* c = reinterpret_cast<const unsigned char*>(addr);
      ASSERT_EQ(c[0], b.tag);
      ASSERT_EQ(c[b.bytes - 1], b.tag);
      a->deallocate(reinterpret_cast<void*>(addr));
      live.erase(addr);
      in_use -= static_cast<std::int64_t>(b.bytes);
      ++frees;
    }
    if (op % 4096 == 0) {
      check_stats();
      if (op % (1 << 18) == 0) a->release_unused();
    }
  }
  check_stats();
  EXPECT_GT(ooms, 0);  // the limit was reached and handled
  for (std::uintptr_t addr : order) a->deallocate(reinterpret_cast<void*>(addr));
  MemoryStats s = a->stats();
  EXPECT_EQ(s.in_use_bytes, 0);
  // Everything merged back into whole regions, so every region can be handed back.
  EXPECT_EQ(a->release_unused(), s.reserved_bytes);
  EXPECT_EQ(a->stats().reserved_bytes, 0);
  EXPECT_EQ(src.held_bytes, 0u);
}

}  // namespace
}  // namespace nnfit
