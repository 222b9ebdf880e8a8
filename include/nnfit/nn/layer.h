// Layer: the Keras layer contract. A layer owns its weights (created by build() for an
// input shape without the batch axis) and emits graph nodes in call(); it never runs
// kernels itself, so the same layer serves training, evaluation and planning graphs.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/graph/graph.h"
#include "nnfit/nn/dtype_policy.h"
#include "nnfit/nn/operation_args.h"
#include "nnfit/nn/regularizers.h"

namespace nnfit {

class Allocator;
class OperationGraph;

struct Weight {
  Weight() = default;
  Weight(std::string weight_name, Tensor weight_value, bool is_trainable = true)
      : name(std::move(weight_name)), value(std::move(weight_value)), trainable(is_trainable) {}
  std::string name;     // "dense/kernel"
  Tensor value;
  bool trainable = true;  // by nature (a BatchNormalization's moving statistics are not)
  bool frozen = false;    // its layer was set trainable = false (Keras's fine-tuning freeze)
  Regularizer regularizer;  // added to the loss while it trains (Keras's <weight>_regularizer)
  Constraint constraint;    // applied after each update (Keras's <weight>_constraint)
  // Whether the optimizer updates it.
  bool trains() const { return trainable && !frozen; }
};

// Variables as Keras 3 files group them: `path` relative to the layer's own group ("" is
// the layer itself, "cell" a recurrent layer's cell).
struct WeightGroup {
  std::string path;
  std::vector<Weight*> weights;
};

// Creates weight tensors; owned by the model, passed to build().
class WeightFactory {
 public:
  WeightFactory(Allocator& allocator, std::uint64_t seed) : allocator_(&allocator), seed_(seed) {}
  // Weights in plain host memory, for a model whose own memory the host cannot address
  // (a GPU's): layers fill them on the host, then the model copies them to the device.
  explicit WeightFactory(std::uint64_t seed) : seed_(seed) {}
  // A weight of `shape` filled by `initializer` (a Keras name: glorot_uniform,
  // glorot_normal, he_normal, he_uniform, zeros, ones, ...), seeded from the model seed
  // and the weight's place in the order of making (not its name, which Keras numbers
  // per session: "dense_3"), so two builds of one architecture under one seed are equal,
  // as Keras's under keras.utils.set_random_seed.
  Tensor make(const std::string& name, const Shape& shape, const std::string& initializer,
              std::int64_t fan_in, std::int64_t fan_out);
  Tensor zeros(const Shape& shape);
  // At most `elements` float32 elements in all the weights made from now on; past it a
  // weight is refused before allocation with InvalidArgument naming `source` (a model
  // loaded from a file cannot need more variables than the file holds: Note [Weights
  // larger than the machine]). 0: no budget.
  void limit_elements(std::uint64_t elements, std::string source);

 private:
  Allocator* allocator_ = nullptr;  // null: host memory (Tensor::zeros)
  std::uint64_t seed_;
  std::uint64_t budget_elements_ = 0;  // 0: none
  std::uint64_t made_elements_ = 0;
  std::string budget_source_;
  std::uint64_t made_ = 0;  // weights made so far: the next one's place
};

// Emission context for one graph: maps weights to variable values, collects side updates
// (moving averages), hands out seeds to random ops.
class GraphBuilder {
 public:
  GraphBuilder(Graph& graph, bool training) : graph_(graph), training_(training) {}
  Graph& graph() { return graph_; }
  bool training() const { return training_; }
  // Emission of a layer called with Keras's training=False inside a training graph
  // (`base_model(x, training=False)`) flips the mode around that call (LayerGraph).
  void set_training(bool training) { training_ = training; }
  // The variable value for `weight` in this graph (added on first use), cast to the
  // compute dtype when that is float16 or bfloat16 (Keras's autocast: the variable stays
  // float32 and its gradient flows back through the cast).
  int variable(const Weight& weight);
  // The dtype the layer being emitted computes in (LayerGraph sets it around each call),
  // and the policy of layers that have none of their own (the model's).
  DType compute_dtype() const { return compute_; }
  void set_compute_dtype(DType dtype) { compute_ = dtype; }
  const DTypePolicy& default_policy() const { return default_policy_; }
  void set_default_policy(DTypePolicy policy) { default_policy_ = std::move(policy); }
  // `value` as `dtype`: itself, or a cast of it (one per value and dtype).
  int cast(int value, DType dtype);
  // Value ids of trainable weights used so far, in first-use order, with their weights.
  const std::vector<std::pair<int, const Weight*>>& variables() const { return vars_; }
  // Whether the graph computes a loss: layers then add their activity regularizers'
  // penalties (scalar values) with add_loss, and the model adds them to the total.
  void set_collect_losses(bool collect) { collect_losses_ = collect; }
  bool collect_losses() const { return collect_losses_; }
  void add_loss(int value) { losses_.push_back(value); }
  const std::vector<int>& losses() const { return losses_; }

 private:
  Graph& graph_;
  bool training_;
  bool collect_losses_ = false;
  std::vector<int> losses_;
  DType compute_ = DType::f32;
  DTypePolicy default_policy_;
  std::map<std::pair<int, DType>, int> casts_;
  std::map<const void*, int> by_buffer_;
  std::vector<std::pair<int, const Weight*>> vars_;
};

// Keras's call arguments past positional tensors, for a layer whose call takes them
// (MultiHeadAttention(query, value, key=k, attention_mask=m, use_causal_mask=True)). A
// Functional config records them per call; nnfit fixes them per layer.
struct CallArguments {
  std::size_t positional = 0;                 // inputs passed one by one before the keyword ones
  std::vector<std::string> keyword_inputs;    // names of the inputs after them, in input order
  std::vector<std::pair<std::string, bool>> flags;  // use_causal_mask, ...
  std::vector<double> constants;              // numbers passed positionally after the tensors (not_equal(x, 0))
  // Per input, the name of its shape in Keras's build(...) ("query" -> "query_shape"; a
  // "name/i" entry is item i of a list), "" for an input build does not take; empty: none.
  std::vector<std::string> build_names;
  // A Keras operation's positional arguments in order (tensors by input index), when the
  // call is an operation's (Note [Keras operations]); empty for a layer.
  std::vector<OperationArg> operation_args;
  std::string operation_kwargs;                           // its keyword arguments' JSON, written back as read
  std::map<std::string, double> operation_kwarg_numbers;  // the numeric ones (Pad's constant_values)
  friend bool operator==(const CallArguments&, const CallArguments&) = default;
};

// The layer contract. Model graphs (LayerGraph) use the list forms: a layer takes one or
// more inputs and gives one or more outputs. A single-input, single-output layer overrides
// the single forms (build, output_shape, call) and the list forms forward to them; a layer
// with several inputs (the merge layers) or a nested model overrides the list forms.
class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;

  const std::string& name() const { return name_; }
  virtual std::string class_name() const = 0;  // Keras's class name: "Dense"
  // Keras's type(layer).__name__, which the summary and plot_model show: the class name,
  // but where Keras exports a class under another name (keras.layers.GroupQueryAttention,
  // written so in files, is the class GroupedQueryAttention).
  virtual std::string type_name() const { return class_name(); }

  // List forms. Shapes exclude the batch axis; `inputs` holds one shape per input.
  // requires: build_for is called once, before call_on; later calls of a shared layer must
  // bring shapes its weights fit (compute_output_shapes says so, naming the layer).
  virtual std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const;
  virtual void build_for(const std::vector<Shape>& inputs, WeightFactory& weights);
  // Emits this layer's nodes on input values ([batch, ...] each); returns the outputs.
  virtual std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs);
  virtual int num_outputs() const { return 1; }
  // Whether the layer takes inputs with dimensions known only per batch (kUnknownDim:
  // Keras's None; Note [Shapes known per batch]): its compute_output_shapes then gives
  // kUnknownDim where an output dimension follows an unknown input one, build_for makes
  // weights from known dimensions alone (refusing, naming the dimension, where a weight
  // needs an unknown one), and call_on reads shapes from the graph values only. A layer
  // that says false is refused such inputs by LayerGraph, naming it.
  virtual bool supports_unknown_dims() const { return false; }

  // Masks (Keras's _keras_mask): a float32 value of 1 (step present) or 0 (padding) per
  // step, shaped like an input without its feature axis ([batch, steps]), or -1 for none.
  // call_masked emits the layer on inputs carrying `masks` (one per input) and sets the
  // outputs' masks. Default, a layer that takes no mask: as call_on; its outputs carry the
  // first input's mask if supports_masking() (Keras's default compute_mask), else none
  // (Keras drops the mask there too). A layer whose Keras counterpart would use the mask
  // overrides this and implements it, or refuses a mask (Unsupported naming the layer).
  virtual std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs,
                                       const std::vector<int>& masks, std::vector<int>& output_masks);
  virtual bool supports_masking() const { return false; }

  // Call arguments (Keras's kwargs). Default: none; several inputs go as one list
  // (layer([a, b]), the merge layers). A layer that takes keyword arguments overrides both;
  // set_call_arguments, applied before build_for, throws Unsupported naming the layer and
  // the argument it does not take. The default refuses any.
  virtual CallArguments call_arguments() const { return {}; }
  virtual void set_call_arguments(const CallArguments& args);

  // Single forms, for single-input layers. The defaults reject being reached (a layer
  // overrides either these or the list forms).
  virtual void build(const Shape& input_shape, WeightFactory& weights);
  virtual Shape output_shape(const Shape& input_shape) const;
  virtual int call(GraphBuilder& builder, int x);

  bool built() const { return built_; }
  // Keras's dtype policy of this layer (its config's "dtype"); unset: the model's.
  const std::optional<DTypePolicy>& dtype_policy() const { return dtype_policy_; }
  void set_dtype_policy(std::optional<DTypePolicy> policy) { dtype_policy_ = std::move(policy); }
  // Whether the layer computes in float32 under every policy, as Keras's normalization
  // layers do (its inputs cast to float32, its outputs back to the compute dtype).
  virtual bool computes_in_float32() const { return false; }
  // Whether the policy casts the layer's floating inputs: not for a layer whose inputs are
  // ids (Embedding: Keras casts them to integers, never to a 16-bit float).
  virtual bool casts_inputs() const { return true; }
  // Keras's layer.trainable: false freezes every weight of the layer (and of its sublayers)
  // and runs BatchNormalization in inference mode. Applies to weights built before or after.
  bool trainable() const { return trainable_; }
  virtual void set_trainable(bool trainable);
  // Keras's training=False call argument (`base_model(x, training=False)`): the layer's
  // calls run in inference mode in every graph, training ones included (BatchNormalization
  // normalizes with its moving statistics and does not update them, Dropout passes through).
  bool inference_only() const { return inference_only_; }
  void set_inference_only(bool inference_only) { inference_only_ = inference_only; }
  // Keras's <prefix>_regularizer and <prefix>_constraint keys (prefix: kernel, bias,
  // recurrent, depthwise, pointwise, embeddings, gamma, beta, alpha) and its
  // activity_regularizer, on the layer's outputs. Set before build; attach_weight_options,
  // after build, hands them to the weights named "<prefix>" or "<prefix>_kernel" (a prefix
  // no weight has is ignored, as Keras ignores bias_regularizer without a bias).
  void set_weight_regularizer(const std::string& prefix, Regularizer r);
  void set_weight_constraint(const std::string& prefix, Constraint c);
  const std::map<std::string, Regularizer>& weight_regularizers() const { return regularizers_; }
  const std::map<std::string, Constraint>& weight_constraints() const { return constraints_; }
  void set_activity_regularizer(Regularizer r) { activity_regularizer_ = std::move(r); }
  const Regularizer& activity_regularizer() const { return activity_regularizer_; }
  // Keras's activation= given as a Python function, traced by nnfit.keras with keras.ops
  // (Note [Traced activations] in src/nn/layer_graph.cpp): the layer computes with "linear"
  // and LayerGraph applies `graph` (one input, one output) to its output; `keras_json` is
  // the activation as Keras writes it (its registered name) with the trace, written back.
  void set_traced_activation(std::shared_ptr<const OperationGraph> graph, std::string keras_json) {
    traced_activation_ = std::move(graph);
    traced_activation_json_ = std::move(keras_json);
  }
  const std::shared_ptr<const OperationGraph>& traced_activation() const { return traced_activation_; }
  const std::string& traced_activation_json() const { return traced_activation_json_; }
  // Wrappers (Bidirectional) forward to their sublayers too.
  virtual void attach_weight_options();
  std::vector<Weight>& weights() { return weights_; }
  const std::vector<Weight>& weights() const { return weights_; }
  // Every weight the layer uses, its own and (for a nested model) its layers', in Keras's
  // order (trainable and non-trainable as created).
  virtual std::vector<Weight*> all_weights();
  // The layer's own variables as Keras saves them (its `weights`, in order): what .keras
  // and .h5 files hold for this layer. Default: weights().
  virtual std::vector<Weight*> saved_weights();
  // saved_weights() as Keras 3's .keras and .weights.h5 files nest them. Default: all in
  // the layer's own group.
  virtual std::vector<WeightGroup> saved_weight_groups();
  std::vector<const Weight*> all_weights() const;
  std::int64_t count_params() const;

 protected:
  // Adds the trainable "<name>/kernel" of `kernel_shape` and, with use_bias, "<name>/bias"
  // of the kernel's last dimension, initialized with the fans given (Dense, convolutions).
  void add_kernel_and_bias(WeightFactory& weights, const Shape& kernel_shape, std::int64_t fan_in,
                           std::int64_t fan_out, const std::string& kernel_initializer, bool use_bias,
                           const std::string& bias_initializer);
  // Adds the trainable "<name>/<what>" of `shape`, initialized with Keras's fans for the
  // shape (compute_fans: a kernel (k..., in, out) has fan_in = in * prod(k), fan_out =
  // out * prod(k)); returns its index in weights().
  std::size_t add_weight(WeightFactory& weights, const std::string& what, const Shape& shape,
                         const std::string& initializer);

  // throws Unsupported naming the layer when an input carries a mask; `use` says what
  // Keras does with it ("a masked softmax").
  void refuse_masks(const std::vector<int>& masks, const std::string& use) const;

  std::vector<Weight> weights_;
  std::optional<DTypePolicy> dtype_policy_;
  bool built_ = false;
  bool trainable_ = true;
  bool inference_only_ = false;

 private:
  // The one input of a single-input layer; throws InvalidArgument naming the layer.
  template <typename T>
  const T& single(const std::vector<T>& inputs) const;

  std::string name_;
  std::map<std::string, Regularizer> regularizers_;
  std::map<std::string, Constraint> constraints_;
  Regularizer activity_regularizer_;
  std::shared_ptr<const OperationGraph> traced_activation_;  // null: none
  std::string traced_activation_json_;
};

// Emits a reshape of x to `dims` (the batch axis included); free, the planner aliases it.
int emit_reshape(Graph& graph, int x, std::vector<std::int64_t> dims, const std::string& name);

// Keras's layer.weights: every weight the layer uses, but for a traced Layer subclass the
// variables Keras gives it (its add_weight's and its sublayers'), not its operations' constants.
// A layer whose weights are all constants (no saved weights: an operation, a Rescaling per
// channel, a Normalization given its statistics) has no Keras variables either.
// Otherwise the layer's weights in its own order, those a Keras file holds: not the
// constants a layer keeps in place of a variable Keras does not make (BatchNormalization's
// gamma with scale=False, LayerNormalization's beta with center=False). (traced_layer.cpp)
std::vector<Weight*> keras_variables(Layer& layer);
// Emits `f` on x with `axes` (counting the batch axis, sorted, none of them 0) moved last
// and flattened into one: x is transposed to [other axes..., axes...] and reshaped to
// [rows, product of the axes], and f's result (of that shape) is reshaped and transposed
// back. No transpose when the axes are already the trailing ones. For normalizations over
// an axis other than the last (BatchNormalization(axis=1), LayerNormalization(axis=[1, 2])).
int emit_on_axes(Graph& graph, int x, const std::vector<std::int64_t>& axes, const std::string& name,
                 const std::function<int(int)>& f);
// Emits activation `name` (a Keras name: linear, relu, sigmoid, tanh, softmax, gelu) on x.
// Throws InvalidArgument naming the layer for an unknown name.
int emit_activation(Graph& graph, int x, const std::string& activation, const std::string& layer);
// Throws InvalidArgument unless `activation` is one emit_activation knows.
void check_activation(const std::string& activation, const std::string& layer);

}  // namespace nnfit
