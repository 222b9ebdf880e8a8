// Private to the CUDA backend: own kernels of resize and resize_grad (tf.image.resize v2,
// every method Keras 3 offers; Note [Kernel/launcher split]) at float32, bfloat16 and
// float16. The taps are backend/common/resize_taps.h's, the tables the CPU kernels use,
// computed on the host when the kernel is made and copied into its workspace at each run
// (Launch::upload; a few KiB). Forward: one index per output element sums weight_h ·
// weight_w · x over its tap pairs, as the reference (ref_resize.cpp) in double. Gradient,
// a scatter in the reference, without atomics: one index per input element gathers dy
// through the transposed taps (each input coordinate's output runs, in increasing
// order), in double.
#pragma once
#include <cstring>
#include <vector>

#include "backend/common/resize_taps.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

// One axis's taps in device memory: run o is [offsets[o], offsets[o + 1]) of index/weight.
struct DeviceTaps {
  const std::int64_t* offsets;
  const std::int64_t* index;
  const float* weight;
};

// The tables of both axes packed into one buffer (offsets and indices first, so every
// part stays 8-byte aligned), and where each part lies in it.
struct PackedTaps {
  std::vector<char> bytes;
  std::size_t parts[6] = {};  // rows: offsets, index, weight; then cols

  void add(std::size_t part, const void* data, std::size_t size) {
    parts[part] = bytes.size();
    bytes.resize(bytes.size() + (size + 7) / 8 * 8);
    if (size) std::memcpy(bytes.data() + parts[part], data, size);
  }
  static PackedTaps of(const ResizeTaps& rows, const ResizeTaps& cols) {
    PackedTaps p;
    int part = 0;
    for (const ResizeTaps* t : {&rows, &cols}) {
      p.add(part++, t->offsets.data(), t->offsets.size() * sizeof(std::int64_t));
      p.add(part++, t->index.data(), t->index.size() * sizeof(std::int64_t));
      p.add(part++, t->weight.data(), t->weight.size() * sizeof(float));
    }
    return p;
  }
  DeviceTaps axis(const void* base, int which) const {
    const char* b = static_cast<const char*>(base);
    return {reinterpret_cast<const std::int64_t*>(b + parts[3 * which]),
            reinterpret_cast<const std::int64_t*>(b + parts[3 * which + 1]), reinterpret_cast<const float*>(b + parts[3 * which + 2])};
  }
};

// forward: in [N, H, W, C] -> out [N, OH, OW, C] through taps (rows over H, cols over W).
// gradient: dy [N, OH, OW, C] -> dx [N, H, W, C] through the transposed taps, whose runs
// name output coordinates.
template <class T>
struct ResizeFn {
  const void* in;
  void* out;
  DeviceTaps rows, cols;
  std::int64_t in_h, in_w, out_h, out_w, c;
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t ch = i % c, ox = (i / c) % out_w, oy = (i / (c * out_w)) % out_h, n = i / (c * out_w * out_h);
    double sum = 0.0;
    for (std::int64_t a = rows.offsets[oy]; a < rows.offsets[oy + 1]; ++a) {
      for (std::int64_t b = cols.offsets[ox]; b < cols.offsets[ox + 1]; ++b) {
        const std::int64_t pixel = (n * in_h + rows.index[a]) * in_w + cols.index[b];
        sum += static_cast<double>(rows.weight[a]) * static_cast<double>(cols.weight[b]) * load<T>(in, pixel * c + ch);
      }
    }
    store<T>(out, i, static_cast<float>(sum));
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_resize(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  ResizeGeometry g;
  if (!check_resize(as_f32(desc), &g, why_not)) return nullptr;
  const bool grad = desc.op == "resize_grad";
  ResizeTaps rows = resize_taps(g.method, g.antialias, g.h, g.oh), cols = resize_taps(g.method, g.antialias, g.w, g.ow);
  if (grad) {
    rows = transpose_taps(rows, g.h);
    cols = transpose_taps(cols, g.w);
  }
  auto packed = std::make_shared<const PackedTaps>(PackedTaps::of(rows, cols));
  // The gradient reads dy [N, OH, OW, C] and writes dx [N, H, W, C].
  const std::int64_t in_h = grad ? g.oh : g.h, in_w = grad ? g.ow : g.w, out_h = grad ? g.h : g.oh, out_w = grad ? g.w : g.ow;
  const std::int64_t n = g.n * out_h * out_w * g.c;
  return launch_kernel(
      [=](const KernelArgs& a) {
        if (n == 0) return;
        Launch::upload(a.workspace, packed->bytes.data(), packed->bytes.size(), a.ctx);
        Launch::run(ResizeFn<T>{a.inputs[0], a.outputs[0], packed->axis(a.workspace, 0), packed->axis(a.workspace, 1), in_h, in_w,
                                out_h, out_w, g.c},
                    n, a.ctx);
      },
      aligned_bytes(packed->bytes.size()), Capture::no);  // uploads its tables from host memory
}

template <class Launch>
void register_resize_kernels(KernelRegistry& r) {
  for (const char* op : {"resize", "resize_grad"}) {
    add_float_kernels(r, op, make_resize<Launch, float>, make_resize<Launch, Bf16>, make_resize<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
