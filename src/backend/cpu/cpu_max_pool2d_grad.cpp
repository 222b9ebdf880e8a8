// omp:max_pool2d_grad and max_pool2d_grad_bias. oneDNN's max-pool backward needs the opaque
// workspace of a training forward pass, so this kernel recomputes each window's argmax from
// x instead: the first position in row-major window order that holds the maximum gets dy
// (docs/design/ops.md). Threads split the batch, so overlapping windows accumulate into dx
// without races. NaN inputs are not given TF's treatment. max_pool2d_grad_bias also sums
// each image's dx per channel right after writing it (still in L2), for the bias gradient
// of the layer before the pool (fuse_bias_grad_into_pool_grad).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include "backend/common/column_sums.h"
#include "backend/common/low_precision.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/onednn_kernels.h"
#include "backend/cpu/pool_grad_common.h"
#include "backend/widened_kernel.h"

namespace nnfit {

namespace {

using pool_grad::as_float;
using pool_grad::BiasSums;
using pool_grad::kChannelBlock;

// One window's gradient for channels [c0, c0 + nc) of one image, vectorized over the
// channels: pass 1 finds the max, pass 2 the first row-major window position holding it
// (kept as its element offset from the window's first element, an int32 lane like the
// f32 compare's, so the select vectorizes and no lane divides), then dy is added there.
// Pass 2 only loads: interleaving x loads with dx stores at the same offset stalled on 4K
// aliasing (x and dx are often page-aligned alike) and ran 4x slower. kWidth > 0 fixes nc.
// Offsets fit int32: make_omp_max_pool2d_grad declines windows spanning 2^31 elements.
template <std::int64_t kWidth, bool kRelu>
inline void window_grad(const Window2d& g, const float* xn, float* dxn, const float* dyp,
                        std::int64_t c0, std::int64_t h0, std::int64_t h1, std::int64_t w0,
                        std::int64_t w1, std::int64_t nc_runtime) {
  const std::int64_t nc = kWidth > 0 ? kWidth : nc_runtime;
  float mx[kChannelBlock];
  std::int32_t at[kChannelBlock];
  const std::int64_t base = (h0 * g.w + w0) * g.c + c0;
  const float* first = xn + base;
  for (std::int64_t c = 0; c < nc; ++c) mx[c] = first[c];
  for (std::int64_t h = h0; h < h1; ++h) {
    for (std::int64_t w = w0; w < w1; ++w) {
      const float* xp = xn + (h * g.w + w) * g.c + c0;
      for (std::int64_t c = 0; c < nc; ++c) mx[c] = xp[c] > mx[c] ? xp[c] : mx[c];
    }
  }
  // Scan backwards so the last assignment is the first position in row-major order.
  for (std::int64_t c = 0; c < nc; ++c) at[c] = 0;
  for (std::int64_t h = h1 - 1; h >= h0; --h) {
    for (std::int64_t w = w1 - 1; w >= w0; --w) {
      const std::int64_t offset = ((h - h0) * g.w + (w - w0)) * g.c;
      const float* xp = first + offset;
      const auto off32 = static_cast<std::int32_t>(offset);
      for (std::int64_t c = 0; c < nc; ++c) at[c] = xp[c] == mx[c] ? off32 : at[c];
    }
  }
  float* dxw = dxn + base;
  for (std::int64_t c = 0; c < nc; ++c) {
    // With a fused relu gradient, x at the argmax is the window's max: pass dy where it is > 0.
    const float dy = dyp[c];
    const float g_c = kRelu && !(mx[c] > 0.0f) ? 0.0f : dy;
    dxw[at[c] + c] += g_c;
  }
}

// Disjoint windows (strides >= pool size, Keras's default) write each dx element at most
// once, so one pass per window stores dx outright: no zeroing, no scatter, no read of dx.
// Each window's x is copied to xs (L1) while its max is found, then walked in row-major
// order handing dy to the first position equal to the max (`rest` is what is still to
// hand out: dy until a lane's first hit, 0 after). A NaN max matches nothing, and then
// position 0 takes dy, as window_grad's scan does. Windows of up to kMaxDisjoint positions.
constexpr std::int64_t kMaxDisjoint = 16;

template <std::int64_t kWidth, bool kRelu>
inline void disjoint_window_grad(const Window2d& g, const float* xn, float* dxn, const float* dyp,
                                 std::int64_t c0, std::int64_t h0, std::int64_t h1, std::int64_t w0,
                                 std::int64_t w1, std::int64_t nc_runtime) {
  const std::int64_t nc = kWidth > 0 ? kWidth : nc_runtime;
  const std::int64_t base = (h0 * g.w + w0) * g.c + c0;
  float xs[kMaxDisjoint][kChannelBlock];
  float mx[kChannelBlock], rest[kChannelBlock];
  for (std::int64_t i = 0; i < nc; ++i) mx[i] = xn[base + i];
  std::int64_t p = 0;
  for (std::int64_t h = h0; h < h1; ++h) {
    for (std::int64_t w = w0; w < w1; ++w, ++p) {
      const float* xp = xn + (h * g.w + w) * g.c + c0;
      for (std::int64_t i = 0; i < nc; ++i) {
        xs[p][i] = xp[i];
        mx[i] = xp[i] > mx[i] ? xp[i] : mx[i];
      }
    }
  }
  for (std::int64_t i = 0; i < nc; ++i) {
    const float dy = dyp[i];
    rest[i] = kRelu && !(mx[i] > 0.0f) ? 0.0f : dy;
  }
  p = 0;
  for (std::int64_t h = h0; h < h1; ++h) {
    for (std::int64_t w = w0; w < w1; ++w, ++p) {
      float* dxp = dxn + (h * g.w + w) * g.c + c0;
      for (std::int64_t i = 0; i < nc; ++i) {
        // Bitwise & and |: short-circuit operators would branch on random data.
        const bool hit = (xs[p][i] == mx[i]) | ((p == 0) & (mx[i] != mx[i]));
        dxp[i] = hit ? rest[i] : 0.0f;
        rest[i] = hit ? 0.0f : rest[i];
      }
    }
  }
}

// Keras's default MaxPooling2D (whole_2x2_windows): one straight-line pass per window,
// vectorized over 16 channels, for float32 and for bfloat16 read as its bits (a bfloat16's
// float is its bits shifted up; dx takes dy's bits or zero, so nothing is rounded): no
// workspace, no conversion passes. The winner is the first of a, b, c, d (row-major)
// equal to the max.
using pool_grad::whole_2x2_windows;

// kBias: also adds the value handed out (the window's one nonzero dx) to sum[0..nc).
template <typename T, bool kRelu, bool kBias>
[[gnu::always_inline]] inline void window2x2_grad(const Window2d& g, const T* a, const T* dyp, T* da, std::int64_t nc, float* sum) {
  const T* b = a + g.c;
  const T* c = a + g.w * g.c;
  const T* d = c + g.c;
  T o[4][kChannelBlock];
  for (std::int64_t i = 0; i < nc; ++i) {
    const float fa = as_float(a[i]), fb = as_float(b[i]), fc = as_float(c[i]), fd = as_float(d[i]);
    float m = fa;
    m = fb > m ? fb : m;
    m = fc > m ? fc : m;
    m = fd > m ? fd : m;
    const T dy = dyp[i];  // loaded unconditionally: a conditional load stops vectorization
    const T gi = kRelu && !(m > 0.0f) ? T(0) : dy;
    // Bitwise & and |: short-circuit operators would branch on random data. A NaN max
    // matches nothing; position a takes dy then, as window_grad's scan does.
    const bool ha = (fa == m) | (m != m);
    const bool hb = !ha & (fb == m);
    const bool hc = !(ha | hb) & (fc == m);
    const bool hd = !(ha | hb | hc) & (fd == m);
    o[0][i] = ha ? gi : T(0);
    o[1][i] = hb ? gi : T(0);
    o[2][i] = hc ? gi : T(0);
    o[3][i] = hd ? gi : T(0);
    if constexpr (kBias) sum[i] += as_float(gi);
  }
  // Stores after all loads (x and dx are often page-aligned alike: 4K aliasing).
  const std::size_t bytes = static_cast<std::size_t>(nc) * sizeof(T);
  std::memcpy(da, o[0], bytes);
  std::memcpy(da + g.c, o[1], bytes);
  std::memcpy(da + g.w * g.c, o[2], bytes);
  std::memcpy(da + g.w * g.c + g.c, o[3], bytes);
}

// kBias: dx's column sums (the values handed out) in float per row of windows, each row's
// added in double to acc[0..C) (`row` is float[C] scratch).
template <typename T, bool kRelu, bool kBias>
[[gnu::always_inline]] inline void image_grad_2x2(const Window2d& g, const T* xn, const T* dyn, T* dxn, float* row, double* acc) {
  if (2 * g.oh < g.h || 2 * g.ow < g.w) {  // an odd size leaves a last row or column uncovered
    std::memset(dxn, 0, static_cast<std::size_t>(g.h * g.w * g.c) * sizeof(T));
  }
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    if constexpr (kBias) std::fill(row, row + g.c, 0.0f);
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      const std::int64_t base = (2 * oh * g.w + 2 * ow) * g.c;
      const T* dyp = dyn + (oh * g.ow + ow) * g.c;
      for (std::int64_t c0 = 0; c0 < g.c; c0 += kChannelBlock) {
        // row is null without a bias gradient: no offset applied to it then (UB on null).
        window2x2_grad<T, kRelu, kBias>(g, xn + base + c0, dyp + c0, dxn + base + c0,
                                        std::min(kChannelBlock, g.c - c0), kBias ? row + c0 : nullptr);
      }
    }
    if constexpr (kBias) {
      for (std::int64_t c = 0; c < g.c; ++c) acc[c] += row[c];
    }
  }
}

// Adds the column sums of one image's dx ([positions, C]) into thread t's partials.
template <typename T>
inline void add_image_sums(const BiasSums& b, int t, const T* dx, std::int64_t positions) {
  add_column_sums(dx, 0, positions, b.channels, b.block(t), b.acc(t));
}

// One image of the 2x2 path, and its column sums for thread t (bias.partial set), compiled
// for the widest vectors the CPU has (the build's baseline is x86-64, SSE2; the clones do
// the same arithmetic; the helpers are always inlined, as GCC otherwise left some as
// calls to their SSE2 copies).
template <typename T>
[[gnu::always_inline]] inline void image_2x2(const Window2d& g, bool relu, const T* xn, const T* dyn, T* dxn, const BiasSums& bias, int t) {
  if (bias.partial) {
    if (relu) image_grad_2x2<T, true, true>(g, xn, dyn, dxn, bias.block(t), bias.acc(t));
    else image_grad_2x2<T, false, true>(g, xn, dyn, dxn, bias.block(t), bias.acc(t));
  } else {
    if (relu) image_grad_2x2<T, true, false>(g, xn, dyn, dxn, nullptr, nullptr);
    else image_grad_2x2<T, false, false>(g, xn, dyn, dxn, nullptr, nullptr);
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_2x2_f32(
    const Window2d& g, bool relu, const float* xn, const float* dyn, float* dxn, const BiasSums& bias, int t) {
  image_2x2(g, relu, xn, dyn, dxn, bias, t);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_2x2_bf16(
    const Window2d& g, bool relu, const std::uint16_t* xn, const std::uint16_t* dyn, std::uint16_t* dxn,
    const BiasSums& bias, int t) {
  image_2x2(g, relu, xn, dyn, dxn, bias, t);
}

template <typename T>
void batch_grad_2x2(const Window2d& g, bool relu, const void* x, const void* dy, void* dx, const BiasSums& bias,
                    int threads) {
  const std::int64_t image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.c;
  const T* xs = static_cast<const T*>(x);
  const T* dys = static_cast<const T*>(dy);
  T* dxs = static_cast<T*>(dx);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t n = 0; n < g.n; ++n) {
    if constexpr (std::is_same_v<T, float>) {
      image_2x2_f32(g, relu, xs + n * image, dys + n * out_image, dxs + n * image, bias, omp_get_thread_num());
    } else {
      image_2x2_bf16(g, relu, xs + n * image, dys + n * out_image, dxs + n * image, bias, omp_get_thread_num());
    }
  }
}

bool disjoint_windows(const Window2d& g) {
  return g.sh >= g.kh && g.sw >= g.kw && g.kh * g.kw <= kMaxDisjoint;
}

// Whether disjoint windows leave no element of x uncovered (then dx needs no zeroing).
bool windows_tile_input(const Window2d& g) {
  return g.sh == g.kh && g.sw == g.kw && g.pad_top <= 0 && g.pad_left <= 0 &&
         (g.oh - 1) * g.sh - g.pad_top + g.kh >= g.h && (g.ow - 1) * g.sw - g.pad_left + g.kw >= g.w;
}

template <bool kDisjoint, std::int64_t kWidth, bool kRelu>
inline void any_window_grad(const Window2d& g, const float* xn, float* dxn, const float* dyp, std::int64_t c0,
                            std::int64_t h0, std::int64_t h1, std::int64_t w0, std::int64_t w1, std::int64_t nc) {
  if constexpr (kDisjoint) disjoint_window_grad<kWidth, kRelu>(g, xn, dxn, dyp, c0, h0, h1, w0, w1, nc);
  else window_grad<kWidth, kRelu>(g, xn, dxn, dyp, c0, h0, h1, w0, w1, nc);
}

// One image's gradient: dxn zeroed unless disjoint windows tile it, then each window's.
template <bool kDisjoint>
void image_grad_with(const Window2d& g, bool relu, const float* xn, const float* dyn, float* dxn) {
  if (!kDisjoint || !windows_tile_input(g)) {
    std::memset(dxn, 0, static_cast<std::size_t>(g.h * g.w * g.c) * sizeof(float));
  }
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    const std::int64_t h0 = std::max<std::int64_t>(oh * g.sh - g.pad_top, 0);
    const std::int64_t h1 = std::min(oh * g.sh - g.pad_top + g.kh, g.h);
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      const std::int64_t w0 = std::max<std::int64_t>(ow * g.sw - g.pad_left, 0);
      const std::int64_t w1 = std::min(ow * g.sw - g.pad_left + g.kw, g.w);
      const float* dyp = dyn + (oh * g.ow + ow) * g.c;
      for (std::int64_t c0 = 0; c0 < g.c; c0 += kChannelBlock) {
        const std::int64_t nc = std::min(kChannelBlock, g.c - c0);
        if (nc == kChannelBlock) {
          if (relu) any_window_grad<kDisjoint, kChannelBlock, true>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
          else any_window_grad<kDisjoint, kChannelBlock, false>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
        } else {
          if (relu) any_window_grad<kDisjoint, 0, true>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
          else any_window_grad<kDisjoint, 0, false>(g, xn, dxn, dyp + c0, c0, h0, h1, w0, w1, nc);
        }
      }
    }
  }
}

inline void image_grad(const Window2d& g, bool relu, const float* xn, const float* dyn, float* dxn) {
  if (disjoint_windows(g)) image_grad_with<true>(g, relu, xn, dyn, dxn);
  else image_grad_with<false>(g, relu, xn, dyn, dxn);
}
// Stateless apart from the geometry; run() from one thread at a time, parallel inside. At
// bfloat16 / float16 each thread converts one image of x and dy into float32 in its slice
// of the workspace, computes there and rounds dx back: the same arithmetic as float32 on
// the rounded inputs, with half the memory traffic and no whole-tensor copies.
class OmpMaxPool2dGrad final : public Kernel {
 public:
  // db_dtype: the bias gradient's type (max_pool2d_grad_bias), or none.
  OmpMaxPool2dGrad(const Window2d& g, bool relu, DType dtype, std::optional<DType> db_dtype)
      : g_(g), relu_(relu), dtype_(dtype), db_dtype_(db_dtype), threads_(omp_get_max_threads()) {}

  std::size_t workspace_bytes() const override {
    return convert_bytes() + (db_dtype_ ? BiasSums::bytes(threads_, g_.c) : 0);
  }

  void run(const KernelArgs& args) override {
    const Window2d g = g_;
    const bool relu = relu_;
    const std::int64_t image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.c;
    const BiasSums bias =
        db_dtype_ ? BiasSums::at(static_cast<char*>(args.workspace) + convert_bytes(), threads_, g.c) : BiasSums{};
    const int threads = threads_;
    if (whole_2x2_windows(g) && dtype_ != DType::f16) {
      if (dtype_ == DType::f32) {
        batch_grad_2x2<float>(g, relu, args.inputs[0], args.inputs[2], args.outputs[0], bias, threads);
      } else {
        batch_grad_2x2<std::uint16_t>(g, relu, args.inputs[0], args.inputs[2], args.outputs[0], bias, threads);
      }
      finish_bias(bias, args);
      return;
    }
    if (dtype_ == DType::f32) {
      const float* x = static_cast<const float*>(args.inputs[0]);
      const float* dy = static_cast<const float*>(args.inputs[2]);
      float* dx = static_cast<float*>(args.outputs[0]);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t n = 0; n < g.n; ++n) {
        image_grad(g, relu, x + n * image, dy + n * out_image, dx + n * image);
        if (bias.partial) add_image_sums(bias, omp_get_thread_num(), dx + n * image, g.h * g.w);
      }
      finish_bias(bias, args);
      return;
    }
    const auto* x = static_cast<const std::uint16_t*>(args.inputs[0]);
    const auto* dy = static_cast<const std::uint16_t*>(args.inputs[2]);
    auto* dx = static_cast<std::uint16_t*>(args.outputs[0]);
    float* ws = static_cast<float*>(args.workspace);
    const DType t = dtype_;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t n = 0; n < g.n; ++n) {
      float* xf = ws + static_cast<std::size_t>(omp_get_thread_num()) * per_thread();
      float* dyf = xf + image;
      float* dxf = dyf + out_image;
      // The conversions' own threads stay off: nested in this parallel loop.
      low_precision::to_f32(t, x + n * image, xf, image);
      low_precision::to_f32(t, dy + n * out_image, dyf, out_image);
      image_grad(g, relu, xf, dyf, dxf);
      if (bias.partial) add_image_sums(bias, omp_get_thread_num(), dxf, g.h * g.w);
      low_precision::from_f32(t, dxf, dx + n * image, image);
    }
    finish_bias(bias, args);
  }

 private:
  std::size_t per_thread() const { return static_cast<std::size_t>(2 * g_.h * g_.w * g_.c + g_.oh * g_.ow * g_.c); }
  // The float32 copies the paths without a native loop use (a multiple of 8 bytes).
  std::size_t convert_bytes() const {
    if (dtype_ == DType::f32 || (dtype_ == DType::bf16 && whole_2x2_windows(g_))) return 0;
    return (static_cast<std::size_t>(threads_) * per_thread() * sizeof(float) + 7) / 8 * 8;
  }

  void finish_bias(const BiasSums& bias, const KernelArgs& args) const {
    if (bias.partial) bias.finish(*db_dtype_, args.outputs[1]);
  }

  Window2d g_;
  bool relu_;
  DType dtype_;
  std::optional<DType> db_dtype_;
  int threads_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_max_pool2d_grad(const KernelDesc& desc, std::string* why_not) {
  if (std::string r = window_unsupported_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const DType dtype = desc.inputs.at(0).dtype;
  const bool bias = desc.op == "max_pool2d_grad_bias";
  for (const TensorDesc& t : desc.inputs) {
    if (t.dtype != dtype || !is_floating(dtype) || desc.outputs.at(0).dtype != dtype) {
      if (why_not) *why_not = "x, y, dy and dx must share one floating type";
      return nullptr;
    }
  }
  std::optional<DType> db_dtype;
  if (bias) {
    db_dtype = desc.outputs.at(1).dtype;
    if (*db_dtype != dtype && *db_dtype != DType::f32) {
      if (why_not) *why_not = "db must be float32 or dx's type";
      return nullptr;
    }
  }
  const Window2d g = checked_window(widened(desc));
  if ((g.kh * g.w + g.kw) * g.c >= (std::int64_t{1} << 31)) {
    if (why_not) *why_not = "a pooling window spans 2^31 elements or more";
    return nullptr;
  }
  return std::make_unique<OmpMaxPool2dGrad>(g, desc.attrs.i_or("relu", 0) != 0, dtype, db_dtype);
}

}  // namespace nnfit
