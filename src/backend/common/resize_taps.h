// How TensorFlow's tf.image.resize (v2: half-pixel centres, no align_corners) samples one
// axis, shared by the resize op's shape inference (graph/resize_op_defs.cpp) and its
// reference and OpenMP kernels, and built from resize_runs.h's per-coordinate function,
// which the CUDA kernels run on the device, so every path resamples alike. Every method TF offers
// Keras 3 is separable: output coordinate o reads a short run of input coordinates, each
// with a weight, and a 2-D resize applies the height taps and then the width taps. The
// weights are computed in float with TF's own expressions (see Note [TF resize sampling]
// in resize_taps.cpp), since where a nearest sample lands or a tap starts depends on
// float rounding.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backend/common/resize_runs.h"
#include "nnfit/backend/kernel.h"

namespace nnfit {

// "nearest, bilinear, bicubic, area, lanczos3, lanczos5": for messages.
extern const char* const kResizeMethodNames;
// false for a name outside kResizeMethodNames (exact, lower case).
bool parse_resize_method(const std::string& name, ResizeInterpolation* out);

// One axis's sampling: output coordinate o reads input coordinates index[k] with weights
// weight[k] for k in [offsets[o], offsets[o + 1]). A run may be empty (the output is 0);
// an index appears at most once per run.
struct ResizeTaps {
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> index;
  std::vector<float> weight;
  std::int64_t size() const { return static_cast<std::int64_t>(offsets.size()) - 1; }
  std::int64_t longest_run() const;
};

// requires: in >= 1, out >= 1. antialias is TF's: for bilinear, bicubic and the lanczos
// kernels a downscale widens the kernel by in / out; nearest and area ignore it.
ResizeTaps resize_taps(ResizeInterpolation method, bool antialias, std::int64_t in, std::int64_t out);
// The adjoint's sampling: per input coordinate, the output coordinates whose runs read
// it (in increasing order) with the same weights. `in` is the input axis's length.
ResizeTaps transpose_taps(const ResizeTaps& taps, std::int64_t in);

// A resize or resize_grad desc: x [N,H,W,C] -> y [N,OH,OW,C] (resize_grad maps dy, of
// y's shape, back to x's).
struct ResizeGeometry {
  std::int64_t n = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0;
  ResizeInterpolation method = ResizeInterpolation::bilinear;
  bool antialias = false;
};

// Throws InvalidArgument naming the node for a malformed desc (arity, rank, shapes that
// disagree with the attrs, an unknown method); returns false with *why_not for a valid
// one these kernels decline (a dtype other than float32).
bool check_resize(const KernelDesc& desc, ResizeGeometry* out, std::string* why_not);

}  // namespace nnfit
