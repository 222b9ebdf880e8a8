// Attention and AdditiveAttention as Keras 3 computes them: scores from the query and key
// (q·kᵀ, or Bahdanau's additive form on the additive_scores op), masked by the value's
// mask and the causal band (Keras subtracts 1e9; masked_softmax replaces the score by
// -1e9, the same weights), softmax, dropout on the weights in training, weights·value,
// and the query's mask applied to the output.
#include "nnfit/core/error.h"
#include "nnfit/nn/attention_layers.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

Attention::Attention(std::string name, AttentionOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.score_mode == "dot" || options_.score_mode == "concat", InvalidArgument, this->name(),
              ": score_mode must be \"dot\" or \"concat\", got \"", options_.score_mode, "\"");
  NNFIT_CHECK(!options_.additive || options_.score_mode == "dot", InvalidArgument, this->name(),
              ": AdditiveAttention has no score_mode");
  NNFIT_CHECK(options_.dropout >= 0.0 && options_.dropout < 1.0, InvalidArgument, this->name(),
              ": dropout must be in [0, 1), got ", options_.dropout);
}

CallArguments Attention::call_arguments() const {
  CallArguments a;
  if (options_.use_causal_mask) a.flags.push_back({"use_causal_mask", true});
  return a;
}

void Attention::set_call_arguments(const CallArguments& args) {
  NNFIT_CHECK(!built_, InvalidArgument, name(), ": call arguments are set before the layer is built");
  NNFIT_CHECK(args.keyword_inputs.empty() && args.constants.empty(), Unsupported, name(), " (", class_name(),
              "): call arguments other than use_causal_mask are not supported");
  options_.use_causal_mask = false;
  for (const auto& [k, v] : args.flags) {
    if (k == "use_causal_mask") {
      options_.use_causal_mask = v;
    } else if (!(k == "return_attention_scores" && !v)) {
      throw Unsupported(name() + " (" + class_name() + "): call argument " + k + "=" + (v ? "True" : "False") +
                        " is not supported");
    }
  }
}

std::vector<Shape> Attention::compute_output_shapes(const std::vector<Shape>& in) const {
  NNFIT_CHECK(in.size() == 2 || in.size() == 3, InvalidArgument, name(), ": ", class_name(),
              " takes [query, value] or [query, value, key], got ", in.size(), " inputs");
  for (const Shape& s : in) {
    NNFIT_CHECK(s.rank() == 2, Unsupported, name(), ": ", class_name(), " on inputs of shape ", s.to_string(),
                "; inputs of shape (steps, features) are supported");
  }
  const Shape& q = in[0];
  const Shape& v = in[1];
  const Shape& k = in.size() == 3 ? in[2] : in[1];
  NNFIT_CHECK(k[0] == v[0], InvalidArgument, name(), ": key ", k.to_string(), " and value ", v.to_string(),
              " must have the same number of steps");
  NNFIT_CHECK(k[1] == q[1], InvalidArgument, name(), ": query ", q.to_string(), " and key ", k.to_string(),
              " must have the same number of features");
  return {Shape{q[0], v[1]}};
}

void Attention::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) {
  const std::int64_t dim = inputs[0][1];
  compute_output_shapes(inputs);
  if (options_.additive) {
    if (options_.use_scale) add_weight(weights, "scale", Shape{dim}, "glorot_uniform");
  } else {
    if (options_.use_scale) add_weight(weights, "scale", Shape{}, "ones");
    if (options_.score_mode == "concat") add_weight(weights, "concat_score_weight", Shape{}, "ones");
  }
  built_ = true;
}

std::vector<int> Attention::call_on(GraphBuilder& b, const std::vector<int>& inputs) {
  std::vector<int> out_masks;
  return call_masked(b, inputs, std::vector<int>(inputs.size(), -1), out_masks);
}

std::vector<int> Attention::call_masked(GraphBuilder& b, const std::vector<int>& inputs, const std::vector<int>& masks,
                                        std::vector<int>& output_masks) {
  Graph& g = b.graph();
  const int q = inputs[0], v = inputs[1];
  const int k = inputs.size() == 3 ? inputs[2] : v;
  const auto weight = [&](std::size_t i) { return b.variable(weights_[i]); };
  int scores = -1;
  if (options_.additive) {
    std::vector<int> in{q, k};
    if (options_.use_scale) in.push_back(weight(0));
    scores = g.add("additive_scores", in, {}, name() + "/scores");
  } else if (options_.score_mode == "dot") {
    Attrs tb;
    tb.set("transpose_b", std::int64_t{1});
    scores = g.add("batch_matmul", {q, k}, tb, name() + "/scores");
    if (options_.use_scale) scores = g.add("scale_by", {scores, weight(0)}, {}, name() + "/scale");
  } else {
    int qs = q, ks = k;
    if (options_.use_scale) {
      qs = g.add("scale_by", {q, weight(0)}, {}, name() + "/scale_query");
      ks = g.add("scale_by", {k, weight(0)}, {}, name() + "/scale_key");
    }
    scores = g.add("additive_scores", {qs, ks}, {}, name() + "/scores");
    scores = g.add("scale_by", {scores, weight(options_.use_scale ? 1 : 0)}, {}, name() + "/concat_score_weight");
  }
  const int value_mask = masks.size() > 1 ? masks[1] : -1;
  int weights = -1;
  if (value_mask < 0 && !options_.use_causal_mask) {
    weights = g.add("softmax", {scores}, {}, name() + "/softmax");
  } else {
    const Shape& s = g.desc(scores).shape;
    Attrs ma;
    ma.set("query_len", s[1]);
    ma.set("key_len", s[2]);
    std::vector<int> mask_inputs;
    if (value_mask >= 0) {
      ma.set("has_value_mask", std::int64_t{1});
      mask_inputs.push_back(value_mask);
    }
    if (options_.use_causal_mask) ma.set("causal", std::int64_t{1});
    const int m = g.add("attention_mask", mask_inputs, ma, name() + "/mask");
    weights = g.add("masked_softmax", {scores, m}, {}, name() + "/softmax");
  }
  if (b.training() && options_.dropout > 0.0) {
    weights = emit_dropout(g, weights, options_.dropout, options_.seed, {}, name() + "/dropout");
  }
  int out = g.add("batch_matmul", {weights, v}, {}, name() + "/context");
  const int query_mask = masks.empty() ? -1 : masks[0];
  if (query_mask >= 0) out = g.add("apply_mask", {out, query_mask}, {}, name() + "/query_mask");
  output_masks = {query_mask};
  return {out};
}

}  // namespace nnfit
