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
// where s = in / out in float. Every expression below that places a sample or a tap keeps
// TF's float operations and their order, so a sample that lands on a cell boundary lands
// on the same side as in TF. The sums differ from TF's only in rounding (their order, and
// area dividing each axis by its s where TF divides the sum by both): within 1e-6 of
// TF 2.21 in the tests.
#include "backend/common/resize_taps.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

namespace {

// Appends runs one output coordinate at a time; a repeated index within a run adds its
// weight to the earlier tap (clamped taps at an edge read the same input).
class TapsBuilder {
 public:
  explicit TapsBuilder(std::int64_t out) {
    t_.offsets.reserve(static_cast<std::size_t>(out) + 1);
    t_.offsets.push_back(0);
  }
  void add(std::int64_t index, float weight) {
    for (std::size_t k = static_cast<std::size_t>(t_.offsets.back()); k < t_.index.size(); ++k) {
      if (t_.index[k] == index) {
        t_.weight[k] += weight;
        return;
      }
    }
    t_.index.push_back(index);
    t_.weight.push_back(weight);
  }
  void end_run() { t_.offsets.push_back(static_cast<std::int64_t>(t_.index.size())); }
  ResizeTaps take() { return std::move(t_); }

 private:
  ResizeTaps t_;
};

std::int64_t clamp_index(std::int64_t i, std::int64_t in) { return std::min(in - 1, std::max<std::int64_t>(0, i)); }

ResizeTaps nearest_taps(std::int64_t in, std::int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  TapsBuilder b(out);
  for (std::int64_t o = 0; o < out; ++o) {
    const float f = (static_cast<float>(o) + 0.5f) * scale;
    b.add(clamp_index(static_cast<std::int64_t>(std::floor(f)), in), 1.0f);
    b.end_run();
  }
  return b.take();
}

ResizeTaps bilinear_taps(std::int64_t in, std::int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  TapsBuilder b(out);
  for (std::int64_t o = 0; o < out; ++o) {
    const float f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    const float f_floor = std::floor(f);
    const std::int64_t lo = std::max(static_cast<std::int64_t>(f_floor), std::int64_t{0});
    const std::int64_t hi = std::min(static_cast<std::int64_t>(std::ceil(f)), in - 1);
    const float lerp = f - f_floor;
    if (lo == hi) {
      b.add(lo, 1.0f);  // TF's top + (bottom - top) * lerp is then exactly top
    } else {
      b.add(lo, 1.0f - lerp);
      b.add(hi, lerp);
    }
    b.end_run();
  }
  return b.take();
}

constexpr std::int64_t kCubicTableSize = 1024;

// TF's InitCoeffsTable(-0.5): entry 2i is Keys' cubic at i / 1024, entry 2i + 1 at 1 + i / 1024.
const std::vector<float>& keys_cubic_table() {
  static const std::vector<float> table = [] {
    const double a = -0.5;
    std::vector<float> t(static_cast<std::size_t>(kCubicTableSize + 1) * 2);
    for (std::int64_t i = 0; i <= kCubicTableSize; ++i) {
      float x = static_cast<float>(static_cast<double>(i) * 1.0 / kCubicTableSize);
      t[static_cast<std::size_t>(i) * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
      x += 1.0f;
      t[static_cast<std::size_t>(i) * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
    return t;
  }();
  return table;
}

// Renormalizes the run's weights to sum 1 unless the sum is about 0 (TF's rule for both
// bicubic and ScaleAndTranslate); returns whether it did.
bool normalize(std::vector<float>& w) {
  float sum = 0.0f;
  for (float v : w) sum += v;
  if (!(std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min())) return false;
  const float inv = 1.0f / sum;
  for (float& v : w) v *= inv;
  return true;
}

ResizeTaps bicubic_taps(std::int64_t in, std::int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const std::vector<float>& table = keys_cubic_table();
  TapsBuilder b(out);
  for (std::int64_t o = 0; o < out; ++o) {
    const float f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    const auto loc = static_cast<std::int64_t>(std::floor(f));
    const float delta = f - static_cast<float>(loc);
    const auto offset = static_cast<std::size_t>(std::lrint(delta * static_cast<float>(kCubicTableSize)));
    const std::size_t back = static_cast<std::size_t>(kCubicTableSize) - offset;
    const float raw[4] = {table[offset * 2 + 1], table[offset * 2], table[back * 2], table[back * 2 + 1]};
    std::vector<float> w(4);
    std::int64_t idx[4];
    for (int k = 0; k < 4; ++k) {
      idx[k] = clamp_index(loc - 1 + k, in);
      w[static_cast<std::size_t>(k)] = idx[k] == loc - 1 + k ? raw[k] : 0.0f;
    }
    normalize(w);
    for (int k = 0; k < 4; ++k) b.add(idx[k], w[static_cast<std::size_t>(k)]);
    b.end_run();
  }
  return b.take();
}

ResizeTaps area_taps(std::int64_t in, std::int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  TapsBuilder b(out);
  for (std::int64_t o = 0; o < out; ++o) {
    const float lo = static_cast<float>(o) * scale;
    const float hi = static_cast<float>(o + 1) * scale;
    const auto start = static_cast<std::int64_t>(std::floor(lo));
    const auto end = static_cast<std::int64_t>(std::ceil(hi));
    for (std::int64_t i = start; i < end; ++i) {
      const auto fi = static_cast<float>(i);
      float w = 0.0f;
      if (fi < lo) {
        w = fi + 1.0f > hi ? scale : fi + 1.0f - lo;
      } else {
        w = fi + 1.0f > hi ? hi - fi : 1.0f;
      }
      b.add(clamp_index(i, in), w / scale);
    }
    b.end_run();
  }
  return b.take();
}

// ScaleAndTranslate's kernels (scale_and_translate_op.h), with their radius.
struct SpanKernel {
  ResizeInterpolation method;
  bool antialias;
  float radius() const {
    switch (method) {
      case ResizeInterpolation::bilinear: return 1.0f;
      case ResizeInterpolation::bicubic: return 2.0f;
      case ResizeInterpolation::lanczos3: return 3.0f;
      default: return 5.0f;
    }
  }
  float operator()(float x) const {
    x = std::abs(x);
    switch (method) {
      case ResizeInterpolation::bilinear:  // triangle
        return x < 1.0f ? 1.0f - x : 0.0f;
      case ResizeInterpolation::bicubic:  // Keys' cubic, a = -0.5
        if (x >= 2.0f) return 0.0f;
        if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
        return ((1.5f * x - 2.5f) * x) * x + 1.0f;
      default: {  // lanczos
        constexpr float kPi = 3.14159265359f;
        const float r = radius();
        if (x > r) return 0.0f;
        if (x <= 1e-3f) return 1.0f;
        return r * std::sin(kPi * x) * std::sin(kPi * x / r) / (kPi * kPi * x * x);
      }
    }
  }
};

ResizeTaps span_taps(SpanKernel kernel, std::int64_t in, std::int64_t out) {
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  const auto inv_scale = static_cast<float>(1.0 / scale);
  const float kernel_scale = kernel.antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const float inv_kernel_scale = 1.0f / kernel_scale;
  const float reach = kernel.radius() * kernel_scale;
  TapsBuilder b(out);
  std::vector<float> w;
  for (std::int64_t o = 0; o < out; ++o) {
    const float sample = (static_cast<float>(o) + 0.5f) * inv_scale;
    if (sample < 0.0f || sample > static_cast<float>(in)) {
      b.end_run();  // outside the image: no sample
      continue;
    }
    const std::int64_t start = clamp_index(static_cast<std::int64_t>(std::ceil(sample - reach - 0.5f)), in);
    const std::int64_t end = clamp_index(static_cast<std::int64_t>(std::floor(sample + reach - 0.5f)), in) + 1;
    w.clear();
    for (std::int64_t i = start; i < end; ++i) {
      const float pos = static_cast<float>(i) + 0.5f - sample;
      w.push_back(kernel(std::abs(pos * inv_kernel_scale)));
    }
    if (normalize(w)) {  // else TF leaves the run's weights at 0
      for (std::int64_t i = start; i < end; ++i) b.add(i, w[static_cast<std::size_t>(i - start)]);
    }
    b.end_run();
  }
  return b.take();
}

std::string where(const KernelDesc& desc) { return desc.op + " at node '" + desc.node_name + "'"; }

}  // namespace

ResizeTaps resize_taps(ResizeInterpolation method, bool antialias, std::int64_t in, std::int64_t out) {
  NNFIT_CHECK(in >= 1 && out >= 1, InvalidArgument, "resize: axis lengths must be >= 1, got ", in, " -> ", out);
  switch (method) {
    case ResizeInterpolation::nearest: return nearest_taps(in, out);
    case ResizeInterpolation::area: return area_taps(in, out);
    case ResizeInterpolation::bilinear:
      return antialias ? span_taps({method, true}, in, out) : bilinear_taps(in, out);
    case ResizeInterpolation::bicubic:
      return antialias ? span_taps({method, true}, in, out) : bicubic_taps(in, out);
    case ResizeInterpolation::lanczos3:
    case ResizeInterpolation::lanczos5: return span_taps({method, antialias}, in, out);
  }
  return {};
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
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == 1, InvalidArgument, where(desc),
              ": expected 1 input and 1 output, got ", desc.inputs.size(), " and ", desc.outputs.size());
  const std::string method = desc.attrs.s("method");
  NNFIT_CHECK(parse_resize_method(method, &out->method), InvalidArgument, where(desc), ": method \"", method,
              "\" is not one of ", kResizeMethodNames);
  const std::int64_t antialias = desc.attrs.i_or("antialias", 0);
  NNFIT_CHECK(antialias == 0 || antialias == 1, InvalidArgument, where(desc), ": antialias must be 0 or 1, got ",
              antialias);
  out->antialias = antialias == 1;
  // x is the input of resize and the output of resize_grad; y the other.
  const Shape& x = grad ? desc.outputs[0].shape : desc.inputs[0].shape;
  const Shape& y = grad ? desc.inputs[0].shape : desc.outputs[0].shape;
  NNFIT_CHECK(x.rank() == 4 && y.rank() == 4, InvalidArgument, where(desc), ": expected [N,H,W,C] tensors, got ",
              desc.inputs[0].shape.to_string(), " -> ", desc.outputs[0].shape.to_string());
  if (grad) {
    const Shape want_x(desc.attrs.ints("input_shape"));
    NNFIT_CHECK(want_x == x, InvalidArgument, where(desc), ": output ", x.to_string(), " is not input_shape ",
                want_x.to_string());
  } else {
    const std::vector<std::int64_t> size = desc.attrs.ints("size");
    NNFIT_CHECK(size.size() == 2 && size[0] == y[1] && size[1] == y[2], InvalidArgument, where(desc), ": output ",
                y.to_string(), " does not have the spatial size of attr size");
  }
  NNFIT_CHECK(x[0] == y[0] && x[3] == y[3] && x[1] >= 1 && x[2] >= 1 && y[1] >= 1 && y[2] >= 1, InvalidArgument,
              where(desc), ": ", x.to_string(), " and ", y.to_string(),
              " must share batch and channels and have non-empty spatial axes");
  *out = ResizeGeometry{x[0], x[1], x[2], x[3], y[1], y[2], out->method, out->antialias};
  for (const TensorDesc* t : {&desc.inputs[0], &desc.outputs[0]}) {
    if (t->dtype != DType::f32) {
      if (why_not) *why_not = where(desc) + ": only float32 is supported, got " + std::string(dtype_name(t->dtype));
      return false;
    }
  }
  return true;
}

}  // namespace nnfit
