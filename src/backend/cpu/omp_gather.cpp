// OpenMP kernels of gather and gather_grad (Embedding). gather copies one table row per
// id, split over the ids. gather_grad is a scatter-add where repeated ids collide, so the
// threads split the columns instead (blocks of 16 floats, one cache line): each thread
// adds every id's share of its columns in id order, the reference's order, so the result
// is bit-identical to ref:gather_grad, race-free, and balanced however skewed the ids are.
// The table is zeroed first, split over its rows.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "backend/common/gather_ids.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

constexpr std::int64_t kColumnBlock = 16;  // floats in a 64-byte line

// The row functions of gather_ids.h, the reference's, over a split of the ids (gather) or of
// the columns (gather_grad).
class OmpGather final : public Kernel {
 public:
  explicit OmpGather(const KernelDesc& d) : g_(d) {}

  void run(const KernelArgs& args) override {
    const void* ids = g_.checked_ids(args);
    if (g_.grad) return scatter_add(ids, static_cast<const float*>(args.inputs[1]), static_cast<float*>(args.outputs[0]));
    const auto* table = static_cast<const float*>(args.inputs[0]);
    auto* y = static_cast<float*>(args.outputs[0]);
#pragma omp parallel for schedule(static) if (g_.count * g_.width >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < g_.count; ++i) gather_row(g_, table, ids, i, y);
  }

 private:
  void scatter_add(const void* ids, const float* dy, float* dtable) const {
    const std::int64_t count = g_.count, rows = g_.rows, width = g_.width;
    const std::int64_t blocks = (width + kColumnBlock - 1) / kColumnBlock;
    const bool parallel = (rows + count) * width >= kOmpMinParallelElements;
#pragma omp parallel if (parallel)
    {
      const int tid = omp_get_thread_num(), threads = omp_get_num_threads();
      std::int64_t begin = 0, end = 0;
      omp_row_range(tid, threads, rows, &begin, &end);
      std::memset(dtable + begin * width, 0, static_cast<std::size_t>((end - begin) * width) * sizeof(float));
#pragma omp barrier
      // Every row is zero before any thread adds.
      omp_row_range(tid, threads, blocks, &begin, &end);
      const std::int64_t j0 = begin * kColumnBlock, j1 = std::min(end * kColumnBlock, width);
      if (j0 < j1) {
        for (std::int64_t i = 0; i < count; ++i) scatter_add_row(g_, ids, i, dy, dtable, j0, j1);
      }
    }
  }

  GatherGeometry g_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_gather(const KernelDesc& desc, std::string* /*why_not*/) {
  return std::make_unique<OmpGather>(desc);
}

}  // namespace nnfit
