// omp:fused_conv2d_max_pool_argmax (fuse_conv_into_pool_argmax): a convolution with its
// bias and relu (or none) and the max pool after it, with the pool's argmax bytes (Note
// [Pool argmax]), in one pass that never writes the convolution's output. Each pool
// window's convolution outputs are computed in vector registers (the output channels in
// lanes; a window of four at once, sharing the filter loads), rounded to the op's type as
// the convolution would have stored them, and reduced to the window's first maximum and
// its position. The planner fuses this only over one input channel (a grayscale image's
// first layer), where the convolution is a few taps per output and its output the step's
// largest tensor: at the Fashion-MNIST convnet's first layer that output is 11 MB at
// float32, written by the convolution and read back by the pool each step.
//
// float32 and bfloat16 (read as float, summed in float, each output rounded once to
// bfloat16 before the max, as fused_conv2d then max_pool2d_argmax at bfloat16 would see
// it). Pool windows may overlap or pad; each output of the convolution a window covers is
// computed for that window.
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "backend/common/low_precision.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/lanes16.h"
#include "backend/cpu/onednn_kernels.h"
#include "backend/widened_kernel.h"
#include "nnfit/core/pool_argmax.h"

namespace nnfit {

namespace {

using low_precision::load;

using namespace lanes16;

constexpr std::int64_t kGroup = 4;  // convolution outputs computed together (a 2x2 window)

// The convolution's taps in HWIO order (kh, kw, ci): input offset from a window's top-left
// element, and the row and column offsets (kh * dh, kw * dw) for the edge checks.
struct Taps {
  std::vector<std::int64_t> off, kh, kw;
};

// One convolution output the pool reads: its row and column and its window's position.
struct Output {
  std::int64_t oh, ow, position;
};

// Sums of kG convolution outputs (at[p]) for output channels of one chunk: bias, then
// each tap's input value times its filter row (wf: [taps][kChunk] floats, zero past the
// chunk's width). checked: the taps outside the input are skipped (a window at an edge).
template <std::int64_t kBlocks, std::int64_t kG>
[[gnu::always_inline]] inline void conv_sums(const Window2d& cg, const Taps& taps, const float* xn, const Output* at,
                                             bool checked, const float* wf, const float* bias, F16 (&acc)[kG][kBlocks]) {
  std::int64_t ih0[kG], iw0[kG], base[kG];
#pragma GCC unroll 8
  for (std::int64_t p = 0; p < kG; ++p) {
    ih0[p] = at[p].oh * cg.sh - cg.pad_top;
    iw0[p] = at[p].ow * cg.sw - cg.pad_left;
    base[p] = (ih0[p] * cg.w + iw0[p]) * cg.c;  // may be outside x when checked: only in-bounds taps read
  }
#pragma GCC unroll 8
  for (std::int64_t b = 0; b < kBlocks; ++b) {
    const F16 v = load16(bias + b * kLanes);
#pragma GCC unroll 8
    for (std::int64_t p = 0; p < kG; ++p) acc[p][b] = v;
  }
  const std::int64_t n_taps = static_cast<std::int64_t>(taps.off.size());
  for (std::int64_t t = 0; t < n_taps; ++t) {
    F16 w[kBlocks];
#pragma GCC unroll 8
    for (std::int64_t b = 0; b < kBlocks; ++b) w[b] = load16(wf + t * kChunk + b * kLanes);
#pragma GCC unroll 8
    for (std::int64_t p = 0; p < kG; ++p) {
      if (checked) {
        const std::int64_t ih = ih0[p] + taps.kh[t], iw = iw0[p] + taps.kw[t];
        if (ih < 0 || ih >= cg.h || iw < 0 || iw >= cg.w) continue;
      }
      const float v = xn[base[p] + taps.off[t]];  // scalar * vector: an FMA with an embedded broadcast
#pragma GCC unroll 8
      for (std::int64_t b = 0; b < kBlocks; ++b) acc[p][b] += v * w[b];
    }
  }
}

// One pooled row (n, py), output channels [o0, o0 + width) (kBlocks = width / 16 rounded up).
template <std::int64_t kBlocks, typename T>
[[gnu::always_inline]] inline void pooled_row(const Window2d& cg, const Window2d& pg, const Taps& taps, const float* x,
                                              std::int64_t n, std::int64_t py, const float* wf, const float* bias,
                                              bool relu, std::int64_t o0, std::int64_t width, T* y,
                                              std::uint8_t* argmax) {
  constexpr bool kBf16 = !std::is_same_v<T, float>;
  const float* xn = x + n * cg.h * cg.w * cg.c;
  // Whether the convolution at output (oh, ow) reads padding.
  const auto at_edge = [&](const Output& o) {
    const std::int64_t ih0 = o.oh * cg.sh - cg.pad_top, iw0 = o.ow * cg.sw - cg.pad_left;
    return ih0 < 0 || iw0 < 0 || ih0 + (cg.kh - 1) * cg.dh >= cg.h || iw0 + (cg.kw - 1) * cg.dw >= cg.w;
  };
  Output outs[kMaxArgmaxWindow];
  for (std::int64_t px = 0; px < pg.ow; ++px) {
    // The window's convolution outputs inside the convolution's output, in row-major
    // order (padding positions never win, so they are left out).
    std::int64_t count = 0;
    bool edge = false;
    for (std::int64_t ph = 0; ph < pg.kh; ++ph) {
      const std::int64_t oh = py * pg.sh - pg.pad_top + ph;
      if (oh < 0 || oh >= cg.oh) continue;
      for (std::int64_t pw = 0; pw < pg.kw; ++pw) {
        const std::int64_t ow = px * pg.sw - pg.pad_left + pw;
        if (ow < 0 || ow >= cg.ow) continue;
        outs[count] = {oh, ow, ph * pg.kw + pw};
        edge = edge || at_edge(outs[count]);
        ++count;
      }
    }
    F16 m[kBlocks] = {};  // every window holds an output (set by its first): zero only for the compiler
    U16 pos[kBlocks] = {};
    // Folds output k's values v into the running maximum: the first output sets it, a later
    // one replaces it only where strictly greater (a NaN never replaces, and a NaN first
    // stays), as the reference's first argmax.
    const auto fold = [&](std::int64_t k, const F16 (&sums)[kBlocks]) {
#pragma GCC unroll 8
      for (std::int64_t b = 0; b < kBlocks; ++b) {
        F16 v = sums[b];
        if (relu) v = select(std::bit_cast<U16>(v < 0.0f), F16{}, v);  // NaN stays NaN
        if constexpr (kBf16) v = round_bf16(v);
        const U16 here = U16{} + static_cast<std::uint32_t>(outs[k].position);
        if (k == 0) {
          m[b] = v;
          pos[b] = here;
        } else {
          const U16 gt = std::bit_cast<U16>(v > m[b]);
          m[b] = select(gt, v, m[b]);
          pos[b] = (here & gt) | (pos[b] & ~gt);
        }
      }
    };
    std::int64_t k = 0;
    for (; k + kGroup <= count; k += kGroup) {
      F16 acc[kGroup][kBlocks];
      conv_sums<kBlocks, kGroup>(cg, taps, xn, outs + k, edge, wf, bias, acc);
#pragma GCC unroll 8
      for (std::int64_t p = 0; p < kGroup; ++p) fold(k + p, acc[p]);
    }
    for (; k < count; ++k) {
      F16 acc[1][kBlocks];
      conv_sums<kBlocks, 1>(cg, taps, xn, outs + k, edge, wf, bias, acc);
      fold(k, acc[0]);
    }
    const std::int64_t yi = ((n * pg.oh + py) * pg.ow + px) * cg.o + o0;
#pragma GCC unroll 8
    for (std::int64_t b = 0; b < kBlocks; ++b) {
      // y: m itself (at bfloat16 already rounded: its top half); the byte: the position,
      // bit 7 where m is not > 0.
      const U16 code = pos[b] | (~std::bit_cast<U16>(m[b] > 0.0f) & kArgmaxNotPositive);
      const std::int64_t lanes = std::min(kLanes, width - b * kLanes);
      T* yb = y + yi + b * kLanes;
      std::uint8_t* ab = argmax + yi + b * kLanes;
      if (lanes == kLanes) {
        if constexpr (kBf16) {
          const U16x16h h = __builtin_convertvector(std::bit_cast<U16>(m[b]) >> 16, U16x16h);
          std::memcpy(yb, &h, sizeof h);
        } else {
          std::memcpy(yb, &m[b], sizeof m[b]);
        }
        const U8x16 bytes = __builtin_convertvector(code, U8x16);
        std::memcpy(ab, &bytes, sizeof bytes);
      } else {
        for (std::int64_t j = 0; j < lanes; ++j) {
          if constexpr (kBf16) yb[j] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(m[b][j]) >> 16);
          else yb[j] = m[b][j];
          ab[j] = static_cast<std::uint8_t>(code[j]);
        }
      }
    }
  }
}

template <typename T>
[[gnu::always_inline]] inline void pooled_row_all(const Window2d& cg, const Window2d& pg, const Taps& taps,
                                                  const float* x, std::int64_t n, std::int64_t py, const float* wf,
                                                  const float* bias, bool relu, T* y, std::uint8_t* argmax) {
  const std::int64_t n_taps = static_cast<std::int64_t>(taps.off.size());
  for (std::int64_t o0 = 0, k = 0; o0 < cg.o; o0 += kChunk, ++k) {
    const std::int64_t width = std::min(kChunk, cg.o - o0);
    const float* wk = wf + k * n_taps * kChunk;
    const float* bk = bias + k * kChunk;
    switch ((width + kLanes - 1) / kLanes) {
      case 1: pooled_row<1>(cg, pg, taps, x, n, py, wk, bk, relu, o0, width, y, argmax); break;
      case 2: pooled_row<2>(cg, pg, taps, x, n, py, wk, bk, relu, o0, width, y, argmax); break;
      case 3: pooled_row<3>(cg, pg, taps, x, n, py, wk, bk, relu, o0, width, y, argmax); break;
      default: pooled_row<4>(cg, pg, taps, x, n, py, wk, bk, relu, o0, width, y, argmax); break;
    }
  }
}

// Per type, compiled for AVX-512, AVX2 and the baseline (the build's baseline is SSE2).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void pooled_row_f32(
    const Window2d& cg, const Window2d& pg, const Taps& taps, const float* x, std::int64_t n, std::int64_t py,
    const float* wf, const float* bias, bool relu, float* y, std::uint8_t* argmax) {
  pooled_row_all(cg, pg, taps, x, n, py, wf, bias, relu, y, argmax);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void pooled_row_bf16(
    const Window2d& cg, const Window2d& pg, const Taps& taps, const float* x, std::int64_t n, std::int64_t py,
    const float* wf, const float* bias, bool relu, std::uint16_t* y, std::uint8_t* argmax) {
  pooled_row_all(cg, pg, taps, x, n, py, wf, bias, relu, y, argmax);
}

std::int64_t chunks_of(std::int64_t o) { return (o + kChunk - 1) / kChunk; }

class OmpConvMaxPoolArgmax final : public Kernel {
 public:
  OmpConvMaxPoolArgmax(const Window2d& cg, const Window2d& pg, bool relu, DType dtype)
      : cg_(cg), pg_(pg), relu_(relu), dtype_(dtype) {
    for (std::int64_t kh = 0; kh < cg.kh; ++kh) {
      for (std::int64_t kw = 0; kw < cg.kw; ++kw) {
        for (std::int64_t ci = 0; ci < cg.c; ++ci) {
          taps_.off.push_back((kh * cg.dh * cg.w + kw * cg.dw) * cg.c + ci);
          taps_.kh.push_back(kh * cg.dh);
          taps_.kw.push_back(kw * cg.dw);
        }
      }
    }
  }

  // The filter and bias as float, per chunk of output channels, zero past O; at bfloat16
  // then x as float (few channels: a small tensor, widened once rather than per tap).
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(filter_floats() + (dtype_ == DType::f32 ? 0 : cg_.n * cg_.h * cg_.w * cg_.c)) *
           sizeof(float);
  }

  void run(const KernelArgs& args) override {
    const Window2d cg = cg_, pg = pg_;
    const std::int64_t n_taps = static_cast<std::int64_t>(taps_.off.size());
    float* wf = static_cast<float*>(args.workspace);
    float* bias = wf + chunks_of(cg.o) * n_taps * kChunk;
    const bool f32 = dtype_ == DType::f32;
    for (std::int64_t o0 = 0, k = 0; o0 < cg.o; o0 += kChunk, ++k) {
      for (std::int64_t j = 0; j < kChunk; ++j) {
        const std::int64_t o = o0 + j;
        const auto value = [&](std::size_t input, std::int64_t i) {
          return f32 ? args.in<float>(input)[i] : load(args.in<std::uint16_t>(input)[i]);
        };
        for (std::int64_t t = 0; t < n_taps; ++t) wf[(k * n_taps + t) * kChunk + j] = o < cg.o ? value(1, t * cg.o + o) : 0.0f;
        bias[k * kChunk + j] = o < cg.o ? value(2, o) : 0.0f;
      }
    }
    const bool relu = relu_;
    const Taps& taps = taps_;
    auto* argmax = static_cast<std::uint8_t*>(args.outputs[1]);
    float* xf = static_cast<float*>(args.workspace) + filter_floats();
    if (!f32) low_precision::to_f32(DType::bf16, args.inputs[0], xf, cg.n * cg.h * cg.w * cg.c);
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < pg.n * pg.oh; ++r) {
      const std::int64_t n = r / pg.oh, py = r % pg.oh;
      if (f32) pooled_row_f32(cg, pg, taps, args.in<float>(0), n, py, wf, bias, relu, args.out<float>(0), argmax);
      else pooled_row_bf16(cg, pg, taps, xf, n, py, wf, bias, relu, args.out<std::uint16_t>(0), argmax);
    }
  }

 private:
  std::int64_t filter_floats() const {
    return chunks_of(cg_.o) * (static_cast<std::int64_t>(taps_.off.size()) + 1) * kChunk;
  }

  Window2d cg_, pg_;
  Taps taps_;
  bool relu_;
  DType dtype_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_conv2d_max_pool_argmax(const KernelDesc& desc, std::string* why_not) {
  const ConvPoolDescs d = split_conv_pool(desc);
  const auto decline = [&](const char* reason) -> std::unique_ptr<Kernel> {
    if (why_not) *why_not = reason;
    return nullptr;
  };
  const DType dtype = desc.inputs.at(0).dtype;
  if (dtype != DType::f32 && dtype != DType::bf16) return decline("float32 and bfloat16 only");
  for (const TensorDesc& t : desc.inputs) {
    if (t.dtype != dtype) return decline("x, w and the bias must have one type");
  }
  if (desc.outputs.at(0).dtype != dtype) return decline("y must have x's type");
  const Window2d cg = checked_window(widened(d.conv)), pg = checked_window(widened(d.pool));
  if (cg.groups != 1) return decline("grouped convolution");
  const ActivationKind act = parse_activation_kind(d.conv, "activation");
  if (act != ActivationKind::relu && act != ActivationKind::linear) return decline("relu or linear activation only");
  return std::make_unique<OmpConvMaxPoolArgmax>(cg, pg, act == ActivationKind::relu, dtype);
}

}  // namespace nnfit
