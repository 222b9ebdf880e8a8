// The recurrent scan's attributes and input/output positions (docs/design/ops.md,
// "Recurrent"), shared by its shape inference (graph/rnn_op_defs.cpp) and its kernels
// (backend/common/rnn_scan.cpp), so both count the optional inputs the same way.
//
// Per step the op saves, for each sample, the cell's pre-activations and states:
//   simple_rnn: [pre (H), h (H)]                        S = 2H
//   lstm:       [pre i f c o (4H), c (H), h (H)]        S = 6H
//   gru:        [pre z r hh (3H), inner_h (H), h (H)]   S = 5H
// where h and c are the states after the step (after masking).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "nnfit/backend/attrs.h"
#include "nnfit/core/error.h"

namespace nnfit {

enum class RnnCell { simple_rnn, lstm, gru };

struct RnnLayout {
  RnnCell cell = RnnCell::simple_rnn;
  std::int64_t gates = 1;       // G / H: 1, 4 or 3
  bool recurrent_bias = false;  // GRU with reset_after: the recurrent bias is an input
  bool reset_after = false;     // GRU only
  bool mask = false;
  bool initial_state = false;
  bool zero_output_for_mask = false;
  bool go_backwards = false;
  bool time_order_output = false;  // y indexed by time, not by step (Bidirectional's backward layer)
  // Keras's recurrent_dropout (training only): h_prev times a per-(sample, unit) factor,
  // keep / (1 − rate) with keep drawn from the counter-based dropout stream of
  // (run seed, recurrent_seed, step), the same for every step of the sequence and drawn
  // again identically by rnn_grad. 0: none.
  double recurrent_dropout = 0.0;
  std::int64_t recurrent_seed = 0;
  bool has_dy = false, has_dh = false, has_dc = false;  // rnn_grad only

  const char* cell_name() const {
    return cell == RnnCell::lstm ? "lstm" : cell == RnnCell::gru ? "gru" : "simple_rnn";
  }
  int num_states() const { return cell == RnnCell::lstm ? 2 : 1; }
  std::int64_t saved_per_step(std::int64_t h) const {
    return cell == RnnCell::lstm ? 6 * h : cell == RnnCell::gru ? 5 * h : 2 * h;
  }
  // rnn: xw, U, [rb], [mask], [h0, [c0]].
  std::size_t rb_input() const { return 2; }
  std::size_t mask_input() const { return 2 + (recurrent_bias ? 1 : 0); }
  std::size_t initial_state_input() const { return mask_input() + (mask ? 1 : 0); }
  std::size_t num_forward_inputs() const {
    return initial_state_input() + (initial_state ? static_cast<std::size_t>(num_states()) : 0);
  }
  // rnn_grad: U, [mask], [h0, [c0]], saved, [dy], [dh], [dc].
  std::size_t grad_mask_input() const { return 1; }
  std::size_t grad_initial_state_input() const { return 1 + (mask ? 1 : 0); }
  std::size_t grad_saved_input() const {
    return grad_initial_state_input() + (initial_state ? static_cast<std::size_t>(num_states()) : 0);
  }
  std::size_t num_grad_inputs() const {
    return grad_saved_input() + 1 + (has_dy ? 1 : 0) + (has_dh ? 1 : 0) + (has_dc ? 1 : 0);
  }
};

// Reads attrs cell (simple_rnn, lstm, gru), reset_after, mask, initial_state,
// zero_output_for_mask, go_backwards, time_order_output and rnn_grad's has_dy/has_dh/has_dc (ints, default 0).
inline RnnLayout rnn_layout(const Attrs& a) {
  RnnLayout l;
  const std::string& cell = a.s("cell");
  if (cell == "lstm") {
    l.cell = RnnCell::lstm;
    l.gates = 4;
  } else if (cell == "gru") {
    l.cell = RnnCell::gru;
    l.gates = 3;
  } else {
    NNFIT_CHECK(cell == "simple_rnn", InvalidArgument, "rnn: unknown cell '", cell, "'; expected simple_rnn, lstm or gru");
  }
  l.reset_after = l.cell == RnnCell::gru && a.i_or("reset_after", 0) != 0;
  l.recurrent_bias = l.reset_after;
  l.mask = a.i_or("mask", 0) != 0;
  l.initial_state = a.i_or("initial_state", 0) != 0;
  l.zero_output_for_mask = a.i_or("zero_output_for_mask", 0) != 0;
  l.go_backwards = a.i_or("go_backwards", 0) != 0;
  l.time_order_output = a.i_or("time_order_output", 0) != 0;
  l.recurrent_dropout = a.f_or("recurrent_dropout", 0.0);
  l.recurrent_seed = a.i_or("recurrent_seed", 0);
  NNFIT_CHECK(l.recurrent_dropout >= 0.0 && l.recurrent_dropout < 1.0, InvalidArgument,
              "rnn: recurrent_dropout must be in [0, 1), got ", l.recurrent_dropout);
  l.has_dy = a.i_or("has_dy", 0) != 0;
  l.has_dh = a.i_or("has_dh", 0) != 0;
  l.has_dc = l.cell == RnnCell::lstm && a.i_or("has_dc", 0) != 0;
  return l;
}

}  // namespace nnfit
