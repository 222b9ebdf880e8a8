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

}  // namespace nnfit
