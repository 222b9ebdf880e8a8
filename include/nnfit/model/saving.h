// Keras's model files, read and written with Keras's own layouts so models move both ways:
//   .keras      Keras 3's zip: metadata.json, config.json (the model and its
//               compile_config), model.weights.h5 (variables and optimizer state);
//   .h5         legacy HDF5 (Keras 2 / tf.keras): model_config and training_config
//               attributes, model_weights, optimizer_weights;
//   .weights.h5 variables only, in Keras 3's layout (optimizer state included).
// Every file is written to a temporary name beside the target, synced and renamed, so a
// kill leaves the previous file whole. Formats: docs/design/keras_files.md.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "nnfit/model/model.h"

namespace nnfit {

// The model in `path` (.keras or .h5, recognized by content), with its weights; compiled
// from the file's compile config (optimizer state included) when `compile` and the file
// has one, else only built. throws: DataError naming the file, member, layer and weight
// (a truncated zip, a missing or extra weight, a shape that differs, an HDF5 file that is
// not a Keras model), InvalidArgument / Unsupported for the model config.
struct LoadOptions {
  bool compile = true;
  // false: the compile config's losses and metrics only, for evaluating: the optimizer's
  // config and state are not read (its config may be one nnfit does not run), and the
  // model compiles with a default SGD that never steps.
  bool optimizer = true;
  // Called on the model once its architecture is read, before any weight is allocated:
  // where a memory policy, thread count or seed is set.
  std::function<void(Model&)> configure;
};
std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& options = {});

// Writes the model in the format `path`'s extension names (.keras, .h5 / .hdf5,
// .weights.h5). requires: built. throws: InvalidArgument for another extension,
// DataError when writing fails (the previous file stays).
void save_model(const Model& model, const std::string& path);

// Variables only: .weights.h5 in Keras 3's layout (with the optimizer state when
// compiled), another .h5 in the legacy layout (Keras 2's save_weights).
void save_weights(const Model& model, const std::string& path);
// Reads .weights.h5 (Keras 3), a legacy weights file or a full .h5 / .keras file's
// weights into `model` (and the optimizer state when the file has it and the model is
// compiled). Nothing is changed unless every weight fits. throws: DataError.
void load_weights(Model& model, const std::string& path);

// What a file holds, by its first bytes; `special` for a FIFO, device or socket, which
// is never opened (a FIFO would block, a device never ends).
enum class ModelFileKind { keras_zip, hdf5, json, directory, missing, special, unknown };
ModelFileKind sniff_model_file(const std::string& path);

}  // namespace nnfit
