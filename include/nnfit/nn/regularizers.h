// Keras's weight regularizers and constraints, and the activity regularizer: what a layer
// adds to the loss for its weights or outputs, and how a weight is projected after each
// optimizer update (Keras 3's formulas, docs/config.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nnfit {

class Graph;

// L1 (l1·Σ|x|), L2 (l2·Σx²), L1L2 (both) and OrthogonalRegularizer (factor, mode "rows"
// or "columns": factor·0.5·Σ_{i≠j}|n_i·n_j| / (size·(size−1)/2) over the L2-normalized
// rows or columns of a 2-D weight). `kind` is Keras's class name, empty for none.
struct Regularizer {
  std::string kind;
  double l1 = 0.0, l2 = 0.0;
  double factor = 0.01;
  std::string mode = "rows";
  bool active() const { return !kind.empty(); }
  friend bool operator==(const Regularizer&, const Regularizer&) = default;
};

// MaxNorm, MinMaxNorm, NonNeg and UnitNorm over `axes` of the weight (Keras's axis; the
// norms are taken over them, one per position of the other axes). `kind` is Keras's
// class name, empty for none.
struct Constraint {
  std::string kind;
  double max_value = 2.0, min_value = 0.0, rate = 1.0;
  std::vector<std::int64_t> axes{0};
  bool active() const { return !kind.empty(); }
  friend bool operator==(const Constraint&, const Constraint&) = default;
};

// Throws InvalidArgument naming `where` for a bad value (negative factor, unknown mode,
// an orthogonal regularizer on a weight that is not 2-D, ...).
void check_regularizer(const Regularizer& r, const std::string& where);
void check_constraint(const Constraint& c, const std::string& where);

// Emits the penalty of `r` on x, multiplied by `scale` (1 for a weight, 1/batch for an
// activity regularizer, as Keras 3 divides it): a scalar value id.
int emit_penalty(Graph& graph, int x, const Regularizer& r, double scale, const std::string& name);
// Emits the projection of variable `var` by `c`, after its update.
void emit_constraint(Graph& graph, int var, const Constraint& c, const std::string& name);

}  // namespace nnfit
