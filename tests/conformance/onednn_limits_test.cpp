// Note [oneDNN's 32-bit dimensions]: every oneDNN kernel declines, with its reason, a desc
// whose dimension is past INT32_MAX (a batch of 2^32 made oneDNN divide by zero inside
// primitive-descriptor creation), so the reference kernels take it; nothing is allocated.
#include <gtest/gtest.h>

#include "backend/cpu/onednn_kernels.h"
#include "conformance/harness.h"

namespace nnfit {
namespace {

using Ints = std::vector<std::int64_t>;
constexpr std::int64_t kBatch = std::int64_t{1} << 32;

void expect_declined(std::unique_ptr<Kernel> (*factory)(const KernelDesc&, std::string*), const KernelDesc& desc) {
  std::string why;
  EXPECT_EQ(factory(desc, &why), nullptr) << desc.op;
  EXPECT_NE(why.find("a dimension of 4294967296"), std::string::npos) << desc.op << ": " << why;
  EXPECT_NE(why.find("past oneDNN's 32-bit limit"), std::string::npos) << desc.op << ": " << why;
}

TEST(OnednnLimits, KernelsDeclineDimensionsPastInt32) {
  expect_declined(make_onednn_matmul, testing::f32_desc("matmul", {}, {{kBatch, 784}, {784, 64}}, {{kBatch, 64}}));
  expect_declined(make_onednn_conv2d,
                  testing::f32_desc("conv2d", Attrs{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}},
                                    {{kBatch, 28, 28, 1}, {3, 3, 1, 32}}, {{kBatch, 26, 26, 32}}));
  expect_declined(make_onednn_activation,
                  testing::f32_desc("activation", Attrs{{"kind", std::string("relu")}}, {{kBatch, 8}}, {{kBatch, 8}}));
  // The second multiple of 2^32 and a units value of 2^32 in a weight are declined alike.
  std::string why;
  EXPECT_EQ(make_onednn_matmul(testing::f32_desc("matmul", {}, {{8, 784}, {784, kBatch}}, {{8, kBatch}}), &why), nullptr);
  EXPECT_NE(why.find("past oneDNN's 32-bit limit"), std::string::npos) << why;
}

TEST(OnednnLimits, OrdinaryDimensionsStillReachOnednn) {
  const KernelDesc d = testing::f32_desc("matmul", {}, {{2, 3}, {3, 4}}, {{2, 4}});
  std::string why;
  EXPECT_NE(make_onednn_matmul(d, &why), nullptr) << why;
}

}  // namespace
}  // namespace nnfit
