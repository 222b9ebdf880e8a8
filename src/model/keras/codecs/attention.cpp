// Keras codecs of the attention family: EinsumDense, MultiHeadAttention, GroupQueryAttention
// (MultiHeadAttention with fewer key/value heads: Note [Grouped-query attention]), Attention
// and AdditiveAttention. Their call arguments (key=, attention_mask=, use_causal_mask=) are a
// Functional node's kwargs, read by keras_model_config.cpp into Layer::set_call_arguments.
#include "model/keras/codecs/codec.h"

#include "nnfit/nn/attention_layers.h"

namespace nnfit::keras_json {
namespace {

// Keras's output_shape: an integer, or a list of integers and nulls (-1).
std::vector<std::int64_t> read_partial_shape(const Reader& r, const std::string& p, const json& v) {
  if (v.is_number_integer()) return {v.get<std::int64_t>()};
  if (!v.is_array()) r.invalid(p, "\"output_shape\" must be an integer or a list, got " + show(v));
  std::vector<std::int64_t> out;
  for (const json& d : v) {
    if (d.is_null()) {
      out.push_back(-1);
    } else if (d.is_number_integer() && d.get<std::int64_t>() > 0) {
      out.push_back(d.get<std::int64_t>());
    } else {
      r.invalid(p, "\"output_shape\" entries must be positive integers or null, got " + show(v));
    }
  }
  return out;
}

LayerPtr read_einsum_dense(const Reader& r, const std::string& p, const json& c, const std::string& name,
                           const Shape&) {
  check_keys(r, p, c, kCommon,
             {"output_shape", "equation", "activation", "bias_axes", "kernel_initializer", "bias_initializer",
              "kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint",
              "quantization_config", "lora_rank", "lora_alpha", "gptq", "gptq_unpacked_column_size"});
  require_null(r, p, c, {"quantization_config", "lora_rank"});
  EinsumDenseOptions o;
  o.equation = get_string(r, p, c, "equation", std::nullopt);
  const json* s = value(c, "output_shape");
  if (!s) r.invalid(p, "missing required key \"output_shape\"");
  o.output_shape = read_partial_shape(r, p, *s);
  o.bias_axes = get_string(r, p, c, "bias_axes", "");
  o.activation = get_activation(r, p, c, o.activation);
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  return std::make_unique<EinsumDense>(name, o);
}

LayerPtr read_multi_head_attention(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                   const Shape&) {
  check_keys(r, p, c, kCommon,
             {"num_heads", "key_dim", "value_dim", "dropout", "use_bias", "use_gate", "output_shape", "attention_axes",
              "sliding_window", "flash_attention", "kernel_initializer", "bias_initializer", "kernel_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint", "seed"});
  MultiHeadAttentionOptions o;
  o.num_heads = get_int(r, p, c, "num_heads", std::nullopt);
  o.key_dim = get_int(r, p, c, "key_dim", std::nullopt);
  if (o.num_heads <= 0 || o.key_dim <= 0) r.invalid(p, "\"num_heads\" and \"key_dim\" must be positive");
  o.value_dim = get_int(r, p, c, "value_dim", 0);
  if (o.value_dim < 0) r.invalid(p, "\"value_dim\" must be positive or null, got " + show(c["value_dim"]));
  o.dropout = get_number(r, p, c, "dropout", 0.0);
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) r.invalid(p, "\"dropout\" must be in [0, 1), got " + show(c["dropout"]));
  o.use_bias = get_bool(r, p, c, "use_bias", true);
  o.use_gate = get_bool(r, p, c, "use_gate", false);
  if (const json* s = value(c, "output_shape")) o.output_shape = read_partial_shape(r, p, *s);
  for (std::int64_t d : o.output_shape) {
    if (d < 0) r.invalid(p, "\"output_shape\" must give every size, got " + show(c["output_shape"]));
  }
  if (const json* a = value(c, "attention_axes")) {
    // The default for [batch, steps, features] is [1]; -2 names the same axis.
    const json& axis = a->is_array() && a->size() == 1 ? (*a)[0] : *a;
    if (!axis.is_number_integer() || (axis.get<std::int64_t>() != 1 && axis.get<std::int64_t>() != -2)) {
      r.unsupported(p, "\"attention_axes\" = " + show(*a) + " is not supported (attention over the steps axis, [1])");
    }
  }
  o.sliding_window = get_int(r, p, c, "sliding_window", 0);
  if (o.sliding_window < 0) r.invalid(p, "\"sliding_window\" must be a positive integer or null");
  if (const json* f = value(c, "flash_attention"); f && f->is_boolean() && f->get<bool>()) {
    r.unsupported(p, "\"flash_attention\" = true is not supported", "nnfit computes attention in full; drop the key");
  }
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  o.seed = get_int(r, p, c, "seed", 0);
  return std::make_unique<MultiHeadAttention>(name, o);
}

// Keras's GroupQueryAttention(head_dim, num_query_heads, num_key_value_heads, ...).
LayerPtr read_group_query_attention(const Reader& r, const std::string& p, const json& c, const std::string& name,
                                    const Shape&) {
  check_keys(r, p, c, kCommon,
             {"head_dim", "num_query_heads", "num_key_value_heads", "dropout", "use_bias", "use_gate", "sliding_window",
              "flash_attention", "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
              "activity_regularizer", "kernel_constraint", "bias_constraint", "seed"});
  MultiHeadAttentionOptions o;
  o.grouped = true;
  o.key_dim = get_int(r, p, c, "head_dim", std::nullopt);
  o.num_heads = get_int(r, p, c, "num_query_heads", std::nullopt);
  o.num_key_value_heads = get_int(r, p, c, "num_key_value_heads", std::nullopt);
  if (o.key_dim <= 0 || o.num_heads <= 0 || o.num_key_value_heads <= 0) {
    r.invalid(p, "\"head_dim\", \"num_query_heads\" and \"num_key_value_heads\" must be positive");
  }
  if (o.num_heads % o.num_key_value_heads != 0) {
    r.invalid(p, "\"num_query_heads\" (" + std::to_string(o.num_heads) + ") must be divisible by \"num_key_value_heads\" (" +
                     std::to_string(o.num_key_value_heads) + ")");
  }
  o.dropout = get_number(r, p, c, "dropout", 0.0);
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) r.invalid(p, "\"dropout\" must be in [0, 1), got " + show(c["dropout"]));
  o.use_bias = get_bool(r, p, c, "use_bias", true);
  o.use_gate = get_bool(r, p, c, "use_gate", false);
  o.sliding_window = get_int(r, p, c, "sliding_window", 0);
  if (o.sliding_window < 0) r.invalid(p, "\"sliding_window\" must be a positive integer or null");
  if (const json* f = value(c, "flash_attention"); f && f->is_boolean() && f->get<bool>()) {
    r.unsupported(p, "\"flash_attention\" = true is not supported", "nnfit computes attention in full; drop the key");
  }
  o.kernel_initializer = get_initializer(r, p, c, "kernel_initializer", o.kernel_initializer);
  o.bias_initializer = get_initializer(r, p, c, "bias_initializer", o.bias_initializer);
  o.seed = get_int(r, p, c, "seed", 0);
  return std::make_unique<MultiHeadAttention>(name, o);
}

LayerPtr read_attention(const Reader& r, const std::string& p, const json& c, const std::string& name, bool additive) {
  check_keys(r, p, c, kCommon, additive ? Keys{"use_scale", "dropout", "seed"} : Keys{"use_scale", "score_mode", "dropout", "seed"});
  AttentionOptions o;
  o.additive = additive;
  o.use_scale = get_bool(r, p, c, "use_scale", additive);
  if (!additive) {
    o.score_mode = get_string(r, p, c, "score_mode", "dot");
    if (o.score_mode != "dot" && o.score_mode != "concat") {
      r.invalid(p, "\"score_mode\" must be \"dot\" or \"concat\", got " + show(c["score_mode"]));
    }
  }
  o.dropout = get_number(r, p, c, "dropout", 0.0);
  if (!(o.dropout >= 0.0 && o.dropout < 1.0)) r.invalid(p, "\"dropout\" must be in [0, 1), got " + show(c["dropout"]));
  o.seed = get_int(r, p, c, "seed", 0);
  return std::make_unique<Attention>(name, o);
}

LayerPtr read_luong(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_attention(r, p, c, name, false);
}

LayerPtr read_additive(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  return read_attention(r, p, c, name, true);
}

ojson partial_shape(const std::vector<std::int64_t>& dims) {
  ojson out = ojson::array();
  for (std::int64_t d : dims) out.push_back(d < 0 ? ojson(nullptr) : ojson(d));
  return out;
}

bool write_attention(const Writer& w, const Layer& l, ojson& c) {
  const ojson none = nullptr;
  if (auto* e = dynamic_cast<const EinsumDense*>(&l)) {
    const EinsumDenseOptions& o = e->options();
    c.update({{"output_shape", partial_shape(o.output_shape)},
              {"equation", o.equation},
              {"activation", write_activation(w, l, o.activation)},
              {"bias_axes", o.bias_axes.empty() ? none : ojson(o.bias_axes)},
              {"kernel_initializer", write_initializer(o.kernel_initializer)},
              {"bias_initializer", write_initializer(o.bias_initializer)},
              {"kernel_regularizer", none}, {"bias_regularizer", none}, {"activity_regularizer", none},
              {"kernel_constraint", none}, {"bias_constraint", none}});
    return true;
  }
  if (auto* a = dynamic_cast<const Attention*>(&l)) {
    const AttentionOptions& o = a->options();
    c["use_scale"] = o.use_scale;
    if (!o.additive) c["score_mode"] = o.score_mode;
    c.update({{"dropout", o.dropout}, {"seed", o.seed != 0 ? ojson(o.seed) : none}});
    return true;
  }
  auto* m = dynamic_cast<const MultiHeadAttention*>(&l);
  if (!m) return false;
  if (w.keras2) {
    throw Unsupported(l.name() + ": " + l.class_name() + "'s call (query, value, key=...) is not written in Keras 2's format",
                      "save the model as .keras");
  }
  const MultiHeadAttentionOptions& o = m->options();
  if (o.grouped) {
    c.update({{"head_dim", o.key_dim},
              {"num_query_heads", o.num_heads},
              {"num_key_value_heads", o.num_key_value_heads > 0 ? o.num_key_value_heads : o.num_heads},
              {"use_bias", o.use_bias},
              {"use_gate", o.use_gate},
              {"sliding_window", o.sliding_window > 0 ? ojson(o.sliding_window) : none},
              {"dropout", o.dropout},
              {"kernel_initializer", write_initializer(o.kernel_initializer)},
              {"bias_initializer", write_initializer(o.bias_initializer)},
              {"kernel_regularizer", none}, {"bias_regularizer", none}, {"activity_regularizer", none},
              {"kernel_constraint", none}, {"bias_constraint", none},
              {"seed", o.seed != 0 ? ojson(o.seed) : none}});
    return true;
  }
  c.update({{"num_heads", o.num_heads},
            {"key_dim", o.key_dim},
            {"value_dim", o.value_dim > 0 ? o.value_dim : o.key_dim},
            {"dropout", o.dropout},
            {"use_bias", o.use_bias},
            {"use_gate", o.use_gate},
            {"output_shape", o.output_shape.empty() ? none : partial_shape(o.output_shape)},
            {"attention_axes", {1}},
            {"sliding_window", o.sliding_window > 0 ? ojson(o.sliding_window) : none},
            {"kernel_initializer", write_initializer(o.kernel_initializer)},
            {"bias_initializer", write_initializer(o.bias_initializer)},
            {"kernel_regularizer", none}, {"bias_regularizer", none}, {"activity_regularizer", none},
            {"kernel_constraint", none}, {"bias_constraint", none},
            {"seed", o.seed != 0 ? ojson(o.seed) : none}});
  return true;
}

}  // namespace

const LayerFamily& attention_layers() {
  static const LayerFamily family{{{"EinsumDense", read_einsum_dense},
                                   {"MultiHeadAttention", read_multi_head_attention},
                                   {"GroupQueryAttention", read_group_query_attention},
                                   {"Attention", read_luong},
                                   {"AdditiveAttention", read_additive}},
                                  write_attention};
  return family;
}

}  // namespace nnfit::keras_json
