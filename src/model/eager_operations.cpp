// run_operations (include/nnfit/model/eager_operations.h): builds a Graph straight from a
// Functional config of operations, with the arrays bound as variables of their own shapes,
// emits each Operation as a model would (Note [Keras operations]), adds the gradient of
// sum(outputs · cotangents) when asked, plans the graph and runs it once on the CPU.
#include "nnfit/model/eager_operations.h"

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "model/keras/codecs/codec.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/autodiff.h"
#include "nnfit/graph/program.h"
#include "nnfit/memory/host_allocator.h"
#include "nnfit/nn/operation.h"
#include "nnfit/nn/operation_graph.h"

namespace nnfit {
namespace {

using keras_json::json;
using keras_json::Reader;

std::string ref_key(const Reader& r, const std::string& path, const json& keras_tensor) {
  const json* cfg = keras_json::find(keras_tensor, "config");
  const json* h = cfg ? keras_json::find(*cfg, "keras_history") : nullptr;
  if (!h || !h->is_array() || h->size() != 3 || !(*h)[0].is_string() || !(*h)[2].is_number_integer()) {
    r.invalid(path, "a __keras_tensor__ needs config.keras_history [layer, node, tensor]");
  }
  return (*h)[0].get<std::string>() + "/" + std::to_string((*h)[2].get<std::int64_t>());
}

}  // namespace

std::shared_ptr<const OperationGraph> operation_graph_from_keras_json(const std::string& text, const std::string& where) {
  const Reader r{where};
  const json root = keras_json::parse(r, text);
  const json* cfg = keras_json::find(root, "config");
  const json* layers = cfg ? keras_json::find(*cfg, "layers") : nullptr;
  if (!layers || !layers->is_array()) r.invalid("", "expected a Functional config with \"layers\"");
  std::map<std::string, OperationGraph::Ref> values;  // "layer/tensor index" -> where it is made
  std::size_t num_inputs = 0;
  for (const json& entry : *layers) {
    if (entry.is_object() && entry.value("class_name", "") == "InputLayer") ++num_inputs;
  }
  auto graph = std::make_shared<OperationGraph>(num_inputs);
  int input = 0, node = 0;
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const json& entry = (*layers)[i];
    const std::string path = "layers[" + std::to_string(i) + "]";
    const std::string name = keras_json::get_string(r, path, entry, "name", std::nullopt);
    const std::string cls = keras_json::get_string(r, path, entry, "class_name", std::nullopt);
    if (cls == "InputLayer") {
      values[name + "/0"] = {-1, input++};
      continue;
    }
    if (!keras_json::is_operation_module(entry)) {
      r.unsupported(path, "a " + cls + " layer cannot run here (keras.ops operations only)",
                    "write the computation with keras.ops; layers belong in the model");
    }
    const json* nodes = keras_json::find(entry, "inbound_nodes");
    if (!nodes || !nodes->is_array() || nodes->size() != 1) r.invalid(path, "an operation needs exactly one inbound node");
    const json& inbound = (*nodes)[0];
    std::vector<json> tensors;
    CallArguments call;
    call.operation_args = keras_json::read_operation_args(r, path + ".inbound_nodes[0]",
                                                          inbound.contains("args") ? inbound["args"] : json::array(), tensors);
    if (const json* kw = keras_json::find(inbound, "kwargs"); kw && kw->is_object()) {
      for (const auto& [k, v] : kw->items()) {
        if (v.is_number()) call.operation_kwarg_numbers[k] = v.get<double>();
      }
      call.operation_kwargs = kw->dump();
    }
    std::vector<OperationGraph::Ref> in;
    for (const json& t : tensors) {
      auto it = values.find(ref_key(r, path, t));
      if (it == values.end()) r.invalid(path, "reads a tensor no earlier layer makes");
      in.push_back(it->second);
    }
    const json* ocfg = keras_json::find(entry, "config");
    if (!ocfg || !ocfg->is_object()) r.invalid(path, "missing \"config\"");
    auto layer = keras_json::read_operation(r, path, cls, entry["module"].get<std::string>(), *ocfg, name);
    auto* op = dynamic_cast<Operation*>(layer.get());
    if (!op) r.invalid(path, "\"" + cls + "\" did not read as an operation; only keras.ops nodes run here");
    layer.release();
    std::unique_ptr<Operation> owned(op);
    owned->set_call_arguments(call);
    const int outputs = owned->num_outputs();
    graph->add(std::move(owned), std::move(in));
    for (int j = 0; j < outputs; ++j) values[name + "/" + std::to_string(j)] = {node, j};
    ++node;
  }
  std::vector<OperationGraph::Ref> outputs;
  const json* outs = keras_json::find(*cfg, "output_layers");
  if (!outs || !outs->is_array() || outs->empty()) r.invalid("", "missing \"output_layers\"");
  const json list = (*outs)[0].is_array() ? *outs : json::array({*outs});
  for (const json& o : list) {
    if (!o.is_array() || o.size() != 3 || !o[0].is_string()) r.invalid("output_layers", "expected [layer, node, tensor]");
    auto it = values.find(o[0].get<std::string>() + "/" + std::to_string(o[2].get<std::int64_t>()));
    if (it == values.end()) r.invalid("output_layers", "no layer makes " + o.dump());
    outputs.push_back(it->second);
  }
  graph->set_outputs(std::move(outputs));
  return graph;
}

EagerResult run_operations(const std::string& text, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& cotangents) {
  const std::shared_ptr<const OperationGraph> ops = operation_graph_from_keras_json(text, "keras.ops");
  NNFIT_CHECK(ops->num_inputs() == inputs.size(), InvalidArgument, "keras.ops: the graph has ", ops->num_inputs(),
              " inputs, given ", inputs.size(), " arrays");
  Graph g;
  std::vector<int> input_values;
  for (std::size_t i = 0; i < inputs.size(); ++i) input_values.push_back(g.add_variable("input_" + std::to_string(i), inputs[i]));
  const std::vector<int> outputs = ops->emit(g, input_values, "eager");
  std::vector<int> grads;
  if (!cotangents.empty()) {
    NNFIT_CHECK(cotangents.size() == outputs.size(), InvalidArgument, "keras.ops: ", cotangents.size(),
                " cotangents for ", outputs.size(), " outputs");
    int total = -1;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      NNFIT_CHECK(cotangents[i].shape() == g.desc(outputs[i]).shape, InvalidArgument, "keras.ops: cotangent ", i,
                  " of shape ", cotangents[i].shape().to_string(), " for an output of shape ",
                  g.desc(outputs[i]).shape.to_string());
      const int c = g.add_variable("cotangent_" + std::to_string(i), cotangents[i]);
      int y = outputs[i];
      if (g.desc(y).dtype != DType::f32) y = g.add("cast", {y}, Attrs{{"dtype", std::string("float32")}}, "cast");
      const int prod = g.add("mul", {y, c}, {}, "dot");
      const int sum = g.desc(prod).shape.rank() == 0
                          ? prod
                          : g.add("reduce", {prod}, Attrs{{"kind", std::string("sum")}, {"keepdims", std::int64_t{0}}}, "dot");
      total = total < 0 ? sum : g.add("add_n", {total, sum}, {}, "dot");
    }
    Tensor one = Tensor::zeros(Shape{});
    one.data<float>()[0] = 1.0f;
    grads = gradients(g, total, g.add_variable("one", one), input_values);
  }
  PlanOptions po;
  po.keep = outputs;
  for (int v : grads) {
    if (v >= 0) po.keep.push_back(v);
  }
  Program p = plan(std::move(g), po);
  HostAllocator alloc;
  Tensor arena = allocate_tensor(alloc, Shape{static_cast<std::int64_t>(std::max<std::size_t>(p.arena_bytes(), 1))}, DType::u8);
  p.bind(arena.raw());
  StepContext ctx;
  ctx.training = false;
  p.run(ctx);
  const auto read = [&](int v) {
    const TensorDesc& d = p.graph().desc(v);
    Tensor t = Tensor::uninitialized(d.shape, d.dtype);
    std::memcpy(t.raw(), p.data(v), t.nbytes());
    return t;
  };
  EagerResult result;
  for (int v : outputs) result.outputs.push_back(read(v));
  for (std::size_t i = 0; i < grads.size(); ++i) {
    result.input_gradients.push_back(grads[i] >= 0 ? read(grads[i]) : Tensor::zeros(inputs[i].shape(), inputs[i].dtype()));
  }
  return result;
}

}  // namespace nnfit
