// ONNX export: a built Model as an ONNX inference graph (Keras 3's model.export(filepath,
// format="onnx")), written by nnfit itself from the model's layers: each layer call becomes
// the ONNX ops that compute what the layer computes in inference mode, its weights become
// initializers, and a layer nnfit cannot say exactly in ONNX is refused by name. Inputs
// keep the Keras Inputs' names and dtypes; the batch dimension is the symbol "batch" and
// other None dimensions "dim_<input>_<axis>"; outputs are named as Keras's TensorFlow
// export names them ("Identity:0", "Identity_1:0", ...). docs/design/onnx_export.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/io/onnx.h"
#include "nnfit/model/model.h"

namespace nnfit {

// One entry of Keras's input_signature: a name and shape for one model input.
struct OnnxInputSpec {
  std::string name;                  // "" keeps the Input's name
  std::vector<std::int64_t> shape;   // with the batch axis, -1 for None; empty keeps the model's
};

struct OnnxExportOptions {
  std::int64_t opset = 17;                      // 17 to 21
  std::vector<OnnxInputSpec> input_signature;   // empty, or one per model input
};

struct OnnxExportSummary {
  std::vector<std::string> input_names, output_names;
  std::size_t nodes = 0, initializers = 0;
  std::int64_t bytes = 0;  // the file's size
};

// The model's ONNX graph. requires: built (its weights made). throws: Unsupported naming the
// layer and its class for a layer (or a layer option) with no exact ONNX form here, a mask
// reaching a layer that would use it, or a graph past protobuf's 2 GiB; InvalidArgument for
// an unbuilt model, an input_signature that does not fit the inputs, or another opset.
io::onnx::ModelFile model_to_onnx(const Model& model, const OnnxExportOptions& options = {});
// model_to_onnx written to `path` atomically (nothing is written when it throws).
OnnxExportSummary export_onnx(const Model& model, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace nnfit
