// OpenMP kernels of bias_add, bias_add_grad, add_n and reshape. bias_add_grad reduces a
// static block of rows per thread into that thread's slot of the workspace (float sums of
// 16 rows added into double partials, planned for omp_get_max_threads() at plan time) and
// then sums the slots, so
// it stays deterministic for a given thread count and never allocates in run().
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "backend/common/column_sums.h"
#include "backend/common/low_precision.h"
#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpBiasAdd final : public Kernel {
 public:
  explicit OmpBiasAdd(ChannelGeometry g) : g_(g) {}
  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    const float* b = static_cast<const float*>(args.inputs[1]);
    float* y = static_cast<float*>(args.outputs[0]);
    const std::int64_t rows = g_.rows, C = g_.channels;
#pragma omp parallel for schedule(static) if (rows * C >= kOmpMinParallelElements)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * C;
      float* yr = y + r * C;
#pragma omp simd
      for (std::int64_t c = 0; c < C; ++c) yr[c] = xr[c] + b[c];
    }
  }

 private:
  ChannelGeometry g_;
};

using low_precision::load;

class OmpBiasAddGrad final : public Kernel {
 public:
  OmpBiasAddGrad(ChannelGeometry g, DType data, DType out)
      : g_(g), threads_(omp_get_max_threads()), bf16_(data == DType::bf16), bf16_out_(out == DType::bf16) {}
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(threads_) * static_cast<std::size_t>(g_.channels) * (sizeof(double) + sizeof(float));
  }
  void run(const KernelArgs& args) override {
    if (bf16_) {
      sum<std::uint16_t>(args);
    } else {
      sum<float>(args);
    }
  }

 private:
  template <typename T>
  void sum(const KernelArgs& args) {
    const T* dy = static_cast<const T*>(args.inputs[0]);
    double* partial = static_cast<double*>(args.workspace);
    float* blocks = reinterpret_cast<float*>(partial + static_cast<std::int64_t>(threads_) * g_.channels);
    const std::int64_t rows = g_.rows, C = g_.channels;
    int team = std::min(omp_get_max_threads(), threads_);
    if (rows * C < kOmpMinParallelElements) team = 1;
    int used = 1;
#pragma omp parallel num_threads(team)
    {
      const int tid = omp_get_thread_num();
      const int n = omp_get_num_threads();
#pragma omp single
      used = n;
      double* acc = partial + static_cast<std::int64_t>(tid) * C;
      float* block = blocks + static_cast<std::int64_t>(tid) * C;
      std::fill(acc, acc + C, 0.0);
      std::int64_t begin = 0, end = 0;
      omp_row_range(tid, n, rows, &begin, &end);
      add_column_sums(dy, begin, end, C, block, acc);
    }
    for (std::int64_t c = 0; c < C; ++c) {
      double total = 0.0;
      for (int t = 0; t < used; ++t) total += partial[t * C + c];
      if (bf16_out_) {  // rounded once, as the float32 kernel widened
        static_cast<std::uint16_t*>(args.outputs[0])[c] = low_precision::f32_to_bf16(static_cast<float>(total));
      } else {  // float32, also from bfloat16 dy (a folded cast)
        static_cast<float*>(args.outputs[0])[c] = static_cast<float>(total);
      }
    }
  }

  ChannelGeometry g_;
  int threads_;
  bool bf16_, bf16_out_;
};

class OmpAddN final : public Kernel {
 public:
  OmpAddN(std::size_t count, std::int64_t numel) : count_(count), numel_(numel) {}
  void run(const KernelArgs& args) override {
    // Blocks small enough for y to stay in L1 while each further input is added to it.
    constexpr std::int64_t kBlock = 2048;
    const std::int64_t blocks = (numel_ + kBlock - 1) / kBlock;
    float* y = static_cast<float*>(args.outputs[0]);
#pragma omp parallel for schedule(static) if (numel_ >= kOmpMinParallelElements)
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const std::int64_t begin = blk * kBlock, end = std::min(numel_, begin + kBlock);
      const float* x0 = static_cast<const float*>(args.inputs[0]);
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) y[i] = x0[i];
      for (std::size_t k = 1; k < count_; ++k) {
        const float* xk = static_cast<const float*>(args.inputs[k]);
#pragma omp simd
        for (std::int64_t i = begin; i < end; ++i) y[i] += xk[i];
      }
    }
  }

 private:
  std::size_t count_;
  std::int64_t numel_;
};

class OmpReshape final : public Kernel {
 public:
  explicit OmpReshape(std::size_t bytes) : bytes_(bytes) {}
  void run(const KernelArgs& args) override {
    // The planner normally aliases y to x, making this a no-op.
    if (args.outputs[0] == args.inputs[0] || bytes_ == 0) return;
    const char* src = static_cast<const char*>(args.inputs[0]);
    char* dst = static_cast<char*>(args.outputs[0]);
    constexpr std::int64_t kChunk = 1 << 18;
    const auto bytes = static_cast<std::int64_t>(bytes_);
    const std::int64_t chunks = (bytes + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (std::int64_t ch = 0; ch < chunks; ++ch) {
      const std::int64_t begin = ch * kChunk;
      std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(std::min(kChunk, bytes - begin)));
    }
  }

 private:
  std::size_t bytes_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_bias_add(const KernelDesc& desc, std::string* why_not) {
  ChannelGeometry g;
  if (!check_bias_add(desc, &g, why_not)) return nullptr;
  return std::make_unique<OmpBiasAdd>(g);
}

// float32, and bfloat16 natively (the same bits as the float32 kernel widened).
std::unique_ptr<Kernel> make_omp_bias_add_grad(const KernelDesc& desc, std::string* why_not) {
  ChannelGeometry g;
  const DType data = desc.inputs.at(0).dtype == DType::bf16 ? DType::bf16 : DType::f32;
  if (!check_bias_add_grad(desc, &g, why_not, data)) return nullptr;
  return std::make_unique<OmpBiasAddGrad>(g, data, desc.outputs[0].dtype);
}

std::unique_ptr<Kernel> make_omp_add_n(const KernelDesc& desc, std::string* why_not) {
  std::int64_t numel = 0;
  if (!check_add_n(desc, &numel, why_not)) return nullptr;
  return std::make_unique<OmpAddN>(desc.inputs.size(), numel);
}

std::unique_ptr<Kernel> make_omp_reshape(const KernelDesc& desc, std::string* why_not) {
  std::size_t bytes = 0;
  if (!check_reshape(desc, &bytes, why_not)) return nullptr;
  return std::make_unique<OmpReshape>(bytes);
}

}  // namespace nnfit
