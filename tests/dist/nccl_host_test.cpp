// The NCCL communicator's host side (dist/nccl_host.h, nnfit/dist/nccl_communicator.h):
// which communicator a model picks, the device bucket layout, ncclResult_t as nnfit's
// errors and the watchdog's polling loop against a fake NCCL. The NCCL calls themselves
// need a GPU; without one asking for the communicator is a clear Unsupported.
#include <gtest/gtest.h>

#include "dist/nccl_host.h"
#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"
#include "nnfit/dist/nccl_communicator.h"

namespace nnfit::dist {
namespace {

const Device kCpu{};
const Device kGpu{DeviceType::cuda, 0};

TEST(ChooseCommunicator, OneRankIsOneProcessWhateverIsBuilt) {
  for (int world : {0, 1}) {
    EXPECT_EQ(choose_communicator(kGpu, world, false, false).kind, CommunicatorKind::single_process);
    EXPECT_EQ(choose_communicator(kCpu, world, true, true).kind, CommunicatorKind::single_process);
  }
}

TEST(ChooseCommunicator, CpuModelsUseMpiAndGpuModelsNccl) {
  EXPECT_EQ(choose_communicator(kCpu, 2, true, true).kind, CommunicatorKind::mpi);
  EXPECT_EQ(choose_communicator(kCpu, 2, true, false).kind, CommunicatorKind::mpi);
  const CommunicatorChoice gpu = choose_communicator(kGpu, 4, true, true);
  EXPECT_EQ(gpu.kind, CommunicatorKind::nccl);
  EXPECT_EQ(gpu.reason, "NCCL over 4 ranks (device tensors on cuda:0; bootstrapped and watched over MPI)");
  EXPECT_EQ(choose_communicator(kGpu, -1, true, true).kind, CommunicatorKind::nccl) << "a PMIx launcher";
}

TEST(ChooseCommunicator, WhatIsMissingIsNamed) {
  try {
    choose_communicator(kGpu, 2, true, false);
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_EQ(std::string(e.what()),
              "a model on cuda:0 with 2 ranks sums its gradients with NCCL, but this nnfit was built without NCCL");
    EXPECT_NE(e.hint().find("--device cpu"), std::string::npos) << e.hint();
  }
  for (Device d : {kCpu, kGpu}) {
    try {
      choose_communicator(d, 3, false, true);
      FAIL();
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("started with 3 ranks, but this nnfit was built without MPI"), std::string::npos)
          << e.what();
    }
  }
}

TEST(PlanBuckets, ReverseLayerOrderClosedAtTheSizeAndAligned) {
  // Four gradients in layer order: 100, 30, 200, 10 floats; buckets of 800 bytes (200 floats).
  const BucketLayout l = plan_buckets({100, 30, 200, 10}, 800, 64);
  // Reverse order: 10 (at 0) + 200 (at 10) = 210 floats >= 200: bucket 1 = [0, 210);
  // the next starts at 256: 30 (at 256) + 100 (at 286) = 130: bucket 2 = [256, 386).
  ASSERT_EQ(l.buckets.size(), 2u);
  EXPECT_EQ(l.buckets[0].begin, 0);
  EXPECT_EQ(l.buckets[0].end, 210);
  EXPECT_EQ(l.buckets[1].begin, 256);
  EXPECT_EQ(l.buckets[1].end, 386);
  EXPECT_EQ(l.offset, (std::vector<std::int64_t>{286, 256, 10, 0}));
  EXPECT_EQ(l.bucket_of, (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(l.total_floats, 386);
  EXPECT_EQ(l.buckets[1].what, "allreduce of gradient bucket 2 of 2");
}

TEST(PlanBuckets, EveryGradientInsideItsBucketAndNoOverlap) {
  const std::vector<std::int64_t> counts = {7, 0, 1000, 3, 64, 65, 1, 4096, 5};
  for (std::int64_t bucket_bytes : {0, 4, 256, 1000, 1 << 20}) {
    for (std::int64_t align : {1, 64}) {
      const BucketLayout l = plan_buckets(counts, bucket_bytes, align);
      std::int64_t covered = 0;
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const auto& b = l.buckets.at(static_cast<std::size_t>(l.bucket_of[i]));
        EXPECT_GE(l.offset[i], b.begin);
        EXPECT_LE(l.offset[i] + counts[i], b.end);
        covered += counts[i];
      }
      for (std::size_t b = 0; b < l.buckets.size(); ++b) {
        EXPECT_EQ(l.buckets[b].begin % align, 0) << "bucket " << b;
        if (b) EXPECT_GE(l.buckets[b].begin, l.buckets[b - 1].end);
      }
      std::int64_t inside = 0;
      for (const auto& b : l.buckets) inside += b.end - b.begin;
      EXPECT_EQ(inside, covered) << "a bucket holds bytes of no gradient (bucket_bytes " << bucket_bytes << ")";
      if (bucket_bytes == 0) EXPECT_EQ(l.buckets.size(), counts.size() - 1) << "one bucket per non-empty gradient";
      if (bucket_bytes == (1 << 20)) EXPECT_EQ(l.buckets.size(), 1u);
    }
  }
  EXPECT_THROW(plan_buckets({1}, -1), InvalidArgument);
  EXPECT_THROW(plan_buckets({1}, 8, 0), InvalidArgument);
  EXPECT_THROW(plan_buckets({-1}, 8), InvalidArgument);
  EXPECT_EQ(plan_buckets({}, 8).total_floats, 0);
}

const NcclCallSite kSite{"ncclAllReduce", "allreduce of gradient bucket 1 of 3", 1, 12};

template <typename E>
E caught(int result, std::string_view last_error) {
  try {
    throw_nccl_error(result, kSite, "some text", last_error);
  } catch (const E& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "result " << result << " threw another type: " << e.what();
  }
  return E("");
}

TEST(NcclErrors, EachResultBecomesTheRightError) {
  const PeerFailure remote = caught<PeerFailure>(6, "");
  EXPECT_EQ(std::string(remote.what()),
            "rank 1: ncclAllReduce (allreduce of gradient bucket 1 of 3 at step 12): ncclRemoteError: some text: another "
            "rank failed or its connection was lost");
  const OutOfMemory oom = caught<OutOfMemory>(1, "Cuda failure 'out of memory'");
  EXPECT_NE(std::string(oom.what()).find("ncclUnhandledCudaError: some text (Cuda failure 'out of memory')"),
            std::string::npos)
      << oom.what();
  const BackendError cuda = caught<BackendError>(1, "Cuda failure 'an illegal memory access'");
  EXPECT_NE(cuda.hint().find("a CUDA call inside NCCL failed"), std::string::npos);
  const BackendError system = caught<BackendError>(2, "");
  EXPECT_NE(system.hint().find("--shm-size"), std::string::npos) << system.hint();
  EXPECT_NE(std::string(system.what()).find("ncclSystemError"), std::string::npos);
  for (int usage : {4, 5}) {
    const BackendError e = caught<BackendError>(usage, "");
    EXPECT_EQ(std::string(e.what()).rfind("internal error: rank 1: ncclAllReduce", 0), 0u) << e.what();
    EXPECT_NE(e.hint().find("bug"), std::string::npos);
  }
  const BackendError internal = caught<BackendError>(3, "");
  EXPECT_NE(internal.hint().find("NCCL_DEBUG"), std::string::npos);
  const BackendError unknown = caught<BackendError>(42, "");
  EXPECT_NE(std::string(unknown.what()).find("ncclResult_t 42"), std::string::npos) << unknown.what();
}

// A fake NCCL for the polling loop: a clock that moves on each pause, a collective that
// completes after `finish_after` polls (never when negative), an async error from poll
// `error_at` on.
struct FakeNccl {
  int polls = 0, finish_after = -1, error_at = -1, async_error = 0;
  double clock = 100.0;
  int aborts = 0, locates = 0;
  bool locate_throws = false;
  NcclPoll poll() {
    NcclPoll p;
    p.done = [this] { return finish_after >= 0 && polls >= finish_after; };
    p.async_error = [this] { return error_at >= 0 && polls >= error_at ? async_error : 0; };
    p.abort = [this] { ++aborts; };
    p.locate = [this] {
      ++locates;
      if (locate_throws) throw CollectiveTimeout("rank 2 did not reach the barrier (stalled or dead)");
    };
    p.last_error = [] { return std::string("detail"); };
    p.error_string = [](int r) { return "text of " + std::to_string(r); };
    p.pause = [this] { ++polls, clock += 0.5; };
    p.now_s = [this] { return clock; };
    return p;
  }
};

TEST(NcclWatchdog, ACompletedCollectiveReturns) {
  FakeNccl f;
  f.finish_after = 3;
  poll_collective(f.poll(), 10, kSite);
  EXPECT_EQ(f.polls, 3);
  EXPECT_EQ(f.aborts, 0);
}

TEST(NcclWatchdog, InProgressIsNotAnError) {
  FakeNccl f;
  f.finish_after = 4;
  f.error_at = 0;
  f.async_error = 7;  // ncclInProgress
  poll_collective(f.poll(), 10, kSite);
  EXPECT_EQ(f.aborts, 0);
}

TEST(NcclWatchdog, AnAsyncErrorAbortsAndIsThrown) {
  FakeNccl f;
  f.error_at = 2;
  f.async_error = 6;
  try {
    poll_collective(f.poll(), 10, kSite);
    FAIL();
  } catch (const PeerFailure& e) {
    EXPECT_NE(std::string(e.what()).find("ncclRemoteError: text of 6 (detail)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.aborts, 1);
  EXPECT_EQ(f.locates, 0);
}

TEST(NcclWatchdog, PastTheDeadlineTheMpiBarrierNamesTheRank) {
  FakeNccl f;
  f.locate_throws = true;
  try {
    poll_collective(f.poll(), 5, kSite);
    FAIL();
  } catch (const CollectiveTimeout& e) {
    EXPECT_EQ(std::string(e.what()), "rank 2 did not reach the barrier (stalled or dead)");
  }
  EXPECT_EQ(f.aborts, 1) << "NCCL must be aborted before MPI is asked";
  EXPECT_EQ(f.locates, 1);
  EXPECT_EQ(f.polls, 10) << "5 s at 0.5 s per poll";
}

TEST(NcclWatchdog, WhenEveryRankAnswersNcclItselfHung) {
  FakeNccl f;
  try {
    poll_collective(f.poll(), 2, kSite);
    FAIL();
  } catch (const CollectiveTimeout& e) {
    EXPECT_EQ(std::string(e.what()),
              "rank 1: ncclAllReduce (allreduce of gradient bucket 1 of 3 at step 12) did not complete within the "
              "collective timeout of 2s, though every rank answered over MPI: NCCL itself hung");
  }
  EXPECT_EQ(f.aborts, 1);
}

TEST(NcclCommunicator, WithoutAGpuAskingIsAClearError) {
  EXPECT_THROW(make_nccl_communicator(nullptr, 0, nullptr, {}), InvalidArgument);
  std::string why;
  if (nccl_available() && cuda_device_count(&why) > 0) GTEST_SKIP() << "a CUDA device is present";
  auto host = std::shared_ptr<Communicator>(make_single_process_communicator());
  try {
    make_nccl_communicator(host, 0, nullptr, {});
    FAIL() << "an NCCL communicator without a GPU";
  } catch (const Unsupported& e) {
    const std::string what = e.what();
    if (nccl_available()) {
      // The plugin loads (libnccl is there), and its runtime finds no device here.
      EXPECT_NE(what.find("cuda:0"), std::string::npos) << what;
    } else {
      EXPECT_EQ(what, "this nnfit was built without NCCL");
    }
  }
}

// The communicator itself over one rank (a single-process host communicator carries the
// ncclUniqueId): every collective on device memory, then the values read back. Needs one
// GPU; skips here naming why.
TEST(CudaDevice, NcclOverOneRank) {
  if (!nccl_available()) GTEST_SKIP() << "this nnfit was built without NCCL";
  std::string why;
  if (cuda_device_count(&why) == 0) GTEST_SKIP() << "no usable CUDA device: " << why;
  auto comm = make_nccl_communicator(std::shared_ptr<Communicator>(make_single_process_communicator()), 0, nullptr, {});
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->name().rfind("NCCL ", 0), 0u) << comm->name();
  constexpr std::size_t kCount = 1000;
  auto memory = make_cuda_sub_allocator(0, CudaMemory::device);
  auto backend = make_backend(Device{DeviceType::cuda, 0});
  auto* data = static_cast<float*>(memory->alloc(kCount * sizeof(float)));
  std::vector<float> host(kCount), back(kCount);
  for (std::size_t i = 0; i < kCount; ++i) host[i] = static_cast<float>(i) * 0.5f;
  backend->copy(data, host.data(), kCount * sizeof(float), CopyKind::host_to_device);
  comm->all_reduce_sum(data, kCount, "allreduce in the test");
  comm->start_all_reduce_sum(data, kCount / 2, "first half");
  comm->start_all_reduce_sum(data + kCount / 2, kCount / 2, "second half");
  comm->wait_all();
  comm->broadcast(data, kCount * sizeof(float), 0, "broadcast in the test");
  backend->copy(back.data(), data, kCount * sizeof(float), CopyKind::device_to_host);
  EXPECT_EQ(back, host) << "a sum over one rank is the identity";
  memory->free(data, kCount * sizeof(float));
}

}  // namespace
}  // namespace nnfit::dist
