// Layer base, weight creation with Keras's initializers, and the per-graph builder.
#include <algorithm>
#include "nnfit/nn/layer.h"

#include "nn/composed_activations.h"

#include <unistd.h>

#include <cmath>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/memory/allocator.h"

namespace nnfit {

namespace {

std::uint64_t hash_name(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Keras's truncated normal: redraw values beyond two standard deviations.
float truncated_normal(std::mt19937_64& rng, float stddev) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (;;) {
    float v = dist(rng);
    if (std::fabs(v) <= 2.0f) return v * stddev;
  }
}

// Keras's Orthogonal (gain 1): the shape flattened to (rows = all but the last axis,
// cols = the last), a standard normal matrix of (max, min) orthonormalized by QR with
// R's diagonal made positive (Gram-Schmidt gives exactly that Q), transposed when rows < cols.
void orthogonal(std::mt19937_64& rng, const Shape& shape, float* p) {
  const std::int64_t cols = shape.rank() == 0 ? 1 : shape.dim(-1);
  const std::int64_t rows = cols == 0 ? 0 : shape.numel() / cols;
  const std::int64_t big = std::max(rows, cols), small = std::min(rows, cols);
  std::vector<double> q(static_cast<std::size_t>(big * small));  // column j at q[j * big]
  std::normal_distribution<double> dist(0.0, 1.0);
  for (double& v : q) v = dist(rng);
  for (std::int64_t j = 0; j < small; ++j) {
    double* cj = q.data() + j * big;
    for (std::int64_t k = 0; k < j; ++k) {
      const double* ck = q.data() + k * big;
      double dot = 0.0;
      for (std::int64_t i = 0; i < big; ++i) dot += ck[i] * cj[i];
      for (std::int64_t i = 0; i < big; ++i) cj[i] -= dot * ck[i];
    }
    double norm = 0.0;
    for (std::int64_t i = 0; i < big; ++i) norm += cj[i] * cj[i];
    norm = std::sqrt(norm);
    for (std::int64_t i = 0; i < big; ++i) cj[i] = norm > 0.0 ? cj[i] / norm : 0.0;
  }
  // Element (r, c) of the (rows, cols) result: Q[r][c] when rows >= cols, else Q[c][r].
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      p[r * cols + c] = static_cast<float>(rows >= cols ? q[static_cast<std::size_t>(c * big + r)]
                                                        : q[static_cast<std::size_t>(r * big + c)]);
    }
  }
}

// Keras's VarianceScaling spelled "variance_scaling(<scale>,<mode>,<distribution>)"
// (Note [VarianceScaling spelling] in src/model/keras/codecs/codec.cpp).
void fill_variance_scaling(std::mt19937_64& rng, const std::string& spelled, double fi, double fo, float* p,
                           std::int64_t n) {
  const std::string args = spelled.substr(17, spelled.size() - 18);
  const std::size_t a = args.find(','), b = args.find(',', a == std::string::npos ? a : a + 1);
  NNFIT_CHECK(a != std::string::npos && b != std::string::npos, InvalidArgument, "unknown initializer '", spelled,
              "' (variance_scaling takes scale, mode, distribution)");
  const double scale = std::stod(args.substr(0, a));
  const std::string mode = args.substr(a + 1, b - a - 1), distribution = args.substr(b + 1);
  const double fan = mode == "fan_in" ? fi : mode == "fan_out" ? fo : (fi + fo) / 2.0;
  const double variance = scale / fan;
  if (distribution == "uniform") {
    const auto limit = static_cast<float>(std::sqrt(3.0 * variance));
    std::uniform_real_distribution<float> dist(-limit, limit);
    for (std::int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else if (distribution == "untruncated_normal") {
    std::normal_distribution<float> dist(0.0f, static_cast<float>(std::sqrt(variance)));
    for (std::int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else {
    const auto stddev = static_cast<float>(std::sqrt(variance) / 0.87962566103423978);
    for (std::int64_t i = 0; i < n; ++i) p[i] = truncated_normal(rng, stddev);
  }
}

}  // namespace

// Note [Weights larger than the machine]. A layer's weight shapes come from its config
// (units, filters, kernel_size, an input's batch_shape), which a downloaded model file
// states: 2^31 units would allocate and zero gigabytes before the file's own kernel shape
// is compared. A weight larger than the host's physical memory can never be trained or
// loaded, so it is refused before anything is allocated; a device allocator's own limit
// (the memory policy) refuses smaller ones; and a model loaded from a file may not make
// more values than the file's datasets can fill (limit_elements, set by load_model).
// LayerGraph::build names the layer.
Tensor WeightFactory::zeros(const Shape& shape) {
  // A layer builds its weights from known dimensions only (Note [Shapes known per batch]);
  // LayerGraph::build names the layer.
  NNFIT_CHECK(shape.is_static(), InvalidArgument, "a weight of shape ", shape.to_string(),
              " would depend on a dimension known only per batch (None); Keras needs that dimension fixed ",
              "for this layer too: give the model's Input a size there");
  const std::int64_t numel = shape.numel();  // throws past 64 bits
  const auto pages = static_cast<std::uint64_t>(std::max<long>(::sysconf(_SC_PHYS_PAGES), 0));
  const auto page_bytes = static_cast<std::uint64_t>(std::max<long>(::sysconf(_SC_PAGESIZE), 0));
  const std::uint64_t host_bytes = pages * page_bytes;
  if (host_bytes > 0 && static_cast<std::uint64_t>(numel) > host_bytes / sizeof(float)) {
    throw OutOfMemory("a weight of shape " + shape.to_string() + " needs " +
                          std::to_string(static_cast<std::uint64_t>(numel) / (1ull << 20) * sizeof(float)) +
                          " MiB, more than this machine's memory (" + std::to_string(host_bytes >> 20) + " MiB)",
                      "the layer's config (units, filters, kernel_size, input shape) is far too large; check its values");
  }
  if (budget_elements_ > 0) {
    if (static_cast<std::uint64_t>(numel) > budget_elements_ - std::min(made_elements_, budget_elements_)) {
      throw InvalidArgument("a weight of shape " + shape.to_string() + " (" + std::to_string(numel) +
                                " values) takes the model past the " + std::to_string(budget_elements_) +
                                " values " + budget_source_ + " can fill",
                            "the config asks for larger layers than the file's weights (units, filters, kernel_size, "
                            "input shape): the file is damaged or its config was edited");
    }
    made_elements_ += static_cast<std::uint64_t>(numel);
  }
  if (!allocator_) return Tensor::zeros(shape);
  Tensor t = allocate_tensor(*allocator_, shape, DType::f32);
  std::memset(t.raw(), 0, t.nbytes());
  return t;
}

void WeightFactory::limit_elements(std::uint64_t elements, std::string source) {
  budget_elements_ = elements;
  made_elements_ = 0;
  budget_source_ = std::move(source);
}

Tensor WeightFactory::make(const std::string& name, const Shape& shape, const std::string& initializer,
                           std::int64_t fan_in, std::int64_t fan_out) {
  Tensor t = zeros(shape);
  float* p = t.data<float>();
  const std::int64_t n = t.numel();
  std::mt19937_64 rng(seed_ ^ hash_name(std::to_string(made_++)));
  const double fi = static_cast<double>(std::max<std::int64_t>(fan_in, 1));
  const double fo = static_cast<double>(std::max<std::int64_t>(fan_out, 1));
  if (initializer == "zeros") return t;
  if (initializer == "ones") {
    for (std::int64_t i = 0; i < n; ++i) p[i] = 1.0f;
  } else if (initializer == "glorot_uniform" || initializer == "he_uniform" || initializer == "lecun_uniform") {
    double scale = initializer == "glorot_uniform" ? 2.0 / (fi + fo) : initializer == "he_uniform" ? 2.0 / fi : 1.0 / fi;
    float limit = static_cast<float>(std::sqrt(3.0 * scale));
    std::uniform_real_distribution<float> dist(-limit, limit);
    for (std::int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else if (initializer == "glorot_normal" || initializer == "he_normal" || initializer == "lecun_normal") {
    double scale = initializer == "glorot_normal" ? 2.0 / (fi + fo) : initializer == "he_normal" ? 2.0 / fi : 1.0 / fi;
    // Keras uses a truncated normal whose stddev is corrected for the truncation.
    float stddev = static_cast<float>(std::sqrt(scale) / 0.87962566103423978);
    for (std::int64_t i = 0; i < n; ++i) p[i] = truncated_normal(rng, stddev);
  } else if (initializer.rfind("variance_scaling(", 0) == 0) {
    fill_variance_scaling(rng, initializer, fi, fo, p, n);
  } else if (initializer == "random_normal") {
    std::normal_distribution<float> dist(0.0f, 0.05f);
    for (std::int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else if (initializer == "random_uniform") {
    std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
    for (std::int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else if (initializer == "orthogonal") {
    orthogonal(rng, shape, p);
  } else {
    throw InvalidArgument(name + ": unknown initializer '" + initializer +
                          "'; known: glorot_uniform, glorot_normal, he_normal, he_uniform, lecun_normal, "
                          "variance_scaling(scale,mode,distribution), "
                          "lecun_uniform, orthogonal, random_normal, random_uniform, zeros, ones");
  }
  return t;
}

int GraphBuilder::variable(const Weight& weight) {
  auto it = by_buffer_.find(weight.value.raw());
  int id = -1;
  if (it != by_buffer_.end()) {
    id = it->second;
  } else {
    id = graph_.add_variable(weight.name, weight.value);
    by_buffer_[weight.value.raw()] = id;
    vars_.push_back({id, &weight});
  }
  return is_low_precision(compute_) && is_floating(weight.value.dtype()) ? cast(id, compute_) : id;
}

int GraphBuilder::cast(int value, DType dtype) {
  if (graph_.desc(value).dtype == dtype) return value;
  auto [it, fresh] = casts_.try_emplace({value, dtype}, -1);
  if (fresh) {
    Attrs a;
    a.set("dtype", std::string(dtype_name(dtype)));
    it->second = graph_.add("cast", {value}, a, graph_.value(value).name + "/cast_" + std::string(dtype_name(dtype)));
  }
  return it->second;
}

template <typename T>
const T& Layer::single(const std::vector<T>& inputs) const {
  NNFIT_CHECK(inputs.size() == 1, InvalidArgument, name_, ": ", class_name(), " takes one input, got ", inputs.size());
  return inputs[0];
}

std::vector<Shape> Layer::compute_output_shapes(const std::vector<Shape>& inputs) const {
  return {output_shape(single(inputs))};
}

void Layer::build_for(const std::vector<Shape>& inputs, WeightFactory& weights) { build(single(inputs), weights); }

std::vector<int> Layer::call_on(GraphBuilder& builder, const std::vector<int>& inputs) {
  return {call(builder, single(inputs))};
}

void Layer::build(const Shape&, WeightFactory&) { built_ = true; }

Shape Layer::output_shape(const Shape&) const {
  throw InvalidArgument(name_ + ": " + class_name() + " takes a list of inputs");
}

int Layer::call(GraphBuilder&, int) { throw InvalidArgument(name_ + ": " + class_name() + " takes a list of inputs"); }

void Layer::add_kernel_and_bias(WeightFactory& weights, const Shape& kernel_shape, std::int64_t fan_in,
                                std::int64_t fan_out, const std::string& kernel_initializer, bool use_bias,
                                const std::string& bias_initializer) {
  weights_.push_back(
      {name_ + "/kernel", weights.make(name_ + "/kernel", kernel_shape, kernel_initializer, fan_in, fan_out), true});
  if (use_bias) {
    const Shape bias{kernel_shape.dim(-1)};
    weights_.push_back({name_ + "/bias", weights.make(name_ + "/bias", bias, bias_initializer, fan_in, fan_out), true});
  }
}

std::size_t Layer::add_weight(WeightFactory& weights, const std::string& what, const Shape& shape,
                              const std::string& initializer) {
  std::int64_t fan_in = 1, fan_out = 1;
  if (shape.rank() == 1) {
    fan_in = fan_out = shape[0];
  } else if (shape.rank() >= 2) {
    std::int64_t receptive = 1;
    for (int i = 0; i + 2 < shape.rank(); ++i) receptive *= shape[i];
    fan_in = shape.dim(-2) * receptive;
    fan_out = shape.dim(-1) * receptive;
  }
  const std::string name = name_ + "/" + what;
  weights_.push_back({name, weights.make(name, shape, initializer, fan_in, fan_out), true});
  return weights_.size() - 1;
}

void Layer::set_call_arguments(const CallArguments& args) {
  std::string what;
  for (const std::string& k : args.keyword_inputs) what += (what.empty() ? "" : ", ") + k;
  for (const auto& [k, v] : args.flags) what += (what.empty() ? "" : ", ") + k + "=" + (v ? "True" : "False");
  for (double c : args.constants) what += (what.empty() ? "" : ", ") + std::to_string(c);
  if (!what.empty()) throw Unsupported(name_ + " (" + class_name() + "): call arguments " + what + " are not taken");
}

std::vector<Weight*> Layer::all_weights() {
  std::vector<Weight*> out;
  for (Weight& w : weights_) out.push_back(&w);
  return out;
}

std::vector<Weight*> Layer::saved_weights() {
  std::vector<Weight*> out;
  for (Weight& w : weights_) out.push_back(&w);
  return out;
}

std::vector<int> Layer::call_masked(GraphBuilder& builder, const std::vector<int>& inputs,
                                   const std::vector<int>& masks, std::vector<int>& output_masks) {
  std::vector<int> outputs = call_on(builder, inputs);
  const int mask = supports_masking() && !masks.empty() ? masks[0] : -1;
  output_masks.assign(outputs.size(), mask);
  return outputs;
}

void Layer::refuse_masks(const std::vector<int>& masks, const std::string& use) const {
  for (int m : masks) {
    NNFIT_CHECK(m < 0, Unsupported, name_, ": its input carries a mask (from Embedding(mask_zero=True) or Masking), ",
                "with which Keras's ", class_name(), " computes ", use, "; that is not supported yet");
  }
}

void Layer::set_weight_regularizer(const std::string& prefix, Regularizer r) {
  check_regularizer(r, name_ + ": \"" + prefix + "_regularizer\"");
  regularizers_[prefix] = std::move(r);
}

void Layer::set_weight_constraint(const std::string& prefix, Constraint c) {
  check_constraint(c, name_ + ": \"" + prefix + "_constraint\"");
  constraints_[prefix] = std::move(c);
}

namespace {

// Whether weight `name` ("dense/kernel", "lstm/recurrent_kernel") is Keras's `prefix` one.
bool weight_has_prefix(const std::string& name, const std::string& prefix) {
  const std::string leaf = name.substr(name.rfind('/') + 1);
  return leaf == prefix || leaf == prefix + "_kernel";
}

}  // namespace

void Layer::attach_weight_options() {
  if (regularizers_.empty() && constraints_.empty()) return;
  for (Weight* w : all_weights()) {
    if (!w->trainable) continue;  // a constant stand-in (LayerNormalization without center)
    for (const auto& [prefix, r] : regularizers_) {
      if (weight_has_prefix(w->name, prefix)) w->regularizer = r;
    }
    for (const auto& [prefix, c] : constraints_) {
      if (weight_has_prefix(w->name, prefix)) {
        const std::int64_t rank = w->value.shape().rank();
        if (c.kind != "NonNeg") {
          for (std::int64_t a : c.axes) {
            NNFIT_CHECK(a >= -rank && a < rank, InvalidArgument, name_, ": \"", prefix, "_constraint\" axis ", a,
                        " is out of range for ", w->name, " of shape ", w->value.shape().to_string());
          }
        }
        w->constraint = c;
      }
    }
    if (w->regularizer.kind == "OrthogonalRegularizer") {
      NNFIT_CHECK(w->value.shape().rank() == 2, InvalidArgument, name_, ": an OrthogonalRegularizer needs a 2-D weight, ",
                  w->name, " is ", w->value.shape().to_string());
    }
  }
}

void Layer::set_trainable(bool trainable) {
  trainable_ = trainable;
  for (Weight* w : all_weights()) w->frozen = !trainable;
}

std::vector<WeightGroup> Layer::saved_weight_groups() { return {{"", saved_weights()}}; }

std::vector<const Weight*> Layer::all_weights() const {
  std::vector<const Weight*> out;
  for (Weight* w : const_cast<Layer*>(this)->all_weights()) out.push_back(w);
  return out;
}

std::int64_t Layer::count_params() const {
  // Keras's count: its variables (saved_weights), not the constants nnfit keeps in place of
  // a normalization's absent gamma or beta. An unbuilt layer has none yet (and a layer's
  // saved_weights may index weights that build() makes).
  if (!built_) return 0;
  std::int64_t n = 0;
  for (const Weight* w : const_cast<Layer*>(this)->saved_weights()) n += w->value.numel();
  return n;
}

namespace {
// Every name Keras serializes for a built-in activation (aliases included).
const char* const kActivations[] = {"linear",     "relu",        "sigmoid",   "tanh",      "softmax",  "log_softmax",
                                    "gelu",       "elu",         "selu",      "softplus",  "softsign", "hard_sigmoid",
                                    "exponential", "leaky_relu", "relu6",     "silu",      "swish",    "mish",
                                    "hard_silu",  "hard_swish",  "hard_sigmoid_keras2",
                                    // Keras 3's newer ones, composed (composed_activations.h); not
                                    // "threshold", whose arguments have no defaults
                                    "celu", "glu", "hard_shrink", "hard_tanh", "log_sigmoid", "soft_shrink",
                                    "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus", "tanh_shrink"};
}  // namespace

void check_activation(const std::string& activation, const std::string& layer) {
  std::string known;
  for (const char* k : kActivations) {
    if (activation == k) return;
    known += (known.empty() ? "" : ", ") + std::string(k);
  }
  throw InvalidArgument(layer + ": unknown activation '" + activation + "'; supported: " + known);
}

int emit_reshape(Graph& graph, int x, std::vector<std::int64_t> dims, const std::string& name) {
  Attrs a;
  a.set("shape", std::move(dims));
  return graph.add("reshape", {x}, a, name);
}

int emit_on_axes(Graph& g, int x, const std::vector<std::int64_t>& axes, const std::string& name,
                 const std::function<int(int)>& f) {
  const Shape s = g.desc(x).shape;
  std::vector<std::int64_t> perm, moved;
  std::int64_t width = 1;
  for (std::int64_t a = 0; a < s.rank(); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) perm.push_back(a);
  }
  for (std::int64_t a : axes) {
    perm.push_back(a);
    width *= s[a];
  }
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<std::int64_t>(i);
  for (std::int64_t a : perm) moved.push_back(s[a]);
  int t = x;
  if (!identity) {
    Attrs a;
    a.set("perm", perm);
    t = g.add("transpose", {x}, a, name + "/axes_last");
  }
  int y = f(emit_reshape(g, t, {s.numel() / std::max<std::int64_t>(width, 1), width}, name + "/rows"));
  y = emit_reshape(g, y, moved, name + "/unrows");
  if (identity) return y;
  std::vector<std::int64_t> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  Attrs a;
  a.set("perm", inverse);
  return g.add("transpose", {y}, a, name + "/axes_back");
}

int emit_activation(Graph& graph, int x, const std::string& activation, const std::string& layer) {
  check_activation(activation, layer);
  if (activation == "linear") return x;
  if (activation == "softmax") return graph.add("softmax", {x}, {}, layer + "/softmax");
  if (activation == "log_softmax") return graph.add("log_softmax", {x}, {}, layer + "/log_softmax");
  if (is_composed_activation(activation)) return emit_composed_activation(graph, x, activation, {}, layer);
  return graph.add("activation", {x}, {{"kind", activation}}, layer + "/" + activation);
}

}  // namespace nnfit
