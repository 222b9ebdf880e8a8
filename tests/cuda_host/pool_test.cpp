// cuda-host cases of the pooling family (pool_kernels.h): max and average pooling, 2-D and
// 3-D, forward and gradient, at every floating dtype: both paddings, overlapping windows
// (stride < pool), gaps (stride > pool), clipped same-padding windows, ties (rounded
// inputs) and the fused relu gradient (inputs clamped at 0).
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

using Ints = std::vector<std::int64_t>;

struct Case {
  Shape x;  // NHWC or NDHWC
  Ints k, s;
  std::string padding;
};

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, const std::string& padding) {
  return padding == "same" ? (in + s - 1) / s : (in - k) / s + 1;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {Shape{2, 8, 8, 3}, {2, 2}, {2, 2}, "valid"},    {Shape{3, 9, 7, 5}, {3, 3}, {2, 2}, "same"},
      {Shape{1, 6, 5, 2}, {3, 3}, {1, 1}, "same"},     {Shape{2, 28, 28, 8}, {2, 2}, {2, 2}, "valid"},
      {Shape{1, 9, 9, 4}, {2, 2}, {3, 3}, "valid"},    {Shape{2, 7, 9, 3}, {3, 2}, {2, 1}, "same"},
      {Shape{2, 5, 6, 7, 3}, {2, 3, 2}, {2, 1, 2}, "same"}, {Shape{1, 4, 6, 5, 2}, {2, 2, 2}, {1, 2, 2}, "valid"},
  };
  return kCases;
}

KernelDesc desc(const std::string& op, const Case& c, std::vector<Shape> ins, Shape out, bool relu = false) {
  Attrs a{{"pool_size", c.k}, {"strides", c.s}, {"padding", c.padding}};
  if (op.find("avg") == 0 && op.find("_grad") != std::string::npos) a.set("input_shape", c.x.dims());
  if (relu) a.set("relu", std::int64_t{1});
  return f32_desc(op, a, std::move(ins), {std::move(out)});
}

void check(const std::string& op) {
  const bool three = op.find("3d") != std::string::npos;
  std::uint64_t seed = 900;
  for (const Case& c : cases()) {
    if ((c.x.rank() == 5) != three) continue;
    SCOPED_TRACE(c.x.to_string() + " " + c.padding);
    const int spatial = static_cast<int>(c.x.rank()) - 2;
    Ints ydims{c.x[0]};
    for (int a = 0; a < spatial; ++a) ydims.push_back(out_size(c.x[1 + a], c.k[a], c.s[a], c.padding));
    ydims.push_back(c.x.dim(-1));
    const Shape y(ydims);
    const std::string fwd = op.substr(0, op.find("_grad"));
    for (bool ties : {false, true}) {
      Tensor x = random_tensor(c.x, seed++, -2.0f, 2.0f);
      if (ties) {
        for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i]);
      }
      for (DType dt : float_dtypes()) {
        if (op == fwd) {
          expect_cuda_host_matches_reference(desc(op, c, {c.x}, y), {x}, dt, 1e-6f, 1e-5f);
        } else if (op.rfind("avg", 0) == 0) {
          expect_cuda_host_matches_reference(desc(op, c, {y}, c.x), {random_tensor(y, seed++)}, dt, 1e-6f, 1e-5f);
        } else {
          for (bool relu : {false, true}) {
            Tensor xr = to_f32(to_dtype(x, dt));  // the argmax as the kernel sees it
            if (relu) {
              for (std::int64_t i = 0; i < xr.numel(); ++i) xr.data<float>()[i] = std::max(0.0f, xr.data<float>()[i]);
            }
            const Tensor yv = run_reference(desc(fwd, c, {c.x}, y), {xr});
            expect_cuda_host_matches_reference(desc(op, c, {c.x, y, y}, c.x, relu), {xr, yv, random_tensor(y, seed++)}, dt,
                                               1e-6f, 1e-5f);
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<OpCase> pool_cases() {
  std::vector<OpCase> out;
  for (const char* op : {"max_pool2d", "max_pool2d_grad", "avg_pool2d", "avg_pool2d_grad", "max_pool3d", "max_pool3d_grad",
                         "avg_pool3d", "avg_pool3d_grad"}) {
    out.push_back({op, [op] { check(op); }});
  }
  return out;
}

}  // namespace nnfit::testing
