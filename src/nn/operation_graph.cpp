// OperationGraph (include/nnfit/nn/operation_graph.h).
#include "nnfit/nn/operation_graph.h"

#include "nnfit/core/error.h"

namespace nnfit {

void OperationGraph::add(std::unique_ptr<Operation> op, std::vector<Ref> inputs) {
  for (const Ref& r : inputs) {
    NNFIT_CHECK(r.node < static_cast<int>(nodes_.size()) && (r.node >= 0 || r.index < static_cast<int>(num_inputs_)),
                InvalidArgument, op->name(), ": reads a value no earlier operation or input makes");
  }
  Node n;
  for (const Operation::Constant& c : op->constants()) {
    Tensor t = Tensor::zeros(c.shape);
    for (std::size_t j = 0; j < c.values.size(); ++j) t.data<float>()[j] = static_cast<float>(c.values[j]);
    n.constants.emplace_back(c.key, std::move(t));
  }
  n.op = std::move(op);
  n.inputs = std::move(inputs);
  nodes_.push_back(std::move(n));
}

std::string OperationGraph::describe() const {
  std::string out;
  for (const Node& n : nodes_) out += (out.empty() ? "" : ", ") + n.op->class_name();
  return out;
}

bool OperationGraph::reads_input(std::size_t index) const {
  const auto reads = [&](const Ref& r) { return r.node < 0 && static_cast<std::size_t>(r.index) == index; };
  for (const Node& n : nodes_) {
    for (const Ref& r : n.inputs) {
      if (reads(r)) return true;
    }
  }
  for (const Ref& r : outputs_) {
    if (reads(r)) return true;
  }
  return false;
}

std::vector<int> OperationGraph::emit(Graph& g, const std::vector<int>& inputs, const std::string& prefix) const {
  NNFIT_CHECK(inputs.size() == num_inputs_, InvalidArgument, prefix, ": ", inputs.size(), " inputs for a graph of ",
              num_inputs_);
  std::vector<std::vector<int>> made;
  made.reserve(nodes_.size());
  const auto value = [&](const Ref& r) { return r.node < 0 ? inputs.at(r.index) : made.at(r.node).at(r.index); };
  for (const Node& n : nodes_) {
    std::vector<int> in;
    for (const Ref& r : n.inputs) in.push_back(value(r));
    const std::string name = prefix + "/" + n.op->name();
    const Operation::ConstantFn constant = [&](const std::string& key) {
      for (const auto& [k, t] : n.constants) {
        if (k == key) return g.add_variable(name + "/" + key, t);
      }
      throw InvalidArgument(name + ": no constant \"" + key + "\"");
    };
    made.push_back(n.op->emit(g, in, constant));
  }
  std::vector<int> out;
  for (const Ref& r : outputs_) out.push_back(value(r));
  return out;
}

void emit_added_losses(GraphBuilder& builder, const OperationGraph& losses, const std::vector<int>& feeds,
                       const std::string& prefix) {
  if (!builder.collect_losses()) return;
  for (const int v : losses.emit(builder.graph(), feeds, prefix)) add_summed_loss(builder, v, prefix);
}

void add_summed_loss(GraphBuilder& builder, int value, const std::string& prefix) {
  Graph& g = builder.graph();
  if (g.desc(value).dtype != DType::f32) value = g.add("cast", {value}, Attrs{{"dtype", std::string("float32")}}, prefix);
  if (g.desc(value).shape.rank() > 0) {
    value = g.add("reduce", {value}, Attrs{{"kind", std::string("sum")}, {"keepdims", std::int64_t{0}}}, prefix);
  }
  builder.add_loss(value);
}

}  // namespace nnfit
