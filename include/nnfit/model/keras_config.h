// Reading Keras's JSON serializations: a Sequential or Functional model from `model.to_json()` (the
// Keras 2 and the Keras 3 forms), an optimizer and a loss from their Keras objects or
// names. The JSON library stays inside keras_config.cpp, so this header costs callers
// nothing. The readers are strict: a key Keras would not write for that object is an
// error, and so is a value nnfit cannot honour (a regularizer, dilation, channels_first),
// so a config never trains something other than what it says.
#pragma once
#include <memory>
#include <vector>
#include <string>

#include "nnfit/model/model.h"
#include "nnfit/nn/loss.h"
#include "nnfit/nn/metrics.h"
#include "nnfit/nn/optimizer.h"

namespace nnfit {

// The Sequential that `json_text` describes: `{"class_name": "Sequential", "config":
// {"name", "layers": [...]}, ...}`. The input shape comes from an InputLayer
// (`batch_shape` or `batch_input_shape`), a first layer's `batch_input_shape` or the
// model's `build_input_shape`. Layers: InputLayer, Dense, Conv2D, MaxPooling2D,
// AveragePooling2D, Flatten, Reshape, Dropout, Activation, ReLU, Softmax,
// BatchNormalization. The model is not compiled.
// throws: InvalidArgument (bad JSON with line/column, unknown class or key, a shape that
//   does not fit) or Unsupported (a valid Keras option nnfit does not implement). Every
//   message starts with `<where>: ` and the key path from the model object down, e.g.
//   `cfg.json: model.config.layers[3] (dense_1): unknown key "unitz"`.
std::unique_ptr<Sequential> sequential_from_keras_json(const std::string& json_text,
                                                       const std::string& where);

// The model `json_text` describes: a Sequential as above, or a Functional model
// (`"class_name": "Functional"`, or "Model" in Keras <= 2.3) with its `layers`,
// `input_layers` and `output_layers`, in Keras 3's form (inbound nodes with `args` of
// `__keras_tensor__` objects) or Keras 2's (`[[["layer", node, tensor, {}]]]`). Models
// nested as layers (Sequential or Functional entries) become NestedModel layers. Also
// the merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot.
// A config written by Keras 1 or 2 (its top-level "keras_version", else `keras_version`, a
// legacy .h5's root attribute) reads names whose meaning changed as Keras 2 meant them:
// "hard_sigmoid" is Keras 2's clip(0.2 x + 0.5, 0, 1) (activation hard_sigmoid_keras2).
// throws: as sequential_from_keras_json; a call that reads a tensor no layer makes names
//   the layer and the reference.
std::unique_ptr<Model> model_from_keras_json(const std::string& json_text, const std::string& where,
                                             const std::string& keras_version = "");

// Whether each output of the model `json_text` describes carries a Keras mask (from an
// Embedding(mask_zero=True) or Masking, passed on by the layers that support masking): what
// nnfit.keras needs to trace a layer's call(inputs, mask=None) as Keras calls it (Note
// [Masks of traced layers] in src/nn/traced_layer.cpp). Builds the weights in host memory.
// throws: as model_from_keras_json.
std::vector<bool> output_masks_from_keras_json(const std::string& json_text, const std::string& where);

// A Keras optimizer: a name ("adam", "sgd", "rmsprop", "adamw") or an object
// `{"class_name": "Adam", "config": {"learning_rate": 0.001, ...}}`, where learning_rate
// may be a number or an ExponentialDecay schedule object. Unset values take Keras 3's
// defaults (learning rate: Adam, RMSprop, AdamW 0.001, SGD 0.01; AdamW weight decay
// 0.004), and the learning rate is always set in the result.
// throws: InvalidArgument / Unsupported with `<where>: ` and the key path.
OptimizerOptions optimizer_from_keras_json(const std::string& json_text, const std::string& where);

// A Keras loss: a name ("sparse_categorical_crossentropy", "mse", ...) or an object
// `{"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}}`.
// throws: InvalidArgument / Unsupported with `<where>: ` and the key path.
Loss loss_from_keras_json(const std::string& json_text, const std::string& where);

// A Keras metric: a name ("accuracy", "auc", ...) or an object `{"class_name": "AUC",
// "config": {"name": "pr_auc", "curve": "PR", ...}}` with Keras's arguments
// (MetricSpec); an argument nnfit does not have (AUC's multi_label) is Unsupported.
// throws: InvalidArgument / Unsupported with `<where>: ` and the key path.
MetricSpec metric_from_keras_json(const std::string& json_text, const std::string& where);

// Keras 3's model.to_json() for `model`: a Sequential or Functional object with every
// layer's config as Keras 3 writes it, so Keras's model_from_json (and nnfit) rebuild it.
// throws: Unsupported for a layer kind Keras cannot express.
// keras2: tf.keras's form (dtype strings, batch_input_shape, [[["layer", node, tensor,
// {}]]] nodes), which both tf.keras and Keras 3 read: what legacy .h5 files carry.
enum class KerasFormat { keras3, keras2 };
std::string model_to_keras_json(const Model& model, KerasFormat format = KerasFormat::keras3);
// The optimizer and loss objects of Keras's compile_config (and a legacy .h5's
// training_config), readable by optimizer_from_keras_json / loss_from_keras_json.
std::string optimizer_to_keras_json(const OptimizerOptions& optimizer);
std::string loss_to_keras_json(const Loss& loss);
// A metric as Keras's compile_config holds it: its name, or the object it was given as.
std::string metric_to_keras_json(const MetricSpec& metric);

// Keras's serialized callbacks, `[{"class_name": "EarlyStopping", "config": {...}}, ...]`:
// ModelCheckpoint, EarlyStopping, BackupAndRestore, ReduceLROnPlateau, CSVLogger and
// TerminateOnNaN with Keras's arguments and defaults ("save_freq": "epoch" or N batches).
// throws: InvalidArgument / Unsupported with `<where>: callbacks[i]...` and the key.
std::vector<std::unique_ptr<Callback>> callbacks_from_keras_json(const std::string& json_text, const std::string& where);

}  // namespace nnfit
