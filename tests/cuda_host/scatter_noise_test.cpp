// cuda-host cases of scatter_noise_kernels.h: noise of each kind at several steps (the
// device draws the reference's numbers: float32 within rounding), and gather_grad with
// int32 and int64 ids, repeated ids, unused table rows and id counts that are not powers
// of two: at float32 bit for bit, since each row's sum runs in the reference's order.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

void check_noise() {
  std::uint64_t seed = 4000;
  for (const char* kind : {"gaussian_add", "uniform_add", "truncated_normal_add", "gamma_add", "gaussian_mul", "alpha_dropout"}) {
    for (const Shape& s : {Shape{1}, Shape{3, 257}, Shape{8, 6, 6, 4}}) {
      for (std::int64_t step : {0, 7}) {
        SCOPED_TRACE(std::string(kind) + " " + s.to_string() + " step " + std::to_string(step));
        const Attrs a{{"kind", std::string(kind)}, {"value", 0.3}, {"rate", 0.7}, {"seed", std::int64_t{11}}};
        const Tensor x = random_tensor(s, seed++);
        std::vector<TensorDesc> outs{f32(s)};
        if (std::string(kind) == "gaussian_mul" || std::string(kind) == "alpha_dropout") outs.push_back(f32(s));
        StepContext ctx;
        ctx.seed = 99;
        ctx.step = step;
        for (DType dt : float_dtypes()) {
          expect_cuda_host_matches_reference(desc("noise", a, {f32(s)}, outs), {x}, dt, 1e-6f, 1e-6f, ctx);
        }
        // A data-parallel rank's slice: the draws of rows 5.. of the global batch.
        ctx.row_offset = 5;
        ctx.rows = s[0];
        expect_cuda_host_matches_reference(desc("noise", a, {f32(s)}, outs), {x}, DType::f32, 1e-6f, 1e-6f, ctx);
      }
    }
  }
}

void check_gather_grad() {
  std::uint64_t seed = 4100;
  struct Case {
    Shape ids;
    std::int64_t rows, width;
  };
  for (const Case& k : {Case{Shape{1}, 3, 4}, Case{Shape{6, 7}, 50, 17}, Case{Shape{10, 100}, 37, 8}, Case{Shape{5, 3}, 1000, 2}}) {
    for (DType ids_dtype : {DType::i32, DType::i64}) {
      SCOPED_TRACE(k.ids.to_string() + " rows " + std::to_string(k.rows) + " " + std::string(dtype_name(ids_dtype)));
      Tensor ids = Tensor::zeros(k.ids, ids_dtype);
      for (std::int64_t i = 0; i < ids.numel(); ++i) {
        // Skewed: low rows repeat often (as padding id 0 does), high rows rarely or never.
        const std::int64_t v = ((i * 7919) % 97) * ((i * 31 + 5) % 11) % k.rows;
        if (ids_dtype == DType::i32) ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(v);
        else ids.data<std::int64_t>()[i] = v;
      }
      Shape dy_shape = k.ids;
      dy_shape = Shape([&] {
        std::vector<std::int64_t> d(k.ids.dims().begin(), k.ids.dims().end());
        d.push_back(k.width);
        return d;
      }());
      const Tensor dy = random_tensor(dy_shape, seed++);
      for (DType dt : float_dtypes()) {
        expect_cuda_host_matches_reference(desc("gather_grad", {}, {ids.desc(), f32(dy_shape)}, {f32(Shape{k.rows, k.width})}),
                                           {ids, dy}, dt, 0.0f, 0.0f);
      }
    }
  }
}

}  // namespace

std::vector<OpCase> scatter_noise_cases() { return {{"noise", check_noise}, {"gather_grad", check_gather_grad}}; }

}  // namespace nnfit::testing
