// Bidirectional (nnfit/nn/recurrent_layers.h): both layers' nodes on the one input, then
// the merge. The backward layer writes its sequence in time order (the rnn op's
// time_order_output), which is Keras's flip of it.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Bidirectional::Bidirectional(std::string name, std::unique_ptr<Recurrent> forward, std::unique_ptr<Recurrent> backward,
                             std::string merge_mode)
    : Layer(std::move(name)), forward_(std::move(forward)), backward_(std::move(backward)),
      merge_mode_(std::move(merge_mode)) {
  NNFIT_CHECK(forward_ && backward_, InvalidArgument, this->name(), ": needs a forward and a backward layer");
  NNFIT_CHECK(merge_mode_.empty() || merge_mode_ == "concat" || merge_mode_ == "sum" || merge_mode_ == "mul" ||
                  merge_mode_ == "ave",
              InvalidArgument, this->name(), ": merge_mode must be \"concat\", \"sum\", \"mul\", \"ave\" or null, got \"",
              merge_mode_, "\"");
  const RecurrentOptions& f = forward_->options();
  const RecurrentOptions& b = backward_->options();
  NNFIT_CHECK(forward_->cell() == backward_->cell(), InvalidArgument, this->name(), ": the forward layer is a ",
              forward_->class_name(), ", the backward one a ", backward_->class_name());
  NNFIT_CHECK(!f.go_backwards && b.go_backwards, Unsupported, this->name(),
              ": the forward layer must read forwards and the backward one backwards (go_backwards ", f.go_backwards,
              " and ", b.go_backwards, ")");
  NNFIT_CHECK(f.return_sequences == b.return_sequences && f.return_state == b.return_state, InvalidArgument,
              this->name(), ": the forward and backward layers must agree on return_sequences and return_state");
  backward_->set_time_order_output(b.return_sequences);
}

int Bidirectional::num_outputs() const {
  const int merged = merge_mode_.empty() ? 2 : 1;
  return merged + (forward_->num_outputs() - 1) * 2;
}

std::vector<Shape> Bidirectional::compute_output_shapes(const std::vector<Shape>& inputs) const {
  const std::vector<Shape> f = forward_->compute_output_shapes(inputs);
  const std::vector<Shape> b = backward_->compute_output_shapes(inputs);
  NNFIT_CHECK(f[0] == b[0] || merge_mode_ == "concat" || merge_mode_.empty(), InvalidArgument, name(),
              ": merge_mode \"", merge_mode_, "\" needs outputs of one shape, got ", f[0].to_string(), " and ",
              b[0].to_string());
  std::vector<Shape> out;
  if (merge_mode_ == "concat") {
    std::vector<std::int64_t> dims = f[0].dims();
    dims.back() += b[0].dim(-1);
    out.push_back(Shape(dims));
  } else if (merge_mode_.empty()) {
    out = {f[0], b[0]};
  } else {
    out.push_back(f[0]);
  }
  out.insert(out.end(), f.begin() + 1, f.end());
  out.insert(out.end(), b.begin() + 1, b.end());
  return out;
}

Shape Bidirectional::output_shape(const Shape& input_shape) const { return compute_output_shapes({input_shape})[0]; }

void Bidirectional::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  compute_output_shapes(inputs);
  forward_->build_for(inputs, weights);
  backward_->build_for(inputs, weights);
  built_ = true;
}

std::vector<int> Bidirectional::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  std::vector<int> masks;
  return call_masked(b, inputs, std::vector<int>(inputs.size(), -1), masks);
}

std::vector<int> Bidirectional::call_masked(GraphBuilder& b, const std::vector<int>& inputs,
                                            const std::vector<int>& masks, std::vector<int>& output_masks) {
  std::vector<int> unused;
  const std::vector<int> f = forward_->call_masked(b, inputs, masks, unused);
  const std::vector<int> r = backward_->call_masked(b, inputs, masks, unused);
  Graph& g = b.graph();
  const std::string& n = name();
  std::vector<int> out;
  if (merge_mode_ == "concat") {
    Attrs a;
    a.set("axis", g.desc(f[0]).shape.rank() - 1);
    out.push_back(g.add("concat", {f[0], r[0]}, a, n + "/concat"));
  } else if (merge_mode_ == "sum") {
    out.push_back(g.add("add_n", {f[0], r[0]}, {}, n + "/sum"));
  } else if (merge_mode_ == "mul") {
    out.push_back(g.add("mul", {f[0], r[0]}, {}, n + "/mul"));
  } else if (merge_mode_ == "ave") {
    Attrs a;
    a.set("factor", 0.5);
    out.push_back(g.add("scale", {g.add("add_n", {f[0], r[0]}, {}, n + "/sum")}, a, n + "/ave"));
  } else {
    out = {f[0], r[0]};
  }
  // Keras: with return_sequences each merged sequence keeps the mask; states carry none.
  const std::size_t merged = out.size();
  out.insert(out.end(), f.begin() + 1, f.end());
  out.insert(out.end(), r.begin() + 1, r.end());
  const int mask = forward_->options().return_sequences && !masks.empty() ? masks[0] : -1;
  output_masks.assign(out.size(), -1);
  for (std::size_t i = 0; i < merged; ++i) output_masks[i] = mask;
  return out;
}

void Bidirectional::attach_weight_options() {
  forward_->attach_weight_options();
  backward_->attach_weight_options();
  Layer::attach_weight_options();
}

void Bidirectional::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  forward_->set_trainable(trainable);
  backward_->set_trainable(trainable);
}

std::vector<Weight*> Bidirectional::all_weights() {
  std::vector<Weight*> out = forward_->all_weights();
  for (Weight* w : backward_->all_weights()) out.push_back(w);
  return out;
}

std::vector<Weight*> Bidirectional::saved_weights() {
  std::vector<Weight*> out = forward_->saved_weights();
  for (Weight* w : backward_->saved_weights()) out.push_back(w);
  return out;
}

std::vector<WeightGroup> Bidirectional::saved_weight_groups() {
  std::vector<WeightGroup> out{{"", {}}};
  for (auto [prefix, layer] : {std::pair<const char*, Recurrent*>{"forward_layer", forward_.get()},
                               std::pair<const char*, Recurrent*>{"backward_layer", backward_.get()}}) {
    for (WeightGroup& group : layer->saved_weight_groups()) {
      out.push_back({std::string(prefix) + (group.path.empty() ? "" : "/" + group.path), std::move(group.weights)});
    }
  }
  return out;
}

}  // namespace nnfit
