// Keras codecs of the recurrent layers: SimpleRNN, LSTM, GRU (Keras 3's keys, and Keras 2's
// time_major and implementation), RNN around the built-in cells (SimpleRNNCell, LSTMCell,
// GRUCell, StackedRNNCells of them) and the Bidirectional and TimeDistributed wrappers.
// What nnfit does not run yet (stateful, a custom cell) is refused by name.
#include "model/keras/codecs/codec.h"

#include "model/keras/keras_layers.h"
#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

LayerPtr read_recurrent(const Reader& r, const std::string& p, const json& c, const std::string& name, RecurrentCell cell) {
  check_keys(r, p, c, kCommon,
             {"units", "activation", "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer",
              "bias_initializer", "unit_forget_bias", "reset_after", "kernel_regularizer", "recurrent_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "recurrent_constraint",
              "bias_constraint", "dropout", "recurrent_dropout", "seed", "return_sequences", "return_state",
              "go_backwards", "stateful", "unroll", "zero_output_for_mask", "use_cudnn", "time_major",
              "implementation"});
  require_value(r, p, c, "stateful", false);
  require_value(r, p, c, "time_major", false);
  for (const char* key : {"dropout", "recurrent_dropout"}) {
    const double rate = get_number(r, p, c, key, 0.0);
    if (rate < 0.0 || rate >= 1.0) r.invalid(p, std::string("\"") + key + "\" must be in [0, 1), got " + show(c[key]));
  }
  if (cell == RecurrentCell::simple_rnn && find(c, "recurrent_activation")) {
    r.invalid(p, "SimpleRNN has no \"recurrent_activation\"");
  }
  RecurrentOptions o;
  o.units = get_int(r, p, c, "units", std::nullopt);
  if (o.units <= 0) r.invalid(p, "\"units\" must be positive, got " + std::to_string(o.units));
  o.activation = get_activation(r, p, c, o.activation);
  o.recurrent_activation = get_activation(r, p, c, "recurrent_activation", o.recurrent_activation);
  o.use_bias = get_bool(r, p, c, "use_bias", o.use_bias);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.recurrent_initializer = get_initializer(r, p, c, "recurrent_initializer", o.recurrent_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  o.unit_forget_bias = get_bool(r, p, c, "unit_forget_bias", o.unit_forget_bias);
  o.reset_after = get_bool(r, p, c, "reset_after", o.reset_after);
  o.return_sequences = get_bool(r, p, c, "return_sequences", false);
  o.return_state = get_bool(r, p, c, "return_state", false);
  o.go_backwards = get_bool(r, p, c, "go_backwards", false);
  o.zero_output_for_mask = get_bool(r, p, c, "zero_output_for_mask", false);
  o.dropout = get_number(r, p, c, "dropout", 0.0);
  o.recurrent_dropout = get_number(r, p, c, "recurrent_dropout", 0.0);
  if (const json* seed = value(c, "seed"); seed && seed->is_number_integer()) o.seed = seed->get<std::int64_t>();
  if (cell == RecurrentCell::lstm) return std::make_unique<LSTM>(name, o);
  if (cell == RecurrentCell::gru) return std::make_unique<GRU>(name, o);
  return std::make_unique<SimpleRNN>(name, o);
}

LayerPtr read_simple_rnn(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_recurrent(r, p, c, name, RecurrentCell::simple_rnn);
}
LayerPtr read_lstm(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_recurrent(r, p, c, name, RecurrentCell::lstm);
}
LayerPtr read_gru(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_recurrent(r, p, c, name, RecurrentCell::gru);
}

// A cell's Keras class and the layer class that runs it.
const char* cell_layer_class(const std::string& cls) {
  if (cls == "SimpleRNNCell") return "SimpleRNN";
  if (cls == "LSTMCell") return "LSTM";
  if (cls == "GRUCell") return "GRU";
  return nullptr;
}

// keras.layers.RNN: its "cell" entry (one cell, a StackedRNNCells, or a list of cells)
// read as one recurrent layer per cell carrying the RNN's flags (nnfit/nn/recurrent_layers.h).
LayerPtr read_rnn(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape& in) {
  check_keys(r, p, c, kCommon,
             {"cell", "return_sequences", "return_state", "go_backwards", "stateful", "unroll",
              "zero_output_for_mask", "time_major", "input_length", "num_constants"});
  require_value(r, p, c, "stateful", false);
  require_value(r, p, c, "time_major", false);
  if (get_int(r, p, c, "num_constants", 0) != 0) r.unsupported(p, "\"num_constants\" other than 0 is not supported");
  const json* cell = find(c, "cell");
  if (!cell) r.invalid(p, "missing required key \"cell\"");
  // The cells' entries, in step order, and the stack's name when there are several.
  std::vector<std::pair<std::string, const json*>> cells;
  std::string stack;
  auto add_cell = [&](const std::string& cp, const json& entry) {
    expect_object(r, cp, entry);
    check_keys(r, cp, entry, {"module", "class_name", "config", "registered_name", "build_config"});
    cells.emplace_back(cp, &entry);
  };
  const std::string cp = p + ".cell";
  if (cell->is_array()) {
    for (std::size_t i = 0; i < cell->size(); ++i) add_cell(cp + "[" + std::to_string(i) + "]", (*cell)[i]);
    stack = "stacked_rnn_cells";
  } else {
    expect_object(r, cp, *cell);
    if (get_string(r, cp, *cell, "class_name", std::nullopt) == "StackedRNNCells") {
      const json* cfg = find(*cell, "config");
      if (!cfg) r.invalid(cp, "missing required key \"config\"");
      expect_object(r, cp + ".config", *cfg);
      check_keys(r, cp + ".config", *cfg, {"name", "trainable", "dtype", "cells"});
      stack = get_string(r, cp + ".config", *cfg, "name", std::string("stacked_rnn_cells"));
      const json* list = find(*cfg, "cells");
      if (!list || !list->is_array()) r.invalid(cp + ".config", "\"cells\" must be a list of cells");
      for (std::size_t i = 0; i < list->size(); ++i) {
        add_cell(cp + ".config.cells[" + std::to_string(i) + "]", (*list)[i]);
      }
    } else {
      add_cell(cp, *cell);
    }
  }
  if (cells.empty()) r.invalid(cp, "an RNN needs at least one cell");
  std::vector<std::unique_ptr<Recurrent>> layers;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& [path, entry] = cells[i];
    const std::string cls = get_string(r, path, *entry, "class_name", std::nullopt);
    const char* layer_cls = cell_layer_class(cls);
    if (!layer_cls) {
      r.unsupported(path, "RNN with a cell of class \"" + cls +
                              "\" is not supported: nnfit runs SimpleRNNCell, LSTMCell, GRUCell and StackedRNNCells "
                              "of them (a cell of your own has no C++ form)");
    }
    const json* cfg = find(*entry, "config");
    if (!cfg) r.invalid(path, "missing required key \"config\"");
    expect_object(r, path + ".config", *cfg);
    json config = *cfg;
    const std::string cell_name = get_string(r, path + ".config", config, "name", keras_snake_case(cls));
    const bool last = i + 1 == cells.size();
    config["return_sequences"] = last ? get_bool(r, p, c, "return_sequences", false) : true;
    config["return_state"] = last && get_bool(r, p, c, "return_state", false);
    config["go_backwards"] = get_bool(r, p, c, "go_backwards", false);
    config["zero_output_for_mask"] = get_bool(r, p, c, "zero_output_for_mask", false);
    const std::string layer_name = stack.empty() ? name : name + "/" + cell_name;
    config["name"] = layer_name;
    std::unique_ptr<Layer> l = read_layer(r, path, layer_cls, config, layer_name, false, {in});
    layers.emplace_back(static_cast<Recurrent*>(l.release()));
    names.push_back(cell_name);
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (names[i] == names[j]) r.invalid(cells[i].first, "two cells of the stack are named \"" + names[i] + "\"");
    }
  }
  return std::make_unique<RNN>(name, std::move(layers), std::move(names), stack);
}

std::string strip_prefix(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

// A wrapped recurrent layer's entry, named as Keras names it (prefix + its base name).
std::unique_ptr<Recurrent> read_wrapped(const Reader& r, const std::string& p, const json& entry, const Shape& in,
                                        const std::string& prefix, const std::string* go_backwards_of,
                                        std::string base = {}) {
  expect_object(r, p, entry);
  check_keys(r, p, entry, {"module", "class_name", "config", "registered_name", "build_config"});
  const std::string cls = canonical_layer_class(get_string(r, p, entry, "class_name", std::nullopt));
  if (cls != "SimpleRNN" && cls != "LSTM" && cls != "GRU") {
    r.unsupported(p, "Bidirectional around a " + cls + " is not supported (SimpleRNN, LSTM or GRU)");
  }
  const json* cfg = find(entry, "config");
  if (!cfg) r.invalid(p, "missing required key \"config\"");
  expect_object(r, p + ".config", *cfg);
  json config = *cfg;
  if (base.empty()) {
    base = strip_prefix(strip_prefix(get_string(r, p + ".config", config, "name", snake_case(cls)), "forward_"), "backward_");
  }
  // tf.keras stores only the forward layer when the backward one is its mirror.
  if (go_backwards_of) config["go_backwards"] = !get_bool(r, p + ".config", *cfg, "go_backwards", false);
  config["name"] = prefix + base;
  std::unique_ptr<Layer> l = read_layer(r, p, cls, config, prefix + base, false, {in});
  return std::unique_ptr<Recurrent>(static_cast<Recurrent*>(l.release()));
}

LayerPtr read_bidirectional(const Reader& r, const std::string& p, const json& c, const std::string& name,
                            const Shape& in) {
  check_keys(r, p, c, kCommon, {"layer", "backward_layer", "merge_mode", "num_constants"});
  if (get_int(r, p, c, "num_constants", 0) != 0) r.unsupported(p, "\"num_constants\" other than 0 is not supported");
  const json* layer = find(c, "layer");
  if (!layer) r.invalid(p, "missing required key \"layer\"");
  std::string merge;
  if (const json* m = value(c, "merge_mode")) {
    if (!m->is_string()) r.invalid(p, "\"merge_mode\" must be a string or null, got " + show(*m));
    merge = m->get<std::string>();
    if (merge != "concat" && merge != "sum" && merge != "mul" && merge != "ave") {
      r.invalid(p, "\"merge_mode\" must be \"concat\", \"sum\", \"mul\", \"ave\" or null, got " + show(*m));
    }
  }
  std::unique_ptr<Recurrent> forward = read_wrapped(r, p + ".layer", *layer, in, "forward_", nullptr);
  const std::string base = strip_prefix(forward->name(), "forward_");
  std::unique_ptr<Recurrent> backward;
  if (const json* b = value(c, "backward_layer")) {
    backward = read_wrapped(r, p + ".backward_layer", *b, in, "backward_", nullptr);
  } else {
    const std::string mirror = "go_backwards";
    backward = read_wrapped(r, p + ".layer", *layer, in, "backward_", &mirror, base);
  }
  return std::make_unique<Bidirectional>(name, std::move(forward), std::move(backward), merge);
}

// TimeDistributed around any one-output layer, read from its "layer" entry with the
// shape of one step.
LayerPtr read_time_distributed(const Reader& r, const std::string& p, const json& c, const std::string& name,
                               const Shape& in) {
  check_keys(r, p, c, kCommon, {"layer"});
  const json* layer = find(c, "layer");
  if (!layer) r.invalid(p, "missing required key \"layer\"");
  const std::string lp = p + ".layer";
  expect_object(r, lp, *layer);
  check_keys(r, lp, *layer, {"module", "class_name", "config", "registered_name", "build_config"});
  const std::string cls = canonical_layer_class(get_string(r, lp, *layer, "class_name", std::nullopt));
  const json* cfg = find(*layer, "config");
  if (!cfg) r.invalid(lp, "missing required key \"config\"");
  expect_object(r, lp + ".config", *cfg);
  if (in.rank() < 2) {
    r.invalid(p, "TimeDistributed needs inputs of shape (steps, ...) with at least one axis past the steps, got " +
                     in.to_string());
  }
  const Shape step(std::vector<std::int64_t>(in.dims().begin() + 1, in.dims().end()));
  std::unique_ptr<Layer> inner =
      read_layer(r, lp, cls, *cfg, get_string(r, lp + ".config", *cfg, "name", snake_case(cls)), false, {step});
  return std::make_unique<TimeDistributed>(name, std::move(inner));
}

// A cell of an RNN as Keras writes it: its layer's entry under the cell's class and name,
// without the RNN's own keys.
ojson write_cell(const Writer& w, const Recurrent& cell, const std::string& name) {
  ojson out = write_layer_object(w, cell);
  out["class_name"] = cell.class_name() + "Cell";
  ojson& c = out["config"];
  for (const char* key : {"return_sequences", "return_state", "go_backwards", "stateful", "unroll",
                          "zero_output_for_mask", "time_major", "activity_regularizer"}) {
    c.erase(key);
  }
  c["name"] = name;
  // Keras's build_config of a cell: the features of one step, which its kernel has.
  const std::vector<const Weight*> weights = cell.all_weights();
  if (!weights.empty()) out["build_config"] = {{"input_shape", {nullptr, weights[0]->value.shape()[0]}}};
  return out;
}

bool write_recurrent(const Writer& w, const Layer& l, ojson& c) {
  if (auto* rnn = dynamic_cast<const RNN*>(&l)) {
    const RecurrentOptions& o = rnn->outer_options();
    c.update({{"return_sequences", o.return_sequences}, {"return_state", o.return_state},
              {"go_backwards", rnn->go_backwards()}, {"stateful", false}, {"unroll", false},
              {"zero_output_for_mask", o.zero_output_for_mask}});
    if (w.keras2) c["time_major"] = false;
    if (!rnn->stacked()) {
      c["cell"] = write_cell(w, rnn->cell(0), rnn->cell_name(0));
      return true;
    }
    ojson cells = ojson::array();
    for (std::size_t i = 0; i < rnn->cell_count(); ++i) cells.push_back(write_cell(w, rnn->cell(i), rnn->cell_name(i)));
    ojson stack = write_layer_object(w, rnn->cell(0));
    stack["class_name"] = "StackedRNNCells";
    ojson sc = {{"name", rnn->stack_name()}, {"trainable", l.trainable()}};
    if (stack["config"].contains("dtype")) sc["dtype"] = stack["config"]["dtype"];
    sc["cells"] = cells;
    stack["config"] = sc;
    if (cells[0].contains("build_config")) stack["build_config"] = cells[0]["build_config"];
    c["cell"] = stack;
    return true;
  }
  if (auto* td = dynamic_cast<const TimeDistributed*>(&l)) {
    c["layer"] = write_layer_object(w, td->layer());
    return true;
  }
  if (auto* bi = dynamic_cast<const Bidirectional*>(&l)) {
    c["merge_mode"] = bi->merge_mode().empty() ? ojson(nullptr) : ojson(bi->merge_mode());
    c["layer"] = write_layer_object(w, bi->forward_layer());
    c["backward_layer"] = write_layer_object(w, bi->backward_layer());
    return true;
  }
  auto* rnn = dynamic_cast<const Recurrent*>(&l);
  if (!rnn) return false;
  const RecurrentOptions& o = rnn->options();
  c.update({{"return_sequences", o.return_sequences}, {"return_state", o.return_state},
            {"go_backwards", o.go_backwards}, {"stateful", false}, {"unroll", false}});
  if (!w.keras2 || o.zero_output_for_mask) c["zero_output_for_mask"] = o.zero_output_for_mask;
  if (w.keras2) c["time_major"] = false;
  c.update({{"units", o.units}, {"activation", write_activation(w, l, o.activation)}});
  if (rnn->cell() != RecurrentCell::simple_rnn) {
    c["recurrent_activation"] = write_activation(w, l, o.recurrent_activation);
  }
  c.update({{"use_bias", o.use_bias}, {"kernel_initializer", write_initializer(o.kernel_initializer)},
            {"recurrent_initializer", write_initializer(o.recurrent_initializer)},
            {"bias_initializer", write_initializer(o.bias_initializer)}});
  if (rnn->cell() == RecurrentCell::lstm) c["unit_forget_bias"] = o.unit_forget_bias;
  c.update({{"kernel_regularizer", nullptr}, {"recurrent_regularizer", nullptr}, {"bias_regularizer", nullptr},
            {"activity_regularizer", nullptr}, {"kernel_constraint", nullptr}, {"recurrent_constraint", nullptr},
            {"bias_constraint", nullptr}, {"dropout", o.dropout}, {"recurrent_dropout", o.recurrent_dropout}});
  if (!w.keras2) c["seed"] = o.seed ? ojson(o.seed) : ojson(nullptr);
  if (rnn->cell() == RecurrentCell::gru) c["reset_after"] = o.reset_after;
  if (w.keras2 && rnn->cell() != RecurrentCell::simple_rnn) c["implementation"] = 2;
  return true;
}

}  // namespace

const LayerFamily& recurrent_layers() {
  static const LayerFamily family{
      {{"SimpleRNN", read_simple_rnn}, {"LSTM", read_lstm}, {"GRU", read_gru}, {"Bidirectional", read_bidirectional},
       {"TimeDistributed", read_time_distributed}, {"RNN", read_rnn}},
      write_recurrent};
  return family;
}

}  // namespace nnfit::keras_json
