// cuda-host cases of the layout family (layout_kernels.h): the data-movement ops bit for
// bit (atol 0) at every floating dtype on shapes of rank 1 to 4, and softmax / log_softmax
// with their gradients within float32 tolerance.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

KernelDesc desc(const std::string& op, Attrs attrs, const std::vector<Tensor>& in, std::vector<Shape> outs) {
  KernelDesc d{op, std::move(attrs), {}, {}, "test/" + op};
  for (const Tensor& t : in) d.inputs.push_back(t.desc());
  for (Shape& s : outs) d.outputs.push_back({std::move(s), DType::f32});
  return d;
}

void exact(const KernelDesc& d, const std::vector<Tensor>& in) {
  for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(d, in, dt, 0.0f, 0.0f);
}

const std::vector<Shape> kShapes = {Shape{1}, Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{2, 9, 11, 3}, Shape{4, 33, 35, 16}};

// pad, crop, transpose, repeat or repeat_grad on every shape (the OpenMP test's cases).
void check_shape_op(const std::string& op) {
  std::uint64_t seed = 500;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(s.to_string());
    const Tensor x = random_tensor(s, seed++);
    const std::int64_t r = s.rank();
    std::vector<std::int64_t> before(static_cast<std::size_t>(r)), after(before), begin(before), small(before), padded(before);
    for (std::int64_t d = 0; d < r; ++d) {
      const auto u = static_cast<std::size_t>(d);
      before[u] = d % 2;
      after[u] = (d + 1) % 3;
      padded[u] = s[d] + before[u] + after[u];
      begin[u] = s[d] > 2 ? 1 : 0;
      small[u] = s[d] - begin[u] - (s[d] > 2 ? 1 : 0);
    }
    if (op == "pad") exact(desc("pad", {{"before", before}, {"after", after}, {"value", 0.5}}, {x}, {Shape(padded)}), {x});
    if (op == "crop") exact(desc("crop", {{"begin", begin}, {"shape", small}}, {x}, {Shape(small)}), {x});
    if (op == "transpose") {
      std::vector<std::int64_t> reversed, rotated, ydims, zdims;
      for (std::int64_t d = r - 1; d >= 0; --d) reversed.push_back(d);
      for (std::int64_t d = 0; d < r; ++d) rotated.push_back((d + 1) % r);
      for (std::int64_t p : reversed) ydims.push_back(s[p]);
      for (std::int64_t p : rotated) zdims.push_back(s[p]);
      exact(desc("transpose", {{"perm", reversed}}, {x}, {Shape(ydims)}), {x});
      exact(desc("transpose", {{"perm", rotated}}, {x}, {Shape(zdims)}), {x});
    }
    for (std::int64_t axis = 0; axis < r && (op == "repeat" || op == "repeat_grad"); ++axis) {
      std::vector<std::int64_t> big = s.dims();
      big[static_cast<std::size_t>(axis)] *= 3;
      const Attrs a{{"axis", axis}, {"repeats", std::int64_t{3}}};
      if (op == "repeat") {
        exact(desc("repeat", a, {x}, {Shape(big)}), {x});
      } else {
        const Tensor dy = random_tensor(Shape(big), seed++);
        for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(desc("repeat_grad", a, {dy}, {s}), {dy}, dt);
      }
    }
  }
}

void check_concat_slice(const std::string& op) {
  std::uint64_t seed = 600;
  for (const Shape& s : {Shape{1}, Shape{5, 3}, Shape{4, 7, 9}, Shape{16, 20, 30}}) {
    for (std::int64_t axis = 0; axis < s.rank(); ++axis) {
      SCOPED_TRACE(s.to_string() + " axis " + std::to_string(axis));
      std::vector<Tensor> xs;
      std::vector<std::int64_t> out = s.dims();
      out[static_cast<std::size_t>(axis)] = 0;
      for (std::int64_t extra : {0, 2, 1}) {
        std::vector<std::int64_t> dims = s.dims();
        dims[static_cast<std::size_t>(axis)] += extra;
        xs.push_back(random_tensor(Shape(dims), seed++));
        out[static_cast<std::size_t>(axis)] += dims[static_cast<std::size_t>(axis)];
      }
      if (op == "concat") {
        exact(desc("concat", {{"axis", axis}}, xs, {Shape(out)}), xs);
        exact(desc("concat", {{"axis", axis}}, {xs[1]}, {xs[1].shape()}), {xs[1]});
        continue;
      }
      const std::int64_t len = s[axis], begin = len / 3, size = len - begin - len / 4;
      std::vector<std::int64_t> sliced = s.dims();
      sliced[static_cast<std::size_t>(axis)] = size;
      exact(desc("slice", {{"axis", axis}, {"begin", begin}, {"size", size}}, {xs[0]}, {Shape(sliced)}), {xs[0]});
    }
  }
}

void check_softmax(const std::string& op) {
  std::uint64_t seed = 800;
  for (const Shape& s : {Shape{1}, Shape{7, 10}, Shape{3, 4, 129}, Shape{300, 3}}) {
    const Tensor x = random_tensor(s, seed++, -5.0f, 5.0f);
    for (DType dt : float_dtypes()) {
      if (op == "softmax" || op == "log_softmax") {
        expect_cuda_host_matches_reference(desc(op, {}, {x}, {s}), {x}, dt, 1e-6f, 2e-5f);
        continue;
      }
      // The gradients read the forward output: compute it with the reference.
      const std::string fwd = op == "softmax_grad" ? "softmax" : "log_softmax";
      const Tensor y = run_reference(desc(fwd, {}, {x}, {s}), {x});
      const Tensor dy = random_tensor(s, seed++);
      expect_cuda_host_matches_reference(desc(op, {}, {y, dy}, {s}), {y, dy}, dt, 1e-6f, 2e-5f);
    }
  }
}

}  // namespace

std::vector<OpCase> layout_cases() {
  std::vector<OpCase> cases;
  for (const char* op : {"pad", "crop", "transpose", "repeat", "repeat_grad"}) cases.push_back({op, [op] { check_shape_op(op); }});
  for (const char* op : {"concat", "slice"}) cases.push_back({op, [op] { check_concat_slice(op); }});
  for (const char* op : {"softmax", "softmax_grad", "log_softmax", "log_softmax_grad"}) {
    cases.push_back({op, [op] { check_softmax(op); }});
  }
  return cases;
}

}  // namespace nnfit::testing
