// Private to src/nn/layers: what an emitter of a Keras operation reads (Note [Keras
// operations] in operation.cpp) and the emitters of the shape-changing operations
// (operation_shape_emitters.cpp), which operation_emitters.cpp lists with the others.
#pragma once
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/nn/operation.h"

namespace nnfit::operation_emit {

using Dims = std::vector<std::int64_t>;

// What an emitter reads: the operation, its graph and its arguments.
struct Emit {
  const Operation& op;
  Graph& g;
  const std::vector<OperationArg>& args;
  const std::vector<int>& inputs;
  const Operation::ConstantFn& constant;

  const Attrs& config() const { return op.config(); }
  std::string node(const std::string& what) const { return what.empty() ? op.name() : op.name() + "/" + what; }
  [[noreturn]] void invalid(const std::string& msg) const {
    throw InvalidArgument(op.name() + " (" + op.class_name() + "): " + msg,
                          "the arguments are checked as Keras 3 checks them; see docs/python.md (keras.ops)");
  }
  [[noreturn]] void unsupported(const std::string& msg) const {
    throw Unsupported(op.name() + " (" + op.class_name() + "): " + msg, "docs/python.md lists what keras.ops supports");
  }

  // Argument k as a graph value: a tensor, or a number or array as its constant.
  int value(std::size_t k) const {
    if (k >= args.size()) invalid("takes at least " + std::to_string(k + 1) + " arguments, got " + std::to_string(args.size()));
    const OperationArg& a = args[k];
    switch (a.kind) {
      case OperationArg::Kind::tensor: return inputs.at(static_cast<std::size_t>(a.tensors.at(0)));
      case OperationArg::Kind::number:
      case OperationArg::Kind::constant:
      case OperationArg::Kind::variable: return constant("arg" + std::to_string(k));
      default: invalid("argument " + std::to_string(k) + " must be a tensor or a number");
    }
  }
  std::vector<int> values(std::size_t k) const {
    if (k >= args.size() || args[k].kind != OperationArg::Kind::tensors) {
      if (k < args.size() && args[k].kind == OperationArg::Kind::tensor) return {value(k)};
      invalid("argument " + std::to_string(k) + " must be a list of tensors");
    }
    std::vector<int> out;
    for (int t : args[k].tensors) out.push_back(inputs.at(static_cast<std::size_t>(t)));
    return out;
  }
  bool is_number(std::size_t k) const { return k < args.size() && args[k].kind == OperationArg::Kind::number; }
  Shape shape(int v) const { return g.desc(v).shape; }  // a copy: adding nodes moves the graph's values
  int rank(int v) const { return shape(v).rank(); }
  std::int64_t axis(std::int64_t a, int rank_of) const {
    if (a < -rank_of || a >= rank_of) {
      invalid("axis " + std::to_string(a) + " is out of range for a tensor of rank " + std::to_string(rank_of));
    }
    return a < 0 ? a + rank_of : a;
  }
  // A config key holding an axis, a list of axes or null (absent): sorted, non-negative;
  // absent: every axis.
  Dims axes(const char* key, int rank_of) const {
    Dims out;
    const auto& items = config().items();
    auto it = items.find(key);
    if (it == items.end()) {
      out.resize(static_cast<std::size_t>(rank_of));
      std::iota(out.begin(), out.end(), 0);
      return out;
    }
    if (const auto* one = std::get_if<std::int64_t>(&it->second)) {
      out.push_back(axis(*one, rank_of));
    } else if (const auto* many = std::get_if<Dims>(&it->second)) {
      for (std::int64_t a : *many) out.push_back(axis(a, rank_of));
    } else {
      invalid(std::string("\"") + key + "\" must be an axis or a list of axes");
    }
    std::sort(out.begin(), out.end());
    if (std::adjacent_find(out.begin(), out.end()) != out.end()) invalid(std::string("\"") + key + "\" repeats an axis");
    return out;
  }
  bool flag(const char* key, bool fallback) const { return config().i_or(key, fallback ? 1 : 0) != 0; }

  int add(const std::string& op_name, const std::vector<int>& in, Attrs a = {}, const std::string& what = "") const {
    return g.add(op_name, in, std::move(a), node(what.empty() ? op_name : what));
  }
  int reshape(int x, Dims dims) const { return emit_reshape(g, x, std::move(dims), node("reshape")); }
  // The two values in one floating dtype: the wider of the two (Keras's result_type).
  std::pair<int, int> same_dtype(int a, int b) const {
    const DType da = g.desc(a).dtype, db = g.desc(b).dtype;
    if (da == db) return {a, b};
    const auto to = [&](int v, DType d) { return add("cast", {v}, Attrs{{"dtype", std::string(dtype_name(d))}}, "cast"); };
    if (da == DType::f32) return {a, to(b, da)};
    if (db == DType::f32) return {to(a, db), b};
    return {a, to(b, da)};
  }
  int unary(const std::string& kind, int x) const { return add("unary", {x}, Attrs{{"kind", kind}}, kind); }
  int binary(const std::string& kind, int a, int b) const {
    // Integer operands (argmax's indices compared in a metric) compute in float32, exact
    // below 2^24, as the engine's element-wise kernels take floating tensors.
    const auto floating = [&](int v) {
      return is_floating(g.desc(v).dtype) ? v : add("cast", {v}, Attrs{{"dtype", std::string("float32")}}, "cast");
    };
    auto [x, y] = same_dtype(floating(a), floating(b));
    return add("binary", {x, y}, Attrs{{"kind", kind}}, kind);
  }
};

using Emitter = std::vector<int> (*)(const Emit&);

// The shape-changing operations: reshape, transpose, expand_dims, squeeze, concatenate,
// stack, tile, repeat, pad, get_item (x[...]), matmul; and image.resize
// (operation_image_emitters.cpp).
std::vector<int> reshape(const Emit& e);
std::vector<int> transpose(const Emit& e);
std::vector<int> expand_dims(const Emit& e);
std::vector<int> squeeze(const Emit& e);
std::vector<int> concatenate(const Emit& e);
std::vector<int> stack(const Emit& e);
std::vector<int> tile(const Emit& e);
std::vector<int> repeat(const Emit& e);
std::vector<int> pad(const Emit& e);
std::vector<int> get_item(const Emit& e);
std::vector<int> matmul(const Emit& e);
std::vector<int> image_resize(const Emit& e);

// keras.ops.nn's layer-sized operations (operation_nn_emitters.cpp): adds their entries to
// the table; and how many outputs an operation class has (Moments: 2; the rest 1).
void add_nn_emitters(std::map<std::string, Emitter>& table);
int nn_operation_outputs(const std::string& class_name);
// The array operations (operation_array_emitters.cpp and the files it names): adds their
// emitters to `table`; the number of outputs of one of them (Split, Unstack, TopK, ...), 0
// for a class that is not theirs.
void add_array_emitters(std::map<std::string, Emitter>& table);
int array_operation_outputs(const Operation& op);
// Element-wise math, logical tests and NaN-aware reductions (operation_math_emitters.cpp):
// adds their classes to the emitters' table.
void add_math_emitters(std::map<std::string, Emitter>& table);
// keras.ops.image but Resize (operation_image_emitters.cpp).
void add_image_emitters(std::map<std::string, Emitter>& table);
// keras.random's draws in a traced call (random_operations.cpp).
std::vector<int> random_draw(const Emit& e);

}  // namespace nnfit::operation_emit
