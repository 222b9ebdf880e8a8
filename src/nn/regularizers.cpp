// Regularizers and constraints (nnfit/nn/regularizers.h) as graph ops: weight_penalty and
// apply_constraint (docs/design/ops.md, "Regularizers and constraints").
#include "nnfit/nn/regularizers.h"

#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"

namespace nnfit {

void check_regularizer(const Regularizer& r, const std::string& where) {
  NNFIT_CHECK(r.kind == "L1" || r.kind == "L2" || r.kind == "L1L2" || r.kind == "OrthogonalRegularizer",
              InvalidArgument, where, ": unknown regularizer \"", r.kind,
              "\" (L1, L2, L1L2 or OrthogonalRegularizer)");
  NNFIT_CHECK(r.l1 >= 0.0 && r.l2 >= 0.0 && r.factor >= 0.0, InvalidArgument, where, ": a ", r.kind,
              " regularizer's factors must be non-negative, got l1 ", r.l1, ", l2 ", r.l2, ", factor ", r.factor);
  NNFIT_CHECK(r.mode == "rows" || r.mode == "columns", InvalidArgument, where,
              ": OrthogonalRegularizer's mode must be \"rows\" or \"columns\", got \"", r.mode, "\"");
}

void check_constraint(const Constraint& c, const std::string& where) {
  NNFIT_CHECK(c.kind == "MaxNorm" || c.kind == "MinMaxNorm" || c.kind == "NonNeg" || c.kind == "UnitNorm",
              InvalidArgument, where, ": unknown constraint \"", c.kind, "\" (MaxNorm, MinMaxNorm, NonNeg or UnitNorm)");
  NNFIT_CHECK(c.max_value >= 0.0 && c.min_value >= 0.0 && c.min_value <= c.max_value, InvalidArgument, where, ": ",
              c.kind, " needs 0 <= min_value <= max_value, got ", c.min_value, " and ", c.max_value);
  NNFIT_CHECK(c.rate >= 0.0 && c.rate <= 1.0, InvalidArgument, where, ": ", c.kind, "'s rate must be in [0, 1], got ",
              c.rate);
}

int emit_penalty(Graph& graph, int x, const Regularizer& r, double scale, const std::string& name) {
  Attrs a;
  if (r.kind == "OrthogonalRegularizer") {
    a.set("kind", std::string("orthogonal"));
    a.set("factor", r.factor * scale);
    a.set("mode", r.mode);
  } else {
    a.set("kind", std::string("l1l2"));
    a.set("l1", r.l1 * scale);
    a.set("l2", r.l2 * scale);
  }
  return graph.add("weight_penalty", {x}, a, name);
}

void emit_constraint(Graph& graph, int var, const Constraint& c, const std::string& name) {
  Attrs a;
  a.set("kind", c.kind);
  a.set("max_value", c.max_value);
  a.set("min_value", c.min_value);
  a.set("rate", c.rate);
  a.set("axes", c.axes);
  graph.add_node("apply_constraint", {var}, a, name);
}

}  // namespace nnfit
