// cuda-host cases of resize_kernels.h: resize and resize_grad in every method, antialias
// on and off, up and down with odd sizes (the taps computed into the workspace by one
// index per output coordinate, the gradient through the transposed taps gathered there).
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

void check_resize(bool grad) {
  std::uint64_t seed = 6000;
  const struct {
    Shape x;
    std::int64_t oh, ow;
  } kCases[] = {{Shape{1, 1, 1, 1}, 3, 2}, {Shape{2, 5, 7, 3}, 9, 4}, {Shape{3, 8, 6, 2}, 3, 11}};
  for (const auto& c : kCases) {
    for (const char* method : {"nearest", "bilinear", "bicubic", "area", "lanczos3", "lanczos5"}) {
      for (std::int64_t antialias : {0, 1}) {
        SCOPED_TRACE(c.x.to_string() + " -> " + std::to_string(c.oh) + "x" + std::to_string(c.ow) + " " + method +
                     (antialias ? " antialias" : ""));
        const TensorDesc y{Shape{c.x[0], c.oh, c.ow, c.x[3]}, DType::f32};
        const TensorDesc xd{c.x, DType::f32};
        Attrs a;
        a.set("method", std::string(method));
        a.set("antialias", antialias);
        for (DType dt : float_dtypes()) {
          if (grad) {
            a.set("input_shape", c.x.dims());
            const Tensor dy = random_tensor(y.shape, seed++);
            expect_cuda_host_matches_reference(desc("resize_grad", a, {y}, {xd}), {dy}, dt, 1e-6f, 1e-5f);
          } else {
            a.set("size", std::vector<std::int64_t>{c.oh, c.ow});
            const Tensor x = random_tensor(c.x, seed++);
            expect_cuda_host_matches_reference(desc("resize", a, {xd}, {y}), {x}, dt, 1e-6f, 1e-5f);
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<OpCase> resize_cases() {
  return {{"resize", [] { check_resize(false); }}, {"resize_grad", [] { check_resize(true); }}};
}

}  // namespace nnfit::testing
