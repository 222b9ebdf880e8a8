// MultiHeadAttention as Keras 3 computes it for [batch, T, E] inputs: EinsumDense
// projections of query, key and value to [batch, steps, heads, dim], the query scaled by
// 1/sqrt(key_dim), scores = q·kᵀ per (sample, head) as one batch_matmul over
// [batch·heads, T, dim], a softmax masked as Keras combines its masks (attention_mask op),
// dropout on the weights in training, the context weights·v, and the output projection
// from [batch, T, heads, value_dim].
//
// Note [Grouped-query attention]: Keras's GroupQueryAttention is this layer with the key
// and value projected to fewer heads (num_key_value_heads), each repeated num_heads /
// num_key_value_heads times along the heads axis (ops.repeat: kv head j serves query heads
// j·r .. j·r + r - 1) before the scores; its head_dim is key_dim and value_dim, and the
// output projection returns the query's features. Keras computes it with the same
// einsums, scale, masks and softmax (dot_product_attention without dropout or returned
// scores, its explicit softmax otherwise, as MultiHeadAttention), so one implementation
// serves both; only the class, config keys and file groups (_query_dense, ...) differ.
#include <cmath>

#include "nnfit/core/error.h"
#include "nnfit/nn/attention_layers.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

constexpr const char* kProjectionNames[] = {"query", "key", "gate", "value", "attention_output"};
constexpr const char* kGroupNames[] = {"query_dense", "key_dense", "_gate_dense", "value_dense", "output_dense"};
constexpr const char* kGroupedNames[] = {"_query_dense", "_key_dense", "_gate_dense", "_value_dense", "_output_dense"};

// [batch, steps, heads, dim] -> [batch·heads, steps, dim].
int heads_first(Graph& g, int x, const std::string& name) {
  const Shape s = g.desc(x).shape;
  Attrs a;
  a.set("perm", std::vector<std::int64_t>{0, 2, 1, 3});
  const int t = g.add("transpose", {x}, a, name + "/heads_first");
  return emit_reshape(g, t, {s[0] * s[2], s[1], s[3]}, name + "/by_head");
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(std::string name, MultiHeadAttentionOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.num_heads > 0 && options_.key_dim > 0 && options_.value_dim >= 0, InvalidArgument, this->name(),
              ": num_heads and key_dim must be positive (and value_dim, when given)");
  NNFIT_CHECK(options_.dropout >= 0.0 && options_.dropout < 1.0, InvalidArgument, this->name(),
              ": dropout must be in [0, 1), got ", options_.dropout);
  NNFIT_CHECK(options_.sliding_window >= 0, InvalidArgument, this->name(), ": sliding_window must be positive");
  for (std::int64_t d : options_.output_shape) {
    NNFIT_CHECK(d > 0, InvalidArgument, this->name(), ": output_shape entries must be positive");
  }
  NNFIT_CHECK(options_.num_key_value_heads >= 0 && options_.num_heads % kv_heads() == 0, InvalidArgument, this->name(),
              ": num_query_heads (", options_.num_heads, ") must be divisible by num_key_value_heads (", kv_heads(), ")");
}

CallArguments MultiHeadAttention::call_arguments() const {
  CallArguments a;
  a.positional = 2;
  a.build_names = {"query", "value"};
  if (options_.has_key) {
    a.keyword_inputs.push_back("key");
    a.build_names.push_back("key");
  }
  if (options_.has_attention_mask) {
    a.keyword_inputs.push_back("attention_mask");
    a.build_names.push_back("");
  }
  if (options_.use_causal_mask) a.flags.push_back({"use_causal_mask", true});
  if (options_.return_attention_scores) a.flags.push_back({"return_attention_scores", true});
  return a;
}

void MultiHeadAttention::set_call_arguments(const CallArguments& args) {
  NNFIT_CHECK(!built_, InvalidArgument, name(), ": call arguments are set before the layer is built");
  options_.has_key = options_.has_attention_mask = options_.use_causal_mask = options_.return_attention_scores = false;
  // Keras's call(query, value, key=None, query_mask=None, ...): mha(q, v, k) passes the key
  // third, as Keras 3 records it; a fourth positional tensor would be query_mask.
  NNFIT_CHECK(args.positional <= 3, Unsupported, name(), " (", class_name(), "): ", args.positional,
              " positional inputs; nnfit takes query, value and key (a mask comes from the model)");
  options_.has_key = args.positional == 3;
  for (const std::string& k : args.keyword_inputs) {
    if (k == "key") {
      options_.has_key = true;
    } else if (k == "attention_mask") {
      options_.has_attention_mask = true;
    } else {
      throw Unsupported(name() + " (" + class_name() + "): call argument " + k +
                        " is not supported (query, value, key and attention_mask are)");
    }
  }
  for (const auto& [k, v] : args.flags) {
    if (k == "use_causal_mask") {
      options_.use_causal_mask = v;
    } else if (k == "return_attention_scores") {
      options_.return_attention_scores = v;
    } else {
      throw Unsupported(name() + " (" + class_name() + "): call argument " + k + "=" + (v ? "True" : "False") +
                        " is not supported");
    }
  }
}

EinsumDenseOptions MultiHeadAttention::projection(Projection p) const {
  EinsumDenseOptions o;
  o.kernel_initializer = options_.kernel_initializer;
  o.bias_initializer = options_.bias_initializer;
  const std::int64_t heads = options_.num_heads;
  if (p == kOutput) {
    // [batch, T, heads, value_dim] · [heads, value_dim, out...] -> [batch, T, out...]
    std::string out_labels;
    const std::size_t n = options_.output_shape.empty() ? 1 : options_.output_shape.size();
    for (std::size_t i = 0; i < n; ++i) out_labels += static_cast<char>('e' + i);
    o.equation = "abcd,cd" + out_labels + "->ab" + out_labels;
    o.output_shape.push_back(-1);
    if (options_.output_shape.empty()) {
      o.output_shape.push_back(-2);  // the query's feature size, filled in by check_inputs' caller
    } else {
      o.output_shape.insert(o.output_shape.end(), options_.output_shape.begin(), options_.output_shape.end());
    }
    if (options_.use_bias) o.bias_axes = out_labels;
    return o;
  }
  o.equation = "abc,cde->abde";
  o.output_shape = {-1, p == kKey || p == kValue ? kv_heads() : heads,
                    p == kQuery || p == kKey ? options_.key_dim : value_dim()};
  if (p == kGate) o.activation = "sigmoid";
  if (options_.use_bias) o.bias_axes = "de";
  return o;
}

void MultiHeadAttention::check_inputs(const std::vector<Shape>& in) const {
  const std::size_t want = 2 + (options_.has_key ? 1 : 0) + (options_.has_attention_mask ? 1 : 0);
  NNFIT_CHECK(in.size() == want, InvalidArgument, name(), ": ", class_name(), " takes ", want,
              " inputs (query, value", options_.has_key ? ", key" : "", options_.has_attention_mask ? ", attention_mask" : "",
              "), got ", in.size());
  for (std::size_t i = 0; i < 2 + (options_.has_key ? 1 : 0); ++i) {
    NNFIT_CHECK(in[i].rank() == 2, Unsupported, name(), ": ", class_name(), " on inputs of shape ",
                in[i].to_string(), " attends over several axes; inputs of shape (steps, features) are supported");
  }
  const Shape& value = in[1];
  if (options_.has_key) {
    NNFIT_CHECK(in[2][0] == value[0], InvalidArgument, name(), ": key ", in[2].to_string(), " and value ",
                value.to_string(), " must have the same number of steps");
  }
  if (options_.has_attention_mask) {
    const Shape& m = in.back();
    NNFIT_CHECK(m == (Shape{in[0][0], value[0]}), InvalidArgument, name(), ": attention_mask ", m.to_string(),
                " must be (query steps, value steps) = (", in[0][0], ", ", value[0], ")");
  }
}

std::vector<Shape> MultiHeadAttention::compute_output_shapes(const std::vector<Shape>& inputs) const {
  check_inputs(inputs);
  std::vector<std::int64_t> dims{inputs[0][0]};
  if (options_.output_shape.empty()) {
    dims.push_back(inputs[0][1]);
  } else {
    dims.insert(dims.end(), options_.output_shape.begin(), options_.output_shape.end());
  }
  if (!options_.return_attention_scores) return {Shape(dims)};
  const Shape& key = options_.has_key ? inputs[2] : inputs[1];
  return {Shape(dims), Shape{options_.num_heads, inputs[0][0], key[0]}};
}

void MultiHeadAttention::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  check_inputs(inputs);
  const Shape& query = inputs[0];
  const Shape& key = options_.has_key ? inputs[2] : inputs[1];
  for (int p = 0; p < kProjections; ++p) {
    if (p == kGate && !options_.use_gate) continue;
    EinsumDenseOptions o = projection(static_cast<Projection>(p));
    if (p == kOutput && o.output_shape.back() == -2) o.output_shape.back() = query[1];
    const Shape in = p == kKey ? key : p == kValue ? inputs[1] : p == kOutput ? Shape{query[0], options_.num_heads, value_dim()} : query;
    const std::string sub = name() + "/" + kProjectionNames[p];
    plans_[p] = plan_einsum(sub, o, in);
    first_weight_[p] = static_cast<int>(weights_.size());
    const EinsumPlan& plan = plans_[p];
    weights_.push_back({sub + "/kernel",
                        weights.make(sub + "/kernel", plan.kernel_shape, o.kernel_initializer, plan.fan_in, plan.fan_out),
                        true});
    if (options_.use_bias) {
      weights_.push_back(
          {sub + "/bias", weights.make(sub + "/bias", plan.bias_shape, o.bias_initializer, plan.fan_in, plan.fan_out),
           true});
    }
  }
  built_ = true;
}

std::vector<WeightGroup> MultiHeadAttention::saved_weight_groups() {
  std::vector<WeightGroup> groups{{"", {}}};
  for (int p = 0; p < kProjections; ++p) {
    if (first_weight_[p] < 0) continue;
    WeightGroup grp{options_.grouped ? kGroupedNames[p] : kGroupNames[p],
                    {&weights_[static_cast<std::size_t>(first_weight_[p])]}};
    if (options_.use_bias) grp.weights.push_back(&weights_[static_cast<std::size_t>(first_weight_[p]) + 1]);
    groups.push_back(std::move(grp));
  }
  groups.push_back({"_softmax", {}});
  groups.push_back({"_dropout_layer", {}});
  return groups;
}

std::vector<int> MultiHeadAttention::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  std::vector<int> out_masks;
  return call_masked(b, inputs, std::vector<int>(inputs.size(), -1), out_masks);
}

std::vector<int> MultiHeadAttention::call_masked(GraphBuilder& b, const std::vector<int>& inputs,
                                                 const std::vector<int>& masks, std::vector<int>& output_masks) {
  Graph& g = b.graph();
  const int query = inputs[0], value = inputs[1];
  const int key = options_.has_key ? inputs[2] : value;
  const auto project = [&](Projection p, int x) {
    const auto w = static_cast<std::size_t>(first_weight_[p]);
    const int bias = options_.use_bias ? b.variable(weights_[w + 1]) : -1;
    const std::string act = p == kGate ? "sigmoid" : "linear";
    // Planned for this call's steps, which a model may know only per batch (Note [Shapes
    // known per batch]); the kernel is the built one's.
    const Shape& s = g.desc(x).shape;
    EinsumDenseOptions o = projection(p);
    if (p == kOutput && o.output_shape.back() == -2) o.output_shape.back() = plans_[kOutput].output_shape.dims().back();
    const EinsumPlan plan = plan_einsum(name() + "/" + kProjectionNames[p], o,
                                        Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
    NNFIT_CHECK(plan.kernel_shape == plans_[p].kernel_shape, InvalidArgument, "internal: ", name(), "/",
                kProjectionNames[p], " planned a kernel of ", plan.kernel_shape.to_string(), " for ",
                s.to_string(), " where it built ", plans_[p].kernel_shape.to_string());
    return plan.emit(g, x, b.variable(weights_[w]), bias, act, name() + "/" + kProjectionNames[p]);
  };
  Attrs scale;
  scale.set("factor", 1.0 / std::sqrt(static_cast<double>(options_.key_dim)));
  const int q = g.add("scale", {project(kQuery, query)}, scale, name() + "/scale_query");
  int k = project(kKey, key);
  int v = project(kValue, value);
  if (kv_heads() != options_.num_heads) {  // Note [Grouped-query attention]
    Attrs rep;
    rep.set("axis", std::int64_t{2});
    rep.set("repeats", options_.num_heads / kv_heads());
    k = g.add("repeat", {k}, rep, name() + "/repeat_key");
    v = g.add("repeat", {v}, rep, name() + "/repeat_value");
  }
  const std::int64_t batch = g.desc(q).shape[0], steps = g.desc(q).shape[1], kv_steps = g.desc(k).shape[1];
  Attrs transpose_b;
  transpose_b.set("transpose_b", std::int64_t{1});
  const int scores =
      g.add("batch_matmul", {heads_first(g, q, name() + "/q"), heads_first(g, k, name() + "/k")}, transpose_b,
            name() + "/scores");
  // Keras's masks: the query's, value's and key's sequence masks, the attention mask, the bands.
  Attrs ma;
  ma.set("query_len", steps);
  ma.set("key_len", kv_steps);
  std::vector<int> mask_inputs;
  const auto add_mask = [&](const char* attr, int m) {
    if (m < 0) return;
    ma.set(attr, std::int64_t{1});
    mask_inputs.push_back(m);
  };
  const int query_mask = masks.empty() ? -1 : masks[0];
  add_mask("has_query_mask", query_mask);
  add_mask("has_value_mask", masks.size() > 1 ? masks[1] : -1);
  add_mask("has_key_mask", options_.has_key && masks.size() > 2 ? masks[2] : -1);
  add_mask("has_attention_mask", options_.has_attention_mask ? inputs.back() : -1);
  if (options_.use_causal_mask) ma.set("causal", std::int64_t{1});
  if (options_.sliding_window > 0) ma.set("window", options_.sliding_window);
  int weights = -1;
  if (mask_inputs.empty() && !options_.use_causal_mask && options_.sliding_window == 0) {
    weights = g.add("softmax", {scores}, {}, name() + "/softmax");
  } else {
    const int m = g.add("attention_mask", mask_inputs, ma, name() + "/mask");
    // Note [Masked softmax rows]: a row with no key left is uniform in Keras's fused
    // dot_product_attention (dropout 0) and zero in its Softmax layer (dropout > 0, or the
    // scores returned).
    Attrs sa;
    const bool layer_softmax = options_.dropout > 0.0 || options_.return_attention_scores;
    sa.set("zero_masked_rows", std::int64_t{layer_softmax ? 1 : 0});
    weights = g.add("masked_softmax", {scores, m}, sa, name() + "/softmax");
  }
  const int attention_scores = weights;  // Keras returns them before dropout
  if (b.training() && options_.dropout > 0.0) {
    weights = emit_dropout(g, weights, options_.dropout, options_.seed, {}, name() + "/dropout");
  }
  int context = g.add("batch_matmul", {weights, heads_first(g, v, name() + "/v")}, {}, name() + "/context");
  // [batch·heads, T, value_dim] -> [batch, T, heads, value_dim]
  context = emit_reshape(g, context, {batch, options_.num_heads, steps, value_dim()}, name() + "/by_sample");
  Attrs back;
  back.set("perm", std::vector<std::int64_t>{0, 2, 1, 3});
  context = g.add("transpose", {context}, back, name() + "/steps_first");
  if (options_.use_gate) context = g.add("mul", {context, project(kGate, query)}, {}, name() + "/gate");
  output_masks = {query_mask};
  if (!options_.return_attention_scores) return {project(kOutput, context)};
  output_masks.push_back(-1);
  return {project(kOutput, context), emit_reshape(g, attention_scores, {batch, options_.num_heads, steps, kv_steps},
                                                  name() + "/attention_scores")};
}

}  // namespace nnfit
