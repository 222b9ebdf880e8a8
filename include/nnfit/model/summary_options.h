// Keras's model.summary() arguments (keras/src/utils/summary_utils.py print_summary), for
// Model::summary.
#pragma once

#include <cstddef>
#include <vector>

namespace nnfit {

struct SummaryOptions {
  int line_length = 0;             // 0: the layout's default (88, or 108 with Connected to), narrowed to the terminal
  std::vector<double> positions;   // each column's right end as a fraction of line_length; empty: the layout's
  bool expand_nested = false;      // a nested model's layers on rows of their own, under it
  bool show_trainable = false;     // a Trainable column: Y, N, or - for a layer without weights
  // layer_range: the top-level rows [first, last) shown (Keras's model.layers indices,
  // InputLayers first in a Functional model); last 0: to the end.
  std::size_t first_row = 0, last_row = 0;
};

}  // namespace nnfit
