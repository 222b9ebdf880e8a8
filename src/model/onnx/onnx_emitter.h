// Private to src/model/onnx: the ONNX graph being written while a Keras model's layers are
// walked. Values carry what the converters need to place ops correctly: rank, element type,
// whether the Keras mask of an Embedding(mask_zero=True) flows with them, and their layout
// (Note [Layouts in the exported graph]). Thread safety: none; one emitter per export.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/io/onnx.h"

namespace nnfit::onnx_export {

using io::onnx::Attribute;
using io::onnx::ElemType;

// Note [Layouts in the exported graph]
// Keras tensors are channels-last (NHWC, NWC); ONNX's Conv, pooling, BatchNormalization and
// Resize take channels-first (NCHW). A value may live in either layout: `channels_first`
// means its Keras channel axis (the last) sits at axis 1 and the spatial axes follow. A
// convolution asks for its input channels-first and gives its output so; element-wise
// layers keep the layout they are given; a layer that reads axes as Keras numbers them
// (Flatten, Dense, Reshape, LayerNormalization) asks for the Keras layout. The transposes
// are made where a consumer asks (once per value), so a run of convolutions, activations,
// batch norms and poolings costs one transpose in and one out, as converters such as
// tf2onnx achieve with a transpose optimizer afterwards.
enum class Layout { keras, channels_first };

struct Value {
  std::string name;
  int rank = 0;  // with the batch axis
  ElemType type = ElemType::float32;
  Layout layout = Layout::keras;
  std::string mask_from;  // the layer whose Keras mask flows with the value ("" for none)
};

class Emitter {
 public:
  explicit Emitter(std::int64_t opset) : opset_(opset) {}
  std::int64_t opset() const { return opset_; }
  io::onnx::Graph& graph() { return graph_; }

  // A value name unique in the graph, from a hint such as "conv2d/bias".
  std::string fresh(const std::string& hint);
  // Adds a node of `op` and returns its outputs' names (made from `hint`).
  std::vector<std::string> nodes(const std::string& op, std::vector<std::string> inputs, std::vector<Attribute> attrs,
                                 const std::string& hint, int outputs);
  // The same for a node with one output.
  std::string node(const std::string& op, std::vector<std::string> inputs, std::vector<Attribute> attrs,
                   const std::string& hint);

  // Constants as initializers, each distinct one once (equal bytes, dims and type share a
  // name). float32 from a host tensor (its shape) or values (dims given).
  std::string constant(const std::string& hint, const Tensor& host_f32);
  std::string constant(const std::string& hint, const std::vector<std::int64_t>& dims, const std::vector<float>& values);
  std::string constant_i64(const std::string& hint, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& values);

  // `v` in the Keras layout or channels-first (a Transpose made once per value and kept).
  Value to_keras(const Value& v);
  Value to_channels_first(const Value& v);
  // `v` as float32 (a Cast for integer inputs, which Keras's layers take as floats).
  Value as_float(const Value& v);

  // A Reduce* node over `axes` (attribute before opset 18, input from 18 on).
  std::string reduce(const std::string& op, const std::string& x, const std::vector<std::int64_t>& axes, bool keepdims,
                     const std::string& hint);
  // Keras activation `name` (a built-in's name as Keras serializes it) on x; "" when the
  // name has no ONNX form here (the caller refuses, naming its layer).
  std::string activation(const std::string& x, const std::string& name, const std::string& hint);

 private:
  std::string transpose(const std::string& x, std::vector<std::int64_t> perm, const std::string& hint);
  std::string add_initializer(const std::string& hint, ElemType type, const std::vector<std::int64_t>& dims, std::string raw);

  std::int64_t opset_;
  io::onnx::Graph graph_;
  std::map<std::string, int> used_;                  // hint -> times used
  std::set<std::string> names_;                      // every name handed out
  std::map<std::string, std::string> transposed_;    // "<value>|<layout>" -> its transpose
  std::map<std::string, std::string> casts_;         // value -> its float32 cast
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_content_;  // hash of bytes -> initializers
};

// Where Keras axis `axis` (counting the batch axis, non-negative) of a rank-`rank` value
// sits in `layout`.
std::int64_t axis_in(Layout layout, int rank, std::int64_t axis);
// The channels-last <-> channels-first permutations of a rank-`rank` value.
std::vector<std::int64_t> to_channels_first_perm(int rank);
std::vector<std::int64_t> to_keras_perm(int rank);
// A host float32 tensor's axes permuted (the kernel layouts Keras and ONNX differ in).
Tensor permute_host(const Tensor& t, const std::vector<std::int64_t>& perm);

}  // namespace nnfit::onnx_export
