// The recurrent scan's conformance cases, shared by the OpenMP/oneDNN test
// (conformance/rnn_ops_test.cpp) and the CUDA host-run test (cuda_host/rnn_test.cpp): every
// cell (SimpleRNN, LSTM, GRU resetting after and before) in three variants (plain; masked,
// relu, go_backwards with time-ordered output; masked with zero outputs, hard_sigmoid,
// initial states and recurrent dropout), forward and the gradient from every output
// gradient, with random inputs (the gradient's saved values too).
#pragma once
#include <string>
#include <vector>

#include "conformance/harness.h"

namespace nnfit::testing {

struct RnnCase {
  std::string name;  // "lstm variant 2", for SCOPED_TRACE
  KernelDesc forward;
  std::vector<Tensor> forward_inputs;
  KernelDesc grad;  // U, [mask], [initial states], saved, dy, dh, [dc]
  std::vector<Tensor> grad_inputs;
};

// A desc of `op` with float32 inputs and outputs of these shapes.
inline KernelDesc rnn_desc(const std::string& op, Attrs attrs, const std::vector<Shape>& ins, const std::vector<Shape>& outs) {
  KernelDesc d;
  d.op = op;
  d.attrs = std::move(attrs);
  for (const Shape& s : ins) d.inputs.push_back({s, DType::f32});
  for (const Shape& s : outs) d.outputs.push_back({s, DType::f32});
  d.node_name = "test/" + op;
  return d;
}

inline std::vector<RnnCase> rnn_conformance_cases(std::int64_t n, std::int64_t t, std::int64_t h) {
  struct Cell {
    const char* name;
    std::int64_t gates;
    bool reset_after;
    std::int64_t saved;  // per step, in units
  };
  const Cell kCells[] = {{"simple_rnn", 1, false, 2}, {"lstm", 4, false, 6}, {"gru", 3, true, 5}, {"gru", 3, false, 5}};
  const auto mask_of = [](std::int64_t rows, std::int64_t steps, std::uint64_t seed) {
    Tensor m = random_tensor(Shape{rows, steps}, seed);
    for (std::int64_t i = 0; i < m.numel(); ++i) m.data<float>()[i] = m.data<float>()[i] > -0.4f ? 1.0f : 0.0f;
    return m;
  };
  std::vector<RnnCase> cases;
  for (const Cell& cell : kCells) {
    const bool lstm = std::string(cell.name) == "lstm";
    const std::int64_t g = cell.gates * h, states = lstm ? 2 : 1;
    for (int variant = 0; variant < 3; ++variant) {
      RnnCase c;
      c.name = std::string(cell.name) + (cell.reset_after ? " reset_after" : "") + " variant " + std::to_string(variant);
      const bool masked = variant >= 1, initial = variant == 2;
      Attrs a{{"cell", std::string(cell.name)},
              {"activation", std::string(variant == 1 ? "relu" : "tanh")},
              {"recurrent_activation", std::string(variant == 2 ? "hard_sigmoid" : "sigmoid")},
              {"reset_after", std::int64_t{cell.reset_after}},
              {"go_backwards", std::int64_t{variant == 1}},
              {"time_order_output", std::int64_t{variant == 1}},
              {"mask", std::int64_t{masked}},
              {"zero_output_for_mask", std::int64_t{variant == 2}},
              {"initial_state", std::int64_t{initial}},
              {"recurrent_dropout", variant == 2 ? 0.3 : 0.0},
              {"recurrent_seed", std::int64_t{9}}};
      std::vector<Shape> ins{Shape{n, t, g}, Shape{h, g}};
      std::vector<Tensor>& vals = c.forward_inputs;
      vals = {random_tensor(ins[0], 1), random_tensor(ins[1], 2, -0.3f, 0.3f)};
      if (cell.reset_after) {
        ins.push_back(Shape{g});
        vals.push_back(random_tensor(ins.back(), 3));
      }
      if (masked) {
        ins.push_back(Shape{n, t});
        vals.push_back(mask_of(n, t, 4));
      }
      for (std::int64_t s = 0; initial && s < states; ++s) {
        ins.push_back(Shape{n, h});
        vals.push_back(random_tensor(ins.back(), 5 + static_cast<std::uint64_t>(s)));
      }
      std::vector<Shape> outs{Shape{n, t, h}, Shape{n, h}};
      if (lstm) outs.push_back(Shape{n, h});
      outs.push_back(Shape{n, t, cell.saved * h});
      c.forward = rnn_desc("rnn", a, ins, outs);

      Attrs ga = a;
      ga.set("has_dy", std::int64_t{1});
      ga.set("has_dh", std::int64_t{1});
      ga.set("has_dc", std::int64_t{lstm});
      std::vector<Shape> gins{Shape{h, g}};
      c.grad_inputs = {vals[1]};
      for (std::size_t i = cell.reset_after ? 3 : 2; i < vals.size(); ++i) {
        gins.push_back(ins[i]);
        c.grad_inputs.push_back(vals[i]);
      }
      gins.push_back(outs.back());
      c.grad_inputs.push_back(random_tensor(outs.back(), 6, -0.8f, 0.8f));
      for (std::int64_t k = 0; k < 1 + states; ++k) {
        gins.push_back(outs[static_cast<std::size_t>(k)]);
        c.grad_inputs.push_back(random_tensor(gins.back(), 7 + static_cast<std::uint64_t>(k)));
      }
      std::vector<Shape> gouts{Shape{n, t, g}, Shape{h, g}};
      if (cell.reset_after) gouts.push_back(Shape{g});
      for (std::int64_t s = 0; initial && s < states; ++s) gouts.push_back(Shape{n, h});
      c.grad = rnn_desc("rnn_grad", ga, gins, gouts);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace nnfit::testing
