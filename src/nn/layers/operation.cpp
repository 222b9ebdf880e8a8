// Operation: a Keras 3 operation's call in a Functional graph (include/nnfit/nn/operation.h).
// This file holds the layer contract (shapes, constants, arguments); the emitters, one per
// Keras operation class, are in operation_emitters.cpp.
//
// Note [Keras operations]: Keras 3 records `keras.ops.add(x, 2.0)` on symbolic tensors as a
// node of class Add (module keras.src.ops.numpy) whose call arguments are the tensor and
// the number, and writes it so in a .keras file; nnfit reads, runs and writes the same
// node. Graph values carry the batch axis, and Keras's axis numbers count it, so an
// emitter works on graph shapes directly, in a model (batch first) and in an eager call on
// arrays (run_operations: the arrays' own shapes). A number or array argument becomes a
// non-trainable weight of the operation (built on the model's device, cast to the compute
// dtype as weights are), never saved. An output must keep the batch axis: shapes are
// inferred on scratch graphs of batch 2 and 3, and an operation that reduces or moves
// axis 0 is refused, naming it, because a model's tensors are batched. Inside a traced
// layer's graph an argument may be one of that layer's weights (`__variable__`), read
// like a constant but bound to the layer's trainable weight (Note [Traced layers]), or a
// value the layer computes from its weights alone (Note [Weight-only values]).
#include "nnfit/nn/operation.h"

#include <algorithm>

#include "nnfit/core/error.h"

namespace nnfit {

std::vector<int> emit_operation(const Operation& op, Graph& graph, const std::vector<OperationArg>& args,
                                const std::vector<int>& inputs, const Operation::ConstantFn& constant);
int operation_outputs(const Operation& op);

Operation::Operation(std::string name, std::string module, std::string class_name, Attrs config,
                     std::string config_json)
    : Layer(std::move(name)),
      module_(std::move(module)),
      class_name_(std::move(class_name)),
      config_(std::move(config)),
      config_json_(std::move(config_json)) {}

int Operation::num_outputs() const { return operation_outputs(*this); }

CallArguments Operation::call_arguments() const {
  CallArguments a;
  for (const OperationArg& arg : args_) {
    if (arg.kind == OperationArg::Kind::tensor || arg.kind == OperationArg::Kind::tensors) {
      a.positional += arg.tensors.size();
    }
  }
  a.operation_args = args_;
  a.operation_kwargs = kwargs_json_;
  a.operation_kwarg_numbers = kwarg_numbers_;
  return a;
}

void Operation::set_call_arguments(const CallArguments& args) {
  NNFIT_CHECK(args.keyword_inputs.empty() && args.flags.empty() && args.constants.empty(), Unsupported, name(), " (",
              class_name_, "): keyword tensors and flags are not taken by an operation's call");
  NNFIT_CHECK(!args.operation_args.empty(), InvalidArgument, name(), " (", class_name_, "): the call has no arguments");
  std::size_t tensors = 0;
  for (const OperationArg& a : args.operation_args) {
    if (a.kind == OperationArg::Kind::tensor || a.kind == OperationArg::Kind::tensors) {
      for (int t : a.tensors) {
        NNFIT_CHECK(t == static_cast<int>(tensors), InvalidArgument, name(), " (", class_name_,
                    "): tensor arguments must be numbered in order");
        ++tensors;
      }
    }
  }
  NNFIT_CHECK(tensors > 0, InvalidArgument, name(), " (", class_name_, "): the call reads no tensor");
  args_ = args.operation_args;
  kwargs_json_ = args.operation_kwargs.empty() ? "{}" : args.operation_kwargs;
  kwarg_numbers_ = args.operation_kwarg_numbers;
}

std::optional<double> Operation::kwarg(const std::string& key) const {
  auto it = kwarg_numbers_.find(key);
  return it == kwarg_numbers_.end() ? std::nullopt : std::optional<double>(it->second);
}

// A number is a rank-1 tensor of one element (it broadcasts as a NumPy scalar against
// every batched tensor), an array keeps its shape.
std::vector<Operation::Constant> Operation::constants() const {
  std::vector<Constant> out;
  for (std::size_t k = 0; k < args_.size(); ++k) {
    const OperationArg& a = args_[k];
    if (a.kind == OperationArg::Kind::number) out.push_back({"arg" + std::to_string(k), Shape{1}, {a.number}});
    if (a.kind == OperationArg::Kind::constant) out.push_back({"arg" + std::to_string(k), Shape(a.shape), a.values});
  }
  if (class_name_ == "Clip") {
    for (const char* key : {"x_min", "x_max"}) {
      if (config_.has(key)) out.push_back({key, Shape{1}, {config_.f(key)}});
    }
  }
  if (class_name_ == "OneHot" || class_name_ == "MultiHot") {
    const std::int64_t n = config_.i("num_classes");
    NNFIT_CHECK(n >= 1 && n <= (std::int64_t{1} << 24), InvalidArgument, name(), " (", class_name_, "): \"num_classes\" must be in [1, 2^24], got ", n);
    std::vector<double> ids(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<double>(i);
    out.push_back({"classes", Shape{n}, ids});
  }
  for (const Constant& c : out) {
    NNFIT_CHECK(static_cast<std::int64_t>(c.values.size()) == c.shape.numel(), InvalidArgument, name(), " (", class_name_,
                "): constant ", c.key, " holds ", c.values.size(), " values for a shape of ", c.shape.to_string());
  }
  return out;
}

void Operation::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  compute_output_shapes(inputs);
  weights_.clear();
  constant_weights_.clear();
  for (const Constant& c : constants()) {
    Tensor t = weights.zeros(c.shape);
    float* p = t.data<float>();
    for (std::size_t i = 0; i < c.values.size(); ++i) p[i] = static_cast<float>(c.values[i]);
    constant_weights_[c.key] = weights_.size();
    weights_.emplace_back(name() + "/" + c.key, t, false);
  }
  built_ = true;
}

void Operation::bind_variables(const std::vector<const Weight*>& weights, const std::vector<int>* values,
                               std::size_t num_values) {
  variables_.clear();
  value_args_.clear();
  values_ = values;
  for (std::size_t k = 0; k < args_.size(); ++k) {
    const OperationArg& a = args_[k];
    if (a.kind != OperationArg::Kind::variable) continue;
    NNFIT_CHECK(a.variable >= 0 && static_cast<std::size_t>(a.variable) < weights.size() + num_values, InvalidArgument,
                name(), " (", class_name_, "): argument ", k, " reads weight ", a.variable, " of a traced layer that has ",
                weights.size(), num_values > 0 ? " weights and " + std::to_string(num_values) + " weight-only values" : "");
    if (static_cast<std::size_t>(a.variable) >= weights.size()) {  // Note [Weight-only values]
      value_args_["arg" + std::to_string(k)] = {static_cast<std::size_t>(a.variable) - weights.size(), k};
      continue;
    }
    const Weight* w = weights[static_cast<std::size_t>(a.variable)];
    NNFIT_CHECK(w->value.shape() == Shape(a.shape), InvalidArgument, name(), " (", class_name_, "): argument ", k,
                " reads ", w->name, " as ", Shape(a.shape).to_string(), " but it is ", w->value.shape().to_string());
    variables_["arg" + std::to_string(k)] = w;
  }
}

bool Operation::reads_variables() const {
  return std::any_of(args_.begin(), args_.end(),
                     [](const OperationArg& a) { return a.kind == OperationArg::Kind::variable; });
}

std::vector<int> Operation::call_on(GraphBuilder& builder, const std::vector<int>& inputs) {
  const ConstantFn constant = [&](const std::string& key) {
    if (auto v = variables_.find(key); v != variables_.end()) return builder.variable(*v->second);
    if (auto v = value_args_.find(key); v != value_args_.end()) {  // Note [Weight-only values]
      const auto [index, k] = v->second;
      NNFIT_CHECK(values_ && index < values_->size(), InvalidArgument, name(), " (", class_name_,
                  "): reads a weight-only value its traced layer has not emitted");
      const int value = (*values_)[index];
      NNFIT_CHECK(builder.graph().desc(value).shape == Shape(args_[k].shape), InvalidArgument, name(), " (",
                  class_name_, "): argument ", k, " reads a weight-only value as ", Shape(args_[k].shape).to_string(),
                  " but it is ", builder.graph().desc(value).shape.to_string());
      return value;
    }
    auto it = constant_weights_.find(key);
    NNFIT_CHECK(it != constant_weights_.end(), InvalidArgument, name(), " (", class_name_, "): no constant \"", key,
                "\"", reads_variables() ? " (a traced layer's weight: the operation must be inside that layer)" : "");
    return builder.variable(weights_[it->second]);
  };
  return emit(builder.graph(), inputs, constant);
}

std::vector<int> Operation::emit(Graph& graph, const std::vector<int>& inputs, const ConstantFn& constant) const {
  return emit_operation(*this, graph, args_, inputs, constant);
}

// Shapes by running the emitter on scratch graphs: at batches 2 and 3 (an output must keep
// the batch axis and not depend on it) and, where an input has a dimension known only per
// batch (Note [Shapes known per batch]), with it 5 and then 7: an output dimension that
// follows it is unknown too.
std::vector<Shape> Operation::compute_output_shapes(const std::vector<Shape>& in) const {
  bool unknown = false;
  for (const Shape& s : in) unknown = unknown || std::count(s.dims().begin(), s.dims().end(), kUnknownDim) > 0;
  std::vector<Shape> first;
  const std::vector<std::pair<std::int64_t, std::int64_t>> runs =
      unknown ? std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 5}, {3, 5}, {2, 7}}
              : std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 5}, {3, 5}};
  for (const auto& [batch, size] : runs) {
    Graph g;
    std::vector<int> values;
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::vector<std::int64_t> dims{batch};
      for (const std::int64_t d : in[i].dims()) dims.push_back(d == kUnknownDim ? size : d);
      values.push_back(g.add_input("input_" + std::to_string(i), {Shape(dims), DType::f32}));
    }
    const std::vector<Constant> specs = constants();
    const ConstantFn constant = [&](const std::string& key) {
      for (const Constant& c : specs) {
        if (c.key == key) return g.add_variable(key, Tensor::zeros(c.shape));
      }
      for (std::size_t k = 0; k < args_.size(); ++k) {  // a traced layer's weight: its shape
        if (args_[k].kind == OperationArg::Kind::variable && key == "arg" + std::to_string(k)) {
          return g.add_variable(key, Tensor::zeros(Shape(args_[k].shape)));
        }
      }
      throw InvalidArgument(name() + " (" + class_name_ + "): no constant \"" + key + "\"");
    };
    std::vector<Shape> shapes;
    for (int v : emit_operation(*this, g, args_, values, constant)) {
      const Shape& s = g.desc(v).shape;
      NNFIT_CHECK(s.rank() >= 1 && s[0] == batch, Unsupported, name(), " (", class_name_, "): its output (",
                  s.to_string(), " for a batch of ", batch,
                  ") does not keep the batch axis; nnfit's models keep axis 0 as the batch: apply the operation to the "
                  "other axes");
      shapes.emplace_back(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end()));
    }
    if (first.empty() && batch == 2) {
      first = shapes;
    } else if (batch == 3) {
      NNFIT_CHECK(shapes == first, Unsupported, name(), " (", class_name_,
                  "): its output's shape depends on the batch size; nnfit's models keep axis 0 as the batch");
    } else {  // the dimensions known per batch at another size: where the outputs differ, theirs are too
      for (std::size_t k = 0; k < first.size(); ++k) {
        NNFIT_CHECK(shapes[k].rank() == first[k].rank(), Unsupported, name(), " (", class_name_,
                    "): its output's rank depends on a dimension known only per batch");
        std::vector<std::int64_t> dims = first[k].dims();
        for (std::size_t d = 0; d < dims.size(); ++d) {
          if (dims[d] != shapes[k][static_cast<std::int64_t>(d)]) dims[d] = kUnknownDim;
        }
        first[k] = Shape(dims);
      }
    }
  }
  return first;
}

}  // namespace nnfit
