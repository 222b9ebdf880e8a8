// OperationArg: one positional argument of a Keras 3 operation's call, as a Functional
// config records it (Note [Keras operations] in src/nn/layers/operation.cpp): a tensor of
// the graph, a list of them (concatenate([a, b])), a Python number (add(x, 2.0)), None, a
// constant array (`__tensor__`: ops.arange(4) added to a tensor), GetItem's key
// (x[:, 1:3, None, ...]) or, inside a traced layer's graph, one of that layer's weights
// (`__variable__`: `ops.matmul(x, self.w)`; Note [Traced layers] in src/nn/traced_layer.cpp).
// Plain data, so CallArguments can carry it from the reader.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nnfit {

// One item of a GetItem key: an integer (drops the axis), a slice, None (a new axis of
// size 1) or Ellipsis.
struct IndexItem {
  enum class Kind { integer, slice, newaxis, ellipsis };
  Kind kind = Kind::integer;
  std::int64_t value = 0;                     // integer
  std::optional<std::int64_t> start, stop, step;  // slice
  friend bool operator==(const IndexItem&, const IndexItem&) = default;
};

struct OperationArg {
  enum class Kind { tensor, tensors, number, none, constant, index, variable };
  Kind kind = Kind::tensor;
  std::vector<int> tensors;           // tensor: one input index; tensors: several, in order
  double number = 0.0;                // number
  bool integer = false;               // number written as an int (Keras's 2, not 2.0)
  std::vector<double> values;         // constant: row-major values
  std::vector<std::int64_t> shape;    // constant, variable: its shape; tensor: as recorded (-1: unknown)
  std::int64_t variable = -1;         // variable: the weight's index in its traced layer's weights
  std::string dtype = "float32";      // constant: its dtype as Keras writes it
  std::vector<IndexItem> index;       // index: GetItem's key, one item per entry
  friend bool operator==(const OperationArg&, const OperationArg&) = default;
};

}  // namespace nnfit
