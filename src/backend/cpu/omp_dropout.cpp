// OpenMP kernels of dropout and dropout_grad. Each element's keep decision is
// dropout_keep() of backend/common/random.h, a pure function of its index, so threads
// need no shared RNG state and the mask is bit-identical to ref:dropout's. The per-step
// key is computed once per run (dropout_key), and one splitmix64 draw covers four
// elements (dropout_bits). The whole groups of four are drawn a block at a time into a
// buffer (the 64-bit hashes vectorize where the CPU multiplies 64-bit lanes: x86-64-v4),
// whose 16-bit lanes are then the elements' draws in order. bfloat16 x / dy are read and
// y / dx written natively.
#include <algorithm>
#include <bit>
#include <cstring>

#include "backend/common/low_precision.h"
#include "backend/common/random.h"
#include "backend/common/train_op_checks.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

// Element types: float32, or bfloat16 held as its bits (low_precision::load and store).
using low_precision::load;
using low_precision::store;

// keep ? v : +0 for a 0/1 `keep`, as a bit mask: the keep decisions are coin flips, which a
// branch mispredicts half the time (4-9x slower); NaN and -0.0 stay as the select has them.
inline float keep_or_zero(float v, std::uint32_t keep) {
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) & (0u - keep));
}

// kBlockGroups groups of four: the bits of groups first_group.. into `bits`, one
// dropout_bits() each. Cloned per instruction set: the 64-bit multiplies of splitmix64
// vectorize on x86-64-v4 (vpmullq) and are emulated on v3; the result is the same.
constexpr std::int64_t kBlockGroups = 256;

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void draw_groups(
    std::uint64_t key, std::uint64_t first_group, std::int64_t groups, std::uint64_t* bits) {
#pragma omp simd
  for (std::int64_t k = 0; k < groups; ++k) bits[k] = dropout_bits(key, first_group + static_cast<std::uint64_t>(k));
}

// Elements [i0, i0 + 4 * groups) from the draws in `bits`: element i0 + j takes lane j % 4
// of group j / 4, i.e. the j-th 16-bit word of `bits` (little-endian, as
// dropout_lane_uniform shifts them out).
template <typename T>
[[gnu::always_inline]] inline void apply_groups(const std::uint64_t* bits, std::int64_t groups, float rate,
                                                float scale, const T* x, T* y, std::uint8_t* mask) {
  std::uint16_t words[4 * kBlockGroups];
  static_assert(std::endian::native == std::endian::little, "lane j of a group is its j-th 16-bit word");
  std::memcpy(words, bits, static_cast<std::size_t>(groups) * sizeof(std::uint64_t));
#pragma omp simd
  for (std::int64_t j = 0; j < 4 * groups; ++j) {
    const bool keep = static_cast<float>(words[j]) * (1.0f / 65536.0f) >= rate;
    store(keep_or_zero(load(x[j]) * scale, keep), &y[j]);
    mask[j] = static_cast<std::uint8_t>(keep);
  }
}

// dx = keep ? dy * scale : +0 over [0, n).
template <typename T>
[[gnu::always_inline]] inline void grad_run(const T* dy, const std::uint8_t* mask, float scale, T* dx, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) store(keep_or_zero(load(dy[i]) * scale, mask[i] != 0), &dx[i]);
}

// Both loops per instruction set and type: at the build's SSE2 baseline the bfloat16
// rounding had no vector narrowing and ran 2.5x the float32 loops' time.
#define NNFIT_DROPOUT_CLONES(T, SUFFIX)                                                                          \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void apply_groups_##SUFFIX(      \
      const std::uint64_t* bits, std::int64_t groups, float rate, float scale, const T* x, T* y,                \
      std::uint8_t* mask) {                                                                                     \
    apply_groups(bits, groups, rate, scale, x, y, mask);                                                        \
  }                                                                                                             \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void grad_run_##SUFFIX(          \
      const T* dy, const std::uint8_t* mask, float scale, T* dx, std::int64_t n) {                              \
    grad_run(dy, mask, scale, dx, n);                                                                           \
  }
NNFIT_DROPOUT_CLONES(float, f32)
NNFIT_DROPOUT_CLONES(std::uint16_t, bf16)
#undef NNFIT_DROPOUT_CLONES

inline void apply_groups_cloned(const std::uint64_t* bits, std::int64_t groups, float rate, float scale,
                                const float* x, float* y, std::uint8_t* mask) {
  apply_groups_f32(bits, groups, rate, scale, x, y, mask);
}
inline void apply_groups_cloned(const std::uint64_t* bits, std::int64_t groups, float rate, float scale,
                                const std::uint16_t* x, std::uint16_t* y, std::uint8_t* mask) {
  apply_groups_bf16(bits, groups, rate, scale, x, y, mask);
}
inline void grad_run_cloned(const float* dy, const std::uint8_t* mask, float scale, float* dx, std::int64_t n) {
  grad_run_f32(dy, mask, scale, dx, n);
}
inline void grad_run_cloned(const std::uint16_t* dy, const std::uint8_t* mask, float scale, std::uint16_t* dx,
                            std::int64_t n) {
  grad_run_bf16(dy, mask, scale, dx, n);
}

template <typename T>
void dropout(const DropoutParams& p, const KernelArgs& args) {
  const T* x = static_cast<const T*>(args.inputs[0]);
  T* y = static_cast<T*>(args.outputs[0]);
  std::uint8_t* mask = static_cast<std::uint8_t*>(args.outputs[1]);
  const float rate = p.rate;
  const float scale = 1.0f / (1.0f - rate);
  const std::int64_t n = p.numel;
  const std::uint64_t key = dropout_key(args.ctx->seed, p.seed, static_cast<std::uint64_t>(args.ctx->step));
  // A data-parallel rank's rows draw the global batch's (Note [Random draws by global row]).
  const std::uint64_t offset = p.index_offset(args.ctx->row_offset, args.ctx->rows);
  if (!p.noise.empty()) {
    // Broadcast decisions (noise_shape): each element draws its noise position's lane.
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t at = offset + p.noise_index(i);
      const bool keep = dropout_lane_uniform(dropout_bits(key, at / 4), static_cast<unsigned>(at % 4)) >= rate;
      store(keep_or_zero(load(x[i]) * scale, keep), &y[i]);
      mask[i] = keep ? 1 : 0;
    }
    return;
  }
  // Element i draws lane (offset + i) % 4 of group (offset + i) / 4: the elements before
  // the first whole group one by one, full groups of four (one hash each), then the tail.
  auto one = [&](std::int64_t i) {
    const bool keep = dropout_uniform_keyed(key, offset + static_cast<std::uint64_t>(i)) >= rate;
    store(keep_or_zero(load(x[i]) * scale, keep), &y[i]);
    mask[i] = keep ? 1 : 0;
  };
  const std::int64_t head = std::min<std::int64_t>(n, static_cast<std::int64_t>((4 - offset % 4) % 4));
  for (std::int64_t i = 0; i < head; ++i) one(i);
  const std::uint64_t first_group = (offset + static_cast<std::uint64_t>(head)) / 4;
  const std::int64_t full = (n - head) / 4;
  const std::int64_t blocks = (full + kBlockGroups - 1) / kBlockGroups;
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::uint64_t bits[kBlockGroups];
    const std::int64_t g0 = b * kBlockGroups, groups = std::min(kBlockGroups, full - g0);
    draw_groups(key, first_group + static_cast<std::uint64_t>(g0), groups, bits);
    const std::int64_t i0 = head + g0 * 4;
    apply_groups_cloned(bits, groups, rate, scale, x + i0, y + i0, mask + i0);
  }
  for (std::int64_t i = head + full * 4; i < n; ++i) one(i);
}

template <typename T>
void dropout_grad(const DropoutParams& p, const KernelArgs& args) {
  const T* dy = static_cast<const T*>(args.inputs[0]);
  const std::uint8_t* mask = static_cast<const std::uint8_t*>(args.inputs[1]);
  T* dx = static_cast<T*>(args.outputs[0]);
  const float scale = 1.0f / (1.0f - p.rate);
  const std::int64_t n = p.numel;
  constexpr std::int64_t kBlock = 4 * kBlockGroups;
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kOmpMinParallelElements)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t i0 = b * kBlock;
    grad_run_cloned(dy + i0, mask + i0, scale, dx + i0, std::min(kBlock, n - i0));
  }
}

class OmpDropout final : public Kernel {
 public:
  OmpDropout(DropoutParams p, bool grad, DType data) : p_(std::move(p)), grad_(grad), bf16_(data == DType::bf16) {}
  void run(const KernelArgs& args) override {
    if (grad_) {
      if (bf16_) dropout_grad<std::uint16_t>(p_, args);
      else dropout_grad<float>(p_, args);
    } else {
      if (bf16_) dropout<std::uint16_t>(p_, args);
      else dropout<float>(p_, args);
    }
  }

 private:
  DropoutParams p_;
  bool grad_, bf16_;
};

}  // namespace

// float32, and bfloat16 natively (the same bits as the float32 kernel widened).
std::unique_ptr<Kernel> make_omp_dropout(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  const DType data = desc.inputs.at(0).dtype == DType::bf16 ? DType::bf16 : DType::f32;
  if (!check_dropout(desc, &p, why_not, data)) return nullptr;
  return std::make_unique<OmpDropout>(std::move(p), false, data);
}

std::unique_ptr<Kernel> make_omp_dropout_grad(const KernelDesc& desc, std::string* why_not) {
  DropoutParams p;
  const DType data = desc.inputs.at(0).dtype == DType::bf16 ? DType::bf16 : DType::f32;
  if (!check_dropout(desc, &p, why_not, data)) return nullptr;
  return std::make_unique<OmpDropout>(std::move(p), true, data);
}

}  // namespace nnfit
