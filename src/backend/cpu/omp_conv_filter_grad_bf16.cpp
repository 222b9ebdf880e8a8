// omp:conv2d_backprop_filter for a bfloat16 convolution over one input channel (the first
// layer of a grayscale image model), where oneDNN 2.6 does poorly: its bfloat16 kernels
// take input channels in pairs (VNNI), so one channel runs them half empty. At the
// Fashion-MNIST convnet's first layer (28x28x1 -> 32, 3x3, batch 128) its filter gradient
// took 1,426 µs, 2.7x its float32 one, this file's tap loop 706 µs and its valid 3x3 path
// about 330 µs (bench/conv_bench.cpp, docs/design/kernels.md "The first layer's filter
// gradient at bfloat16"). Listed before oneDNN in the op table; every other desc is declined
// and goes to oneDNN (which is the faster from three input channels on, and at float32).
//
// dw[kh, kw, 0, :] = the sum over the batch and the output pixels the tap reaches of
// x[n, ih, iw, 0] * dy[n, oh, ow, :]: per tap, a broadcast of one input value times a row
// of dy, the output channels in vector registers (the valid 3x3 path: per pixel, its dy row
// times the nine values its taps see). Each image of x is widened to float once,
// and dy in bands of rows, which every tap's pass then reads from L1. Sums are float; each fixed slice
// of the batch sums into a partial of its own and the partials are added in slice order,
// so the result does not depend on the thread count (op determinism holds without a
// switch). dw is written as float32 (mixed precision's folded cast) or bfloat16.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "backend/common/low_precision.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/lanes16.h"
#include "backend/cpu/onednn_kernels.h"
#include "backend/widened_kernel.h"

namespace nnfit {

namespace {

using low_precision::load;

using namespace lanes16;

constexpr std::int64_t kSlices = 64;  // the batch's slices (fixed: determinism)
// dy's floats per band: every tap's pass over a band reads it from L1 (passes over a whole
// image's dy read it from L2, or memory for a large image, several times slower).
constexpr std::int64_t kBandFloats = 4096;

// The first and one-past-last output index whose input index o * stride - pad + tap lies
// in [0, size): the outputs a tap reaches along one axis.
void tap_range(std::int64_t size, std::int64_t out, std::int64_t stride, std::int64_t pad, std::int64_t tap,
               std::int64_t* first, std::int64_t* last) {
  const std::int64_t lo = pad - tap;  // o * stride >= lo
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const std::int64_t hi = size - 1 + pad - tap;  // o * stride <= hi
  *last = hi < 0 ? 0 : std::min(out, hi / stride + 1);
  *first = std::min(*first, *last);
}

std::int64_t band_rows(const Window2d& g) {
  return std::max<std::int64_t>(1, kBandFloats / std::max<std::int64_t>(1, g.ow * g.o));
}

// dw_row[0, width) += the sum, over the outputs of rows [r0, r1) that tap (kh, kw) reaches
// in image xn, of its input value times dy's channels [o0, o0 + width) there; dyb holds
// dy's rows from r0 on as float. kBlocks > 0: width is kBlocks whole vectors, summed kSpan
// pixels at a time into chains of their own; 0: any width, scalar.
template <std::int64_t kBlocks>
[[gnu::always_inline]] inline void tap_sums(const Window2d& g, const float* xn, const float* dyb,
                                            std::int64_t r0, std::int64_t r1, std::int64_t kh, std::int64_t kw,
                                            std::int64_t o0, std::int64_t width, float* dw_row) {
  std::int64_t oh0, oh1, ow0, ow1;
  tap_range(g.h, g.oh, g.sh, g.pad_top, kh * g.dh, &oh0, &oh1);
  tap_range(g.w, g.ow, g.sw, g.pad_left, kw * g.dw, &ow0, &ow1);
  oh0 = std::max(oh0, r0);
  oh1 = std::min(oh1, r1);
  // x's index at output column 0 of row oh (negative for a padded column: only columns
  // from ow0 on are read).
  const auto x_row = [&](std::int64_t oh) { return (oh * g.sh - g.pad_top + kh * g.dh) * g.w + kw * g.dw - g.pad_left; };
  if constexpr (kBlocks == 0) {
    float acc[kChunk] = {};
    for (std::int64_t oh = oh0; oh < oh1; ++oh) {
      const std::int64_t xrow = x_row(oh);
      const float* dyrow = dyb + (oh - r0) * g.ow * g.o + o0;
      for (std::int64_t ow = ow0; ow < ow1; ++ow) {
        const float v = xn[xrow + ow * g.sw];
        for (std::int64_t j = 0; j < width; ++j) acc[j] += v * dyrow[ow * g.o + j];
      }
    }
    for (std::int64_t j = 0; j < width; ++j) dw_row[j] += acc[j];
  } else {
    constexpr std::int64_t kSpan = kBlocks <= 2 ? 4 : 2;  // 8 independent chains at most
    F16 acc[kSpan][kBlocks] = {};
    for (std::int64_t oh = oh0; oh < oh1; ++oh) {
      const std::int64_t xrow = x_row(oh);
      const float* dyrow = dyb + (oh - r0) * g.ow * g.o + o0;
      std::int64_t ow = ow0;
      for (; ow + kSpan <= ow1; ow += kSpan) {
#pragma GCC unroll 16
        for (std::int64_t p = 0; p < kSpan; ++p) {
          const float v = xn[xrow + (ow + p) * g.sw];  // scalar * vector: an FMA with an embedded broadcast
#pragma GCC unroll 16
          for (std::int64_t b = 0; b < kBlocks; ++b) acc[p][b] += v * load16(dyrow + (ow + p) * g.o + b * kLanes);
        }
      }
      for (; ow < ow1; ++ow) {
        const float v = xn[xrow + ow * g.sw];
#pragma GCC unroll 16
        for (std::int64_t b = 0; b < kBlocks; ++b) acc[0][b] += v * load16(dyrow + ow * g.o + b * kLanes);
      }
    }
#pragma GCC unroll 16
    for (std::int64_t b = 0; b < kBlocks; ++b) {
      F16 sum = acc[0][b];
#pragma GCC unroll 16
      for (std::int64_t p = 1; p < kSpan; ++p) sum += acc[p][b];
      store16(load16(dw_row + b * kLanes) + sum, dw_row + b * kLanes);
    }
  }
}

// The common first layer (Fashion-MNIST's): 3x3 at stride 1 without padding or dilation,
// output channels in whole vectors. Every tap reaches every output pixel, so the loop turns
// inside out: each pixel's dy row is widened once into registers and multiplied by the
// nine input values the taps see there, into nine sums per vector (18 registers for two
// vectors). tap_sums reads dy once per tap instead, two loads per multiply-add.
inline bool is_valid_3x3(const Window2d& g) {
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.pad_top == 0 &&
         g.pad_left == 0 && g.oh + 2 <= g.h && g.ow + 2 <= g.w && g.o % kLanes == 0;
}

// dw[t, o0 + 16 b + j] += image xn's sums for tap t, kBlocks vectors from channel o0 on.
template <std::int64_t kBlocks>
[[gnu::always_inline]] inline void valid_3x3_sums(const Window2d& g, const float* xn, const std::uint16_t* dyn,
                                                  std::int64_t o0, float* dw) {
  F16 acc[9][kBlocks] = {};
  for (std::int64_t oh = 0; oh < g.oh; ++oh) {
    const float* xr = xn + oh * g.w;
    const std::uint16_t* dr = dyn + oh * g.ow * g.o + o0;
    for (std::int64_t ow = 0; ow < g.ow; ++ow) {
      F16 d[kBlocks];
#pragma GCC unroll 4
      for (std::int64_t b = 0; b < kBlocks; ++b) d[b] = load16_bf16(dr + ow * g.o + b * kLanes);
#pragma GCC unroll 9
      for (std::int64_t t = 0; t < 9; ++t) {
        const float v = xr[t / 3 * g.w + t % 3 + ow];  // scalar * vector: an FMA with an embedded broadcast
#pragma GCC unroll 4
        for (std::int64_t b = 0; b < kBlocks; ++b) acc[t][b] += v * d[b];
      }
    }
  }
#pragma GCC unroll 9
  for (std::int64_t t = 0; t < 9; ++t) {
#pragma GCC unroll 4
    for (std::int64_t b = 0; b < kBlocks; ++b) {
      float* out = dw + t * g.o + o0 + b * kLanes;
      store16(load16(out) + acc[t][b], out);
    }
  }
}

// Image n's contribution to the partial dw ([KH*KW][O] floats), band by band of dy's rows;
// image: room for the image x as float, band: for one band of dy.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_filter_grad(
    const Window2d& g, const std::uint16_t* x, const std::uint16_t* dy, std::int64_t n, float* dw, float* image,
    float* band) {
  const std::uint16_t* xsrc = x + n * g.h * g.w;
  for (std::int64_t i = 0; i < g.h * g.w; ++i) image[i] = load(xsrc[i]);
  const float* xn = image;
  const std::uint16_t* dyn = dy + n * g.oh * g.ow * g.o;
  if (is_valid_3x3(g)) {
    std::int64_t o0 = 0;
    for (; o0 + 2 * kLanes <= g.o; o0 += 2 * kLanes) valid_3x3_sums<2>(g, xn, dyn, o0, dw);
    if (o0 < g.o) valid_3x3_sums<1>(g, xn, dyn, o0, dw);
    return;
  }
  const std::int64_t rows = band_rows(g);
  for (std::int64_t r0 = 0; r0 < g.oh; r0 += rows) {
    const std::int64_t r1 = std::min(g.oh, r0 + rows);
    const std::uint16_t* src = dyn + r0 * g.ow * g.o;
    const std::int64_t count = (r1 - r0) * g.ow * g.o;
    for (std::int64_t i = 0; i < count; ++i) band[i] = load(src[i]);
    for (std::int64_t kh = 0; kh < g.kh; ++kh) {
      for (std::int64_t kw = 0; kw < g.kw; ++kw) {
        float* row = dw + (kh * g.kw + kw) * g.o;
        for (std::int64_t o0 = 0; o0 < g.o; o0 += kChunk) {
          const std::int64_t width = std::min(kChunk, g.o - o0);
          float* out = row + o0;
          switch (width) {
            case 16: tap_sums<1>(g, xn, band, r0, r1, kh, kw, o0, width, out); break;
            case 32: tap_sums<2>(g, xn, band, r0, r1, kh, kw, o0, width, out); break;
            case 48: tap_sums<3>(g, xn, band, r0, r1, kh, kw, o0, width, out); break;
            case 64: tap_sums<4>(g, xn, band, r0, r1, kh, kw, o0, width, out); break;
            default: tap_sums<0>(g, xn, band, r0, r1, kh, kw, o0, width, out); break;
          }
        }
      }
    }
  }
}

class OmpConvFilterGradBf16 final : public Kernel {
 public:
  OmpConvFilterGradBf16(const Window2d& g, DType out_dtype)
      : g_(g),
        out_dtype_(out_dtype),
        slices_(std::max<std::int64_t>(1, std::min(g.n, kSlices))),
        threads_(omp_get_max_threads()) {}

  // One float partial of dw per batch slice, then per thread an image of x and a band of dy.
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(slices_ * size() + threads_ * per_thread()) * sizeof(float);
  }

  void run(const KernelArgs& args) override {
    const Window2d g = g_;
    const std::int64_t slices = slices_, elems = size(), per_thread = this->per_thread();
    float* partial = static_cast<float*>(args.workspace);
    float* scratch = partial + slices * elems;
    const auto* x = args.in<std::uint16_t>(0);
    const auto* dy = args.in<std::uint16_t>(1);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t s = 0; s < slices; ++s) {
      float* dw = partial + s * elems;
      std::fill(dw, dw + elems, 0.0f);
      // Slice s holds images [s * n / slices, (s + 1) * n / slices): fixed by n alone.
      for (std::int64_t n = s * g.n / slices; n < (s + 1) * g.n / slices; ++n) {
        float* image = scratch + omp_get_thread_num() * per_thread;
        image_filter_grad(g, x, dy, n, dw, image, image + (g.h * g.w + 15) / 16 * 16);
      }
    }
    // The partials summed in slice order; the first slice's partial holds the total.
    for (std::int64_t s = 1; s < slices; ++s) {
      const float* p = partial + s * elems;
#pragma omp simd
      for (std::int64_t e = 0; e < elems; ++e) partial[e] += p[e];
    }
    if (out_dtype_ == DType::f32) std::memcpy(args.outputs[0], partial, static_cast<std::size_t>(elems) * sizeof(float));
    else low_precision::from_f32(DType::bf16, partial, args.outputs[0], elems);
  }

 private:
  std::int64_t size() const { return g_.kh * g_.kw * g_.o; }
  std::int64_t per_thread() const { return (g_.h * g_.w + 15) / 16 * 16 + band_rows(g_) * g_.ow * g_.o; }

  Window2d g_;
  DType out_dtype_;
  std::int64_t slices_;
  int threads_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_conv2d_backprop_filter_bf16(const KernelDesc& desc, std::string* why_not) {
  const Window2d g = checked_window(widened(desc));
  const auto decline = [&](std::string reason) -> std::unique_ptr<Kernel> {
    if (why_not) *why_not = std::move(reason);
    return nullptr;
  };
  const DType out = desc.outputs.at(0).dtype;
  if (desc.inputs.at(0).dtype != DType::bf16 || desc.inputs.at(1).dtype != DType::bf16) {
    return decline("bfloat16 x and dy only (oneDNN's float32 kernel is faster)");
  }
  if (out != DType::bf16 && out != DType::f32) return decline("dw is neither bfloat16 nor float32");
  if (g.groups != 1) return decline("grouped convolution");
  if (g.c != 1) {
    return decline(std::to_string(g.c) + " input channels: this kernel is for one (oneDNN's is faster from there)");
  }
  return std::make_unique<OmpConvFilterGradBf16>(g, out);
}

}  // namespace nnfit
