// Conformance of the 3-D window ops (conv3d, fused_conv3d, its two gradients, max_pool3d,
// avg_pool3d and their gradients): every fast kernel (oneDNN, OpenMP) against ref:<op> on
// random inputs, then the reference kernels themselves against the 2-D reference on volumes
// that are one voxel deep (or tall) and against hand-computed values, so the 3-D oracle is
// not trusted blindly.
#include <cmath>

#include "conformance/harness.h"
#include "nnfit/core/error.h"

namespace nnfit {
namespace {

using testing::expect_close;
using testing::expect_matches_reference;
using testing::random_tensor;
using Ints = std::vector<std::int64_t>;

// The harness's (harness.h), under this file's names.
using testing::expect_values;
constexpr auto make_desc = testing::f32_desc;
constexpr auto run_ref = testing::run_reference;
constexpr auto from_values = testing::tensor_of;

// The same bytes under another shape (NDHWC with a unit axis <-> NHWC).
Tensor reshaped(const Tensor& t, const Shape& s) {
  Tensor r = Tensor::zeros(s);
  EXPECT_EQ(r.numel(), t.numel());
  for (std::int64_t i = 0; i < t.numel(); ++i) r.data<float>()[i] = t.data<float>()[i];
  return r;
}

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, const std::string& pad) {
  return pad == "same" ? (in + s - 1) / s : (in - k) / s + 1;
}

// ---- Convolution -------------------------------------------------------------------------

// x [n, d, h, w, c], a k[0] x k[1] x k[2] filter to o channels, stride s, dilation dl and
// groups g on every axis.
struct Conv3dCase {
  std::int64_t n, d, h, w, c;
  Ints k;
  std::int64_t o, s, dl, g;
  std::string padding;

  Shape x() const { return {n, d, h, w, c}; }
  Shape filter() const { return {k[0], k[1], k[2], c / g, o}; }
  Shape y() const {
    auto out = [&](std::int64_t in, std::int64_t kk) { return out_size(in, (kk - 1) * dl + 1, s, padding); };
    return {n, out(d, k[0]), out(h, k[1]), out(w, k[2]), o};
  }
  Attrs attrs() const {
    return Attrs{{"strides", Ints{s, s, s}}, {"padding", padding}, {"dilations", Ints{dl, dl, dl}}, {"groups", g}};
  }
  std::string trace() const {
    return "x=" + x().to_string() + " w=" + filter().to_string() + " s=" + std::to_string(s) + " d=" +
           std::to_string(dl) + " g=" + std::to_string(g) + " " + padding;
  }
};

std::vector<Conv3dCase> conv3d_cases() {
  std::vector<Conv3dCase> cases;
  for (const char* pad : {"valid", "same"}) {
    for (std::int64_t s : {1, 2}) {
      cases.push_back({2, 5, 6, 7, 1, {3, 3, 3}, 4, s, 1, 1, pad});   // C=1, odd sizes
      cases.push_back({2, 4, 7, 5, 3, {2, 3, 1}, 5, s, 1, 1, pad});   // anisotropic kernel, even depth
      cases.push_back({1, 6, 6, 6, 8, {3, 3, 3}, 16, s, 1, 1, pad});  // wider channels
      cases.push_back({2, 3, 4, 5, 3, {1, 1, 1}, 2, s, 1, 1, pad});   // 1x1x1
    }
    cases.push_back({2, 7, 6, 8, 2, {3, 2, 3}, 3, 1, 2, 1, pad});  // dilated
    cases.push_back({2, 5, 6, 5, 4, {3, 3, 3}, 6, 2, 1, 2, pad});  // grouped
    cases.push_back({1, 5, 5, 6, 3, {3, 3, 2}, 3, 1, 1, 3, pad});  // depthwise (groups = C)
    cases.push_back({1, 8, 7, 7, 6, {2, 2, 2}, 4, 2, 2, 2, pad});  // dilated, grouped and strided
  }
  return cases;
}

TEST(OnednnConv3d, EveryPassMatchesTheReference) {
  for (const Conv3dCase& c : conv3d_cases()) {
    SCOPED_TRACE(c.trace());
    expect_matches_reference(make_desc("conv3d", c.attrs(), {c.x(), c.filter()}, {c.y()}),
                             {random_tensor(c.x(), 11), random_tensor(c.filter(), 12)});
    Attrs ai = c.attrs();
    ai.set("input_shape", c.x().dims());
    expect_matches_reference(make_desc("conv3d_backprop_input", ai, {c.y(), c.filter()}, {c.x()}),
                             {random_tensor(c.y(), 13), random_tensor(c.filter(), 14)});
    Attrs aw = c.attrs();
    aw.set("filter_shape", c.filter().dims());
    expect_matches_reference(make_desc("conv3d_backprop_filter", aw, {c.x(), c.y()}, {c.filter()}),
                             {random_tensor(c.x(), 15), random_tensor(c.y(), 16)}, 3e-4f);
  }
}

TEST(OnednnFusedConv3d, EachActivation) {
  const std::vector<Conv3dCase> cases = conv3d_cases();
  for (const char* act : {"linear", "relu", "sigmoid", "tanh"}) {
    for (std::size_t i = 0; i < cases.size(); i += 3) {
      const Conv3dCase& c = cases[i];
      SCOPED_TRACE(c.trace() + " " + act);
      Attrs a = c.attrs();
      a.set("activation", std::string(act));
      expect_matches_reference(make_desc("fused_conv3d", a, {c.x(), c.filter(), {c.o}}, {c.y()}),
                               {random_tensor(c.x(), 17), random_tensor(c.filter(), 18), random_tensor({c.o}, 19)});
    }
  }
}

TEST(OnednnConv3d, VolumeSizes) {
  // A small video / medical-volume block: 16 channels in, 32 out, 3x3x3 same.
  const Conv3dCase c{2, 8, 12, 12, 16, {3, 3, 3}, 32, 1, 1, 1, "same"};
  expect_matches_reference(make_desc("conv3d", c.attrs(), {c.x(), c.filter()}, {c.y()}),
                           {random_tensor(c.x(), 20), random_tensor(c.filter(), 21)}, 5e-4f);
  Attrs aw = c.attrs();
  aw.set("filter_shape", c.filter().dims());
  expect_matches_reference(make_desc("conv3d_backprop_filter", aw, {c.x(), c.y()}, {c.filter()}),
                           {random_tensor(c.x(), 22), random_tensor(c.y(), 23)}, 3e-3f, 2e-4f);
  Attrs ai = c.attrs();
  ai.set("input_shape", c.x().dims());
  expect_matches_reference(make_desc("conv3d_backprop_input", ai, {c.y(), c.filter()}, {c.x()}),
                           {random_tensor(c.y(), 24), random_tensor(c.filter(), 25)}, 5e-4f);
}

TEST(OnednnConv3d, MalformedDescsThrowNamingTheNode) {
  Attrs a{{"strides", Ints{1, 1, 1}}, {"padding", std::string("valid")}, {"groups", std::int64_t{2}}};
  auto groups = make_desc("conv3d", a, {{1, 4, 4, 4, 3}, {3, 3, 3, 1, 4}}, {{1, 2, 2, 2, 4}});
  Attrs two{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
  auto strides = make_desc("conv3d", two, {{1, 4, 4, 4, 1}, {3, 3, 3, 1, 1}}, {{1, 2, 2, 2, 1}});
  auto fit = make_desc("conv3d", Attrs{{"strides", Ints{1, 1, 1}}, {"padding", std::string("valid")}},
                       {{1, 2, 4, 4, 1}, {3, 3, 3, 1, 1}}, {{1, 1, 2, 2, 1}});
  const std::pair<KernelDesc, std::string> cases[] = {
      {groups, "at node 'test/conv3d': groups = 2 must divide the input's 3 channels"},
      {strides, "at node 'test/conv3d': attribute 'strides' must be three positive integers"},
      {fit, "at node 'test/conv3d': window 3 is larger than the input size 2 with padding 'valid'"},
  };
  for (const auto& [desc, want] : cases) {
    for (const char* impl : {"onednn:conv3d", "ref:conv3d"}) {
      try {
        std::string why;
        kernel_registry().create(impl, desc, DeviceType::cpu, &why);
        ADD_FAILURE() << impl << ": expected InvalidArgument with " << want;
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << impl << ": " << e.what();
      }
    }
  }
}

// A volume one voxel deep is an image: conv3d with a depth-1 window equals the 2-D
// reference on the same bytes; one voxel tall, the depth axis plays the 2-D height. Both
// with dilation, groups and uneven strides, in every pass.
TEST(RefConv3d, MatchesTheTwoDimensionalReferenceOnFlatVolumes) {
  for (const char* pad : {"valid", "same"}) {
    for (bool flat_depth : {true, false}) {
      SCOPED_TRACE(std::string(pad) + (flat_depth ? " depth 1" : " height 1"));
      const std::int64_t n = 2, a = 7, b = 6, c = 4, ka = 3, kb = 2, o = 6;
      const Shape x2{n, a, b, c}, w2{ka, kb, c / 2, o};
      const Shape x3 = flat_depth ? Shape{n, 1, a, b, c} : Shape{n, a, 1, b, c};
      const Shape w3 = flat_depth ? Shape{1, ka, kb, c / 2, o} : Shape{ka, 1, kb, c / 2, o};
      Attrs a2{{"strides", Ints{2, 1}}, {"padding", std::string(pad)}, {"dilations", Ints{1, 2}},
               {"groups", std::int64_t{2}}};
      Attrs a3{{"strides", flat_depth ? Ints{1, 2, 1} : Ints{2, 1, 1}},
               {"padding", std::string(pad)},
               {"dilations", Ints{1, 1, 2}},  // the unit axis and the first 2-D axis undilated
               {"groups", std::int64_t{2}}};
      const Tensor x = random_tensor(x2, 40), w = random_tensor(w2, 41);
      const Shape ys2{n, out_size(a, ka, 2, pad), out_size(b, (kb - 1) * 2 + 1, 1, pad), o};
      const Shape ys3 = flat_depth ? Shape{n, 1, ys2[1], ys2[2], o} : Shape{n, ys2[1], 1, ys2[2], o};
      const Tensor want = run_ref(make_desc("conv2d", a2, {x2, w2}, {ys2}), {x, w});
      const Tensor got = run_ref(make_desc("conv3d", a3, {x3, w3}, {ys3}), {reshaped(x, x3), reshaped(w, w3)});
      expect_close(want, reshaped(got, ys2), 1e-6f, 1e-6f, "conv3d");
      const Tensor dy = random_tensor(ys2, 42);
      Attrs ai2 = a2, ai3 = a3;
      ai2.set("input_shape", x2.dims());
      ai3.set("input_shape", x3.dims());
      expect_close(run_ref(make_desc("conv2d_backprop_input", ai2, {ys2, w2}, {x2}), {dy, w}),
                   reshaped(run_ref(make_desc("conv3d_backprop_input", ai3, {ys3, w3}, {x3}),
                                    {reshaped(dy, ys3), reshaped(w, w3)}),
                            x2),
                   1e-6f, 1e-6f, "conv3d_backprop_input");
      Attrs af2 = a2, af3 = a3;
      af2.set("filter_shape", w2.dims());
      af3.set("filter_shape", w3.dims());
      expect_close(run_ref(make_desc("conv2d_backprop_filter", af2, {x2, ys2}, {w2}), {x, dy}),
                   reshaped(run_ref(make_desc("conv3d_backprop_filter", af3, {x3, ys3}, {w3}),
                                    {reshaped(x, x3), reshaped(dy, ys3)}),
                            w2),
                   1e-6f, 1e-6f, "conv3d_backprop_filter");
    }
  }
}

TEST(RefConv3d, HandComputed) {
  // x = 1..8 in a 2x2x2 volume (x[d,h,w] = 4d + 2h + w + 1); w is +1 at tap (0,0,0) and -1
  // at (1,1,1): the one valid output is x[0,0,0] - x[1,1,1] = 1 - 8.
  Attrs valid{{"strides", Ints{1, 1, 1}}, {"padding", std::string("valid")}};
  Tensor x = from_values({1, 2, 2, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = from_values({2, 2, 2, 1, 1}, {1, 0, 0, 0, 0, 0, 0, -1});
  expect_values(run_ref(make_desc("conv3d", valid, {{1, 2, 2, 2, 1}, {2, 2, 2, 1, 1}}, {{1, 1, 1, 1, 1}}), {x, w}),
                {-7});
  // "same" with a 2x2x2 all-ones kernel pads after only (TF: pad_total 1 -> 0 before, 1
  // after): output (d,h,w) sums the in-bounds part of [d,d+1]x[h,h+1]x[w,w+1].
  Attrs same{{"strides", Ints{1, 1, 1}}, {"padding", std::string("same")}};
  Tensor ones = from_values({2, 2, 2, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1});
  expect_values(run_ref(make_desc("conv3d", same, {{1, 2, 2, 2, 1}, {2, 2, 2, 1, 1}}, {{1, 2, 2, 2, 1}}), {x, ones}),
                {36, 20, 22, 12, 26, 14, 15, 8});
  // The filter gradient of the valid case is x * dy; the input gradient w * dy.
  Attrs af = valid;
  af.set("filter_shape", Ints{2, 2, 2, 1, 1});
  expect_values(run_ref(make_desc("conv3d_backprop_filter", af, {{1, 2, 2, 2, 1}, {1, 1, 1, 1, 1}}, {{2, 2, 2, 1, 1}}),
                        {x, from_values({1, 1, 1, 1, 1}, {2})}),
                {2, 4, 6, 8, 10, 12, 14, 16});
  Attrs ai = valid;
  ai.set("input_shape", Ints{1, 2, 2, 2, 1});
  expect_values(run_ref(make_desc("conv3d_backprop_input", ai, {{1, 1, 1, 1, 1}, {2, 2, 2, 1, 1}}, {{1, 2, 2, 2, 1}}),
                        {from_values({1, 1, 1, 1, 1}, {-1}), x}),
                {-1, -2, -3, -4, -5, -6, -7, -8});
}

// ---- Pooling -----------------------------------------------------------------------------

struct Pool3dCase {
  std::int64_t n, d, h, w, c;
  Ints k, s;
  std::string padding;

  Shape x() const { return {n, d, h, w, c}; }
  Shape y() const {
    return {n, out_size(d, k[0], s[0], padding), out_size(h, k[1], s[1], padding), out_size(w, k[2], s[2], padding),
            c};
  }
  Attrs attrs() const { return Attrs{{"pool_size", k}, {"strides", s}, {"padding", padding}}; }
  std::string trace() const {
    return "x=" + x().to_string() + " k=" + Shape(k).to_string() + " s=" + Shape(s).to_string() + " " + padding;
  }
};

std::vector<Pool3dCase> pool3d_cases() {
  return {{2, 4, 4, 4, 3, {2, 2, 2}, {2, 2, 2}, "valid"},  {2, 5, 7, 3, 1, {2, 2, 2}, {2, 2, 2}, "valid"},
          {2, 5, 7, 6, 5, {3, 3, 3}, {2, 2, 2}, "same"},   {1, 5, 5, 5, 16, {3, 2, 3}, {2, 1, 2}, "same"},
          {2, 6, 5, 7, 4, {3, 3, 3}, {1, 1, 1}, "same"},   {2, 7, 6, 5, 2, {2, 3, 2}, {3, 2, 3}, "valid"},
          {1, 5, 9, 9, 32, {2, 2, 2}, {2, 2, 2}, "same"},  {2, 3, 5, 5, 17, {1, 3, 3}, {1, 2, 2}, "valid"}};
}

TEST(OnednnPool3d, MaxAndAvgForwardAndAvgGrad) {
  for (const Pool3dCase& p : pool3d_cases()) {
    SCOPED_TRACE(p.trace());
    for (const char* op : {"max_pool3d", "avg_pool3d"}) {
      expect_matches_reference(make_desc(op, p.attrs(), {p.x()}, {p.y()}), {random_tensor(p.x(), 30)});
    }
    Attrs a = p.attrs();
    a.set("input_shape", p.x().dims());
    expect_matches_reference(make_desc("avg_pool3d_grad", a, {p.y()}, {p.x()}), {random_tensor(p.y(), 31)});
  }
}

TEST(OmpMaxPool3dGrad, MatchesReferenceIncludingTiesAndFusedRelu) {
  for (const Pool3dCase& p : pool3d_cases()) {
    for (bool ties : {false, true}) {
      SCOPED_TRACE(p.trace() + (ties ? " with ties" : ""));
      Tensor x = random_tensor(p.x(), 32, -2.0f, 2.0f);
      if (ties) {
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i]);
      }
      Tensor y = run_ref(make_desc("max_pool3d", p.attrs(), {p.x()}, {p.y()}), {x});
      expect_matches_reference(make_desc("max_pool3d_grad", p.attrs(), {p.x(), p.y(), p.y()}, {p.x()}),
                               {x, y, random_tensor(p.y(), 33)});
      // With the fused relu gradient: x a relu output (zeros and ties at 0).
      Tensor xr = x.clone();
      for (std::int64_t i = 0; i < xr.numel(); ++i) xr.data<float>()[i] = std::max(0.0f, xr.data<float>()[i]);
      Tensor yr = run_ref(make_desc("max_pool3d", p.attrs(), {p.x()}, {p.y()}), {xr});
      Attrs fused = p.attrs();
      fused.set("relu", std::int64_t{1});
      expect_matches_reference(make_desc("max_pool3d_grad", fused, {p.x(), p.y(), p.y()}, {p.x()}),
                               {xr, yr, random_tensor(p.y(), 34)});
    }
  }
}

// A one-voxel-deep window over a one-voxel-deep volume pools like the 2-D reference, in
// every pool op, with same padding's clipped windows.
TEST(RefPool3d, MatchesTheTwoDimensionalReferenceOnFlatVolumes) {
  const std::int64_t n = 2, h = 7, w = 6, c = 3;
  const Shape x2{n, h, w, c}, x3{n, 1, h, w, c};
  Attrs a2{{"pool_size", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("same")}};
  Attrs a3{{"pool_size", Ints{1, 3, 2}}, {"strides", Ints{1, 2, 2}}, {"padding", std::string("same")}};
  const Shape y2{n, 4, 3, c}, y3{n, 1, 4, 3, c};
  Tensor x = random_tensor(x2, 50, -2.0f, 2.0f);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i]);  // ties
  const Tensor dy = random_tensor(y2, 51);
  for (const char* op : {"max_pool", "avg_pool"}) {
    SCOPED_TRACE(op);
    const std::string o2 = std::string(op) + "2d", o3 = std::string(op) + "3d";
    const Tensor y = run_ref(make_desc(o2, a2, {x2}, {y2}), {x});
    expect_close(y, reshaped(run_ref(make_desc(o3, a3, {x3}, {y3}), {reshaped(x, x3)}), y2), 1e-6f, 1e-6f, o3);
    Tensor want, got;
    if (o2 == "max_pool2d") {
      want = run_ref(make_desc("max_pool2d_grad", a2, {x2, y2, y2}, {x2}), {x, y, dy});
      got = run_ref(make_desc("max_pool3d_grad", a3, {x3, y3, y3}, {x3}), {reshaped(x, x3), reshaped(y, y3), reshaped(dy, y3)});
    } else {
      Attrs g2 = a2, g3 = a3;
      g2.set("input_shape", x2.dims());
      g3.set("input_shape", x3.dims());
      want = run_ref(make_desc("avg_pool2d_grad", g2, {y2}, {x2}), {dy});
      got = run_ref(make_desc("avg_pool3d_grad", g3, {y3}, {x3}), {reshaped(dy, y3)});
    }
    expect_close(want, reshaped(got, x2), 1e-6f, 1e-6f, o3 + "_grad");
  }
}

TEST(RefPool3d, HandComputed) {
  // x = 1..27 in a 3x3x3 volume, x[d,h,w] = 9d + 3h + w + 1. A 2x2x2 window with stride 2
  // and "same" padding (pad_total 1: none before, one after) gives 2x2x2 windows clipped
  // to the volume.
  std::vector<float> v(27);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  const Tensor x = from_values({1, 3, 3, 3, 1}, v);
  Attrs a{{"pool_size", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}, {"padding", std::string("same")}};
  // Max: the window's far corner. Average over the in-bounds voxels only: window (0,0,0)
  // holds x[0..1, 0..1, 0..1], mean (1+2+4+5+10+11+13+14)/8 = 7.5; window (1,1,1) is x[2,2,2]
  // alone = 27; window (0,0,1) holds w = 2 only: (3+6+12+15)/4 = 9.
  expect_values(run_ref(make_desc("max_pool3d", a, {{1, 3, 3, 3, 1}}, {{1, 2, 2, 2, 1}}), {x}),
                {14, 15, 17, 18, 23, 24, 26, 27});
  expect_values(run_ref(make_desc("avg_pool3d", a, {{1, 3, 3, 3, 1}}, {{1, 2, 2, 2, 1}}), {x}),
                {7.5f, 9, 12, 13.5f, 21, 22.5f, 25.5f, 27});
  // Its gradient spreads 8 over each window's voxels: 1 each in the full window, 8 on the
  // lone corner voxel.
  Attrs g = a;
  g.set("input_shape", Ints{1, 3, 3, 3, 1});
  const Tensor dx = run_ref(make_desc("avg_pool3d_grad", g, {{1, 2, 2, 2, 1}}, {{1, 3, 3, 3, 1}}),
                            {from_values({1, 2, 2, 2, 1}, {8, 8, 8, 8, 8, 8, 8, 8})});
  expect_values(dx, {1, 1, 2, 1, 1, 2, 2, 2, 4, 1, 1, 2, 1, 1, 2, 2, 2, 4, 2, 2, 4, 2, 2, 4, 4, 4, 8});
  // A tie sends the max gradient to the first voxel in (depth, height, width) order.
  Attrs one{{"pool_size", Ints{2, 2, 2}}, {"strides", Ints{1, 1, 1}}, {"padding", std::string("valid")}};
  const Tensor flat = from_values({1, 2, 2, 2, 1}, {0, 5, 5, 0, 5, 0, 0, 5});
  expect_values(run_ref(make_desc("max_pool3d_grad", one, {{1, 2, 2, 2, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}},
                                  {{1, 2, 2, 2, 1}}),
                        {flat, from_values({1, 1, 1, 1, 1}, {5}), from_values({1, 1, 1, 1, 1}, {3})}),
                {0, 3, 0, 0, 0, 0, 0, 0});
  // Padding never wins a max: an all-negative volume under "same".
  Attrs s3{{"pool_size", Ints{3, 3, 3}}, {"strides", Ints{2, 2, 2}}, {"padding", std::string("same")}};
  const Tensor neg = from_values({1, 2, 2, 2, 1}, {-8, -7, -6, -5, -4, -3, -2, -1});
  expect_values(run_ref(make_desc("max_pool3d", s3, {{1, 2, 2, 2, 1}}, {{1, 1, 1, 1, 1}}), {neg}), {-1});
}

}  // namespace
}  // namespace nnfit
