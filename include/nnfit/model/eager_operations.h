// Keras operations run eagerly on arrays (nnfit.keras's `keras.ops.add(a, b)` on NumPy
// arrays): the operation nodes of a Functional config, emitted on the arrays' own shapes
// (no batch axis of the model's kind: axis 0 is an axis like the others), planned and run
// once on the CPU by the same kernels a model runs. Optionally the gradient of
// sum(outputs[i] · cotangents[i]) with respect to each input, by the engine's autodiff, so
// the gradient rules can be compared with another framework's.
#pragma once
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"

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
EagerResult run_operations(const std::string& config, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& cotangents = {});

}  // namespace nnfit
