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

class OmpGather final : public Kernel {
 public:
  explicit OmpGather(const KernelDesc& d) : grad_(d.op == "gather_grad"), node_(d.node_name) {
    const TensorDesc& ids = d.inputs.at(grad_ ? 0 : 1);
    ids_dtype_ = ids.dtype;
    count_ = ids.shape.numel();
    const Shape& table = grad_ ? d.outputs.at(0).shape : d.inputs.at(0).shape;
    rows_ = table[0];
    width_ = table[1];
  }

  void run(const KernelArgs& args) override {
    const void* ids = args.inputs[grad_ ? 0 : 1];
    check_gather_ids(node_, ids, ids_dtype_, count_, rows_);
    if (grad_) return scatter_add(ids, static_cast<const float*>(args.inputs[1]), static_cast<float*>(args.outputs[0]));
    const auto* table = static_cast<const float*>(args.inputs[0]);
    auto* y = static_cast<float*>(args.outputs[0]);
    const std::size_t row_bytes = static_cast<std::size_t>(width_) * sizeof(float);
    const DType dtype = ids_dtype_;
    const std::int64_t count = count_, width = width_;
#pragma omp parallel for schedule(static) if (count * width >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < count; ++i) {
      std::memcpy(y + i * width, table + gather_id_at(ids, dtype, i) * width, row_bytes);
    }
  }

 private:
  void scatter_add(const void* ids, const float* dy, float* dtable) const {
    const DType dtype = ids_dtype_;
    const std::int64_t count = count_, rows = rows_, width = width_;
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
        for (std::int64_t i = 0; i < count; ++i) {
          float* row = dtable + gather_id_at(ids, dtype, i) * width;
          const float* d = dy + i * width;
#pragma omp simd
          for (std::int64_t j = j0; j < j1; ++j) row[j] += d[j];
        }
      }
    }
  }

  bool grad_;
  std::string node_;
  DType ids_dtype_ = DType::f32;
  std::int64_t count_ = 0, rows_ = 0, width_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_gather(const KernelDesc& desc, std::string* /*why_not*/) {
  return std::make_unique<OmpGather>(desc);
}

}  // namespace nnfit
