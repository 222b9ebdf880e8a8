// Private to src/model: a model's variables in Keras's two HDF5 layouts.
//
// Keras 3 (model.weights.h5, .weights.h5): each layer's variables under
// layers/<name>/vars/0, 1, ..., where <name> is the layer's class in snake case with a
// counter per class within its container (Keras does not use layer names, which vary
// between instances); nested models nest as layers/<model>/layers/...; the optimizer's
// under optimizer/vars (iterations, a constant learning rate, the slots).
//
// Legacy (.h5, Keras 2 / tf.keras): model_weights/<layer name> with a weight_names
// attribute naming each dataset, layer_names listing the layers; optimizer_weights with
// its own weight_names.
#pragma once
#include <string>

#include "nnfit/io/hdf5_file.h"
#include "nnfit/model/model.h"

namespace nnfit::keras_files {

// Writes every layer's variables (and, when compiled, the optimizer's) in Keras 3's layout.
void write_keras3_weights(io::H5File& file, const Model& model);
// Reads them into the model; `where` prefixes messages ("m.keras: model.weights.h5").
// optimizer: also restore the optimizer's state when the file has it and the model is
// compiled. throws: DataError naming the layer and variable that is missing or differs.
void read_keras3_weights(const io::H5File& file, Model& model, const std::string& where, bool optimizer);

// The legacy layout under `group` ("model_weights", or "" for a weights-only file).
void write_legacy_weights(io::H5File& file, const std::string& group, const Model& model);
void read_legacy_weights(const io::H5File& file, const std::string& group, Model& model, const std::string& where);
void write_legacy_optimizer(io::H5File& file, const Model& model);
void read_legacy_optimizer(const io::H5File& file, Model& model, const std::string& where);

}  // namespace nnfit::keras_files
