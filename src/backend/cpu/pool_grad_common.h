// Private to the OpenMP max-pool gradients (cpu_max_pool2d_grad.cpp, cpu_max_pool2d_argmax.cpp):
// the channel block they vectorize over, a bfloat16's float, and the per-thread partial
// sums of the bias gradient they can fold in (max_pool2d_grad_bias,
// max_pool2d_argmax_grad_bias; fuse_bias_grad_into_pool_grad).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "backend/common/low_precision.h"
#include "backend/common/nn_op_geometry.h"
#include "nnfit/core/dtype.h"

namespace nnfit::pool_grad {

inline constexpr std::int64_t kChannelBlock = 16;

// Keras's default MaxPooling2D: every window a whole 2x2 window at stride 2 (valid
// padding, or same on even sizes), which the kernels give a straight-line path.
inline bool whole_2x2_windows(const Window2d& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.pad_top == 0 && g.pad_left == 0 &&
         2 * g.oh <= g.h && 2 * g.ow <= g.w;
}

inline float as_float(float v) { return v; }
inline float as_float(std::uint16_t bf16) { return std::bit_cast<float>(static_cast<std::uint32_t>(bf16) << 16); }

// The per-thread column sums of a pool gradient's bias gradient: thread t's double[C] at
// acc(t), with a float[C] block beside it. Positions are summed in float by blocks (a row
// of windows, or add_column_sums' blocks of dx) within one image, each block added in
// double, as omp:bias_add_grad does: an image is never split between threads, so the
// float sums do not depend on the thread count, only the order of the double partials does.
struct BiasSums {
  double* partial = nullptr;  // null: no bias gradient
  float* blocks = nullptr;
  std::int64_t channels = 0;
  int threads = 0;
  double* acc(int t) const { return partial + static_cast<std::int64_t>(t) * channels; }
  float* block(int t) const { return blocks + static_cast<std::int64_t>(t) * channels; }

  // The workspace bytes for `threads` threads and `channels` channels.
  static std::size_t bytes(int threads, std::int64_t channels) {
    return static_cast<std::size_t>(threads * channels) * (sizeof(double) + sizeof(float));
  }
  // Sums laid out at `workspace` (bytes() of it), zeroed.
  static BiasSums at(void* workspace, int threads, std::int64_t channels) {
    BiasSums b;
    b.partial = static_cast<double*>(workspace);
    b.blocks = reinterpret_cast<float*>(b.partial + threads * channels);
    b.channels = channels;
    b.threads = threads;
    std::fill(b.partial, b.partial + threads * channels, 0.0);
    return b;
  }
  // db = the threads' partials summed in thread order, rounded once to `dtype` (float32 or
  // a low-precision type) at `out`.
  void finish(DType dtype, void* out) const {
    for (std::int64_t c = 0; c < channels; ++c) {
      double total = 0.0;
      for (int t = 0; t < threads; ++t) total += acc(t)[c];
      blocks[c] = static_cast<float>(total);
    }
    if (dtype == DType::f32) std::memcpy(out, blocks, static_cast<std::size_t>(channels) * sizeof(float));
    else low_precision::from_f32(dtype, blocks, out, channels);
  }
};

}  // namespace nnfit::pool_grad
