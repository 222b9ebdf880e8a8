// Keras operations run eagerly on arrays (nnfit.keras's `keras.ops.add(a, b)` on NumPy
// arrays): the operation nodes of a Functional config, emitted on the arrays' own shapes
// (no batch axis of the model's kind: axis 0 is an axis like the others), planned and run
// once on the CPU by the same kernels a model runs. Optionally the gradient of
// sum(outputs[i] · cotangents[i]) with respect to each input, by the engine's autodiff, so
// the gradient rules can be compared with another framework's.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/nn/operation_graph.h"

namespace nnfit {

struct EagerResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> input_gradients;  // with cotangents: one per input (zeros where none flows)
};

// `config`: a Functional config (Keras 3's JSON) whose layers are InputLayers, one per
// input in input_layers order with batch_shape the input's full shape, and operations
// (module keras.src.ops.*), in an order where each reads only earlier ones. `cotangents`:
// empty, or one float32 tensor per output shaped like it. throws: InvalidArgument or
// Unsupported naming the operation, as a model's reader would.
// The operations of such a config as a graph emitted wherever it is needed (a custom
// loss's or metric's trace, Note [Traced losses and metrics]); its inputs are the
// InputLayers in layers order. throws: InvalidArgument or Unsupported naming the entry
// (`where` and its path), e.g. a layer that is not an operation.
std::shared_ptr<const OperationGraph> operation_graph_from_keras_json(const std::string& config, const std::string& where);

EagerResult run_operations(const std::string& config, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& cotangents = {});

}  // namespace nnfit
