// OpenMP kernels of dropout and dropout_grad. Each element's keep decision is
// dropout_keep() of backend/common/random.h, a pure function of its index, so threads
// need no shared RNG state and the mask is bit-identical to ref:dropout's. The per-step
// key is computed once per run (dropout_key), and one splitmix64 draw covers four
// elements (dropout_bits).
#include <algorithm>
#include <bit>

#include "backend/common/random.h"
#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpDropout final : public Kernel {
 public:
  explicit OmpDropout(DropoutParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[0]);
    float* y = static_cast<float*>(args.outputs[0]);
    std::uint8_t* mask = static_cast<std::uint8_t*>(args.outputs[1]);
    const std::uint64_t run_seed = args.ctx->seed, node_seed = p_.seed;
    const auto step = static_cast<std::uint64_t>(args.ctx->step);
    const float rate = p_.rate;
    const float scale = 1.0f / (1.0f - rate);
    const std::int64_t n = p_.numel;
    const std::uint64_t key = dropout_key(run_seed, node_seed, step);
    if (!p_.noise.empty()) {
      // Broadcast decisions (noise_shape): each element draws its noise position's lane.
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t at = p_.noise_index(i);
        const bool keep = dropout_lane_uniform(dropout_bits(key, at / 4), static_cast<unsigned>(at % 4)) >= rate;
        y[i] = keep ? x[i] * scale : 0.0f;
        mask[i] = keep ? 1 : 0;
      }
      return;
    }
    // Full groups of four without branches (the keep decisions are coin flips, which a
    // branch mispredicts half the time: 4x slower), then the tail.
    const std::int64_t full = n / 4;
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t gidx = 0; gidx < full; ++gidx) {
      const std::uint64_t bits = dropout_bits(key, static_cast<std::uint64_t>(gidx));
      for (unsigned lane = 0; lane < 4; ++lane) {
        const std::int64_t i = gidx * 4 + lane;
        const bool keep = dropout_lane_uniform(bits, lane) >= rate;
        // keep ? x * scale : +0.0f as a bit mask, so NaN and -0.0 match ref:dropout.
        const std::uint32_t lane_mask = 0u - static_cast<std::uint32_t>(keep);
        y[i] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(x[i] * scale) & lane_mask);
        mask[i] = static_cast<std::uint8_t>(keep);
      }
    }
    if (full * 4 < n) {
      const std::uint64_t bits = dropout_bits(key, static_cast<std::uint64_t>(full));
      for (std::int64_t i = full * 4; i < n; ++i) {
        const bool keep = dropout_lane_uniform(bits, static_cast<unsigned>(i - full * 4)) >= rate;
        y[i] = keep ? x[i] * scale : 0.0f;
        mask[i] = keep ? 1 : 0;
      }
    }
  }

 private:
  DropoutParams p_;
};

class OmpDropoutGrad final : public Kernel {
 public:
  explicit OmpDropoutGrad(DropoutParams p) : p_(p) {}
  void run(const KernelArgs& args) override {
    const float* dy = static_cast<const float*>(args.inputs[0]);
    const std::uint8_t* mask = static_cast<const std::uint8_t*>(args.inputs[1]);
    float* dx = static_cast<float*>(args.outputs[0]);
    const float scale = 1.0f / (1.0f - p_.rate);
    const std::int64_t n = p_.numel;
    // A bit mask rather than a select on the coin-flip mask: 9x faster, and the same bits.
#pragma omp parallel for simd schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint32_t keep = 0u - static_cast<std::uint32_t>(mask[i] != 0);
      dx[i] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(dy[i] * scale) & keep);
    }
  }

 private:
  DropoutParams p_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_dropout(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  if (!check_dropout(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpDropout>(p);
}

std::unique_ptr<Kernel> make_omp_dropout_grad(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  if (!check_dropout(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpDropoutGrad>(p);
}

}  // namespace nnfit
