// Private to src/model/onnx: one converter per Keras layer class, turning one call of the
// layer into ONNX nodes, split by family as the Keras codecs are (core, conv, pooling and
// reshaping, normalization, merge, recurrent). A converter reads the layer as a Keras user
// would describe it: its Keras config (the keys keras_writer.cpp writes, so the .keras
// file's meaning) and its weights in Keras's layouts; it computes what the layer computes
// in inference mode (Dropout and noise pass through, BatchNormalization uses its moving
// statistics). Anything it cannot say exactly it refuses through LayerCall::refuse, which
// names the layer and its class: a wrong file is never written.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/onnx/onnx_emitter.h"
#include "nnfit/core/shape.h"
#include "nnfit/nn/layer.h"

namespace nnfit::onnx_export {

using ojson = nlohmann::ordered_json;

// One call of one layer, as a converter sees it.
struct LayerCall {
  const Layer& layer;
  const ojson& config;                // its Keras config object
  std::vector<Value> inputs;          // one per call input, in call order
  std::vector<Shape> input_shapes;    // without the batch axis; kUnknownDim for Keras's None
  std::vector<Shape> output_shapes;
  Emitter& emit;
  std::function<Tensor(const Tensor&)> host;  // a weight's value in host memory

  // A "<layer>/<what>" name for the nodes and constants the call makes.
  std::string hint(const std::string& what = "") const { return what.empty() ? layer.name() : layer.name() + "/" + what; }
  // The layer's weight named "<what>" (the last part of its Keras path: kernel, bias,
  // moving_mean, ...) in host memory, or an undefined tensor when it has none.
  Tensor weight(const std::string& what) const;
  // The same, refusing when the layer has no such weight.
  Tensor require_weight(const std::string& what) const;
  // throws Unsupported: "layer '<name>' (<Class>): <why>", with a hint to keep the layer
  // out of the exported model or to open an issue.
  [[noreturn]] void refuse(const std::string& why) const;
  // Config values (refusing, naming the key, when absent or of another type).
  std::int64_t integer(const char* key) const;
  double number(const char* key) const;
  bool flag(const char* key) const;
  std::string text(const char* key) const;
  std::vector<std::int64_t> integers(const char* key) const;
  // The "activation" (or another key's) Keras name applied to x; refuses an unknown one.
  std::string activation(const std::string& x, const char* key = "activation") const;
  // The single input, for single-input layers.
  const Value& in() const { return inputs.at(0); }
  // A float32 output value named `name` (a node's output) of `rank` (with the batch axis).
  static Value out(const std::string& name, int rank, Layout layout = Layout::keras, std::string mask = "");
};

using Converter = std::vector<Value> (*)(LayerCall& call);

struct ConverterEntry {
  const char* class_name;  // Keras's
  Converter convert;
  // Whether the layer reads a Keras mask flowing into it (an RNN skips masked steps,
  // global pooling leaves them out): such a call with a mask is refused, as the exported
  // graph carries no masks.
  bool reads_mask = false;
};

std::vector<ConverterEntry> core_converters();           // Dense, activations, Dropout & noise, Flatten, Reshape, Embedding, Rescaling, ...
std::vector<ConverterEntry> conv_converters();           // Conv1D/2D/3D, depthwise, separable, transposed
std::vector<ConverterEntry> pooling_converters();        // pooling, global pooling, padding, cropping, upsampling
std::vector<ConverterEntry> normalization_converters();  // BatchNormalization, LayerNormalization, Normalization
std::vector<ConverterEntry> merge_converters();          // Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate
std::vector<ConverterEntry> recurrent_converters();      // SimpleRNN, LSTM, GRU, Bidirectional
// Every family's entries (the exporter's dispatch table, and the list an error names).
const std::vector<ConverterEntry>& all_converters();

}  // namespace nnfit::onnx_export
