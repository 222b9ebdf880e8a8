// cuda-host cases of the training family (training_kernels.h): dropout (+grad) with and
// without a noise shape, bit for bit with the reference's mask; the four fused losses
// (+grad), from logits and from probabilities, with label smoothing and sample weights;
// the reductions (+grads), ties included; batch norm in its four forms.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

Tensor probs(const Shape& shape, std::uint64_t seed, bool normalize) {
  Tensor t = random_tensor(shape, seed, 0.01f, 1.0f);
  if (normalize) {
    const std::int64_t c = shape.dim(-1);
    float* p = t.data<float>();
    for (std::int64_t r = 0; r < t.numel() / c; ++r) {
      float s = 0.0f;
      for (std::int64_t j = 0; j < c; ++j) s += p[r * c + j];
      for (std::int64_t j = 0; j < c; ++j) p[r * c + j] /= s;
    }
  }
  return t;
}

void check_dropout(bool grad) {
  std::uint64_t seed = 400;
  StepContext ctx;
  ctx.seed = 1234;
  ctx.step = 5;
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{3, 5, 11}, Shape{20011}}) {
    for (double rate : {0.0, 0.25, 0.9}) {
      const Tensor x = random_tensor(s, seed++);
      for (DType dt : float_dtypes()) {
        if (grad) {
          Tensor mask = Tensor::zeros(s, DType::u8);
          for (std::int64_t i = 0; i < mask.numel(); ++i) mask.data<std::uint8_t>()[i] = (i * 7 + 3) % 5 != 0;
          expect_cuda_host_matches_reference(desc("dropout_grad", {{"rate", rate}}, {f32(s), {s, DType::u8}}, {f32(s)}),
                                             {x, mask}, dt, 0.0f, 0.0f, ctx);
        } else {
          // atol 0: the mask (a uint8 output, compared byte for byte) and y exactly.
          expect_cuda_host_matches_reference(
              desc("dropout", {{"rate", rate}, {"seed", std::int64_t{42}}}, {f32(s)}, {f32(s), {s, DType::u8}}), {x}, dt,
              0.0f, 0.0f, ctx);
        }
      }
    }
  }
  if (grad) return;
  const Shape s{6, 50, 8};
  const Tensor x = random_tensor(s, 450);
  for (const std::vector<std::int64_t>& noise : {std::vector<std::int64_t>{6, 1, 8}, std::vector<std::int64_t>{1, 1, 8}}) {
    expect_cuda_host_matches_reference(
        desc("dropout", {{"rate", 0.5}, {"seed", std::int64_t{7}}, {"noise_shape", noise}}, {f32(s)}, {f32(s), {s, DType::u8}}),
        {x}, DType::f32, 0.0f, 0.0f, ctx);
  }
  // A data-parallel rank's slice: the masks of rows 3.. of the global batch (Note [Random
  // draws by global row]), with and without a noise shape; 3 · 400 elements per row is not
  // a multiple of the 4-element draw groups' alignment for every shape.
  StepContext slice = ctx;
  slice.row_offset = 3;
  slice.rows = s[0];
  for (const std::vector<std::int64_t>& noise : {std::vector<std::int64_t>{}, std::vector<std::int64_t>{6, 1, 8}}) {
    Attrs a{{"rate", 0.5}, {"seed", std::int64_t{7}}};
    if (!noise.empty()) a.set("noise_shape", noise);
    expect_cuda_host_matches_reference(desc("dropout", a, {f32(s)}, {f32(s), {s, DType::u8}}), {x}, DType::f32, 0.0f, 0.0f, slice);
  }
  const Shape odd{5, 7};  // rows of 7: an offset inside a 4-element draw group
  slice.row_offset = 1;
  slice.rows = 5;
  expect_cuda_host_matches_reference(desc("dropout", {{"rate", 0.3}, {"seed", std::int64_t{7}}}, {f32(odd)}, {f32(odd), {odd, DType::u8}}),
                                     {random_tensor(odd, 451)}, DType::f32, 0.0f, 0.0f, slice);
}

void check_loss(bool grad) {
  const struct {
    std::string kind;
    Shape shape;
  } kCases[] = {{"sparse_categorical_crossentropy", Shape{1, 2}},  {"sparse_categorical_crossentropy", Shape{300, 13}},
                {"categorical_crossentropy", Shape{3, 5}},         {"categorical_crossentropy", Shape{301, 17}},
                {"binary_crossentropy", Shape{9}},                 {"binary_crossentropy", Shape{129, 33}},
                {"mean_squared_error", Shape{4}},                  {"mean_squared_error", Shape{64, 5, 5, 3}}};
  std::uint64_t seed = 100;
  for (const auto& c : kCases) {
    for (int from_logits : {0, 1}) {
      for (double smoothing : {0.0, 0.1}) {
        for (bool weighted : {false, true}) {
          if (smoothing > 0 && (c.kind == "mean_squared_error" || c.kind == "sparse_categorical_crossentropy")) continue;
          SCOPED_TRACE(c.kind + " " + c.shape.to_string() + " from_logits=" + std::to_string(from_logits) +
                       " smoothing=" + std::to_string(smoothing) + (weighted ? " weighted" : ""));
          const bool categorical = c.kind.find("categorical") != std::string::npos;
          const Tensor pred = from_logits || c.kind == "mean_squared_error" ? random_tensor(c.shape, seed++, -3.0f, 3.0f)
                                                                            : probs(c.shape, seed++, categorical);
          Tensor target;
          if (c.kind == "sparse_categorical_crossentropy") target = random_labels(c.shape[0], c.shape[1], seed++);
          else if (c.kind == "categorical_crossentropy") target = probs(c.shape, seed++, true);
          else target = random_tensor(c.shape, seed++, 0.0f, 1.0f);
          Attrs attrs{{"kind", c.kind}, {"from_logits", std::int64_t{from_logits}}};
          if (smoothing > 0) attrs.set("label_smoothing", smoothing);
          std::vector<Tensor> in{pred, target};
          std::vector<TensorDesc> ins{pred.desc(), target.desc()};
          Tensor dloss = Tensor::zeros(Shape{}, DType::f32);
          *dloss.data<float>() = 0.7f;
          if (grad) {
            in.push_back(dloss);
            ins.push_back(dloss.desc());
          }
          if (weighted) {
            in.push_back(random_tensor(Shape{c.shape[0]}, seed++, 0.0f, 2.0f));
            ins.push_back(in.back().desc());
          }
          const KernelDesc d = grad ? desc("loss_grad", attrs, ins, {pred.desc()}) : desc("loss", attrs, ins, {f32(Shape{})});
          expect_cuda_host_matches_reference(d, in, DType::f32, 1e-6f, 2e-5f);
        }
      }
    }
  }
}

void check_reduce(const std::string& op) {
  const struct {
    Shape x;
    std::vector<std::int64_t> axes;
  } kCases[] = {{Shape{2, 7, 3}, {1}}, {Shape{3, 5, 4, 6}, {1, 2}}, {Shape{3, 6, 5, 4}, {2, 3}}, {Shape{16, 7, 7, 64}, {1, 2}}};
  std::uint64_t seed = 90;
  for (const auto& c : kCases) {
    Tensor x = random_tensor(c.x, seed++);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 2.0f) / 2.0f;  // ties
    Shape y_shape = c.x;
    std::vector<std::int64_t> dims = c.x.dims();
    dims.erase(dims.begin() + c.axes.front(), dims.begin() + c.axes.back() + 1);
    const Shape y(dims);
    const Attrs attrs{{"axes", c.axes}};
    for (DType dt : float_dtypes()) {
      if (op == "reduce_mean" || op == "reduce_max") {
        expect_cuda_host_matches_reference(desc(op, attrs, {f32(c.x)}, {f32(y)}), {x}, dt);
      } else if (op == "reduce_mean_grad") {
        expect_cuda_host_matches_reference(desc(op, attrs, {f32(y)}, {f32(c.x)}), {random_tensor(y, seed++)}, dt);
      } else {
        const Tensor ymax = run_reference(desc("reduce_max", attrs, {f32(c.x)}, {f32(y)}), {to_f32(to_dtype(x, dt))});
        expect_cuda_host_matches_reference(desc(op, attrs, {f32(c.x), f32(y), f32(y)}, {f32(c.x)}),
                                           {x, ymax, random_tensor(y, seed++)}, dt);
      }
    }
  }
}

void check_batch_norm(const std::string& op) {
  std::uint64_t seed = 300;
  for (const Shape& s : {Shape{5, 3}, Shape{37, 129}, Shape{2, 3, 5, 7}, Shape{16, 9, 9, 33}}) {
    SCOPED_TRACE(s.to_string());
    const Shape c{s.dim(-1)};
    // An offset mean checks that neither kernel cancels catastrophically.
    const Tensor x = random_tensor(s, seed++, 2.0f, 5.0f), gamma = random_tensor(c, seed++, 0.5f, 1.5f);
    const Tensor beta = random_tensor(c, seed++), dy = random_tensor(s, seed++);
    const Tensor mean = random_tensor(c, seed++, 3.0f, 4.0f), var = random_tensor(c, seed++, 0.5f, 1.0f);
    const Attrs eps{{"epsilon", 1e-3}};
    for (DType dt : float_dtypes()) {
      if (op == "batch_norm_train") {
        expect_cuda_host_matches_reference(desc(op, eps, {f32(s), f32(c), f32(c)}, {f32(s), f32(c), f32(c)}), {x, gamma, beta}, dt,
                                           1e-4f, 1e-4f);
      } else if (op == "batch_norm_infer") {
        expect_cuda_host_matches_reference(desc(op, eps, {f32(s), f32(c), f32(c), f32(c), f32(c)}, {f32(s)}),
                                           {x, gamma, beta, mean, var}, dt, 1e-4f, 1e-4f);
      } else {
        expect_cuda_host_matches_reference(desc(op, eps, {f32(s), f32(s), f32(c), f32(c), f32(c)}, {f32(s), f32(c), f32(c)}),
                                           {x, dy, gamma, mean, var}, dt, 1e-3f, 1e-4f);
      }
    }
  }
}

// Rows of a Transformer's width and odd ones, each mode; the gradient's statistics are
// computed here in double, as the OpenMP test does.
void check_layer_norm(const std::string& op) {
  std::uint64_t seed = 140;
  for (const Shape& x : {Shape{3, 5}, Shape{7, 2, 33}, Shape{64, 8, 64}}) {
    for (const char* mode : {"layer", "rms_scaling", "rms"}) {
      SCOPED_TRACE(x.to_string() + " " + mode);
      const Shape c{x.dim(-1)};
      const Shape rows(std::vector<std::int64_t>(x.dims().begin(), x.dims().end() - 1));
      const Attrs a{{"epsilon", 1e-6}, {"mode", std::string(mode)}};
      const Tensor in = random_tensor(x, seed++, -3.0f, 5.0f), gamma = random_tensor(c, seed++), beta = random_tensor(c, seed++);
      for (DType dt : float_dtypes()) {
        if (op == "layer_norm") {
          expect_cuda_host_matches_reference(desc(op, a, {f32(x), f32(c), f32(c)}, {f32(x), f32(rows), f32(rows)}), {in, gamma, beta},
                                             dt, 2e-5f, 2e-5f);
          continue;
        }
        const Tensor xr = to_f32(to_dtype(in, dt));
        const bool zero_mean = std::string(mode) == "rms";
        Tensor mean = Tensor::zeros(rows), rstd = Tensor::zeros(rows);
        for (std::int64_t r = 0; r < rows.numel(); ++r) {
          double s = 0.0, v = 0.0;
          for (std::int64_t j = 0; j < c[0]; ++j) s += xr.data<float>()[r * c[0] + j];
          s = zero_mean ? 0.0 : s / static_cast<double>(c[0]);
          for (std::int64_t j = 0; j < c[0]; ++j) v += std::pow(xr.data<float>()[r * c[0] + j] - s, 2);
          mean.data<float>()[r] = static_cast<float>(s);
          rstd.data<float>()[r] = static_cast<float>(1.0 / std::sqrt(v / static_cast<double>(c[0]) + 1e-6));
        }
        const Tensor dy = random_tensor(x, seed++);
        expect_cuda_host_matches_reference(desc(op, a, {f32(x), f32(x), f32(c), f32(rows), f32(rows)}, {f32(x), f32(c), f32(c)}),
                                           {in, dy, gamma, mean, rstd}, dt, 2e-4f, 1e-4f);
      }
    }
  }
}

}  // namespace

std::vector<OpCase> training_cases() {
  std::vector<OpCase> cases = {
      {"dropout", [] { check_dropout(false); }},
      {"dropout_grad", [] { check_dropout(true); }},
      {"loss", [] { check_loss(false); }},
      {"loss_grad", [] { check_loss(true); }},
  };
  for (const char* op : {"reduce_mean", "reduce_max", "reduce_mean_grad", "reduce_max_grad"}) {
    cases.push_back({op, [op] { check_reduce(op); }});
  }
  for (const char* op : {"batch_norm_train", "batch_norm_grad", "batch_norm_infer", "batch_norm_infer_grad"}) {
    cases.push_back({op, [op] { check_batch_norm(op); }});
  }
  for (const char* op : {"layer_norm", "layer_norm_grad"}) cases.push_back({op, [op] { check_layer_norm(op); }});
  return cases;
}

}  // namespace nnfit::testing
