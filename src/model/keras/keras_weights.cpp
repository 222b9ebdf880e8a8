// A model's variables in Keras 3's and the legacy HDF5 layouts (keras_weights.h). Reading
// checks every count and shape before anything is copied, so a file that does not fit
// leaves the model as it was.
#include "model/keras/keras_weights.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

#include "backend/common/slot_update.h"
#include "model/keras/keras_json.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/lr_schedule.h"
#include "nnfit/nn/nested_model.h"

namespace nnfit::keras_files {

namespace {

// Calls f(layer or nullptr for an input, its name, its group path) for every saveable of
// a container in Keras's order and naming. Functional containers list their InputLayers
// (no variables); Sequential ones do not. Nested models recurse into <path>/layers.
using Visit = std::function<void(Layer*, const std::string& name, const std::string& path)>;

void walk(const LayerGraph& g, bool sequential, const std::string& prefix, const Visit& f) {
  std::map<std::string, int> used;
  auto path_for = [&](const std::string& cls) {
    std::string name = keras_json::keras_snake_case(cls);
    auto [it, fresh] = used.emplace(name, 0);
    if (!fresh) {
      name += '_';
      name += std::to_string(++it->second);
    }
    std::string path = prefix;
    path += '/';
    path += name;
    return path;
  };
  if (!sequential) {
    for (const InputSpec& in : g.inputs()) f(nullptr, in.name, path_for("InputLayer"));
  }
  for (const auto& l : g.layers()) {
    const std::string path = path_for(l->type_name());  // Keras names groups by the class (GroupedQueryAttention)
    if (auto* nested = dynamic_cast<NestedModel*>(l.get())) {
      walk(nested->graph(), nested->class_name() == "Sequential", path + "/layers", f);
    }
    f(l.get(), l->name(), path);
  }
}

// A layer's variables by Keras 3 group ("vars" under the layer's path, or under a
// sublayer's such as a recurrent layer's "cell"); none for inputs and nested models
// (whose layers are walked themselves).
std::vector<WeightGroup> own_variables(Layer* l) {
  if (!l || dynamic_cast<NestedModel*>(l)) return {{"", {}}};
  return l->saved_weight_groups();
}

std::string vars_path(const std::string& layer_path, const WeightGroup& group) {
  return layer_path + (group.path.empty() ? "" : "/" + group.path) + "/vars";
}

void check_fits(const Tensor& value, const Weight& w, const std::string& where, const std::string& what) {
  if (value.shape() != w.value.shape() || value.dtype() != w.value.dtype()) {
    throw DataError(where, -1,
                    what + ": the file holds " + value.shape().to_string() + " " + std::string(dtype_name(value.dtype())) +
                        " for " + w.name + ", which is " + w.value.shape().to_string() + " " +
                        std::string(dtype_name(w.value.dtype())),
                    "the file was saved from a different model");
  }
}

// Copies checked values into their destinations only once every one has been checked.
// The destinations are the model's tensors, in device memory on a GPU: write_tensor.
struct PendingCopies {
  const Model& model;
  std::vector<std::pair<Tensor, Tensor>> copies;  // (source, destination)
  void add(Tensor src, Tensor dst) { copies.emplace_back(std::move(src), std::move(dst)); }
  void apply() {
    for (auto& [src, dst] : copies) model.write_tensor(dst, src);
  }
};

Tensor scalar_i64(std::int64_t v) {
  Tensor t = Tensor::zeros(Shape{}, DType::i64);
  *t.data<std::int64_t>() = v;
  return t;
}

Tensor scalar_f32(double v) {
  Tensor t = Tensor::zeros(Shape{}, DType::f32);
  *t.data<float>() = static_cast<float>(v);
  return t;
}

// A count saved as int64, int32 or a whole float32; negative, fractional, non-finite or
// past 2^53 (float64 1e308, read as float32 inf) is a damaged file, never cast.
std::int64_t read_iterations(const Tensor& t, const std::string& where, const std::string& what) {
  if (t.numel() != 1) throw DataError(where, -1, what + ": the iteration count is not a scalar");
  double v = 0;
  if (t.dtype() == DType::i64) {
    v = static_cast<double>(*t.data<std::int64_t>());
  } else if (t.dtype() == DType::i32) {
    v = *t.data<std::int32_t>();
  } else if (t.dtype() == DType::f32) {
    v = *t.data<float>();
  } else {
    throw DataError(where, -1, what + ": the iteration count has an unexpected type");
  }
  if (!(v >= 0) || v > 9007199254740992.0 || v != std::floor(v)) {
    std::ostringstream shown;
    shown << v;
    throw DataError(where, -1, what + ": the iteration count is " + shown.str() + ", not a whole number >= 0",
                    "the file is damaged; save it again from its source, or load weights without the optimizer");
  }
  return t.dtype() == DType::i64 ? *t.data<std::int64_t>() : static_cast<std::int64_t>(v);
}

// Reads the dataset at `path` into the pending copies for `slot`, checking its shape.
void read_slot(const io::H5File& file, const std::string& path, const Tensor& slot, const std::string& where,
               PendingCopies& copies) {
  Tensor value = file.read(path);
  if (value.dtype() == DType::i32 && value.shape().rank() == 0) {  // Adafactor's placeholder (always 0 in Keras)
    Tensor f = Tensor::zeros(Shape{}, DType::f32);
    *f.data<float>() = static_cast<float>(*value.data<std::int32_t>());
    value = f;
  }
  if (value.shape() != slot.shape()) {
    throw DataError(where, -1, path + ": the file holds " + value.shape().to_string() + " for an optimizer slot of " +
                                   slot.shape().to_string());
  }
  copies.add(std::move(value), slot);
}

// A top-level layer's variables in the legacy layout: a nested model's group holds all of
// its layers' variables.
std::vector<Weight*> legacy_variables(Layer& l) {
  auto* nested = dynamic_cast<NestedModel*>(&l);
  if (!nested) return l.saved_weights();
  std::vector<Weight*> vars;
  for (const auto& inner : nested->graph().layers()) {
    for (Weight* w : inner->saved_weights()) vars.push_back(w);
  }
  return vars;
}

// Keras's Nadam _u_product after the model's iterations: Π_{s=1..t} β1·(1 − 0.5·0.96^s),
// the kernels' own function (Note [Nadam's schedule without state]).
double nadam_u_product(const Model& m) {
  const double beta_1 = m.compile_options().optimizer.beta_1;
  double decay = 0.0;
  return nnfit::nadam_u_product(beta_1, nadam_prefix(beta_1), m.iterations(), &decay);
}

bool constant_rate(const Model& m) {
  return dynamic_cast<const ConstantLearningRate*>(m.compile_options().optimizer.learning_rate.get()) != nullptr;
}

// group/i, built by appending (GCC 12 warns falsely, -Wrestrict, on a + "/" + b here).
std::string member(const std::string& group, std::size_t i) {
  std::string path = group;
  path += '/';
  path += std::to_string(i);
  return path;
}

// Whether slot k of optimizer_slots() is one of Adafactor's placeholders: its r or c of a
// variable of rank < 2 (Optimizer::slot_is_placeholder), found from the order Keras lists
// them in: the EMA averages (use_ema), then r, c, v per variable, v shaped as the variable.
bool adafactor_placeholder(const Model& model, const std::vector<Tensor>& slots, std::size_t k) {
  const OptimizerOptions& o = model.compile_options().optimizer;
  if (o.name != "adafactor") return false;
  const std::size_t first = o.use_ema ? slots.size() / 4 : 0;  // one average per variable before the 3 slots
  if (k < first) return false;
  const std::size_t j = k - first, kind = j % 3;
  return kind < 2 && slots[first + j - kind + 2].shape().rank() < 2;
}

// The (inner) optimizer's variables as Keras lists them, from `group`/`first` on: the
// iteration count, a constant learning rate, the slots, Nadam's _u_product.
void write_optimizer_vars(io::H5File& file, const std::string& group, int first, const Model& model) {
  if (!file.is_group(group)) {
    file.create_group(group);
    file.set_string_attr(group, "name", model.compile_options().optimizer.name);
  }
  int i = first;
  file.write(member(group, static_cast<std::size_t>(i++)), scalar_i64(model.iterations()));
  if (constant_rate(model)) file.write(member(group, static_cast<std::size_t>(i++)), scalar_f32(model.learning_rate()));
  const std::vector<Tensor> slots = model.optimizer_slots();
  for (std::size_t k = 0; k < slots.size(); ++k) {
    // Adafactor's placeholders for a variable of rank < 2 are int32 zeros in Keras's files.
    const Tensor value = adafactor_placeholder(model, slots, k) ? Tensor::zeros(Shape{}, DType::i32) : model.host_view(slots[k]);
    file.write(member(group, static_cast<std::size_t>(i++)), value);
  }
  // Nadam's _u_product, a function of the iteration count, last (as Keras lists it).
  if (model.compile_options().optimizer.name == "nadam") {
    file.write(member(group, static_cast<std::size_t>(i++)), scalar_f32(nadam_u_product(model)));
  }
}

struct OptimizerState {
  std::int64_t iterations = -1;
  double learning_rate = 0;  // a saved constant rate (ReduceLROnPlateau may have changed it)
  double loss_scale = 0;     // > 0: a saved dynamic loss scale
  std::int64_t good_steps = 0;
};

// Reads the (inner) optimizer's variables of `group`: the iteration count, a learning
// rate when the saving optimizer had a constant one, the slots; after them Nadam's
// _u_product (recomputed from the iterations, so not read).
OptimizerState read_optimizer_vars(const io::H5File& file, const std::string& group, Model& model,
                                   const std::string& where, PendingCopies& copies) {
  OptimizerState state;
  const std::vector<Tensor> slots = model.optimizer_slots();
  std::size_t held = 0;
  while (file.is_dataset(member(group, held))) ++held;
  const std::size_t tail = model.compile_options().optimizer.name == "nadam" ? 1 : 0;
  // Note [An optimizer saved unbuilt]: Keras builds an optimizer's slots at its first step,
  // so a model saved after compile but before training holds only the iteration count and
  // a learning rate. Its slots are their initial values, which compile() gave this
  // model's; the first step goes on from there as Keras's does.
  const bool unbuilt = held >= 1 && held <= 2 && held < slots.size() + tail + 1;
  const std::size_t head = unbuilt ? held : held - slots.size() - tail;
  if (!unbuilt && (held < slots.size() + tail + 1 || head > 2)) {
    throw DataError(where, -1,
                    group + ": the file holds " + std::to_string(held) + " optimizer variables; a " +
                        model.compile_options().optimizer.name + " of this model has " + std::to_string(slots.size()) +
                        " slots plus its iteration count",
                    "the file was saved with another optimizer; compile with that one or load weights only");
  }
  state.iterations = read_iterations(file.read(member(group, 0)), where, member(group, 0));
  if (head == 2 && constant_rate(model)) {
    const Tensor lr = file.read(member(group, 1));
    if (lr.dtype() == DType::f32 && lr.numel() == 1 && *lr.data<float>() > 0) state.learning_rate = *lr.data<float>();
  }
  for (std::size_t i = 0; i < slots.size() && !unbuilt; ++i) {
    read_slot(file, member(group, head + i), slots[i], where, copies);
  }
  return state;
}

}  // namespace

void write_keras3_weights(io::H5File& file, const Model& model) {
  walk(model.graph(), model.class_name() == "Sequential", "layers", [&](Layer* l, const std::string& name, const std::string& path) {
    for (const WeightGroup& group : own_variables(l)) {
      const std::string vars = vars_path(path, group);
      file.create_group(vars);
      file.set_string_attr(vars, "name", name);
      for (std::size_t i = 0; i < group.weights.size(); ++i) {
        file.write(vars + "/" + std::to_string(i), model.host_view(group.weights[i]->value));
      }
    }
  });
  if (model.compiled()) {
    const OptimizerOptions& o = model.compile_options().optimizer;
    if (o.loss_scale.enabled) {
      // Keras's LossScaleOptimizer: its own iteration count (unused: Keras counts in the
      // inner optimizer), learning rate 0, step_counter and dynamic_scale, then the inner
      // optimizer's variables, which Keras also writes under optimizer/inner_optimizer.
      file.create_group("optimizer/vars");
      file.set_string_attr("optimizer/vars", "name", "loss_scale_optimizer");
      file.write("optimizer/vars/0", scalar_i64(0));
      file.write("optimizer/vars/1", scalar_f32(0.0));
      file.write("optimizer/vars/2", scalar_i64(model.loss_scale_good_steps()));
      file.write("optimizer/vars/3", scalar_f32(model.loss_scale()));
      write_optimizer_vars(file, "optimizer/vars", 4, model);
      file.create_group("optimizer/inner_optimizer");
      write_optimizer_vars(file, "optimizer/inner_optimizer/vars", 0, model);
    } else {
      write_optimizer_vars(file, "optimizer/vars", 0, model);
    }
  }
  file.create_group("vars");
  file.set_string_attr("vars", "name", model.name());
}

void read_keras3_weights(const io::H5File& file, Model& model, const std::string& where, bool optimizer) {
  PendingCopies copies{model, {}};
  walk(model.graph(), model.class_name() == "Sequential", "layers", [&](Layer* l, const std::string& name, const std::string& path) {
    for (const WeightGroup& group : own_variables(l)) {
      const std::vector<Weight*>& vars = group.weights;
      const std::string at = vars_path(path, group);
      const std::string what = at + " (layer '" + name + "')";
      if (!file.is_group(at)) {
        if (vars.empty()) continue;  // writers may omit weightless layers
        throw DataError(where, -1, what + ": missing; the file has no variables for this layer",
                        "the file was saved from a different model");
      }
      std::size_t held = 0;
      while (file.is_dataset(at + "/" + std::to_string(held))) ++held;
      if (held != vars.size()) {
        throw DataError(where, -1,
                        what + ": the file holds " + std::to_string(held) + " variables, the layer has " +
                            std::to_string(vars.size()),
                        "the file was saved from a different model");
      }
      for (std::size_t i = 0; i < vars.size(); ++i) {
        Tensor value = file.read(at + "/" + std::to_string(i));
        check_fits(value, *vars[i], where, what + "/" + std::to_string(i));
        copies.add(std::move(value), vars[i]->value);
      }
    }
  });
  OptimizerState state;
  if (optimizer && model.compiled() && file.is_group("optimizer/vars")) {
    // A LossScaleOptimizer's file keeps the inner optimizer's variables in a group of their
    // own, and its scale in optimizer/vars/2 and /3; loaded into a model with or without
    // loss scaling (the scale is kept only where the model scales).
    const bool scaled_file = file.is_group("optimizer/inner_optimizer/vars");
    state = read_optimizer_vars(file, scaled_file ? "optimizer/inner_optimizer/vars" : "optimizer/vars", model, where,
                                copies);
    if (scaled_file && model.compile_options().optimizer.loss_scale.enabled) {
      state.good_steps = read_iterations(file.read("optimizer/vars/2"), where, "optimizer/vars/2 (step_counter)");
      const Tensor scale = file.read("optimizer/vars/3");
      if (scale.dtype() != DType::f32 || scale.numel() != 1 || !(*scale.data<float>() > 0) ||
          !std::isfinite(*scale.data<float>())) {
        throw DataError(where, -1, "optimizer/vars/3 (dynamic_scale): not a finite positive float32 scalar",
                        "the file is damaged or was not written by Keras's LossScaleOptimizer");
      }
      state.loss_scale = *scale.data<float>();
    }
  }
  copies.apply();
  if (state.iterations >= 0) model.set_iterations(state.iterations);
  if (state.learning_rate > 0) model.set_learning_rate(state.learning_rate);
  if (state.loss_scale > 0) model.set_loss_scale_state(state.loss_scale, state.good_steps);
}

void write_legacy_weights(io::H5File& file, const std::string& group, const Model& model) {
  const std::string root = group.empty() ? "/" : group;
  if (!group.empty()) file.create_group(group);
  std::vector<std::string> layer_names;
  auto write_layer = [&](const std::string& name, const std::vector<Weight*>& vars) {
    const std::string g = (group.empty() ? "" : group + "/") + name;
    file.create_group(g);
    std::vector<std::string> names;
    for (const Weight* w : vars) {
      names.push_back(w->name + ":0");
      file.write(g + "/" + names.back(), model.host_view(w->value));
    }
    file.set_string_list_attr(g, "weight_names", names);
    layer_names.push_back(name);
  };
  if (model.class_name() != "Sequential") {
    for (const InputSpec& in : model.graph().inputs()) write_layer(in.name, {});
  }
  for (const auto& l : model.layers()) write_layer(l->name(), legacy_variables(*l));
  file.set_string_list_attr(root, "layer_names", layer_names);
  file.set_string_attr(root, "backend", "tensorflow");
  file.set_string_attr(root, "keras_version", "2.15.0");
}

namespace {

// Keras numbers an unnamed layer per session ("normalization_3" when three came before), so
// the file's and the model's names of one layer may differ by that number alone: Keras
// matches by order and loads such a file (EfficientNet's unnamed Normalization).
std::string without_auto_number(const std::string& name) {
  const std::size_t cut = name.find_last_not_of("0123456789");
  if (cut == std::string::npos || cut + 1 == name.size() || name[cut] != '_') return name;
  return name.substr(0, cut);
}

}  // namespace

void read_legacy_weights(const io::H5File& file, const std::string& group, Model& model, const std::string& where) {
  const std::string root = group.empty() ? "/" : group;
  const auto layer_names = file.string_list_attr(root, "layer_names");
  if (!layer_names) {
    throw DataError(where, -1, root + ": no layer_names attribute; not a Keras weights file",
                    "give a .keras, .h5 or .weights.h5 file written by Keras or nnfit");
  }
  // Keras matches layers that have variables, in order; names are checked too (but for
  // Keras's automatic numbering) so a reordered model is an error rather than a silent mix-up.
  struct Saved {
    std::string name;
    std::vector<std::string> weights;
  };
  std::vector<Saved> saved;
  for (const std::string& name : *layer_names) {
    const std::string g = (group.empty() ? "" : group + "/") + name;
    if (!file.is_group(g)) throw DataError(where, -1, g + ": listed in layer_names but missing");
    std::vector<std::string> w = file.string_list_attr(g, "weight_names").value_or(std::vector<std::string>{});
    if (!w.empty()) saved.push_back({name, std::move(w)});
  }
  std::vector<std::pair<Layer*, std::vector<Weight*>>> ours;
  for (const auto& l : model.layers()) {
    std::vector<Weight*> vars = legacy_variables(*l);
    if (!vars.empty()) ours.emplace_back(l.get(), std::move(vars));
  }
  if (saved.size() != ours.size()) {
    throw DataError(where, -1,
                    root + ": the file has variables for " + std::to_string(saved.size()) + " layers, the model for " +
                        std::to_string(ours.size()),
                    "the file was saved from a different model");
  }
  PendingCopies copies{model, {}};
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const Saved& s = saved[i];
    auto& [layer, vars] = ours[i];
    const std::string g = (group.empty() ? "" : group + "/") + s.name;
    if (without_auto_number(s.name) != without_auto_number(layer->name())) {
      throw DataError(where, -1, g + ": the file's layer '" + s.name + "' is in the place of the model's '" +
                                     layer->name() + "'");
    }
    if (s.weights.size() != vars.size()) {
      throw DataError(where, -1, g + ": the file holds " + std::to_string(s.weights.size()) + " weights, layer '" +
                                     layer->name() + "' has " + std::to_string(vars.size()));
    }
    for (std::size_t k = 0; k < vars.size(); ++k) {
      // tf.keras: "dense/kernel:0" under the layer's group; Keras 3: "kernel" or a variable path.
      const std::string p = g + "/" + s.weights[k];
      if (!file.is_dataset(p)) throw DataError(where, -1, p + ": named in weight_names but missing");
      Tensor value = file.read(p);
      check_fits(value, *vars[k], where, p);
      copies.add(std::move(value), vars[k]->value);
    }
  }
  copies.apply();
}

void write_legacy_optimizer(io::H5File& file, const Model& model) {
  if (!model.compiled()) return;
  const std::string opt = model.compile_options().optimizer.name;
  file.create_group("optimizer_weights");
  std::vector<std::string> names{opt + "/iteration"};
  file.write("optimizer_weights/" + names.back(), scalar_i64(model.iterations()));
  if (constant_rate(model)) {
    names.push_back(opt + "/learning_rate");
    file.write("optimizer_weights/" + names.back(), scalar_f32(model.learning_rate()));
  }
  const std::vector<Tensor> slots = model.optimizer_slots();
  for (std::size_t i = 0; i < slots.size(); ++i) {
    names.push_back(opt + "/slot_" + std::to_string(i));
    file.write("optimizer_weights/" + names.back(), model.host_view(slots[i]));
  }
  file.set_string_list_attr("optimizer_weights", "weight_names", names);
}

void read_legacy_optimizer(const io::H5File& file, Model& model, const std::string& where) {
  if (!model.compiled() || !file.is_group("optimizer_weights")) return;
  const auto names = file.string_list_attr("optimizer_weights", "weight_names");
  if (!names) return;
  const std::vector<Tensor> slots = model.optimizer_slots();
  std::int64_t iterations = -1;
  bool slots_held = true;
  std::vector<std::string> slot_names;
  for (const std::string& n : *names) {
    const std::string base = n.substr(n.rfind('/') + 1);
    if (base.rfind("iter", 0) == 0) {
      iterations = read_iterations(file.read("optimizer_weights/" + n), where, "optimizer_weights/" + n);
    } else if (base.find("learning_rate") == std::string::npos) {
      slot_names.push_back(n);
    }
  }
  // Keras's Nadam lists its _u_product last; nnfit recomputes it from the iterations.
  if (model.compile_options().optimizer.name == "nadam" && slot_names.size() == slots.size() + 1) slot_names.pop_back();
  // No slots at all: the optimizer was saved unbuilt (Note [An optimizer saved unbuilt]).
  if (slot_names.empty()) slots_held = false;
  if (slots_held && slot_names.size() != slots.size()) {
    throw DataError(where, -1,
                    "optimizer_weights: the file holds " + std::to_string(slot_names.size()) + " optimizer slots, a " +
                        model.compile_options().optimizer.name + " of this model has " + std::to_string(slots.size()),
                    "the file was saved with another optimizer; compile with that one or load weights only");
  }
  PendingCopies copies{model, {}};
  for (std::size_t i = 0; i < slots.size() && slots_held; ++i) {
    read_slot(file, "optimizer_weights/" + slot_names[i], slots[i], where, copies);
  }
  copies.apply();
  if (iterations >= 0) model.set_iterations(iterations);
}

}  // namespace nnfit::keras_files
