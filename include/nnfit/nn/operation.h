// Operation: one call of a Keras 3 operation (`keras.ops.add(x, y)`, `x[:, 0]`,
// `ops.softmax(x, axis=1)`) in a Functional graph, as Keras's own config records it: the
// operation's module and class ("keras.src.ops.numpy", "Add"), its constructor config
// ({"axis": 1, "keepdims": false}) and its call's positional arguments (tensors, numbers,
// constant arrays, GetItem keys). It emits engine ops on the graph values of its inputs,
// whose shapes include the batch axis, so Keras's axis numbers are the graph's (Note
// [Keras operations] in src/nn/layers/operation.cpp). The same emitter serves models and
// nnfit.keras's eager calls on arrays (run_operations).
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/backend/attrs.h"
#include "nnfit/nn/layer.h"

namespace nnfit {

class Operation final : public Layer {
 public:
  // `config`: the operation's config keys past "name" as attrs (null keys absent; int
  // lists as ints; a list of lists, as Pad's pad_width, flattened row by row);
  // `config_json`: the config as read, written back unchanged by the Keras writer.
  Operation(std::string name, std::string module, std::string class_name, Attrs config, std::string config_json);
  std::string class_name() const override { return class_name_; }
  const std::string& module() const { return module_; }
  const Attrs& config() const { return config_; }
  const std::string& config_json() const { return config_json_; }
  // The call's keyword arguments as read (Pad's constant_values), written back unchanged.
  const std::string& kwargs_json() const { return kwargs_json_; }
  // A numeric keyword argument of the call, if given.
  std::optional<double> kwarg(const std::string& key) const;

  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  int num_outputs() const override;
  // The emitters read shapes from the graph values (Note [Keras operations]).
  bool supports_unknown_dims() const override { return true; }
  CallArguments call_arguments() const override;
  void set_call_arguments(const CallArguments& args) override;

  // The constant tensors the operation reads, by key, with their float32 values.
  struct Constant {
    std::string key;
    Shape shape;
    std::vector<double> values;
  };
  std::vector<Constant> constants() const;

  // Inside a traced layer's graph (Note [Traced layers] in src/nn/traced_layer.cpp): the
  // traced layer's weights, by index, that the operation's `__variable__` arguments read.
  // The layer owns them and binds them after making them, before the first call. An index
  // from weights.size() on reads the layer's weight-only value index - weights.size()
  // (Note [Weight-only values] in src/nn/traced_layer.cpp): the graph value `*values`
  // holds while the layer emits its call (the layer owns the vector).
  // throws: InvalidArgument naming the operation when an argument's index or shape does
  // not fit `weights` (and `values`).
  void bind_variables(const std::vector<const Weight*>& weights, const std::vector<int>* values = nullptr,
                      std::size_t num_values = 0);
  bool reads_variables() const;

  // saved_weights: none. The constants an operation's arguments hold (a number, an array)
  // are non-trainable weights of the operation, so they live where the model's weights
  // live, but Keras saves and counts no variable for an operation.
  std::vector<Weight*> saved_weights() override { return {}; }

  // Emits the operation on `inputs` (graph values, in its arguments' tensor order) in
  // `graph`; `constant(key)` gives the value of one of constants(): "arg<k>" for argument
  // k where it is a number or an array, or a key of the operation's own (Clip's "x_min").
  // Returns its outputs. throws: InvalidArgument (bad shapes or
  // arguments) or Unsupported (a form nnfit does not implement), naming the operation.
  using ConstantFn = std::function<int(const std::string& key)>;
  std::vector<int> emit(Graph& graph, const std::vector<int>& inputs, const ConstantFn& constant) const;

 private:
  std::string module_, class_name_;
  Attrs config_;
  std::string config_json_;
  std::vector<OperationArg> args_;
  std::string kwargs_json_ = "{}";
  std::map<std::string, double> kwarg_numbers_;
  // The index in weights_ of each constant, by key.
  std::map<std::string, std::size_t> constant_weights_;
  // The traced layer's weights its variable arguments read, by the argument's key.
  std::map<std::string, const Weight*> variables_;
  // The weight-only values its variable arguments read: argument key -> (index in *values_,
  // the argument's position).
  std::map<std::string, std::pair<std::size_t, std::size_t>> value_args_;
  const std::vector<int>* values_ = nullptr;
};

// Whether nnfit implements Keras's operation class `class_name` (of a keras.src.ops.*
// module), and every class it implements, sorted.
bool has_operation(const std::string& class_name);
std::vector<std::string> operation_classes();

}  // namespace nnfit
