// omp:fused_conv2d_max_pool_argmax_grad (fuse_pool_grad_into_filter_grad): the first
// layer's filter and bias gradients straight from x, the pool's dy and its argmax bytes
// (Note [Pool argmax]), so the convolution's output gradient dy1 (11 MB at float32 in the
// Fashion-MNIST convnet, written by the pool gradient and read back by the filter
// gradient each step) is never written.
//
// The common first layer (3x3 at stride 1 without padding or dilation over one channel,
// whole 2x2 pool windows at stride 2, output channels in whole vectors) has a loop of its
// own. Per pool window and vector of channels: dy (0 where the relu gradient folded into
// the pool's says the max was not > 0) goes to the bias sums, and for each of the window's
// four positions the lanes whose argmax is there take it (the others 0) times the nine
// input values the taps see from that position, into nine sums per vector. That is the
// filter gradient's own arithmetic on dy1's four positions (omp_conv_filter_grad_bf16.cpp),
// reading a quarter of the bytes. Every other geometry runs the two ops it joins, one after
// the other with dy1 in the workspace: the registry's max_pool2d_argmax_grad_bias, then its
// conv2d_backprop_filter.
//
// Sums are float. Each fixed slice of the batch sums into a partial of its own (dw and db),
// added in slice order: the result does not depend on the thread count. float32 and
// bfloat16 x and dy; dw and db float32 (mixed precision's folded casts) or x's type.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "backend/common/low_precision.h"
#include "backend/common/nn_op_geometry.h"
#include "backend/cpu/lanes16.h"
#include "backend/cpu/onednn_kernels.h"
#include "backend/cpu/pool_grad_common.h"
#include "backend/widened_kernel.h"
#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/pool_argmax.h"

namespace nnfit {

namespace {
namespace conv_pool_grad {  // its own names: unity builds join this file to its neighbours

using namespace lanes16;

constexpr std::int64_t kSlices = 64;  // the batch's slices (fixed: determinism)

// The geometry with a loop of its own (see the file's comment). cg: the convolution, pg:
// the pool over its output.
bool is_3x3_pooled_2x2(const Window2d& cg, const Window2d& pg) {
  return cg.c == 1 && cg.groups == 1 && cg.kh == 3 && cg.kw == 3 && cg.sh == 1 && cg.sw == 1 && cg.dh == 1 &&
         cg.dw == 1 && cg.pad_top == 0 && cg.pad_left == 0 && cg.oh + 2 <= cg.h && cg.ow + 2 <= cg.w &&
         cg.o % kLanes == 0 && pool_grad::whole_2x2_windows(pg);
}

template <typename T>
[[gnu::always_inline]] inline F16 load_dy(const T* p) {
  if constexpr (std::is_same_v<T, float>) return load16(p);
  else return load16_bf16(p);
}

// Image xn's (as float) sums for channels [o0, o0 + 16 kBlocks): dw[t * O + o] and db[o]
// added to.
template <std::int64_t kBlocks, typename T>
[[gnu::always_inline]] inline void image_sums(const Window2d& cg, const Window2d& pg, bool relu, const float* xn,
                                              const T* dyn, const std::uint8_t* atn, std::int64_t o0, float* dw,
                                              float* db) {
  F16 acc[9][kBlocks] = {};
  F16 bias[kBlocks] = {};
  for (std::int64_t py = 0; py < pg.oh; ++py) {
    for (std::int64_t px = 0; px < pg.ow; ++px) {
      const float* patch = xn + 2 * py * cg.w + 2 * px;  // the window's 4x4 input patch
      const std::int64_t yi = (py * pg.ow + px) * cg.o + o0;
#pragma GCC unroll 4
      for (std::int64_t b = 0; b < kBlocks; ++b) {
        F16 d = load_dy(dyn + yi + b * kLanes);
        const U16 code = load16_u8(atn + yi + b * kLanes);
        if (relu) d = select(std::bit_cast<U16>((code & kArgmaxNotPositive) == 0u), d, F16{});
        bias[b] += d;
        const U16 position = code & kArgmaxPosition;
#pragma GCC unroll 4
        for (std::uint32_t p = 0; p < 4; ++p) {
          const F16 dp = select(std::bit_cast<U16>(position == p), d, F16{});  // dy1 at position p
#pragma GCC unroll 9
          for (int t = 0; t < 9; ++t) {
            // scalar * vector: an FMA with an embedded broadcast
            acc[t][b] += patch[(p / 2 + t / 3) * cg.w + p % 2 + t % 3] * dp;
          }
        }
      }
    }
  }
#pragma GCC unroll 9
  for (int t = 0; t < 9; ++t) {
#pragma GCC unroll 4
    for (std::int64_t b = 0; b < kBlocks; ++b) {
      float* out = dw + t * cg.o + o0 + b * kLanes;
      store16(load16(out) + acc[t][b], out);
    }
  }
#pragma GCC unroll 4
  for (std::int64_t b = 0; b < kBlocks; ++b) store16(load16(db + o0 + b * kLanes) + bias[b], db + o0 + b * kLanes);
}

template <typename T>
[[gnu::always_inline]] inline void image_all(const Window2d& cg, const Window2d& pg, bool relu, const float* xn,
                                             const T* dyn, const std::uint8_t* atn, float* dw, float* db) {
  std::int64_t o0 = 0;
  for (; o0 + 2 * kLanes <= cg.o; o0 += 2 * kLanes) image_sums<2>(cg, pg, relu, xn, dyn, atn, o0, dw, db);
  if (o0 < cg.o) image_sums<1>(cg, pg, relu, xn, dyn, atn, o0, dw, db);
}

// Per type, compiled for AVX-512, AVX2 and the baseline (the build's baseline is SSE2).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_f32(
    const Window2d& cg, const Window2d& pg, bool relu, const float* xn, const float* dyn, const std::uint8_t* atn,
    float* dw, float* db) {
  image_all(cg, pg, relu, xn, dyn, atn, dw, db);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void image_bf16(
    const Window2d& cg, const Window2d& pg, bool relu, const float* xn, const std::uint16_t* dyn,
    const std::uint8_t* atn, float* dw, float* db) {
  image_all(cg, pg, relu, xn, dyn, atn, dw, db);
}

void write_as(DType dtype, const float* from, void* to, std::int64_t n) {
  if (dtype == DType::f32) std::memcpy(to, from, static_cast<std::size_t>(n) * sizeof(float));
  else low_precision::from_f32(dtype, from, to, n);
}

// The 3x3 path.
class Omp3x3Pooled2x2Grad final : public Kernel {
 public:
  Omp3x3Pooled2x2Grad(const Window2d& cg, const Window2d& pg, bool relu, DType dtype, DType dw_dtype, DType db_dtype)
      : cg_(cg),
        pg_(pg),
        relu_(relu),
        dtype_(dtype),
        dw_dtype_(dw_dtype),
        db_dtype_(db_dtype),
        slices_(std::max<std::int64_t>(1, std::min(cg.n, kSlices))),
        threads_(omp_get_max_threads()) {}

  // Per slice a float partial of dw and db; at bfloat16 per thread an image of x as float.
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(slices_ * partial() + (dtype_ == DType::f32 ? 0 : threads_ * image())) *
           sizeof(float);
  }

  void run(const KernelArgs& args) override {
    const Window2d cg = cg_, pg = pg_;
    const bool relu = relu_, f32 = dtype_ == DType::f32;
    const std::int64_t slices = slices_, elems = partial(), image = this->image();
    const std::int64_t dw_elems = 9 * cg.o, out_image = pg.oh * pg.ow * cg.o;
    float* partials = static_cast<float*>(args.workspace);
    float* scratch = partials + slices * elems;
    const auto* at = static_cast<const std::uint8_t*>(args.inputs[2]);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t s = 0; s < slices; ++s) {
      float* dw = partials + s * elems;
      std::fill(dw, dw + elems, 0.0f);
      // Slice s holds images [s * n / slices, (s + 1) * n / slices): fixed by n alone.
      for (std::int64_t n = s * cg.n / slices; n < (s + 1) * cg.n / slices; ++n) {
        if (f32) {
          image_f32(cg, pg, relu, args.in<float>(0) + n * image, args.in<float>(1) + n * out_image,
                    at + n * out_image, dw, dw + dw_elems);
        } else {
          float* xn = scratch + omp_get_thread_num() * image;
          low_precision::to_f32(DType::bf16, args.in<std::uint16_t>(0) + n * image, xn, image);
          image_bf16(cg, pg, relu, xn, args.in<std::uint16_t>(1) + n * out_image, at + n * out_image, dw,
                     dw + dw_elems);
        }
      }
    }
    // The partials summed in slice order; the first slice's partial holds the total.
    for (std::int64_t s = 1; s < slices; ++s) {
      const float* p = partials + s * elems;
#pragma omp simd
      for (std::int64_t e = 0; e < elems; ++e) partials[e] += p[e];
    }
    write_as(dw_dtype_, partials, args.outputs[0], dw_elems);
    write_as(db_dtype_, partials + dw_elems, args.outputs[1], cg.o);
  }

 private:
  std::int64_t partial() const { return 10 * cg_.o; }  // dw [3, 3, 1, O] and db [O]
  std::int64_t image() const { return cg_.h * cg_.w; }

  Window2d cg_, pg_;
  bool relu_;
  DType dtype_, dw_dtype_, db_dtype_;
  std::int64_t slices_;
  int threads_;
};

// Every other geometry: the two joined ops back to back, dy1 in the workspace.
class PoolGradThenFilterGrad final : public Kernel {
 public:
  PoolGradThenFilterGrad(std::unique_ptr<Kernel> pool, std::unique_ptr<Kernel> filter, std::size_t dy1_bytes)
      : pool_(std::move(pool)), filter_(std::move(filter)), dy1_bytes_((dy1_bytes + 63) / 64 * 64) {}

  std::size_t workspace_bytes() const override {
    return dy1_bytes_ + (pool_->workspace_bytes() + 63) / 64 * 64 + filter_->workspace_bytes();
  }

  void run(const KernelArgs& args) override {
    char* dy1 = static_cast<char*>(args.workspace);
    char* pool_ws = dy1 + dy1_bytes_;
    char* filter_ws = pool_ws + (pool_->workspace_bytes() + 63) / 64 * 64;
    const void* pool_in[] = {args.inputs[1], args.inputs[2]};
    void* pool_out[] = {dy1, args.outputs[1]};
    pool_->run(KernelArgs{pool_in, pool_out, pool_ws, args.ctx});
    const void* filter_in[] = {args.inputs[0], dy1};
    filter_->run(KernelArgs{filter_in, args.outputs, filter_ws, args.ctx});
  }

 private:
  std::unique_ptr<Kernel> pool_, filter_;
  std::size_t dy1_bytes_;
};

}  // namespace conv_pool_grad
}  // namespace

std::unique_ptr<Kernel> make_omp_conv2d_max_pool_argmax_grad(const KernelDesc& desc, std::string* why_not) {
  using namespace conv_pool_grad;
  const ConvPoolGradDescs d = split_conv_pool_grad(desc);
  const auto decline = [&](std::string reason) -> std::unique_ptr<Kernel> {
    if (why_not) *why_not = std::move(reason);
    return nullptr;
  };
  const DType dtype = desc.inputs.at(0).dtype;
  if (dtype != DType::f32 && dtype != DType::bf16) return decline("float32 and bfloat16 only");
  if (desc.inputs.at(1).dtype != dtype) return decline("x and dy must have one type");
  const DType dw_dtype = desc.outputs.at(0).dtype, db_dtype = desc.outputs.at(1).dtype;
  if ((dw_dtype != DType::f32 && dw_dtype != dtype) || (db_dtype != DType::f32 && db_dtype != dtype)) {
    return decline("dw and db must be float32 or x's type");
  }
  const Window2d cg = checked_window(widened(d.filter)), pg = checked_window(widened(d.pool));
  if (conv_pool_grad::is_3x3_pooled_2x2(cg, pg)) {
    return std::make_unique<Omp3x3Pooled2x2Grad>(cg, pg, desc.attrs.i_or("relu", 0) != 0, dtype, dw_dtype, db_dtype);
  }
  SelectedKernel pool = kernel_registry().select(d.pool, DeviceType::cpu);
  SelectedKernel filter = kernel_registry().select(d.filter, DeviceType::cpu);
  return std::make_unique<PoolGradThenFilterGrad>(std::move(pool.kernel), std::move(filter.kernel),
                                                  d.pool.outputs[0].bytes());
}

}  // namespace nnfit
