// The finite-difference gradient check shared by tests/graph's gradient tests: for an op
// case, the gradient autodiff builds from the op's rule (run through the kernels the
// planner selects) against central differences of L = mean((op(inputs) - target)^2).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"

namespace nnfit {

inline Tensor random(const Shape& s, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = Tensor::zeros(s);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

struct Case {
  std::string op;
  Attrs attrs;
  std::vector<Tensor> inputs;       // f32 inputs are differentiated; others are constants
  bool output_is_loss = false;      // the op's first output is already a scalar loss
  int num_differentiated = -1;      // only the first N inputs (-1: every f32 input)
  int output = 0;                   // the output the loss reads
  std::vector<std::size_t> constants;  // f32 inputs that are not differentiated (masks)
};

inline bool differentiated(const Case& c, std::size_t i) {
  if (std::find(c.constants.begin(), c.constants.end(), i) != c.constants.end()) return false;
  return c.inputs[i].dtype() == DType::f32 && (c.num_differentiated < 0 || static_cast<int>(i) < c.num_differentiated);
}

inline void check(const Case& c, float atol = 3e-3f, float rtol = 3e-2f) {
  SCOPED_TRACE(c.op + " " + c.attrs.to_string());
  Graph g;
  std::vector<int> ins, wrt;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    int v = g.add_variable("in" + std::to_string(i), c.inputs[i]);
    ins.push_back(v);
    if (differentiated(c, i)) wrt.push_back(v);
  }
  int out = g.add_node(c.op, ins, c.attrs, "op")[static_cast<std::size_t>(c.output)];
  int loss = out;
  if (!c.output_is_loss) {
    Tensor target = random(g.desc(out).shape, 99);
    int t = g.add_variable("target", target);
    Attrs la;
    la.set("kind", std::string("mean_squared_error"));
    la.set("from_logits", std::int64_t{0});
    loss = g.add("loss", {out, t}, la, "mse");
  }
  Tensor one = Tensor::zeros(Shape{});
  one.data<float>()[0] = 1.0f;
  std::vector<int> grads = gradients(g, loss, g.add_variable("one", one), wrt);
  PlanOptions po;
  po.keep = grads;
  po.keep.push_back(loss);
  Program p = plan(std::move(g), po);
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(p.arena_bytes(), 1))}, DType::u8);
  p.bind(arena.raw());
  StepContext ctx;
  ctx.seed = 7;
  auto eval = [&] {
    p.run(ctx);
    return static_cast<double>(*static_cast<const float*>(p.data(loss)));
  };
  eval();
  std::vector<Tensor> analytic;
  for (int gv : grads) {
    ASSERT_GE(gv, 0) << "no gradient built";
    Tensor a = Tensor::zeros(p.graph().desc(gv).shape);
    std::memcpy(a.raw(), p.data(gv), a.nbytes());
    analytic.push_back(a);
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (!differentiated(c, i)) continue;
    float* x = c.inputs[i].data<float>();
    const float* a = analytic[k++].data<float>();
    std::int64_t n = c.inputs[i].numel();
    std::int64_t stride = std::max<std::int64_t>(1, n / 40);  // sample about 40 elements
    for (std::int64_t j = 0; j < n; j += stride) {
      const float h = 1e-2f;
      float saved = x[j];
      x[j] = saved + h;
      double up = eval();
      x[j] = saved - h;
      double down = eval();
      x[j] = saved;
      double numeric = (up - down) / (2.0 * h);
      EXPECT_NEAR(a[j], numeric, atol + rtol * std::fabs(numeric)) << "input " << i << " element " << j;
    }
  }
}

// A float32 tensor's values rounded to `dtype` (bfloat16 or float16), kept as float32.
inline Tensor rounded_to(const Tensor& t, DType dtype) {
  Tensor out = t.clone();
  if (t.dtype() != DType::f32) return out;
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    float& v = out.data<float>()[i];
    v = dtype == DType::bf16 ? bf16_to_float(float_to_bf16(v)) : f16_to_float(float_to_f16(v));
  }
  return out;
}

// The case at a low precision: its float32 inputs rounded to `dtype` and cast to it, the op
// computing in `dtype` (Note [Compute dtype]), its output cast back to float32 for the loss.
// Autodiff's gradients through that graph (the op's backward kernels in `dtype`, the casts'
// gradients) against the float32 graph's on the same rounded inputs, which check() holds
// against central differences: within tol of the largest float32 gradient. (Central
// differences in bfloat16 itself would drown in its rounding.)
inline void check_low_precision(const Case& c, DType dtype, float tol) {
  SCOPED_TRACE(c.op + " " + c.attrs.to_string() + " at " + std::string(dtype_name(dtype)));
  auto gradients_at = [&](bool low) {
    Graph g;
    std::vector<int> ins, wrt;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      const bool floating = c.inputs[i].dtype() == DType::f32;
      int v = g.add_variable("in" + std::to_string(i), floating ? rounded_to(c.inputs[i], dtype) : c.inputs[i]);
      if (differentiated(c, i)) wrt.push_back(v);
      if (low && floating) v = g.add("cast", {v}, {{"dtype", std::string(dtype_name(dtype))}}, "cast" + std::to_string(i));
      ins.push_back(v);
    }
    int out = g.add_node(c.op, ins, c.attrs, "op")[static_cast<std::size_t>(c.output)];
    if (low && is_low_precision(g.desc(out).dtype)) out = g.add("cast", {out}, {{"dtype", std::string("float32")}}, "back");
    int loss = out;
    if (!c.output_is_loss) {
      int t = g.add_variable("target", random(g.desc(out).shape, 99));
      loss = g.add("loss", {out, t}, {{"kind", std::string("mean_squared_error")}, {"from_logits", std::int64_t{0}}}, "mse");
    }
    Tensor one = Tensor::zeros(Shape{});
    one.data<float>()[0] = 1.0f;
    std::vector<int> grads = gradients(g, loss, g.add_variable("one", one), wrt);
    PlanOptions po;
    po.keep = grads;
    Program p = plan(std::move(g), po);
    HostAllocator alloc;
    Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(p.arena_bytes(), 1))}, DType::u8);
    p.bind(arena.raw());
    StepContext ctx;
    ctx.seed = 7;
    p.run(ctx);
    std::vector<Tensor> out_grads;
    for (int gv : grads) {
      EXPECT_EQ(p.graph().desc(gv).dtype, DType::f32) << "a float32 variable's gradient";
      Tensor a = Tensor::zeros(p.graph().desc(gv).shape);
      std::memcpy(a.raw(), p.data(gv), a.nbytes());
      out_grads.push_back(a);
    }
    return out_grads;
  };
  const std::vector<Tensor> want = gradients_at(false), got = gradients_at(true);
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    float scale = 1e-6f;
    for (std::int64_t j = 0; j < want[k].numel(); ++j) scale = std::max(scale, std::fabs(want[k].data<float>()[j]));
    std::int64_t bad = 0;
    for (std::int64_t j = 0; j < want[k].numel(); ++j) {
      const float w = want[k].data<float>()[j], a = got[k].data<float>()[j];
      if (!(std::fabs(w - a) <= tol * scale) && bad++ < 3) {
        ADD_FAILURE() << "gradient " << k << " element " << j << ": float32 " << w << ", low precision " << a;
      }
    }
    EXPECT_EQ(bad, 0) << "gradient " << k << ": " << bad << " of " << want[k].numel() << " elements beyond " << tol
                      << " of the largest (" << scale << ")";
  }
}

}  // namespace nnfit
