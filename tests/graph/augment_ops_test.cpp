// The augmentation ops (graph/augment_op_defs.cpp): finite-difference gradient checks at
// fixed draws (one step's draws are a pure function of seed and step, so the check sees a
// fixed function), and their behaviour: flip rate near 1/2, draws that repeat for the same
// seed and step and differ across steps, contrast factors in range, a zero factor's
// transform as the identity, and shape errors that name the op.
#include <set>

#include "graph/gradient_check_harness.h"

namespace nnfit {
namespace {

Attrs affine_attrs(const char* kind, const char* fill, const char* interpolation) {
  Attrs a{{"kind", std::string(kind)},         {"height_lower", -0.3}, {"height_upper", 0.3},
          {"width_lower", -0.2},               {"width_upper", 0.4},   {"fill_mode", std::string(fill)},
          {"interpolation", std::string(interpolation)}, {"fill_value", 0.5}, {"seed", std::int64_t{11}}};
  return a;
}

Attrs contrast_attrs(double lo, double hi, double vlo, double vhi) {
  return {{"factor_lower", lo}, {"factor_upper", hi}, {"value_lower", vlo}, {"value_upper", vhi}, {"seed", std::int64_t{5}}};
}

TEST(GradientCheck, RandomFlip) {
  for (const char* mode : {"horizontal", "vertical", "horizontal_and_vertical"}) {
    check({"random_flip", {{"mode", std::string(mode)}, {"seed", std::int64_t{3}}}, {random(Shape{6, 3, 4, 2}, 80)}});
  }
}

TEST(GradientCheck, RandomAffineEveryKindFillAndInterpolation) {
  for (const char* kind : {"translation", "rotation", "zoom", "shear"}) {
    for (const char* fill : {"reflect", "wrap", "constant", "nearest"}) {
      for (const char* interpolation : {"bilinear", "nearest"}) {
        check({"random_affine", affine_attrs(kind, fill, interpolation), {random(Shape{3, 5, 6, 2}, 81)}});
      }
    }
  }
}

TEST(GradientCheck, AffineTransformGivenTransform) {
  Tensor t = Tensor::zeros(Shape{2, 8});
  const float v[16] = {1.3f, 0.2f, -0.7f, -0.3f, 0.9f, 0.6f, 0.0f, 0.0f, 2.3f, 0.4f, -3.1f, -0.5f, 1.9f, -2.6f, 0.01f, -0.02f};
  std::copy(v, v + 16, t.data<float>());
  for (const char* fill : {"reflect", "wrap", "constant", "nearest"}) {
    Case c{"affine_transform", {{"fill_mode", std::string(fill)}, {"interpolation", std::string("bilinear")}}, {random(Shape{2, 4, 5, 3}, 82), t}};
    c.constants = {1};
    check(c);
  }
}

TEST(GradientCheck, RandomContrast) {
  check({"random_contrast", contrast_attrs(0.5, 1.6, -10.0, 10.0), {random(Shape{3, 4, 3, 2}, 83)}});
  // A range that clips part of the outputs (inputs kept away from the clip edges).
  Tensor x = random(Shape{2, 3, 3, 2}, 84);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = x.data<float>()[i] > 0 ? 3.0f + x.data<float>()[i] : x.data<float>()[i];
  check({"random_contrast", contrast_attrs(1.0, 1.0, -2.0, 2.0), {x}});
}

// Runs `op` on x at (seed, step) and returns its outputs.
std::vector<Tensor> run_op(const std::string& op, const Attrs& attrs, const Tensor& x, std::int64_t step,
                           std::uint64_t seed = 7) {
  Graph g;
  const int in = g.add_variable("x", x);
  const std::vector<int> outs = g.add_node(op, {in}, attrs, "op");
  PlanOptions po;
  po.keep = outs;
  Program p = plan(std::move(g), po);
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(p.arena_bytes(), 1))}, DType::u8);
  p.bind(arena.raw());
  StepContext ctx;
  ctx.seed = seed;
  ctx.step = step;
  p.run(ctx);
  std::vector<Tensor> result;
  for (int o : outs) {
    Tensor t = Tensor::zeros(p.graph().desc(o).shape, p.graph().desc(o).dtype);
    std::memcpy(t.raw(), p.data(o), t.nbytes());
    result.push_back(t);
  }
  return result;
}

bool same(const Tensor& a, const Tensor& b) { return std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0; }

TEST(RandomAugment, FlipRateIsNearHalfAndFlipsMirror) {
  const std::int64_t n = 4000;
  Tensor x = random(Shape{n, 2, 3, 1}, 90);
  const Attrs a{{"mode", std::string("horizontal")}, {"seed", std::int64_t{1}}};
  const std::vector<Tensor> out = run_op("random_flip", a, x, 0);
  std::int64_t flipped = 0;
  for (std::int64_t s = 0; s < n; ++s) {
    const bool f = out[1].data<std::uint8_t>()[s] != 0;
    flipped += f;
    for (std::int64_t r = 0; r < 2; ++r) {
      for (std::int64_t c = 0; c < 3; ++c) {
        const float want = x.data<float>()[(s * 2 + r) * 3 + (f ? 2 - c : c)];
        ASSERT_EQ(out[0].data<float>()[(s * 2 + r) * 3 + c], want) << "sample " << s;
      }
    }
  }
  // Binomial(4000, 1/2): sd ~ 32; 5 sd either side.
  EXPECT_NEAR(static_cast<double>(flipped), 2000.0, 160.0);
}

TEST(RandomAugment, DrawsRepeatForSeedAndStepAndDifferAcrossSteps) {
  Tensor x = random(Shape{16, 5, 5, 2}, 91);
  const struct {
    const char* op;
    Attrs attrs;
  } kOps[] = {{"random_flip", {{"mode", std::string("horizontal_and_vertical")}, {"seed", std::int64_t{2}}}},
              {"random_affine", affine_attrs("rotation", "reflect", "bilinear")},
              {"random_affine", affine_attrs("translation", "constant", "nearest")},
              {"random_affine", affine_attrs("zoom", "wrap", "bilinear")},
              {"random_contrast", contrast_attrs(0.6, 1.4, -5.0, 5.0)}};
  for (const auto& o : kOps) {
    SCOPED_TRACE(o.op + std::string(" ") + o.attrs.to_string());
    const std::vector<Tensor> a = run_op(o.op, o.attrs, x, 3), b = run_op(o.op, o.attrs, x, 3);
    const std::vector<Tensor> c = run_op(o.op, o.attrs, x, 4), d = run_op(o.op, o.attrs, x, 3, 8);
    EXPECT_TRUE(same(a[0], b[0]) && same(a[1], b[1])) << "same seed and step, different draws";
    EXPECT_FALSE(same(a[1], c[1])) << "the next step drew the same";
    EXPECT_FALSE(same(a[1], d[1])) << "another run seed drew the same";
  }
}

TEST(RandomAugment, ContrastFactorsSpanTheirRangeAndOutputsAreClipped) {
  Tensor x = random(Shape{2000, 2, 2, 1}, 92, -3.0f, 3.0f);
  const std::vector<Tensor> out = run_op("random_contrast", contrast_attrs(0.5, 1.5, -1.0, 1.0), x, 0);
  double lo = 2.0, hi = 0.0, sum = 0.0;
  for (std::int64_t s = 0; s < 2000; ++s) {
    const double f = out[1].data<float>()[s];
    lo = std::min(lo, f);
    hi = std::max(hi, f);
    sum += f;
  }
  EXPECT_GE(lo, 0.5);
  EXPECT_LT(hi, 1.5);
  EXPECT_LT(lo, 0.52);
  EXPECT_GT(hi, 1.48);
  EXPECT_NEAR(sum / 2000.0, 1.0, 0.03);  // uniform: mean 1, sd of the mean ~ 0.0065
  for (std::int64_t i = 0; i < out[0].numel(); ++i) {
    ASSERT_GE(out[0].data<float>()[i], -1.0f);
    ASSERT_LE(out[0].data<float>()[i], 1.0f);
  }
}

// The drawn transforms hold Keras's matrices with their parameters in the given ranges
// (height (-0.3, 0.3), width (-0.2, 0.4)) and spread over them.
TEST(RandomAugment, AffineDrawsStayInTheirRanges) {
  const std::int64_t n = 2000, h = 5, w = 6;
  Tensor x = random(Shape{n, h, w, 1}, 94);
  for (const char* kind : {"translation", "rotation", "zoom", "shear"}) {
    SCOPED_TRACE(kind);
    const Tensor t = run_op("random_affine", affine_attrs(kind, "reflect", "bilinear"), x, 1)[1];
    double hsum = 0.0, hmin = 1e9, hmax = -1e9;
    for (std::int64_t s = 0; s < n; ++s) {
      const float* m = t.data<float>() + 8 * s;
      double hv = 0.0, wv = 0.0;
      if (std::string(kind) == "translation") {
        hv = -m[5] / static_cast<double>(h);
        wv = -m[2] / static_cast<double>(w);
      } else if (std::string(kind) == "rotation") {
        hv = std::atan2(m[3], m[0]) / 6.283185307179586;  // the fraction of a turn
        wv = 0.1;
        ASSERT_NEAR(m[0], m[4], 1e-6f);
      } else if (std::string(kind) == "shear") {
        // Keras's shear matrix, both factors negated together for about half the samples.
        ASSERT_EQ(m[0], 1.0f);
        ASSERT_EQ(m[4], 1.0f);
        ASSERT_EQ(m[2], 0.0f);
        ASSERT_EQ(m[5], 0.0f);
        hv = m[3];  // the range is symmetric, so negated draws stay in it
        ASSERT_LE(std::abs(m[1]), 0.4 + 1e-6);
        wv = 0.1;
      } else {
        hv = m[4] - 1.0;
        wv = m[0] - 1.0;
      }
      ASSERT_GE(hv, -0.3 - 1e-6);
      ASSERT_LE(hv, 0.3 + 1e-6);
      ASSERT_GE(wv, -0.2 - 1e-6);
      ASSERT_LE(wv, 0.4 + 1e-6);
      hsum += hv;
      hmin = std::min(hmin, hv);
      hmax = std::max(hmax, hv);
    }
    EXPECT_NEAR(hsum / static_cast<double>(n), 0.0, 0.02);  // uniform: sd of the mean ~ 0.004
    EXPECT_LT(hmin, -0.29);
    EXPECT_GT(hmax, 0.29);
  }
}

TEST(RandomAugment, ZeroFactorsTransformNothing) {
  Tensor x = random(Shape{4, 5, 6, 3}, 93);
  for (const char* kind : {"translation", "rotation", "zoom", "shear"}) {
    for (const char* interpolation : {"bilinear", "nearest"}) {
      Attrs a = affine_attrs(kind, "reflect", interpolation);
      for (const char* k : {"height_lower", "height_upper", "width_lower", "width_upper"}) a.set(k, 0.0);
      const std::vector<Tensor> out = run_op("random_affine", a, x, 2);
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        ASSERT_NEAR(out[0].data<float>()[i], x.data<float>()[i], 1e-5f) << kind << " " << interpolation << " " << i;
      }
    }
  }
}

TEST(RandomAugment, BadAttributesAndShapesNameTheOp) {
  Graph g;
  const int x = g.add_variable("x", Tensor::zeros(Shape{2, 3, 4, 1}));
  const int flat = g.add_variable("flat", Tensor::zeros(Shape{2, 12}));
  EXPECT_THROW(g.add_node("random_flip", {x}, {{"mode", std::string("diagonal")}}, "f"), InvalidArgument);
  EXPECT_THROW(g.add_node("random_flip", {flat}, {{"mode", std::string("vertical")}}, "f"), InvalidArgument);
  Attrs bad = affine_attrs("skew", "reflect", "bilinear");
  EXPECT_THROW(g.add_node("random_affine", {x}, bad, "a"), InvalidArgument);
  bad = affine_attrs("zoom", "mirror", "bilinear");
  try {
    g.add_node("random_affine", {x}, bad, "a");
    ADD_FAILURE() << "fill_mode mirror was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fill_mode \"mirror\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(g.add_node("random_contrast", {x}, contrast_attrs(1.5, 0.5, 0.0, 1.0), "c"), InvalidArgument);
  EXPECT_THROW(g.add_node("affine_transform", {x, flat}, {{"fill_mode", std::string("wrap")}, {"interpolation", std::string("nearest")}}, "t"),
               InvalidArgument);
}

}  // namespace
}  // namespace nnfit
