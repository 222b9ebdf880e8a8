// fused_conv2d_max_pool_argmax (fuse_conv_into_pool_argmax): omp against the reference
// (the reference convolution, then the reference max_pool2d_argmax) on random inputs at
// float32, and bit for bit on inputs whose every sum is exact (small integers over
// quarters), where the pool's windows hold many ties and the first maximum must win, at
// float32 and bfloat16. At bfloat16 it is also checked against what it replaces: the
// registry's fused_conv2d, then its max_pool2d_argmax.
#include <cstring>

#include "backend/common/nn_op_geometry.h"
#include "low_precision.h"

namespace nnfit::testing {
namespace {

using Ints = std::vector<std::int64_t>;

struct ConvPoolCase {
  std::int64_t n, h, w, c, k, o, s, d;
  const char* padding;
  std::int64_t pool, pool_stride;
  const char* pool_padding;
  const char* activation;
};

std::string trace(const ConvPoolCase& c) {
  return std::to_string(c.n) + "x" + std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) +
         " k" + std::to_string(c.k) + " o" + std::to_string(c.o) + " s" + std::to_string(c.s) + " d" +
         std::to_string(c.d) + " " + c.padding + ", pool " + std::to_string(c.pool) + "/" +
         std::to_string(c.pool_stride) + " " + c.pool_padding + ", " + c.activation;
}

// The fused op's float32 desc, its shapes from the graph's own shape rules.
KernelDesc fused_desc(const ConvPoolCase& c) {
  Attrs a{{"strides", Ints{c.s, c.s}},
          {"padding", std::string(c.padding)},
          {"dilations", Ints{c.d, c.d}},
          {"activation", std::string(c.activation)},
          {"pool_size", Ints{c.pool, c.pool}},
          {"pool_strides", Ints{c.pool_stride, c.pool_stride}},
          {"pool_padding", std::string(c.pool_padding)}};
  const auto out = [](std::int64_t in, std::int64_t span, std::int64_t s, const std::string& p) {
    return p == "same" ? (in + s - 1) / s : (in - span) / s + 1;
  };
  const std::int64_t span = (c.k - 1) * c.d + 1;
  const std::int64_t oh = out(c.h, span, c.s, c.padding), ow = out(c.w, span, c.s, c.padding);
  const std::int64_t ph = out(oh, c.pool, c.pool_stride, c.pool_padding),
                     pw = out(ow, c.pool, c.pool_stride, c.pool_padding);
  KernelDesc d = f32_desc("fused_conv2d_max_pool_argmax", a, {{c.n, c.h, c.w, c.c}, {c.k, c.k, c.c, c.o}, {c.o}},
                          {{c.n, ph, pw, c.o}, {c.n, ph, pw, c.o}});
  d.outputs[1].dtype = DType::u8;
  return d;
}

const ConvPoolCase kCases[] = {
    {3, 28, 28, 1, 3, 32, 1, 1, "valid", 2, 2, "valid", "relu"},  // the Fashion-MNIST convnet's first layer
    {2, 9, 8, 1, 3, 20, 1, 1, "same", 2, 2, "same", "relu"},      // padded on both, a channel tail
    {2, 10, 10, 3, 3, 16, 2, 1, "same", 3, 2, "valid", "linear"}, // overlapping windows, stride 2, three channels
    {2, 12, 12, 1, 3, 80, 1, 2, "valid", 2, 2, "valid", "relu"},  // dilation 2, two chunks
    {1, 7, 7, 2, 2, 5, 1, 1, "valid", 3, 3, "same", "relu"},      // scalar-width channels, partial windows
    // The 3x3 path (3x3 at stride 1 over one channel, pooled 2x2 at stride 2) beside the
    // general one in a row: padded edge windows, three blocks; then partial windows.
    {2, 30, 29, 1, 3, 48, 1, 1, "same", 2, 2, "valid", "linear"},
    {1, 11, 11, 1, 3, 16, 1, 1, "valid", 2, 2, "same", "relu"},
};

// Small integers over 4: every product and sum of the convolution is exact in float32 and
// every output exact in bfloat16, so implementations agree bit for bit and ties are ties.
Tensor quarters(const Shape& s, std::uint64_t seed, int span) {
  Tensor t = Tensor::zeros(s, DType::f32);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t.data<float>()[i] = static_cast<float>(static_cast<int>((state >> 33) % (2 * span + 1)) - span) * 0.25f;
  }
  return t;
}

Tensor run_impl(const std::string& impl, const KernelDesc& desc, const std::vector<Tensor>& inputs, std::size_t out) {
  std::string why;
  auto k = kernel_registry().create(impl, desc, DeviceType::cpu, &why);
  EXPECT_NE(k, nullptr) << impl << ": " << why;
  if (!k) return Tensor();
  return to_f32(run_kernel(*k, desc, inputs, StepContext{})[out]);
}

void expect_same_bytes(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.nbytes(), got.nbytes()) << what;
  EXPECT_EQ(0, std::memcmp(want.raw(), got.raw(), want.nbytes())) << what;
}

TEST(OmpConvMaxPoolArgmax, MatchesTheReferenceOnRandomInputs) {
  for (const ConvPoolCase& c : kCases) {
    SCOPED_TRACE(trace(c));
    const KernelDesc d = fused_desc(c);
    expect_matches_reference(d, {random_tensor(d.inputs[0].shape, 51), random_tensor(d.inputs[1].shape, 52),
                                 random_tensor(d.inputs[2].shape, 53)},
                             1e-5f, 1e-5f);
  }
}

TEST(OmpConvMaxPoolArgmax, TiesAndValuesBitForBitAtBothTypes) {
  for (const ConvPoolCase& c : kCases) {
    SCOPED_TRACE(trace(c));
    const KernelDesc f32 = fused_desc(c);
    const std::vector<Tensor> inputs{quarters(f32.inputs[0].shape, 1, 4), quarters(f32.inputs[1].shape, 2, 2),
                                     quarters(f32.inputs[2].shape, 3, 2)};
    const Tensor want_y = run_impl("ref:" + f32.op, f32, inputs, 0), want_at = run_impl("ref:" + f32.op, f32, inputs, 1);
    std::int64_t ties = 0;  // windows whose maximum is shared: the first must win
    {
      const ConvPoolDescs parts = split_conv_pool(f32);
      const Tensor y1 = run_impl("ref:fused_conv2d", parts.conv, inputs, 0);
      const Window2d pg = checked_window(parts.pool);
      for (std::int64_t i = 0; i < want_y.numel(); ++i) {
        const std::int64_t o = i % pg.c, px = i / pg.c % pg.ow, py = i / pg.c / pg.ow % pg.oh, n = i / pg.c / pg.ow / pg.oh;
        int hits = 0;
        for (std::int64_t ph = 0; ph < pg.kh; ++ph) {
          for (std::int64_t pw = 0; pw < pg.kw; ++pw) {
            const std::int64_t r = py * pg.sh - pg.pad_top + ph, q = px * pg.sw - pg.pad_left + pw;
            if (r >= 0 && r < pg.h && q >= 0 && q < pg.w) hits += y1.data<float>()[((n * pg.h + r) * pg.w + q) * pg.c + o] == want_y.data<float>()[i];
          }
        }
        ties += hits > 1;
      }
    }
    EXPECT_GT(ties, 0) << "no tied window: the first-maximum rule is not exercised";
    for (DType dt : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(dtype_name(dt));
      const KernelDesc low = at_dtype(f32, dt);
      std::vector<Tensor> in;
      for (const Tensor& t : inputs) in.push_back(to_dtype(t, dt));
      expect_same_bytes(want_y, run_impl("omp:" + f32.op, low, in, 0), "y");
      expect_same_bytes(want_at, run_impl("omp:" + f32.op, low, in, 1), "argmax");
      if (dt == DType::bf16) {  // what the fusion replaces, at bfloat16
        const ConvPoolDescs parts = split_conv_pool(low);
        const SelectedKernel conv = kernel_registry().select(parts.conv, DeviceType::cpu);
        const Tensor y1 = run_kernel(*conv.kernel, parts.conv, in, StepContext{})[0];
        const SelectedKernel pool = kernel_registry().select(parts.pool, DeviceType::cpu);
        const std::vector<Tensor> unfused = run_kernel(*pool.kernel, parts.pool, {y1}, StepContext{});
        expect_same_bytes(to_f32(unfused[0]), run_impl("omp:" + f32.op, low, in, 0), "y against " + conv.impl_name + ", " + pool.impl_name);
        expect_same_bytes(unfused[1], run_impl("omp:" + f32.op, low, in, 1), "argmax against " + pool.impl_name);
      }
    }
  }
}

}  // namespace
}  // namespace nnfit::testing
