// Private to the CUDA backend: own kernels of resize and resize_grad (tf.image.resize v2,
// every method Keras 3 offers; Note [Kernel/launcher split]) at float32, bfloat16 and
// float16. The taps are computed on the device at each run, into the workspace, by
// resize_runs.h's per-coordinate function, the one the CPU kernels build their tables
// from: one index per output coordinate of each axis writes its run into a fixed-stride
// table (the stride is the longest run, known at make time from the host's tables). So
// the kernel copies nothing from host memory and a CUDA graph may capture it; the taps
// cost (OH + OW) threads of a few float operations each per run. Forward: one index per
// output element sums weight_h · weight_w · x over its tap pairs, as the reference
// (ref_resize.cpp) in double. Gradient, a scatter in the reference, without atomics: one
// index per input coordinate of each axis first gathers the output coordinates whose runs
// read it (transpose_taps's table, in increasing order: a scan of the axis's runs, O(out ·
// stride) per coordinate), then one index per input element gathers dy through them, in
// double.
#pragma once
#include <algorithm>

#include "backend/common/resize_taps.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

// One axis's taps in device memory: run o is index/weight [o · stride, o · stride +
// count[o]).
struct DeviceTaps {
  const std::int64_t* count;
  const std::int64_t* index;
  const float* weight;
  std::int64_t stride;
};

// Where an axis's table of `runs` runs of at most `stride` taps lies in the workspace.
struct TapTable {
  std::size_t count = 0, index = 0, weight = 0, end = 0;  // byte offsets
  std::int64_t runs = 0, stride = 0;

  static TapTable at(std::size_t offset, std::int64_t runs, std::int64_t stride) {
    TapTable t;
    t.runs = runs;
    t.stride = stride;
    const auto n = static_cast<std::size_t>(runs), taps = static_cast<std::size_t>(runs * stride);
    t.count = offset;
    t.index = t.count + n * sizeof(std::int64_t);
    t.weight = t.index + taps * sizeof(std::int64_t);
    t.end = aligned_bytes(t.weight + taps * sizeof(float));
    return t;
  }
  std::int64_t* counts(void* ws) const { return reinterpret_cast<std::int64_t*>(static_cast<char*>(ws) + count); }
  std::int64_t* indices(void* ws) const { return reinterpret_cast<std::int64_t*>(static_cast<char*>(ws) + index); }
  float* weights(void* ws) const { return reinterpret_cast<float*>(static_cast<char*>(ws) + weight); }
  DeviceTaps taps(void* ws) const { return {counts(ws), indices(ws), weights(ws), stride}; }
};

// One axis's sampling as the taps functors need it: in -> out with `method`.
struct TapAxis {
  std::int64_t in, out;
  std::int64_t* count;
  std::int64_t* index;
  float* weight;
  std::int64_t stride;
};

// The runs of both axes, one index per output coordinate (rows first, then cols):
// resize_run into the run's slots of the table.
struct TapRunsFn {
  ResizeInterpolation method;
  bool antialias;
  TapAxis rows, cols;
  NNFIT_HD void operator()(std::int64_t i) const {
    const TapAxis& t = i < rows.out ? rows : cols;
    const std::int64_t o = i < rows.out ? i : i - rows.out;
    ResizeRun r{t.index + o * t.stride, t.weight + o * t.stride, t.stride};
    resize_run(method, antialias, t.in, t.out, o, r);
    t.count[o] = r.size;  // r never overflows: the stride is the host's longest run, same arithmetic
  }
};

// The transposed runs of both axes, one index per input coordinate (rows first): the
// output coordinates whose runs (`from`) read it, in increasing order, with their weights
// (transpose_taps's table).
struct TransposeRunsFn {
  DeviceTaps rows_from, cols_from;
  TapAxis rows, cols;  // in: the input coordinates (the transposed runs), out: the forward runs
  NNFIT_HD void operator()(std::int64_t i) const {
    const bool row = i < rows.in;
    const TapAxis& t = row ? rows : cols;
    const DeviceTaps& from = row ? rows_from : cols_from;
    const std::int64_t x = row ? i : i - rows.in;
    std::int64_t n = 0;
    for (std::int64_t o = 0; o < t.out; ++o) {
      for (std::int64_t k = o * from.stride; k < o * from.stride + from.count[o]; ++k) {
        if (from.index[k] != x) continue;
        if (n < t.stride) {
          t.index[x * t.stride + n] = o;
          t.weight[x * t.stride + n] = from.weight[k];
        }
        ++n;
        break;  // an index appears at most once per run
      }
    }
    t.count[x] = n < t.stride ? n : t.stride;
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
    for (std::int64_t a = oy * rows.stride; a < oy * rows.stride + rows.count[oy]; ++a) {
      for (std::int64_t b = ox * cols.stride; b < ox * cols.stride + cols.count[ox]; ++b) {
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
  // The host's tables, built by the function the device runs, give each table's stride.
  const ResizeTaps rows = resize_taps(g.method, g.antialias, g.h, g.oh);
  const ResizeTaps cols = resize_taps(g.method, g.antialias, g.w, g.ow);
  const TapTable row_runs = TapTable::at(0, g.oh, std::max<std::int64_t>(rows.longest_run(), 1));
  const TapTable col_runs = TapTable::at(row_runs.end, g.ow, std::max<std::int64_t>(cols.longest_run(), 1));
  TapTable row_inputs, col_inputs;  // the gradient's transposed runs
  std::size_t workspace = col_runs.end;
  if (grad) {
    row_inputs = TapTable::at(workspace, g.h, std::max<std::int64_t>(transpose_taps(rows, g.h).longest_run(), 1));
    col_inputs = TapTable::at(row_inputs.end, g.w, std::max<std::int64_t>(transpose_taps(cols, g.w).longest_run(), 1));
    workspace = col_inputs.end;
  }
  // The gradient reads dy [N, OH, OW, C] and writes dx [N, H, W, C].
  const std::int64_t in_h = grad ? g.oh : g.h, in_w = grad ? g.ow : g.w, out_h = grad ? g.h : g.oh, out_w = grad ? g.w : g.ow;
  const std::int64_t n = g.n * out_h * out_w * g.c;
  return launch_kernel(
      [=](const KernelArgs& a) {
        if (n == 0) return;
        void* ws = a.workspace;
        const auto axis = [ws](const TapTable& t, std::int64_t in, std::int64_t out) {
          return TapAxis{in, out, t.counts(ws), t.indices(ws), t.weights(ws), t.stride};
        };
        Launch::run(TapRunsFn{g.method, g.antialias, axis(row_runs, g.h, g.oh), axis(col_runs, g.w, g.ow)}, g.oh + g.ow,
                    a.ctx);
        DeviceTaps row_taps = row_runs.taps(ws), col_taps = col_runs.taps(ws);
        if (grad) {
          Launch::run(TransposeRunsFn{row_taps, col_taps, axis(row_inputs, g.h, g.oh), axis(col_inputs, g.w, g.ow)},
                      g.h + g.w, a.ctx);
          row_taps = row_inputs.taps(ws);
          col_taps = col_inputs.taps(ws);
        }
        Launch::run(ResizeFn<T>{a.inputs[0], a.outputs[0], row_taps, col_taps, in_h, in_w, out_h, out_w, g.c}, n,
                    a.ctx);
      },
      workspace);
}

template <class Launch>
void register_resize_kernels(KernelRegistry& r) {
  for (const char* op : {"resize", "resize_grad"}) {
    add_float_kernels(r, op, make_resize<Launch, float>, make_resize<Launch, Bf16>, make_resize<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
