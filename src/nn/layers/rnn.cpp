// keras.layers.RNN around Keras's built-in cells (nnfit/nn/recurrent_layers.h): each cell
// is a Recurrent layer over the whole sequence, chained in step order.
#include <map>

#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

RNN::RNN(std::string name, std::vector<std::unique_ptr<Recurrent>> cells, std::vector<std::string> cell_names,
         std::string stack_name)
    : Layer(std::move(name)), cells_(std::move(cells)), cell_names_(std::move(cell_names)),
      stack_name_(std::move(stack_name)) {
  NNFIT_CHECK(!cells_.empty() && cells_.size() == cell_names_.size(), InvalidArgument, this->name(),
              ": RNN needs at least one cell and a name for each");
  NNFIT_CHECK(cells_.size() == 1 || !stack_name_.empty(), InvalidArgument, this->name(),
              ": several cells are a StackedRNNCells, which needs a name");
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    const RecurrentOptions& o = cells_[i]->options();
    const bool last = i + 1 == cells_.size();
    NNFIT_CHECK(last || (o.return_sequences && !o.return_state), InvalidArgument, this->name(), ": cell ",
                cell_names_[i], " passes its whole sequence to the next cell (return_sequences, no return_state)");
    NNFIT_CHECK(o.go_backwards == cells_.front()->options().go_backwards, InvalidArgument, this->name(),
                ": the cells of one RNN read in one direction (go_backwards)");
    // Going backwards, each cell but the last writes its sequence in time order, so the
    // next one reads it (and the mask) backwards as the stacked step would.
    if (!last && o.go_backwards) cells_[i]->set_time_order_output(true);
  }
  NNFIT_CHECK(!stacked() || !outer_options().return_state, Unsupported, this->name(),
              " (RNN): return_state with StackedRNNCells is not supported; use one RNN per cell, each with "
              "return_state=True");
  const std::string scope = this->name() + "/" + (stacked() ? stack_name_ + "/" : "");
  for (std::size_t i = 0; i < cells_.size(); ++i) cells_[i]->set_weight_scope(scope + cell_names_[i] + "/");
}

void RNN::set_call_arguments(const CallArguments& args) {
  NNFIT_CHECK(!stacked() || (args.keyword_inputs.empty() && args.flags.empty() && args.constants.empty()), Unsupported,
              name(), " (RNN): initial_state with StackedRNNCells is not supported");
  cells_.front()->set_call_arguments(args);
}

std::vector<Shape> RNN::compute_output_shapes(const std::vector<Shape>& inputs) const {
  std::vector<Shape> out = cells_.front()->compute_output_shapes(inputs);
  for (std::size_t i = 1; i < cells_.size(); ++i) out = cells_[i]->compute_output_shapes({out[0]});
  return out;
}

void RNN::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  std::vector<Shape> in = inputs;
  for (auto& cell : cells_) {
    cell->build_for(in, weights);
    in = {cell->compute_output_shapes(in)[0]};
  }
  built_ = true;
}

std::vector<int> RNN::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  std::vector<int> masks;
  return call_masked(b, inputs, std::vector<int>(inputs.size(), -1), masks);
}

std::vector<int> RNN::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>& masks,
                                  std::vector<int>& output_masks) {
  std::vector<int> out = cells_.front()->call_masked(b, inputs, masks, output_masks);
  const int mask = masks.empty() ? -1 : masks[0];
  for (std::size_t i = 1; i < cells_.size(); ++i) out = cells_[i]->call_masked(b, {out[0]}, {mask}, output_masks);
  return out;
}

std::vector<Weight*> RNN::all_weights() {
  std::vector<Weight*> out;
  for (auto& cell : cells_) {
    for (Weight* w : cell->all_weights()) out.push_back(w);
  }
  return out;
}

std::vector<Weight*> RNN::saved_weights() {
  std::vector<Weight*> out;
  for (auto& cell : cells_) {
    for (Weight* w : cell->saved_weights()) out.push_back(w);
  }
  return out;
}

void RNN::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  for (auto& cell : cells_) cell->set_trainable(trainable);
}

void RNN::attach_weight_options() {
  for (auto& cell : cells_) cell->attach_weight_options();
  Layer::attach_weight_options();
}

std::vector<WeightGroup> RNN::saved_weight_groups() {
  if (!stacked()) return {{"", {}}, {"cell", cells_.front()->saved_weights()}};
  // Keras names a list's items in a file by class, numbered from the second of a class on
  // (lstm_cell, lstm_cell_1), not by their own names.
  std::vector<WeightGroup> out{{"", {}}, {"cell", {}}};
  std::map<std::string, int> seen;
  for (auto& cell : cells_) {
    std::string key = cell->keras_cell_name();
    const int n = seen[key]++;
    if (n > 0) key += "_" + std::to_string(n);
    out.push_back({"cell/cells/" + key, cell->saved_weights()});
  }
  return out;
}

}  // namespace nnfit
