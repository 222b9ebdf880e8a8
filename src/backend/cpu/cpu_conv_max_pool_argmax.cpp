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
#include <utility>
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

// Folds one convolution output's sums v (16 channels, the window's first when `first`) into
// the window's running maximum m and its position pos: the first output sets them, a later
// one replaces them only where strictly greater (a NaN never replaces, and a NaN first
// stays), as the reference's first argmax. With relu, v is clamped first; at bfloat16 it is
// rounded as the convolution would have stored it.
template <bool kBf16>
[[gnu::always_inline]] inline void fold_output(bool first, std::int64_t position, F16 v, bool relu, F16& m, U16& pos) {
  if (relu) v = select(std::bit_cast<U16>(v < 0.0f), F16{}, v);  // NaN stays NaN
  if constexpr (kBf16) v = round_bf16(v);
  const U16 here = U16{} + static_cast<std::uint32_t>(position);
  if (first) {
    m = v;
    pos = here;
  } else {
    const U16 gt = std::bit_cast<U16>(v > m);
    m = select(gt, v, m);
    pos = (here & gt) | (pos & ~gt);
  }
}

// Writes one window's 16 channels (`lanes` of them valid): y is m itself (at bfloat16
// already rounded: its top half); the byte is the position, bit 7 where m is not > 0.
template <typename T>
[[gnu::always_inline]] inline void store_block(F16 m, U16 pos, std::int64_t lanes, T* yb, std::uint8_t* ab) {
  constexpr bool kBf16 = !std::is_same_v<T, float>;
  const U16 code = pos | (~std::bit_cast<U16>(m > 0.0f) & kArgmaxNotPositive);
  if (lanes == kLanes) {
    if constexpr (kBf16) {
      const U16x16h h = __builtin_convertvector(std::bit_cast<U16>(m) >> 16, U16x16h);
      std::memcpy(yb, &h, sizeof h);
    } else {
      std::memcpy(yb, &m, sizeof m);
    }
    const U8x16 bytes = __builtin_convertvector(code, U8x16);
    std::memcpy(ab, &bytes, sizeof bytes);
  } else {
    for (std::int64_t j = 0; j < lanes; ++j) {
      if constexpr (kBf16) yb[j] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(m[j]) >> 16);
      else yb[j] = m[j];
      ab[j] = static_cast<std::uint8_t>(code[j]);
    }
  }
}

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

// One pooled row (n, py), windows [px_begin, px_end), output channels [o0, o0 + width)
// (kBlocks = width / 16 rounded up).
template <std::int64_t kBlocks, typename T>
[[gnu::always_inline]] inline void pooled_row(const Window2d& cg, const Window2d& pg, const Taps& taps, const float* x,
                                              std::int64_t n, std::int64_t py, std::int64_t px_begin,
                                              std::int64_t px_end, const float* wf, const float* bias, bool relu,
                                              std::int64_t o0, std::int64_t width, T* y, std::uint8_t* argmax) {
  constexpr bool kBf16 = !std::is_same_v<T, float>;
  const float* xn = x + n * cg.h * cg.w * cg.c;
  // Whether the convolution at output (oh, ow) reads padding.
  const auto at_edge = [&](const Output& o) {
    const std::int64_t ih0 = o.oh * cg.sh - cg.pad_top, iw0 = o.ow * cg.sw - cg.pad_left;
    return ih0 < 0 || iw0 < 0 || ih0 + (cg.kh - 1) * cg.dh >= cg.h || iw0 + (cg.kw - 1) * cg.dw >= cg.w;
  };
  Output outs[kMaxArgmaxWindow];
  for (std::int64_t px = px_begin; px < px_end; ++px) {
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
    const auto fold = [&](std::int64_t k, const F16 (&sums)[kBlocks]) {
#pragma GCC unroll 8
      for (std::int64_t b = 0; b < kBlocks; ++b) fold_output<kBf16>(k == 0, outs[k].position, sums[b], relu, m[b], pos[b]);
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
      store_block(m[b], pos[b], std::min(kLanes, width - b * kLanes), y + yi + b * kLanes, argmax + yi + b * kLanes);
    }
  }
}

// The common first layer (Fashion-MNIST's, MNIST's): a 3x3 convolution at stride 1 over
// one channel, pooled 2x2 at stride 2 without padding, on windows whose four outputs read
// no padding. The four outputs read a 4x4 patch of x; each of its 16 values multiplies the
// filter rows of the taps that reach it, added in pooled_row's tap order (the same sums,
// bit for bit). One block of 16 channels at a time, its nine filter rows in registers
// across the row's windows: about twice as many multiply-adds per instruction as the
// general path, which recomputes each window's geometry and reads its taps from a table.
inline bool is_3x3_pooled_2x2(const Window2d& cg, const Window2d& pg) {
  return cg.c == 1 && cg.kh == 3 && cg.kw == 3 && cg.sh == 1 && cg.sw == 1 && cg.dh == 1 && cg.dw == 1 &&
         pg.kh == 2 && pg.kw == 2 && pg.sh == 2 && pg.sw == 2 && pg.pad_top == 0 && pg.pad_left == 0;
}

template <typename T>
[[gnu::always_inline]] inline void pooled_row_3x3_2x2(const Window2d& cg, const Window2d& pg, const float* x,
                                                      std::int64_t n, std::int64_t py, std::int64_t px_begin,
                                                      std::int64_t px_end, const float* wf, const float* bias,
                                                      bool relu, std::int64_t o0, std::int64_t width, T* y,
                                                      std::uint8_t* argmax) {
  constexpr bool kBf16 = !std::is_same_v<T, float>;
  const float* row = x + (n * cg.h + 2 * py - cg.pad_top) * cg.w - cg.pad_left;
  for (std::int64_t b = 0; b * kLanes < width; ++b) {
    F16 w[9];
#pragma GCC unroll 9
    for (int t = 0; t < 9; ++t) w[t] = load16(wf + t * kChunk + b * kLanes);
    const F16 bv = load16(bias + b * kLanes);
    const std::int64_t lanes = std::min(kLanes, width - b * kLanes);
    for (std::int64_t px = px_begin; px < px_end; ++px) {
      const float* patch = row + 2 * px;
      F16 acc[4] = {bv, bv, bv, bv};  // outputs (0,0), (0,1), (1,0), (1,1): the window's positions
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
          const float v = patch[r * cg.w + c];
#pragma GCC unroll 4
          for (int p = 0; p < 4; ++p) {
            const int kr = r - p / 2, kc = c - p % 2;
            if (kr >= 0 && kr < 3 && kc >= 0 && kc < 3) acc[p] += v * w[kr * 3 + kc];
          }
        }
      }
      F16 m;
      U16 pos;
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p) fold_output<kBf16>(p == 0, p, acc[p], relu, m, pos);
      const std::int64_t yi = ((n * pg.oh + py) * pg.ow + px) * cg.o + o0 + b * kLanes;
      store_block(m, pos, lanes, y + yi, argmax + yi);
    }
  }
}

template <typename T>
[[gnu::always_inline]] inline void pooled_row_all(const Window2d& cg, const Window2d& pg, const Taps& taps,
                                                  const float* x, std::int64_t n, std::int64_t py, const float* wf,
                                                  const float* bias, bool relu, T* y, std::uint8_t* argmax) {
  const std::int64_t n_taps = static_cast<std::int64_t>(taps.off.size());
  // The windows the 3x3 path takes: [fx0, fx1), none when the row or layer is not its case.
  std::int64_t fx0 = 0, fx1 = 0;
  const std::int64_t top = 2 * py - cg.pad_top;
  const std::int64_t last_left = cg.w - 4 + cg.pad_left;  // 2 px at most this: the patch's 4 columns inside x
  if (is_3x3_pooled_2x2(cg, pg) && top >= 0 && top + 3 < cg.h && 2 * py + 1 < cg.oh && last_left >= 0) {
    fx0 = (cg.pad_left + 1) / 2;                                   // 2 px - pad_left >= 0
    fx1 = std::max(fx0, std::min(last_left / 2 + 1, cg.ow / 2));  // and 2 px + 1 < ow: both outputs inside
  }
  for (std::int64_t o0 = 0, k = 0; o0 < cg.o; o0 += kChunk, ++k) {
    const std::int64_t width = std::min(kChunk, cg.o - o0);
    const float* wk = wf + k * n_taps * kChunk;
    const float* bk = bias + k * kChunk;
    if (fx1 > fx0) pooled_row_3x3_2x2(cg, pg, x, n, py, fx0, fx1, wk, bk, relu, o0, width, y, argmax);
    // The rest (all of the row when the 3x3 path does not apply), windows [0, fx0) and [fx1, pg.ow).
    // Two vectors of channels a pass at most: two instantiations per type and clone, not four
    // (each is a large unrolled function; four made this file 45 s of the build).
    for (const auto& [begin, end] : {std::pair{std::int64_t{0}, fx0}, std::pair{fx1, pg.ow}}) {
      if (begin >= end) continue;
      for (std::int64_t s0 = 0; s0 < width; s0 += 2 * kLanes) {
        const std::int64_t part = std::min(2 * kLanes, width - s0);
        if (part > kLanes) {
          pooled_row<2>(cg, pg, taps, x, n, py, begin, end, wk + s0, bk + s0, relu, o0 + s0, part, y, argmax);
        } else {
          pooled_row<1>(cg, pg, taps, x, n, py, begin, end, wk + s0, bk + s0, relu, o0 + s0, part, y, argmax);
        }
      }
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
    // x widened on one thread: widening image by image in the parallel loop was 9% slower
    // (an extra barrier), alternating in nnfit_conv_bench --forward.
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
