// omp:max_pool2d_argmax and omp:max_pool2d_argmax_grad(_bias) (Note [Pool argmax],
// nnfit/core/pool_argmax.h): the max-pool forward of a training step keeps one byte per
// element of y saying where its window's maximum was, and the gradient reads those bytes
// and dy instead of reading x again to find the maximum. Threads split the batch. float32
// and bfloat16 natively (a bfloat16 is read as its bits: its float is the bits shifted up,
// and y and dx take x's and dy's bits or zero, so nothing is rounded); float16 runs widened.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/onednn_kernels.h"
#include "backend/cpu/pool_grad_common.h"
#include "backend/widened_kernel.h"
#include "nnfit/core/pool_argmax.h"

namespace nnfit {

namespace {

using pool_grad::as_float;
using pool_grad::BiasSums;
using pool_grad::kChannelBlock;
using pool_grad::whole_2x2_windows;

// --- forward ---

// A float32's or a bfloat16's bits, for the gradient's selects without touching the values
// (bitwise selects vectorize where GCC turned the ternaries of mixed-width lanes into branches).
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;

template <typename T>
[[gnu::always_inline]] inline Bits<T> bits_of(T v) {
  Bits<T> b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// All ones where `on`, else zero.
template <typename U>
[[gnu::always_inline]] inline U mask_if(bool on) {
  return static_cast<U>(U(0) - static_cast<U>(on));
}

// One 2x2 window (a at its top left) for nc <= kChannelBlock channels: y and the argmax
// byte. The winner is the first of a, b, c, d (row-major) equal to the max; a NaN max
// (only a NaN a can be one: a later NaN never compares greater) leaves it at a. kWidth >
// 0 fixes nc, so the loop and the stores compile to whole vectors. Float only: the
// bfloat16 path runs it on rows widened to float.
template <std::int64_t kWidth>
[[gnu::always_inline]] inline void window2x2_argmax(const Window2d& g, const float* a, float* y, std::uint8_t* at,
                                                    std::int64_t nc_runtime) {
  using U = std::uint32_t;  // a float compare's lane: computing in it, then narrowing, vectorizes best
  const std::int64_t nc = kWidth > 0 ? kWidth : nc_runtime;
  const float* b = a + g.c;
  const float* c = a + g.w * g.c;
  const float* d = c + g.c;
  U code[kChannelBlock];
  for (std::int64_t i = 0; i < nc; ++i) {
    const float fa = a[i], fb = b[i], fc = c[i], fd = d[i];
    // m changes only to a strictly greater value, so it is the first maximum's own value,
    // bits and all (a -0 before a +0 stays -0; a NaN a stays): y is m.
    float m = fa;
    m = fb > m ? fb : m;
    m = fc > m ? fc : m;
    m = fd > m ? fd : m;
    // Bitwise & and |: short-circuit operators would branch on random data.
    const U ma = mask_if<U>((fa == m) | (m != m));
    const U mb = ~ma & mask_if<U>(fb == m);
    const U mc = ~(ma | mb) & mask_if<U>(fc == m);
    const U md = ~(ma | mb | mc);
    y[i] = m;
    code[i] = (mb & 1u) | (mc & 2u) | (md & 3u) | (m > 0.0f ? 0u : U{kArgmaxNotPositive});
  }
  // Narrowed in a loop of its own: within the one above GCC shuffled words per element.
  for (std::int64_t i = 0; i < nc; ++i) at[i] = static_cast<std::uint8_t>(code[i]);
}

// One row of 2x2 windows: `rows` the two input rows it reads (row stride g.w * g.c), y and
// the bytes of output row `oh` at yrow and atrow.
[[gnu::always_inline]] inline void row_argmax_2x2(const Window2d& g, const float* rows, float* yrow,
                                                  std::uint8_t* atrow) {
  for (std::int64_t ow = 0; ow < g.ow; ++ow) {
    const float* a = rows + 2 * ow * g.c;
    const std::int64_t out = ow * g.c;
    std::int64_t c0 = 0;
    for (; c0 + kChannelBlock <= g.c; c0 += kChannelBlock) {
      window2x2_argmax<kChannelBlock>(g, a + c0, yrow + out + c0, atrow + out + c0, kChannelBlock);
    }
    if (c0 < g.c) window2x2_argmax<0>(g, a + c0, yrow + out + c0, atrow + out + c0, g.c - c0);
  }
}

// The 2x2 path compiled for the widest vectors the CPU has (the build's baseline is
// x86-64, SSE2; the clones do the same arithmetic). Its helpers are always inlined: GCC
// otherwise kept some as calls to their baseline (SSE2) copies, 3-4x slower.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_argmax_2x2_f32(
    const Window2d& g, const float* xn, float* yn, std::uint8_t* atn) {
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    row_argmax_2x2(g, xn + 2 * oh * g.w * g.c, yn + oh * g.ow * g.c, atn + oh * g.ow * g.c);
  }
}

// bfloat16: each pair of input rows widened to float in `rows` (2 * g.w * g.c floats, this
// thread's, in L1 or L2), the float32 row pass run there into `yrow` (g.ow * g.c floats),
// and y narrowed back to its bits (exact: y is one of the inputs). Widening and narrowing
// contiguous rows vectorize cleanly; the same loads widened per window ran at half the
// float32 kernel's speed on half its bytes.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_argmax_2x2_bf16(
    const Window2d& g, const std::uint16_t* xn, std::uint16_t* yn, std::uint8_t* atn, float* rows, float* yrow) {
  const std::int64_t two_rows = 2 * g.w * g.c, out_row = g.ow * g.c;
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    const std::uint16_t* src = xn + 2 * oh * g.w * g.c;
    for (std::int64_t i = 0; i < two_rows; ++i) rows[i] = as_float(src[i]);
    row_argmax_2x2(g, rows, yrow, atn + oh * out_row);
    std::uint16_t* dst = yn + oh * out_row;
    for (std::int64_t i = 0; i < out_row; ++i) dst[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(yrow[i]) >> 16);
  }
}

// Any window: the first in-bounds position, replaced by each later one strictly greater.
template <typename T>
void image_argmax_any(const Window2d& g, const T* xn, T* yn, std::uint8_t* atn) {
  float mx[kChannelBlock];
  T win[kChannelBlock];
  std::int32_t pos[kChannelBlock];
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    const std::int64_t hs = oh * g.sh - g.pad_top;
    const std::int64_t h0 = std::max<std::int64_t>(hs, 0), h1 = std::min(hs + g.kh, g.h);
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      const std::int64_t ws = ow * g.sw - g.pad_left;
      const std::int64_t w0 = std::max<std::int64_t>(ws, 0), w1 = std::min(ws + g.kw, g.w);
      const std::int64_t out = (oh * g.ow + ow) * g.c;
      for (std::int64_t c0 = 0; c0 < g.c; c0 += kChannelBlock) {
        const std::int64_t nc = std::min(kChannelBlock, g.c - c0);
        const T* first = xn + (h0 * g.w + w0) * g.c + c0;
        const auto p0 = static_cast<std::int32_t>((h0 - hs) * g.kw + (w0 - ws));
        for (std::int64_t i = 0; i < nc; ++i) {
          win[i] = first[i];
          mx[i] = as_float(first[i]);
          pos[i] = p0;
        }
        for (std::int64_t h = h0; h < h1; ++h) {
          for (std::int64_t w = w0; w < w1; ++w) {
            const T* xp = xn + (h * g.w + w) * g.c + c0;
            const auto p = static_cast<std::int32_t>((h - hs) * g.kw + (w - ws));
            for (std::int64_t i = 0; i < nc; ++i) {
              const float v = as_float(xp[i]);
              const bool up = v > mx[i];
              mx[i] = up ? v : mx[i];
              win[i] = up ? xp[i] : win[i];
              pos[i] = up ? p : pos[i];
            }
          }
        }
        for (std::int64_t i = 0; i < nc; ++i) {
          yn[out + c0 + i] = win[i];
          atn[out + c0 + i] = static_cast<std::uint8_t>(pos[i] | (mx[i] > 0.0f ? 0 : kArgmaxNotPositive));
        }
      }
    }
  }
}

class OmpMaxPool2dArgmax final : public Kernel {
 public:
  OmpMaxPool2dArgmax(const Window2d& g, DType dtype) : g_(g), dtype_(dtype), threads_(omp_get_max_threads()) {}

  // The bfloat16 2x2 path's float rows, per thread.
  std::size_t workspace_bytes() const override {
    return dtype_ == DType::bf16 && whole_2x2_windows(g_) ? static_cast<std::size_t>(threads_ * per_thread()) * sizeof(float)
                                                           : 0;
  }

  void run(const KernelArgs& args) override {
    if (dtype_ == DType::f32) batch<float>(args);
    else batch<std::uint16_t>(args);
  }

 private:
  template <typename T>
  void batch(const KernelArgs& args) const {
    const Window2d g = g_;
    const std::int64_t image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.c;
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    auto* at = static_cast<std::uint8_t*>(args.outputs[1]);
    const bool whole = whole_2x2_windows(g);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t n = 0; n < g.n; ++n) {
      const T* xn = x + n * image;
      T* yn = y + n * out_image;
      std::uint8_t* atn = at + n * out_image;
      if (!whole) {
        image_argmax_any(g, xn, yn, atn);
      } else if constexpr (std::is_same_v<T, float>) {
        image_argmax_2x2_f32(g, xn, yn, atn);
      } else {
        float* rows = static_cast<float*>(args.workspace) + omp_get_thread_num() * per_thread();
        image_argmax_2x2_bf16(g, xn, yn, atn, rows, rows + 2 * g.w * g.c);
      }
    }
  }

  std::int64_t per_thread() const { return 2 * g_.w * g_.c + g_.ow * g_.c; }

  Window2d g_;
  DType dtype_;
  int threads_;
};

// --- gradient ---

// One 2x2 window's dx from its argmax byte, for nc <= kChannelBlock channels: dy's bits
// where the byte points (zero there too when the relu gradient is folded in and the max
// was not > 0), zero elsewhere; kBias also adds the value handed out to sum[0..nc).
// Stores after all loads. kWidth > 0 fixes nc.
template <typename T, bool kRelu, bool kBias, std::int64_t kWidth>
[[gnu::always_inline]] inline void window2x2_grad(const Window2d& g, const T* dyp, const std::uint8_t* atp, T* da,
                                                  std::int64_t nc_runtime, float* sum) {
  using U = Bits<T>;
  const std::int64_t nc = kWidth > 0 ? kWidth : nc_runtime;
  U o[4][kChannelBlock];
  float handed[kChannelBlock];
  for (std::int64_t i = 0; i < nc; ++i) {
    const U code = atp[i];
    const U keep = kRelu ? mask_if<U>((code & kArgmaxNotPositive) == 0) : static_cast<U>(~U(0));
    const U gb = static_cast<U>(bits_of(dyp[i]) & keep);
    const U p = static_cast<U>(code & kArgmaxPosition);
    o[0][i] = static_cast<U>(gb & mask_if<U>(p == 0));
    o[1][i] = static_cast<U>(gb & mask_if<U>(p == 1));
    o[2][i] = static_cast<U>(gb & mask_if<U>(p == 2));
    o[3][i] = static_cast<U>(gb & mask_if<U>(p == 3));
    if constexpr (kBias) {
      T v;
      std::memcpy(&v, &gb, sizeof v);
      handed[i] = as_float(v);
    }
  }
  if constexpr (kBias) {
    for (std::int64_t i = 0; i < nc; ++i) sum[i] += handed[i];
  }
  const std::size_t bytes = static_cast<std::size_t>(nc) * sizeof(T);
  std::memcpy(da, o[0], bytes);
  std::memcpy(da + g.c, o[1], bytes);
  std::memcpy(da + g.w * g.c, o[2], bytes);
  std::memcpy(da + g.w * g.c + g.c, o[3], bytes);
}

// One image of the 2x2 path; kBias: the values handed out summed in float per row of
// windows (`row`, float[C]), each row added in double to acc[0..C).
template <typename T, bool kRelu, bool kBias>
[[gnu::always_inline]] inline void image_grad_2x2(const Window2d& g, const T* dyn, const std::uint8_t* atn, T* dxn, float* row,
                           double* acc) {
  if (2 * g.oh < g.h || 2 * g.ow < g.w) {  // an odd size leaves a last row or column uncovered
    std::memset(dxn, 0, static_cast<std::size_t>(g.h * g.w * g.c) * sizeof(T));
  }
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    if constexpr (kBias) std::fill(row, row + g.c, 0.0f);
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      const std::int64_t base = (2 * oh * g.w + 2 * ow) * g.c, out = (oh * g.ow + ow) * g.c;
      // row is null without a bias gradient: no offset applied to it then (UB on null).
      const auto row_at = [row](std::int64_t c) { return kBias ? row + c : nullptr; };
      std::int64_t c0 = 0;
      for (; c0 + kChannelBlock <= g.c; c0 += kChannelBlock) {
        window2x2_grad<T, kRelu, kBias, kChannelBlock>(g, dyn + out + c0, atn + out + c0, dxn + base + c0,
                                                       kChannelBlock, row_at(c0));
      }
      if (c0 < g.c) {
        window2x2_grad<T, kRelu, kBias, 0>(g, dyn + out + c0, atn + out + c0, dxn + base + c0, g.c - c0, row_at(c0));
      }
    }
    if constexpr (kBias) {
      for (std::int64_t c = 0; c < g.c; ++c) acc[c] += row[c];
    }
  }
}

template <typename T>
[[gnu::always_inline]] inline void image_grad_2x2_any(const Window2d& g, bool relu, const T* dyn, const std::uint8_t* atn, T* dxn,
                               const BiasSums& bias, int t) {
  if (bias.partial) {
    if (relu) image_grad_2x2<T, true, true>(g, dyn, atn, dxn, bias.block(t), bias.acc(t));
    else image_grad_2x2<T, false, true>(g, dyn, atn, dxn, bias.block(t), bias.acc(t));
  } else {
    if (relu) image_grad_2x2<T, true, false>(g, dyn, atn, dxn, nullptr, nullptr);
    else image_grad_2x2<T, false, false>(g, dyn, atn, dxn, nullptr, nullptr);
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_grad_2x2_f32(
    const Window2d& g, bool relu, const float* dyn, const std::uint8_t* atn, float* dxn, const BiasSums& bias, int t) {
  image_grad_2x2_any(g, relu, dyn, atn, dxn, bias, t);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_grad_2x2_bf16(
    const Window2d& g, bool relu, const std::uint16_t* dyn, const std::uint8_t* atn, std::uint16_t* dxn,
    const BiasSums& bias, int t) {
  image_grad_2x2_any(g, relu, dyn, atn, dxn, bias, t);
}

// Any window, into float (dxf, zeroed here): dy added at each window's argmax, so
// overlapping windows accumulate; with bias, the values handed out summed as on the 2x2 path.
template <typename T>
void image_grad_any(const Window2d& g, bool relu, const T* dyn, const std::uint8_t* atn, float* dxf, float* row,
                    double* acc) {
  std::fill(dxf, dxf + g.h * g.w * g.c, 0.0f);
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    if (acc) std::fill(row, row + g.c, 0.0f);
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      const std::int64_t hs = oh * g.sh - g.pad_top, ws = ow * g.sw - g.pad_left;
      const std::int64_t out = (oh * g.ow + ow) * g.c;
      for (std::int64_t c = 0; c < g.c; ++c) {
        const std::uint8_t code = atn[out + c];
        const float gi = relu && (code & kArgmaxNotPositive) ? 0.0f : as_float(dyn[out + c]);
        const std::int64_t p = code & kArgmaxPosition;
        dxf[((hs + p / g.kw) * g.w + ws + p % g.kw) * g.c + c] += gi;
        if (acc) row[c] += gi;
      }
    }
    if (acc) {
      for (std::int64_t c = 0; c < g.c; ++c) acc[c] += row[c];
    }
  }
}

// Stateless apart from the geometry; run() from one thread at a time, parallel inside.
class OmpMaxPool2dArgmaxGrad final : public Kernel {
 public:
  // db_dtype: the bias gradient's type (max_pool2d_argmax_grad_bias), or none.
  OmpMaxPool2dArgmaxGrad(const Window2d& g, bool relu, DType dtype, std::optional<DType> db_dtype)
      : g_(g), relu_(relu), dtype_(dtype), db_dtype_(db_dtype), threads_(omp_get_max_threads()) {}

  std::size_t workspace_bytes() const override {
    return image_bytes() + (db_dtype_ ? BiasSums::bytes(threads_, g_.c) : 0);
  }

  void run(const KernelArgs& args) override {
    const BiasSums bias =
        db_dtype_ ? BiasSums::at(static_cast<char*>(args.workspace) + image_bytes(), threads_, g_.c) : BiasSums{};
    if (dtype_ == DType::f32) batch<float>(args, bias);
    else batch<std::uint16_t>(args, bias);
    if (bias.partial) bias.finish(*db_dtype_, args.outputs[1]);
  }

 private:
  template <typename T>
  void batch(const KernelArgs& args, const BiasSums& bias) const {
    const Window2d g = g_;
    const bool relu = relu_;
    const std::int64_t image = g.h * g.w * g.c, out_image = g.oh * g.ow * g.c;
    const T* dy = static_cast<const T*>(args.inputs[0]);
    const auto* at = static_cast<const std::uint8_t*>(args.inputs[1]);
    T* dx = static_cast<T*>(args.outputs[0]);
    const bool whole = whole_2x2_windows(g);
    float* images = static_cast<float*>(args.workspace);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t n = 0; n < g.n; ++n) {
      const int t = omp_get_thread_num();
      const T* dyn = dy + n * out_image;
      const std::uint8_t* atn = at + n * out_image;
      T* dxn = dx + n * image;
      if (whole) {
        if constexpr (std::is_same_v<T, float>) image_grad_2x2_f32(g, relu, dyn, atn, dxn, bias, t);
        else image_grad_2x2_bf16(g, relu, dyn, atn, dxn, bias, t);
        continue;
      }
      // float32 accumulates in dx itself; bfloat16 in this thread's float image, rounded once.
      float* dxf = std::is_same_v<T, float> ? reinterpret_cast<float*>(dxn) : images + t * image;
      image_grad_any(g, relu, dyn, atn, dxf, bias.partial ? bias.block(t) : nullptr,
                     bias.partial ? bias.acc(t) : nullptr);
      if constexpr (!std::is_same_v<T, float>) low_precision::from_f32(DType::bf16, dxf, dxn, image);
    }
  }

  // The bfloat16 path's float images for windows other than whole 2x2 (a multiple of 8 bytes).
  std::size_t image_bytes() const {
    if (dtype_ == DType::f32 || whole_2x2_windows(g_)) return 0;
    return (static_cast<std::size_t>(threads_ * g_.h * g_.w * g_.c) * sizeof(float) + 7) / 8 * 8;
  }

  Window2d g_;
  bool relu_;
  DType dtype_;
  std::optional<DType> db_dtype_;
  int threads_;
};

// float32 or bfloat16 (float16 runs widened: the registry has no float16 key for these).
bool native_type(DType t) { return t == DType::f32 || t == DType::bf16; }

}  // namespace

std::unique_ptr<Kernel> make_omp_max_pool2d_argmax(const KernelDesc& desc, std::string* why_not) {
  if (std::string r = window_unsupported_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const DType dtype = desc.inputs.at(0).dtype;
  if (!native_type(dtype) || desc.outputs.at(0).dtype != dtype) {
    if (why_not) *why_not = "x and y must both be float32 or both bfloat16";
    return nullptr;
  }
  return std::make_unique<OmpMaxPool2dArgmax>(checked_window(widened(desc)), dtype);
}

std::unique_ptr<Kernel> make_omp_max_pool2d_argmax_grad(const KernelDesc& desc, std::string* why_not) {
  if (std::string r = window_unsupported_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const DType dtype = desc.inputs.at(0).dtype;
  if (!native_type(dtype) || desc.outputs.at(0).dtype != dtype) {
    if (why_not) *why_not = "dy and dx must both be float32 or both bfloat16";
    return nullptr;
  }
  std::optional<DType> db_dtype;
  if (desc.op == "max_pool2d_argmax_grad_bias") {
    db_dtype = desc.outputs.at(1).dtype;
    if (*db_dtype != dtype && *db_dtype != DType::f32) {
      if (why_not) *why_not = "db must be float32 or dx's type";
      return nullptr;
    }
  }
  return std::make_unique<OmpMaxPool2dArgmaxGrad>(checked_window(widened(desc)), desc.attrs.i_or("relu", 0) != 0,
                                                  dtype, db_dtype);
}

}  // namespace nnfit
