// The ONNX graph under construction (onnx_emitter.h): unique names, nodes, initializers,
// the layout transposes of Note [Layouts in the exported graph], and Keras's activations
// as ONNX ops (the formulas of src/backend/common/nn_op_geometry.h).
#include "model/onnx/onnx_emitter.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "nnfit/core/error.h"

namespace nnfit::onnx_export {

std::string Emitter::fresh(const std::string& hint) {
  // "dense" may come back as "dense_1", the hint of a layer named so: every name is checked.
  for (;;) {
    const int n = used_[hint]++;
    const std::string name = n == 0 ? hint : hint + "_" + std::to_string(n);
    if (names_.insert(name).second) return name;
  }
}

std::vector<std::string> Emitter::nodes(const std::string& op, std::vector<std::string> inputs,
                                        std::vector<Attribute> attrs, const std::string& hint, int outputs) {
  io::onnx::Node n;
  n.op_type = op;
  n.name = fresh(hint + "/" + op);
  n.inputs = std::move(inputs);
  n.attributes = std::move(attrs);
  for (int i = 0; i < outputs; ++i) n.outputs.push_back(fresh(hint + (i == 0 ? "" : ":" + std::to_string(i))));
  graph_.nodes.push_back(std::move(n));
  return graph_.nodes.back().outputs;
}

std::string Emitter::node(const std::string& op, std::vector<std::string> inputs, std::vector<Attribute> attrs,
                          const std::string& hint) {
  return nodes(op, std::move(inputs), std::move(attrs), hint, 1)[0];
}

std::string Emitter::add_initializer(const std::string& hint, ElemType type, const std::vector<std::int64_t>& dims,
                                     std::string raw) {
  // A shared layer's second call, or a constant made twice, reuses the first initializer.
  const std::size_t key = std::hash<std::string>{}(raw) ^ (std::hash<std::size_t>{}(dims.size()) << 1);
  for (std::size_t i : by_content_[key]) {
    const io::onnx::Initializer& t = graph_.initializers[i];
    if (t.type == type && t.dims == dims && t.raw == raw) return t.name;
  }
  by_content_[key].push_back(graph_.initializers.size());
  graph_.initializers.push_back({fresh(hint), type, dims, std::move(raw)});
  return graph_.initializers.back().name;
}

std::string Emitter::constant(const std::string& hint, const Tensor& host) {
  NNFIT_CHECK(host.dtype() == DType::f32, Unsupported, hint, ": a weight of dtype ", dtype_name(host.dtype()),
              " has no ONNX export in nnfit (float32 weights only)");
  // raw_data is little-endian: nnfit's hosts (x86-64, AArch64) are.
  return add_initializer(hint, ElemType::float32, host.shape().dims(),
                         std::string(static_cast<const char*>(host.raw()), host.nbytes()));
}

std::string Emitter::constant(const std::string& hint, const std::vector<std::int64_t>& dims,
                              const std::vector<float>& values) {
  return add_initializer(hint, ElemType::float32, dims,
                         std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
}

std::string Emitter::constant_i64(const std::string& hint, const std::vector<std::int64_t>& dims,
                                  const std::vector<std::int64_t>& values) {
  return add_initializer(hint, ElemType::int64, dims,
                         std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(std::int64_t)));
}

std::string Emitter::transpose(const std::string& x, std::vector<std::int64_t> perm, const std::string& hint) {
  return node("Transpose", {x}, {Attribute::of("perm", std::move(perm))}, hint);
}

std::vector<std::int64_t> to_channels_first_perm(int rank) {
  std::vector<std::int64_t> perm{0, rank - 1};
  for (int a = 1; a < rank - 1; ++a) perm.push_back(a);
  return perm;
}

std::vector<std::int64_t> to_keras_perm(int rank) {
  std::vector<std::int64_t> perm{0};
  for (int a = 2; a < rank; ++a) perm.push_back(a);
  perm.push_back(1);
  return perm;
}

std::int64_t axis_in(Layout layout, int rank, std::int64_t axis) {
  if (layout == Layout::keras || axis == 0) return axis;
  return axis == rank - 1 ? 1 : axis + 1;
}

Value Emitter::to_keras(const Value& v) {
  if (v.layout == Layout::keras || v.rank < 3) return {v.name, v.rank, v.type, Layout::keras, v.mask_from};
  std::string& t = transposed_[v.name + "|keras"];
  if (t.empty()) t = transpose(v.name, to_keras_perm(v.rank), v.name + "/channels_last");
  return {t, v.rank, v.type, Layout::keras, v.mask_from};
}

Value Emitter::to_channels_first(const Value& v) {
  if (v.layout == Layout::channels_first || v.rank < 3) return {v.name, v.rank, v.type, Layout::channels_first, v.mask_from};
  std::string& t = transposed_[v.name + "|channels_first"];
  if (t.empty()) t = transpose(v.name, to_channels_first_perm(v.rank), v.name + "/channels_first");
  return {t, v.rank, v.type, Layout::channels_first, v.mask_from};
}

Value Emitter::as_float(const Value& v) {
  if (v.type == ElemType::float32) return v;
  std::string& c = casts_[v.name];
  if (c.empty()) c = node("Cast", {v.name}, {Attribute::of("to", std::int64_t{1})}, v.name + "/float");
  Value out = v;
  out.name = c;
  out.type = ElemType::float32;
  return out;
}

std::string Emitter::reduce(const std::string& op, const std::string& x, const std::vector<std::int64_t>& axes,
                            bool keepdims, const std::string& hint) {
  const Attribute keep = Attribute::of("keepdims", std::int64_t{keepdims ? 1 : 0});
  if (opset_ < 18 && op != "ReduceSum") return node(op, {x}, {Attribute::of("axes", axes), keep}, hint);
  // ReduceSum took its axes as an input from opset 13, the other reductions from 18.
  const std::string a = constant_i64(hint + "/axes", {static_cast<std::int64_t>(axes.size())}, axes);
  return node(op, {x, a}, {keep}, hint);
}

std::string Emitter::activation(const std::string& x, const std::string& name, const std::string& hint) {
  const std::string h = hint + "/" + name;
  auto scalar = [&](const char* what, float v) { return constant(h + "/" + what, {}, {v}); };
  if (name == "linear") return x;
  if (name == "relu") return node("Relu", {x}, {}, h);
  if (name == "sigmoid") return node("Sigmoid", {x}, {}, h);
  if (name == "tanh") return node("Tanh", {x}, {}, h);
  if (name == "softmax") return node("Softmax", {x}, {Attribute::of("axis", std::int64_t{-1})}, h);
  if (name == "log_softmax") return node("LogSoftmax", {x}, {Attribute::of("axis", std::int64_t{-1})}, h);
  if (name == "elu") return node("Elu", {x}, {Attribute::of("alpha", 1.0f)}, h);
  if (name == "selu") return node("Selu", {x}, {}, h);  // ONNX's defaults are Keras's constants
  if (name == "softplus") return node("Softplus", {x}, {}, h);
  if (name == "softsign") return node("Softsign", {x}, {}, h);
  if (name == "exponential") return node("Exp", {x}, {}, h);
  if (name == "leaky_relu") return node("LeakyRelu", {x}, {Attribute::of("alpha", 0.2f)}, h);
  if (name == "relu6") return node("Clip", {x, scalar("min", 0.0f), scalar("max", 6.0f)}, {}, h);
  if (name == "hard_sigmoid") {  // Keras 3: relu6(x + 3) / 6
    return node("HardSigmoid", {x}, {Attribute::of("alpha", 1.0f / 6.0f), Attribute::of("beta", 0.5f)}, h);
  }
  if (name == "hard_sigmoid_keras2") {  // tf.keras: clip(0.2 x + 0.5, 0, 1)
    return node("HardSigmoid", {x}, {Attribute::of("alpha", 0.2f), Attribute::of("beta", 0.5f)}, h);
  }
  if (name == "hard_silu" || name == "hard_swish") return node("HardSwish", {x}, {}, h);  // x * relu6(x + 3) / 6
  if (name == "silu" || name == "swish") return node("Mul", {x, node("Sigmoid", {x}, {}, h + "/sigmoid")}, {}, h);
  if (name == "mish") {
    const std::string sp = node("Softplus", {x}, {}, h + "/softplus");
    return node("Mul", {x, node("Tanh", {sp}, {}, h + "/tanh")}, {}, h);
  }
  if (name == "gelu") {  // Keras's default, exact: x/2 (1 + erf(x / sqrt 2)) (Gelu is opset 20)
    const std::string e = node("Erf", {node("Mul", {x, scalar("rsqrt2", static_cast<float>(M_SQRT1_2))}, {}, h + "/scaled")},
                               {}, h + "/erf");
    const std::string one_plus = node("Add", {e, scalar("one", 1.0f)}, {}, h + "/one_plus");
    return node("Mul", {node("Mul", {x, scalar("half", 0.5f)}, {}, h + "/half"), one_plus}, {}, h);
  }
  return "";
}

Tensor permute_host(const Tensor& t, const std::vector<std::int64_t>& perm) {
  const Shape& s = t.shape();
  const int r = s.rank();
  std::vector<std::int64_t> out_dims(static_cast<std::size_t>(r));
  for (int i = 0; i < r; ++i) out_dims[static_cast<std::size_t>(i)] = s[static_cast<int>(perm[static_cast<std::size_t>(i)])];
  Tensor out = Tensor::uninitialized(Shape(out_dims), DType::f32);
  // Strides of the source, read in the destination's order.
  std::vector<std::int64_t> src_stride(static_cast<std::size_t>(r), 1);
  for (int i = r - 2; i >= 0; --i) src_stride[static_cast<std::size_t>(i)] = src_stride[static_cast<std::size_t>(i) + 1] * s[i + 1];
  std::vector<std::int64_t> idx(static_cast<std::size_t>(r), 0);
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  const std::int64_t n = t.numel();
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t off = 0;
    for (int i = 0; i < r; ++i) off += idx[static_cast<std::size_t>(i)] * src_stride[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])];
    dst[k] = src[off];
    for (int i = r - 1; i >= 0; --i) {
      if (++idx[static_cast<std::size_t>(i)] < out_dims[static_cast<std::size_t>(i)]) break;
      idx[static_cast<std::size_t>(i)] = 0;
    }
  }
  return out;
}

}  // namespace nnfit::onnx_export
