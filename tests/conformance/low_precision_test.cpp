// Per-op conformance at bfloat16 and float16 (issue 16): oneDNN's native kernels where this
// CPU runs them and the widened float32 kernels elsewhere, against the float32 reference on
// the same rounded inputs (low_precision.h), one matmul against float64; the cast kernels
// bit for bit against core/dtype.cpp's conversions, special values included.
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/widened_kernel.h"
#include "low_precision.h"

namespace nnfit::testing {
namespace {

using Ints = std::vector<std::int64_t>;

KernelDesc desc(const std::string& op, Attrs attrs, std::vector<Shape> ins, std::vector<Shape> outs) {
  return f32_desc(op, std::move(attrs), std::move(ins), std::move(outs));
}

const DType kLow[] = {DType::bf16, DType::f16};

TEST(LowPrecision, CastIsExactRoundToNearestEvenBothKernels) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values{0.0f, -0.0f, 1.0f, -1.0f, 1.00390625f, 1.01171875f, 65504.0f, 65520.0f, 70000.0f, 1e-8f,
                            6e-8f, 3e38f, -3e38f, inf, -inf, std::nanf(""), 1.17549435e-38f, 1e-40f};
  for (int i = 0; i < 4000; ++i) values.push_back(std::ldexp(static_cast<float>(i % 977) / 977.0f + 1.0f, i % 60 - 30) * (i % 2 ? 1 : -1));
  const Shape s{static_cast<std::int64_t>(values.size())};
  const Tensor x = tensor_of(s, values);
  for (DType to : kLow) {
    SCOPED_TRACE(dtype_name(to));
    Attrs down{{"dtype", std::string(dtype_name(to))}};
    KernelDesc d{"cast", down, {{s, DType::f32}}, {{s, to}}, "test/cast"};
    Tensor want = to_dtype(x, to);  // core/dtype.cpp's conversion
    for (const char* impl : {"ref:cast", "omp:cast"}) {
      std::string why;
      auto k = kernel_registry().create(impl, d, DeviceType::cpu, &why);
      ASSERT_NE(k, nullptr) << impl << ": " << why;
      const Tensor got = run_kernel(*k, d, {x}, StepContext{})[0];
      EXPECT_EQ(0, std::memcmp(want.raw(), got.raw(), want.nbytes())) << impl << " down";
      KernelDesc up{"cast", Attrs{{"dtype", std::string("float32")}}, {{s, to}}, {{s, DType::f32}}, "test/cast"};
      auto ku = kernel_registry().create(impl, up, DeviceType::cpu, &why);
      ASSERT_NE(ku, nullptr) << impl << ": " << why;
      const Tensor back = run_kernel(*ku, up, {want}, StepContext{})[0];
      const Tensor exact = to_f32(want);
      EXPECT_EQ(0, std::memcmp(exact.raw(), back.raw(), exact.nbytes())) << impl << " up";
    }
  }
  // bfloat16 keeps float32's range: 3e38 stays finite; float16 overflows to inf.
  EXPECT_TRUE(std::isfinite(bf16_to_float(float_to_bf16(3e38f))));
  EXPECT_TRUE(std::isinf(f16_to_float(float_to_f16(70000.0f))));
}

TEST(LowPrecision, MatmulAgainstFloat64) {
  const std::int64_t m = 17, k = 33, n = 9;
  const Tensor a = random_tensor({m, k}, 1), b = random_tensor({k, n}, 2);
  for (DType dt : kLow) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor al = to_dtype(a, dt), bl = to_dtype(b, dt);
    const Tensor ar = to_f32(al), br = to_f32(bl);
    KernelDesc d = at_dtype(desc("matmul", {}, {{m, k}, {k, n}}, {{m, n}}), dt);
    SelectedKernel sk = kernel_registry().select(d, DeviceType::cpu);
    const Tensor got = to_f32(run_kernel(*sk.kernel, d, {al, bl}, StepContext{})[0]);
    double scale = 0, worst = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t p = 0; p < k; ++p) want += double(ar.data<float>()[i * k + p]) * br.data<float>()[p * n + j];
        scale = std::max(scale, std::fabs(want));
        worst = std::max(worst, std::fabs(want - got.data<float>()[i * n + j]));
      }
    }
    EXPECT_LE(worst, low_precision_tolerance(dt) * scale) << sk.impl_name;
  }
}

TEST(LowPrecision, DenseOps) {
  for (DType dt : kLow) {
    SCOPED_TRACE(dtype_name(dt));
    for (std::int64_t ta : {0, 1}) {
      for (std::int64_t tb : {0, 1}) {
        Attrs a{{"transpose_a", ta}, {"transpose_b", tb}};
        const Shape sa = ta ? Shape{24, 13} : Shape{13, 24}, sb = tb ? Shape{7, 24} : Shape{24, 7};
        expect_low_precision_matches_reference(desc("matmul", a, {sa, sb}, {{13, 7}}),
                                               {random_tensor(sa, 3), random_tensor(sb, 4)}, dt);
      }
    }
    for (const char* act : {"linear", "relu", "tanh"}) {
      Attrs a{{"activation", std::string(act)}};
      expect_low_precision_matches_reference(desc("fused_matmul", a, {{13, 24}, {24, 7}, {7}}, {{13, 7}}),
                                             {random_tensor({13, 24}, 5), random_tensor({24, 7}, 6), random_tensor({7}, 7)}, dt);
    }
    expect_low_precision_matches_reference(desc("bias_add", {}, {{13, 7}, {7}}, {{13, 7}}),
                                           {random_tensor({13, 7}, 8), random_tensor({7}, 9)}, dt);
    expect_low_precision_matches_reference(desc("bias_add_grad", {}, {{13, 7}}, {{7}}), {random_tensor({13, 7}, 10)}, dt);
  }
}

// The kernels that read and write bfloat16 themselves (omp:bias_add_grad, omp:dropout,
// omp:dropout_grad) give the very bits of their float32 kernel widened (inputs widened,
// float32 arithmetic, outputs rounded once): bias sums over the Fashion-MNIST CNN's first
// conv output shape, dropout with and without a noise_shape, NaN, -0.0 and ties.
TEST(LowPrecision, NativeBfloat16KernelsGiveTheWidenedKernelsBits) {
  StepContext ctx;
  ctx.seed = 5;
  ctx.step = 9;
  const Shape big{8, 26, 26, 32}, small{7, 5, 3};
  Tensor x = random_tensor(big, 40, -3.0f, 3.0f);
  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[4] = -0.0f;
  x.data<float>()[5] = 1.00390625f;  // a bfloat16 rounding tie once scaled by 2
  const Tensor mask = random_labels(big.numel(), 2, 41);
  Tensor mask_u8 = Tensor::zeros(big, DType::u8);
  for (std::int64_t i = 0; i < big.numel(); ++i) mask_u8.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(mask.data<std::int32_t>()[i]);
  struct Case {
    KernelDesc desc;
    std::vector<Tensor> inputs;
  };
  const Attrs noisy{{"rate", 0.5}, {"seed", std::int64_t{3}}, {"noise_shape", std::vector<std::int64_t>{7, 1, 3}}};
  // The dropout mask (dropout's output 1, dropout_grad's input 1) is u8.
  const auto mask_out = [](KernelDesc d) { d.outputs[1].dtype = DType::u8; return d; };
  KernelDesc grad = desc("dropout_grad", {{"rate", 0.5}}, {big, big}, {big});
  grad.inputs[1].dtype = DType::u8;
  const std::vector<Case> cases = {
      {desc("bias_add_grad", {}, {big}, {{32}}), {x}},
      {desc("bias_add_grad", {}, {small}, {{3}}), {random_tensor(small, 42)}},
      {mask_out(desc("dropout", {{"rate", 0.5}, {"seed", std::int64_t{3}}}, {big}, {big, big})), {x}},
      {mask_out(desc("dropout", noisy, {small}, {small, small})), {random_tensor(small, 43)}},
      {grad, {x, mask_u8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.desc.op + " " + c.desc.inputs[0].shape.to_string());
    const KernelDesc low = at_dtype(c.desc, DType::bf16);
    std::vector<Tensor> in;
    for (const Tensor& t : c.inputs) in.push_back(to_dtype(t, DType::bf16));
    std::string why;
    auto native = kernel_registry().create("omp:" + c.desc.op, low, DeviceType::cpu, &why);
    ASSERT_NE(native, nullptr) << why;
    auto inner = kernel_registry().create("omp:" + c.desc.op, widened(low), DeviceType::cpu, &why);
    ASSERT_NE(inner, nullptr) << why;
    auto wide = make_widened_kernel(low, std::move(inner));
    const std::vector<Tensor> got = run_kernel(*native, low, in, ctx), want = run_kernel(*wide, low, in, ctx);
    for (std::size_t i = 0; i < low.outputs.size(); ++i) {
      ASSERT_EQ(got[i].nbytes(), want[i].nbytes());
      EXPECT_EQ(0, std::memcmp(got[i].raw(), want[i].raw(), got[i].nbytes())) << "output " << i << " differs";
    }
    EXPECT_EQ(kernel_registry().select(low, DeviceType::cpu).impl_name, "omp:" + c.desc.op) << "chosen natively";
  }
}

// A cast to float32 folded into the op before it (fuse_output_casts): bfloat16 / float16
// inputs, a float32 output, matching the reference on the rounded inputs; the kernels that
// run the op natively at that type run it with the float32 output too.
TEST(LowPrecision, FoldedCastsWriteFloat32) {
  using Ints = std::vector<std::int64_t>;
  for (DType dt : kLow) {
    SCOPED_TRACE(dtype_name(dt));
    const Shape x{2, 9, 8, 3}, w{3, 3, 3, 5}, y{2, 7, 6, 5};
    const Attrs conv{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
    Attrs fused = conv, back_in = conv, back_w = conv;
    fused.set("activation", std::string("relu"));
    back_in.set("input_shape", x.dims());
    back_w.set("filter_shape", w.dims());
    struct Case {
      KernelDesc desc;
      std::vector<Tensor> inputs;
    };
    const std::vector<Case> cases = {
        {desc("matmul", {}, {{13, 24}, {24, 7}}, {{13, 7}}), {random_tensor({13, 24}, 1), random_tensor({24, 7}, 2)}},
        {desc("matmul", {{"transpose_a", std::int64_t{1}}}, {{24, 13}, {24, 7}}, {{13, 7}}),
         {random_tensor({24, 13}, 3), random_tensor({24, 7}, 4)}},
        {desc("fused_matmul", {{"activation", std::string("relu")}}, {{13, 24}, {24, 7}, {7}}, {{13, 7}}),
         {random_tensor({13, 24}, 5), random_tensor({24, 7}, 6), random_tensor({7}, 7)}},
        {desc("conv2d", conv, {x, w}, {y}), {random_tensor(x, 8), random_tensor(w, 9)}},
        {desc("fused_conv2d", fused, {x, w, {5}}, {y}), {random_tensor(x, 10), random_tensor(w, 11), random_tensor({5}, 12)}},
        {desc("conv2d_backprop_input", back_in, {y, w}, {x}), {random_tensor(y, 13), random_tensor(w, 14)}},
        {desc("conv2d_backprop_filter", back_w, {x, y}, {w}), {random_tensor(x, 15), random_tensor(y, 16)}},
        {desc("bias_add_grad", {}, {{8, 26, 26, 32}}, {{32}}), {random_tensor({8, 26, 26, 32}, 17)}},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(c.desc.op);
      const int folded = expect_low_precision_matches_reference(c.desc, c.inputs, dt, {}, true);
      const int uniform = expect_low_precision_matches_reference(c.desc, c.inputs, dt);
      EXPECT_EQ(folded, uniform) << "a native kernel declined the float32 output";
    }
  }
}

// Ops keyed by an integer input (gather_grad's ids) with low-precision data: the kernels
// registered for the ids' type are float32 kernels, so the data must be widened for them.
TEST(LowPrecision, IdKeyedOpsWidenTheirData) {
  const Tensor ids = random_labels(40, 6, 31);
  for (DType dt : kLow) {
    SCOPED_TRACE(dtype_name(dt));
    KernelDesc d = desc("gather_grad", Attrs{{"rows", std::int64_t{6}}}, {{40}, {40, 5}}, {{6, 5}});
    d.inputs[0].dtype = DType::i32;
    expect_low_precision_matches_reference(d, {ids, random_tensor({40, 5}, 32)}, dt);
    KernelDesc g = desc("gather", {}, {{6, 5}, {40}}, {{40, 5}});
    g.inputs[1].dtype = DType::i32;
    expect_low_precision_matches_reference(g, {random_tensor({6, 5}, 33), ids}, dt);
  }
}

TEST(LowPrecision, ConvolutionAndPooling) {
  const Shape x{2, 9, 8, 3}, w{3, 3, 3, 5};
  for (DType dt : kLow) {
    for (const char* padding : {"valid", "same"}) {
      for (std::int64_t s : {1, 2}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + padding + " stride " + std::to_string(s));
        Attrs a{{"strides", Ints{s, s}}, {"padding", std::string(padding)}};
        const bool same = std::string(padding) == "same";
        const std::int64_t oh = same ? (9 + s - 1) / s : (9 - 3) / s + 1, ow = same ? (8 + s - 1) / s : (8 - 3) / s + 1;
        const Shape y{2, oh, ow, 5};
        expect_low_precision_matches_reference(desc("conv2d", a, {x, w}, {y}), {random_tensor(x, 11), random_tensor(w, 12)}, dt);
        Attrs f = a;
        f.set("activation", std::string("relu"));
        expect_low_precision_matches_reference(desc("fused_conv2d", f, {x, w, {5}}, {y}),
                                               {random_tensor(x, 13), random_tensor(w, 14), random_tensor({5}, 15)}, dt);
        Attrs bi = a;
        bi.set("input_shape", x.dims());
        expect_low_precision_matches_reference(desc("conv2d_backprop_input", bi, {y, w}, {x}),
                                               {random_tensor(y, 16), random_tensor(w, 17)}, dt);
        Attrs bf = a;
        bf.set("filter_shape", w.dims());
        expect_low_precision_matches_reference(desc("conv2d_backprop_filter", bf, {x, y}, {w}),
                                               {random_tensor(x, 18), random_tensor(y, 19)}, dt);
        Attrs p{{"pool_size", Ints{2, 2}}, {"strides", Ints{s, s}}, {"padding", std::string(padding)}};
        const std::int64_t ph = same ? (9 + s - 1) / s : (9 - 2) / s + 1, pw = same ? (8 + s - 1) / s : (8 - 2) / s + 1;
        const Shape py{2, ph, pw, 3};
        for (const char* op : {"max_pool2d", "avg_pool2d"}) {
          expect_low_precision_matches_reference(desc(op, p, {x}, {py}), {random_tensor(x, 20)}, dt);
        }
        // max_pool2d_grad (x, y, dy; with the fused relu gradient too): omp's native kernel.
        const Tensor xt = random_tensor(x, 22);
        const Tensor yt = run_reference(desc("max_pool2d", p, {x}, {py}), {to_f32(to_dtype(xt, dt))});
        for (std::int64_t relu : {0, 1}) {
          Attrs pr = p;
          pr.set("relu", relu);
          const int native = expect_low_precision_matches_reference(desc("max_pool2d_grad", pr, {x, py, py}, {x}),
                                                                    {xt, yt, random_tensor(py, 23)}, dt);
          EXPECT_EQ(native, 1) << "omp:max_pool2d_grad takes bf16 and f16";
          // With the bias gradient (max_pool2d_grad_bias), db in the low type.
          EXPECT_EQ(expect_low_precision_matches_reference(desc("max_pool2d_grad_bias", pr, {x, py, py}, {x, Shape{3}}),
                                                           {xt, yt, random_tensor(py, 24)}, dt),
                    1)
              << "omp:max_pool2d_grad_bias takes bf16 and f16";
        }
        // The argmax pair (Note [Pool argmax]): omp's native bfloat16 kernels; float16 widened.
        KernelDesc fa = desc("max_pool2d_argmax", p, {x}, {py, py});
        fa.outputs[1].dtype = DType::u8;
        EXPECT_EQ(expect_low_precision_matches_reference(fa, {xt}, dt), dt == DType::bf16 ? 1 : 0);
        std::string why;
        const std::vector<Tensor> yat = testing::run_kernel(
            *kernel_registry().create("ref:max_pool2d_argmax", fa, DeviceType::cpu, &why), fa,
            {to_f32(to_dtype(xt, dt))}, StepContext{});
        for (std::int64_t relu : {0, 1}) {
          Attrs pa = p;
          pa.set("relu", relu);
          pa.set("input_shape", x.dims());
          for (const char* op : {"max_pool2d_argmax_grad", "max_pool2d_argmax_grad_bias"}) {
            const bool bias = std::string(op) == "max_pool2d_argmax_grad_bias";
            KernelDesc fg = bias ? desc(op, pa, {py, py}, {x, Shape{3}}) : desc(op, pa, {py, py}, {x});
            fg.inputs[1].dtype = DType::u8;
            EXPECT_EQ(expect_low_precision_matches_reference(fg, {random_tensor(py, 25), yat[1]}, dt),
                      dt == DType::bf16 ? 1 : 0)
                << op;
          }
        }
        Attrs pg = p;
        pg.set("input_shape", x.dims());
        expect_low_precision_matches_reference(desc("avg_pool2d_grad", pg, {py}, {x}), {random_tensor(py, 21)}, dt);
      }
    }
  }
}

// The argmax pair at the Fashion-MNIST convnet's pool shapes (whole 16-channel blocks, an
// odd size's uncovered last row and column), x a relu output rounded to tenths so windows
// tie, at both types: bfloat16 runs omp's native kernels (its forward widens row pairs).
TEST(LowPrecision, PoolArgmaxAtTheConvnetsShapes) {
  for (DType dt : kLow) {
    for (const Shape& x : {Shape{2, 26, 26, 32}, Shape{2, 11, 11, 64}}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " x=" + x.to_string());
      const Shape py{x[0], x[1] / 2, x[2] / 2, x[3]};
      Tensor xt = random_tensor(x, 26, -1.0f, 1.0f);
      for (std::int64_t i = 0; i < xt.numel(); ++i) {
        xt.data<float>()[i] = std::max(0.0f, std::round(xt.data<float>()[i] * 10.0f) / 10.0f);
      }
      Attrs p{{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("valid")}};
      KernelDesc fa = desc("max_pool2d_argmax", p, {x}, {py, py});
      fa.outputs[1].dtype = DType::u8;
      EXPECT_EQ(expect_low_precision_matches_reference(fa, {xt}, dt), dt == DType::bf16 ? 1 : 0);
      std::string why;
      const std::vector<Tensor> yat = testing::run_kernel(
          *kernel_registry().create("ref:max_pool2d_argmax", fa, DeviceType::cpu, &why), fa, {to_f32(to_dtype(xt, dt))},
          StepContext{});
      Attrs pa = p;
      pa.set("relu", std::int64_t{1});
      pa.set("input_shape", x.dims());
      KernelDesc fg = desc("max_pool2d_argmax_grad_bias", pa, {py, py}, {x, Shape{x[3]}});
      fg.inputs[1].dtype = DType::u8;
      EXPECT_EQ(expect_low_precision_matches_reference(fg, {random_tensor(py, 27), yat[1]}, dt), dt == DType::bf16 ? 1 : 0);
    }
  }
}

TEST(LowPrecision, ActivationsAndSoftmax) {
  const Shape s{6, 37};
  for (DType dt : kLow) {
    for (const char* kind : {"relu", "sigmoid", "tanh", "gelu", "silu", "elu"}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + kind);
      Attrs a{{"kind", std::string(kind)}};
      const Tensor x = random_tensor(s, 40, -3.0f, 3.0f);
      expect_low_precision_matches_reference(desc("activation", a, {s}, {s}), {x}, dt);
      const std::string k = kind;
      const bool t_is_x = k != "relu" && k != "sigmoid" && k != "tanh";
      const Tensor t = t_is_x ? x : run_reference(desc("activation", a, {s}, {s}), {x});
      expect_low_precision_matches_reference(desc("activation_grad", a, {s, s}, {s}), {t, random_tensor(s, 41)}, dt);
    }
    const Tensor logits = random_tensor(s, 42, -4.0f, 4.0f);
    expect_low_precision_matches_reference(desc("softmax", {}, {s}, {s}), {logits}, dt);
    const Tensor y = run_reference(desc("softmax", {}, {s}, {s}), {logits});
    expect_low_precision_matches_reference(desc("softmax_grad", {}, {s, s}, {s}), {y, random_tensor(s, 43)}, dt);
  }
}

}  // namespace
}  // namespace nnfit::testing
