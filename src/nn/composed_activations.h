// Private to src/nn: the activations Keras 3 added (celu, glu, hard_shrink, hard_tanh,
// log_sigmoid, soft_shrink, sparse_plus, sparse_sigmoid, sparsemax, squareplus,
// tanh_shrink, threshold), each Keras's TensorFlow formula written with the engine's
// element-wise, comparison, `where` and reduction ops, so autodiff differentiates them as
// TensorFlow's tape does. Used by a layer's `activation=` (emit_activation, Keras's
// default arguments) and by keras.ops' operation nodes (their config's arguments).
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/graph/graph.h"

namespace nnfit {

// The arguments the composed activations take (Keras's defaults).
struct ComposedActivationArgs {
  double alpha = 1.0;          // celu
  double threshold = 0.5;      // hard_shrink, soft_shrink, threshold
  double default_value = 0.0;  // threshold
  double b = 4.0;              // squareplus
  std::int64_t axis = -1;      // glu, sparsemax
};

bool is_composed_activation(const std::string& name);
// Emits activation `name` on x (names under `prefix`). Throws InvalidArgument naming the
// prefix for a glu axis of odd size or an axis out of range.
int emit_composed_activation(Graph& g, int x, const std::string& name, const ComposedActivationArgs& args,
                             const std::string& prefix);

}  // namespace nnfit
