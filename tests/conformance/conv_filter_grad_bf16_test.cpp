// omp:conv2d_backprop_filter, the bfloat16 filter gradient over one input channel
// (omp_conv_filter_grad_bf16.cpp): against the float32 reference on the same rounded
// inputs at every kind of window it takes (padding, strides, dilation, output channels in
// whole vectors, across chunks and with a scalar tail, images of one band and of several,
// batches that split unevenly into slices), writing float32 and bfloat16; the same bits
// on one thread and on two; and the descs it leaves to oneDNN.
#include <omp.h>

#include <cstring>

#include "backend/cpu/onednn_kernels.h"
#include "low_precision.h"

namespace nnfit::testing {
namespace {

using Ints = std::vector<std::int64_t>;

struct FilterCase {
  std::int64_t n, h, w, k, o, s, d;
  const char* padding;
};

std::string trace(const FilterCase& c) {
  return "n=" + std::to_string(c.n) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + " k=" +
         std::to_string(c.k) + " o=" + std::to_string(c.o) + " s=" + std::to_string(c.s) + " d=" + std::to_string(c.d) +
         " " + c.padding;
}

// The float32 desc of the case's filter gradient (x [n,h,w,1], dy, dw [k,k,1,o]).
KernelDesc filter_desc(const FilterCase& c) {
  const std::int64_t span = (c.k - 1) * c.d + 1;
  const bool same = std::string(c.padding) == "same";
  const std::int64_t oh = same ? (c.h + c.s - 1) / c.s : (c.h - span) / c.s + 1;
  const std::int64_t ow = same ? (c.w + c.s - 1) / c.s : (c.w - span) / c.s + 1;
  Attrs a{{"strides", Ints{c.s, c.s}}, {"padding", std::string(c.padding)}, {"dilations", Ints{c.d, c.d}}};
  a.set("filter_shape", Ints{c.k, c.k, 1, c.o});
  return f32_desc("conv2d_backprop_filter", a, {{c.n, c.h, c.w, 1}, {c.n, oh, ow, c.o}}, {{c.k, c.k, 1, c.o}});
}

const FilterCase kCases[] = {
    {128, 28, 28, 3, 32, 1, 1, "valid"},  // the Fashion-MNIST convnet's first layer
    {3, 9, 8, 3, 16, 1, 1, "same"},       // one vector, padding on every side
    {2, 11, 7, 5, 48, 2, 1, "same"},      // stride 2, three vectors
    {2, 10, 10, 3, 64, 1, 2, "valid"},    // dilation 2, a whole chunk
    {2, 9, 9, 3, 80, 1, 1, "same"},       // a chunk and a vector
    {5, 7, 6, 2, 20, 1, 1, "valid"},      // a vector and a scalar tail (second chunk of 4)
    {1, 6, 6, 3, 5, 2, 1, "same"},        // scalar only, one image
    {70, 40, 40, 3, 32, 1, 1, "valid"},   // several bands per image; 70 images in 64 slices
    {3, 12, 9, 3, 48, 1, 1, "valid"},     // the valid 3x3 path: a pair of vectors and one
};

TEST(OmpConvFilterGradBf16, MatchesTheReferenceOnRoundedInputs) {
  for (const FilterCase& c : kCases) {
    SCOPED_TRACE(trace(c));
    const KernelDesc f32 = filter_desc(c);
    const std::vector<Tensor> inputs{random_tensor(f32.inputs[0].shape, 41), random_tensor(f32.inputs[1].shape, 42)};
    for (bool f32_dw : {true, false}) {
      SCOPED_TRACE(f32_dw ? "dw float32" : "dw bfloat16");
      std::string why;
      ASSERT_NE(kernel_registry().create("omp:conv2d_backprop_filter", at_dtype(f32, DType::bf16, f32_dw),
                                         DeviceType::cpu, &why),
                nullptr)
          << why;
      EXPECT_GT(expect_low_precision_matches_reference(f32, inputs, DType::bf16, {}, f32_dw), 0);
    }
  }
}

TEST(OmpConvFilterGradBf16, SameBitsOnOneThreadAndOnTwo) {
  const FilterCase c{37, 28, 28, 3, 32, 1, 1, "valid"};
  const KernelDesc low = at_dtype(filter_desc(c), DType::bf16, true);
  const std::vector<Tensor> inputs{to_dtype(random_tensor(low.inputs[0].shape, 43), DType::bf16),
                                   to_dtype(random_tensor(low.inputs[1].shape, 44), DType::bf16)};
  const int was = omp_get_max_threads();
  std::vector<Tensor> dw;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::string why;
    auto k = kernel_registry().create("omp:conv2d_backprop_filter", low, DeviceType::cpu, &why);
    ASSERT_NE(k, nullptr) << why;
    dw.push_back(run_kernel(*k, low, inputs, StepContext{})[0]);
  }
  omp_set_num_threads(was);
  EXPECT_EQ(0, std::memcmp(dw[0].raw(), dw[1].raw(), dw[0].nbytes()));
}

TEST(OmpConvFilterGradBf16, LeavesEveryOtherDescToOneDnn) {
  std::string why;
  const FilterCase one{2, 9, 9, 3, 16, 1, 1, "valid"};
  EXPECT_EQ(make_omp_conv2d_backprop_filter_bf16(filter_desc(one), &why), nullptr);  // float32
  EXPECT_NE(why.find("bfloat16"), std::string::npos) << why;
  Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}};
  a.set("filter_shape", Ints{3, 3, 3, 16});
  const KernelDesc rgb = at_dtype(
      f32_desc("conv2d_backprop_filter", a, {{2, 9, 9, 3}, {2, 7, 7, 16}}, {{3, 3, 3, 16}}), DType::bf16, true);
  EXPECT_EQ(make_omp_conv2d_backprop_filter_bf16(rgb, &why), nullptr);
  EXPECT_NE(why.find("3 input channels"), std::string::npos) << why;
  // The registry then picks oneDNN's for it.
  EXPECT_EQ(kernel_registry().select(rgb, DeviceType::cpu).impl_name, "onednn:conv2d_backprop_filter");
}

}  // namespace
}  // namespace nnfit::testing
