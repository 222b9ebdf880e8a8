// TensorFlow's resize sampling per axis (resize_taps.h) and the resize ops' desc checks.
//
// Note [TF resize sampling]
// tf.image.resize(images, size, method, antialias) in TF 2 calls, per method:
//   nearest   ResizeNearestNeighbor(half_pixel_centers): in = min(floor((o + 0.5) * s), in - 1)
//   bilinear  ResizeBilinear(half_pixel_centers): f = (o + 0.5) * s - 0.5, taps floor(f) and
//             ceil(f) clamped to the axis, weights 1 - (f - floor f) and f - floor f
//   bicubic   ResizeBicubic(half_pixel_centers): Keys' cubic (a = -0.5) from a 1024-entry
//             table at round((f - floor f) * 1024); taps outside the axis weigh 0 and the
//             four weights are renormalized to sum 1
//   area      ResizeArea: the box [o * s, (o + 1) * s) with each input cell weighted by its
//             overlap, divided by s
//   lanczos3/5, and bilinear/bicubic with antialias: ScaleAndTranslate with the lanczos,
//             triangle or Keys-cubic kernel: around sample (o + 0.5) / (out / in), the
//             inputs within the kernel radius (times in / out when antialias shrinks) weigh
//             kernel(distance), renormalized to sum 1
// where s = in / out in float. Every expression that places a sample or a tap (one run per
// output coordinate, resize_runs.h, which the CUDA kernels run on the device) keeps
// TF's float operations and their order, so a sample that lands on a cell boundary lands
// on the same side as in TF. The sums differ from TF's only in rounding (their order, and
// area dividing each axis by its s where TF divides the sum by both): within 1e-6 of
// TF 2.21 in the tests.
#include "backend/common/resize_taps.h"

#include <algorithm>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit {

const char* const kResizeMethodNames = "nearest, bilinear, bicubic, area, lanczos3, lanczos5";

bool parse_resize_method(const std::string& name, ResizeInterpolation* out) {
  static const struct {
    const char* name;
    ResizeInterpolation method;
  } kMethods[] = {{"nearest", ResizeInterpolation::nearest}, {"bilinear", ResizeInterpolation::bilinear},
                  {"bicubic", ResizeInterpolation::bicubic}, {"area", ResizeInterpolation::area},
                  {"lanczos3", ResizeInterpolation::lanczos3}, {"lanczos5", ResizeInterpolation::lanczos5}};
  for (const auto& m : kMethods) {
    if (name == m.name) {
      *out = m.method;
      return true;
    }
  }
  return false;
}

ResizeTaps resize_taps(ResizeInterpolation method, bool antialias, std::int64_t in, std::int64_t out) {
  NNFIT_CHECK(in >= 1 && out >= 1, InvalidArgument, "resize: axis lengths must be >= 1, got ", in, " -> ", out);
  const std::int64_t capacity = resize_run_capacity(method, antialias, in, out);
  ResizeTaps t;
  t.offsets.reserve(static_cast<std::size_t>(out) + 1);
  t.offsets.push_back(0);
  std::vector<std::int64_t> index(static_cast<std::size_t>(capacity));
  std::vector<float> weight(static_cast<std::size_t>(capacity));
  for (std::int64_t o = 0; o < out; ++o) {
    ResizeRun r{index.data(), weight.data(), capacity};
    resize_run(method, antialias, in, out, o, r);
    // The device's tables have `capacity` slots per run (resize_kernels.h).
    NNFIT_CHECK(!r.overflowed, InvalidArgument, "internal: resize taps of ", in, " -> ", out, " overflow a run of ",
                capacity);
    t.index.insert(t.index.end(), index.begin(), index.begin() + r.size);
    t.weight.insert(t.weight.end(), weight.begin(), weight.begin() + r.size);
    t.offsets.push_back(static_cast<std::int64_t>(t.index.size()));
  }
  return t;
}

std::int64_t ResizeTaps::longest_run() const {
  std::int64_t n = 0;
  for (std::size_t o = 0; o + 1 < offsets.size(); ++o) n = std::max(n, offsets[o + 1] - offsets[o]);
  return n;
}

ResizeTaps transpose_taps(const ResizeTaps& taps, std::int64_t in) {
  ResizeTaps t;
  t.offsets.assign(static_cast<std::size_t>(in) + 1, 0);
  for (std::int64_t i : taps.index) ++t.offsets[static_cast<std::size_t>(i) + 1];
  for (std::size_t i = 1; i < t.offsets.size(); ++i) t.offsets[i] += t.offsets[i - 1];
  t.index.resize(taps.index.size());
  t.weight.resize(taps.weight.size());
  std::vector<std::int64_t> fill(t.offsets.begin(), t.offsets.end() - 1);
  for (std::int64_t o = 0; o < taps.size(); ++o) {  // increasing o, so each run is sorted
    for (auto k = static_cast<std::size_t>(taps.offsets[static_cast<std::size_t>(o)]);
         k < static_cast<std::size_t>(taps.offsets[static_cast<std::size_t>(o) + 1]); ++k) {
      const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(taps.index[k])]++);
      t.index[at] = o;
      t.weight[at] = taps.weight[k];
    }
  }
  return t;
}

bool check_resize(const KernelDesc& desc, ResizeGeometry* out, std::string* why_not) {
  const bool grad = desc.op == "resize_grad";
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == 1, InvalidArgument, desc.where(),
              ": expected 1 input and 1 output, got ", desc.inputs.size(), " and ", desc.outputs.size());
  const std::string method = desc.attrs.s("method");
  NNFIT_CHECK(parse_resize_method(method, &out->method), InvalidArgument, desc.where(), ": method \"", method,
              "\" is not one of ", kResizeMethodNames);
  const std::int64_t antialias = desc.attrs.i_or("antialias", 0);
  NNFIT_CHECK(antialias == 0 || antialias == 1, InvalidArgument, desc.where(), ": antialias must be 0 or 1, got ",
              antialias);
  out->antialias = antialias == 1;
  // x is the input of resize and the output of resize_grad; y the other.
  const Shape& x = grad ? desc.outputs[0].shape : desc.inputs[0].shape;
  const Shape& y = grad ? desc.inputs[0].shape : desc.outputs[0].shape;
  NNFIT_CHECK(x.rank() == 4 && y.rank() == 4, InvalidArgument, desc.where(), ": expected [N,H,W,C] tensors, got ",
              desc.inputs[0].shape.to_string(), " -> ", desc.outputs[0].shape.to_string());
  if (grad) {
    const Shape want_x(desc.attrs.ints("input_shape"));
    NNFIT_CHECK(want_x == x, InvalidArgument, desc.where(), ": output ", x.to_string(), " is not input_shape ",
                want_x.to_string());
  } else {
    const std::vector<std::int64_t> size = desc.attrs.ints("size");
    NNFIT_CHECK(size.size() == 2 && size[0] == y[1] && size[1] == y[2], InvalidArgument, desc.where(), ": output ",
                y.to_string(), " does not have the spatial size of attr size");
  }
  NNFIT_CHECK(x[0] == y[0] && x[3] == y[3] && x[1] >= 1 && x[2] >= 1 && y[1] >= 1 && y[2] >= 1, InvalidArgument,
              desc.where(), ": ", x.to_string(), " and ", y.to_string(),
              " must share batch and channels and have non-empty spatial axes");
  *out = ResizeGeometry{x[0], x[1], x[2], x[3], y[1], y[2], out->method, out->antialias};
  for (const TensorDesc* t : {&desc.inputs[0], &desc.outputs[0]}) {
    if (t->dtype != DType::f32) {
      if (why_not) *why_not = desc.where() + ": only float32 is supported, got " + std::string(dtype_name(t->dtype));
      return false;
    }
  }
  return true;
}

}  // namespace nnfit
