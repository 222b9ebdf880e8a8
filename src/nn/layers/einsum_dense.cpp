// EinsumDense: Keras's dense layer written as an einsum equation. The equation is planned
// once per input shape into transposes, one matmul and reshapes (EinsumPlan), the shapes
// Keras gives the kernel and bias, and Keras's fans (the kernel's contracted axes in, its
// free axes out) for the initializers.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "nnfit/core/error.h"
#include "nnfit/nn/attention_layers.h"

namespace nnfit {

namespace {

bool is_identity(const std::vector<std::int64_t>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  }
  return true;
}

int emit_transpose(Graph& g, int x, const std::vector<std::int64_t>& perm, const std::string& name) {
  if (is_identity(perm)) return x;
  Attrs a;
  a.set("perm", perm);
  return g.add("transpose", {x}, a, name);
}

// Labels: equation letters, and the axes "..." stands for as '0' + i (left of every letter).
using Labels = std::string;

}  // namespace

EinsumPlan plan_einsum(const std::string& layer, const EinsumDenseOptions& o, const Shape& input) {
  const auto bad = [&](const std::string& why) {
    throw InvalidArgument(layer + ": equation \"" + o.equation + "\": " + why);
  };
  const auto unsupported = [&](const std::string& why) {
    throw Unsupported(layer + ": equation \"" + o.equation + "\": " + why);
  };
  const std::size_t comma = o.equation.find(','), arrow = o.equation.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) {
    bad("expected \"input,kernel->output\" (Keras's form, e.g. \"abc,cd->abd\")");
  }
  Labels in = o.equation.substr(0, comma), kernel = o.equation.substr(comma + 1, arrow - comma - 1),
         out = o.equation.substr(arrow + 2);
  const bool left = in.rfind("...", 0) == 0;
  if (left != (out.rfind("...", 0) == 0)) bad("\"...\" must start both the input and the output");
  if (left) {
    in.erase(0, 3);
    out.erase(0, 3);
  }
  for (const Labels* part : {&in, &kernel, &out}) {
    if (part->empty()) bad("an empty term");
    for (char c : *part) {
      if (c == '.') unsupported("\"...\" is supported on the left of the input and output only");
      if (!std::isalpha(static_cast<unsigned char>(c))) bad(std::string("'") + c + "' is not a label (letters only)");
      if (std::count(part->begin(), part->end(), c) > 1) bad(std::string("label '") + c + "' repeats within a term");
    }
  }
  const std::int64_t rank = input.rank() + 1;  // with the batch axis
  const std::int64_t elided = rank - static_cast<std::int64_t>(in.size());
  if (elided < 0 || (!left && elided != 0)) {
    bad("the input term has " + std::to_string(in.size()) + " axes, the input has " + std::to_string(rank) +
        " (with the batch axis)");
  }
  Labels prefix;
  for (std::int64_t i = 0; i < elided; ++i) prefix += static_cast<char>('0' + i);
  in = prefix + in;
  out = prefix + out;
  // Keras's partial output shape covers the output term (without the batch axis when no "..." stands for it).
  const std::size_t given = left ? out.size() - prefix.size() : out.size() - 1;
  if (o.output_shape.size() != given) {
    bad("output_shape has " + std::to_string(o.output_shape.size()) + " entries where the output term needs " +
        std::to_string(given));
  }
  std::map<char, std::int64_t> dim;  // -1: the batch axis (unknown)
  for (std::size_t i = 0; i < in.size(); ++i) dim[in[i]] = i == 0 ? -1 : input[static_cast<int>(i) - 1];
  for (std::size_t i = out.size() - given; i < out.size(); ++i) {
    const std::int64_t want = o.output_shape[i - (out.size() - given)];
    const char c = out[i];
    if (dim.count(c)) {
      if (want >= 0 && dim[c] >= 0 && want != dim[c]) {
        bad(std::string("output_shape gives '") + c + "' " + std::to_string(want) + ", the input has " +
            std::to_string(dim[c]));
      }
    } else if (kernel.find(c) == std::string::npos) {
      bad(std::string("output label '") + c + "' is in neither the input nor the kernel");
    } else if (want < 0) {
      bad(std::string("output_shape leaves '") + c + "' unknown (None); give its size");
    } else {
      dim[c] = want;
    }
  }
  if (out[0] != in[0]) unsupported("the batch axis (the input's first) must stay the output's first");
  EinsumPlan p;
  Labels contracted, free, kept;
  std::vector<std::int64_t> kdims;
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    const char c = kernel[i];
    const bool in_in = in.find(c) != std::string::npos, in_out = out.find(c) != std::string::npos;
    if (in_in && in_out) unsupported(std::string("label '") + c + "' is in the input, kernel and output (a batched einsum)");
    if (!in_in && !in_out) bad(std::string("kernel label '") + c + "' is in neither the input nor the output");
    if (in_in && dim[c] < 0) bad("the kernel cannot contract the batch axis");
    kdims.push_back(dim[c]);
    (in_in ? contracted : free) += c;
    (in_in ? p.fan_in : p.fan_out) *= dim[c];
  }
  for (char c : in) {
    const bool in_out = out.find(c) != std::string::npos, in_k = kernel.find(c) != std::string::npos;
    if (!in_out && !in_k) unsupported(std::string("input label '") + c + "' is summed away");
    if (in_out) kept += c;
  }
  p.kernel_shape = Shape(kdims);
  const Labels mid = kept + free;
  if (mid.size() != out.size()) bad("the output term does not hold each kept and free label once");
  for (char c : kept) p.input_perm.push_back(static_cast<std::int64_t>(in.find(c)));
  for (char c : contracted) {
    p.input_perm.push_back(static_cast<std::int64_t>(in.find(c)));
    p.kernel_perm.push_back(static_cast<std::int64_t>(kernel.find(c)));
    p.contracted *= dim[c];
  }
  for (char c : free) {
    p.kernel_perm.push_back(static_cast<std::int64_t>(kernel.find(c)));
    p.free *= dim[c];
  }
  for (std::size_t i = 1; i < mid.size(); ++i) p.mid_dims.push_back(dim[mid[i]]);
  std::vector<std::int64_t> odims;
  for (char c : out) {
    p.output_perm.push_back(static_cast<std::int64_t>(mid.find(c)));
    if (c != out[0]) odims.push_back(dim[c]);
  }
  p.output_shape = Shape(odims);
  if (!o.bias_axes.empty()) {
    std::size_t first = out.size();
    for (char c : o.bias_axes) {
      const std::size_t at = out.find(c);
      if (at == std::string::npos || !std::isalpha(static_cast<unsigned char>(c))) {
        bad(std::string("bias axis '") + c + "' is not an output label");
      }
      first = std::min(first, at);
    }
    std::vector<std::int64_t> bdims;
    for (std::size_t i = first; i < out.size(); ++i) {
      if (o.bias_axes.find(out[i]) == std::string::npos) {
        unsupported("bias_axes \"" + o.bias_axes + "\" skip output label '" + std::string(1, out[i]) +
                    "'; a bias on the trailing output labels only is supported");
      }
      if (i == 0) bad("the batch axis cannot have a bias");
      bdims.push_back(dim[out[i]]);
    }
    p.bias_shape = Shape(bdims);
  }
  return p;
}

int EinsumPlan::emit(Graph& g, int x, int kernel, int bias, const std::string& activation,
                     const std::string& name) const {
  const std::int64_t batch = g.desc(x).shape[0];
  x = emit_transpose(g, x, input_perm, name + "/arrange");
  const std::int64_t rows = g.desc(x).shape.numel() / contracted;
  x = emit_reshape(g, x, {rows, contracted}, name + "/rows");
  int k = emit_transpose(g, kernel, kernel_perm, name + "/kernel_arrange");
  k = emit_reshape(g, k, {contracted, free}, name + "/kernel_matrix");
  int y = g.add("matmul", {x, k}, {}, name + "/matmul");
  if (!is_identity(output_perm)) {
    std::vector<std::int64_t> dims{batch};
    dims.insert(dims.end(), mid_dims.begin(), mid_dims.end());
    y = emit_reshape(g, y, dims, name + "/unrows");
    y = emit_transpose(g, y, output_perm, name + "/order");
  }
  if (bias >= 0) {
    const std::int64_t width = bias_shape.numel();
    y = emit_reshape(g, y, {g.desc(y).shape.numel() / width, width}, name + "/bias_rows");
    y = g.add("bias_add", {y, emit_reshape(g, bias, {width}, name + "/bias_flat")}, {}, name + "/bias_add");
  }
  y = emit_activation(g, y, activation, name);
  std::vector<std::int64_t> dims{batch};
  dims.insert(dims.end(), output_shape.dims().begin(), output_shape.dims().end());
  return emit_reshape(g, y, dims, name + "/output");
}

EinsumDense::EinsumDense(std::string name, EinsumDenseOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  check_activation(options_.activation, this->name());
}

Shape EinsumDense::output_shape(const Shape& input_shape) const {
  return plan_einsum(name(), options_, input_shape).output_shape;
}

void EinsumDense::build(const Shape& input_shape, WeightFactory& weights) {
  const EinsumPlan p = plan_einsum(name(), options_, input_shape);
  weights_.push_back({name() + "/kernel",
                      weights.make(name() + "/kernel", p.kernel_shape, options_.kernel_initializer, p.fan_in, p.fan_out),
                      true});
  if (p.bias_shape.rank() > 0) {
    weights_.push_back({name() + "/bias",
                        weights.make(name() + "/bias", p.bias_shape, options_.bias_initializer, p.fan_in, p.fan_out),
                        true});
  }
  built_ = true;
}

int EinsumDense::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape& s = g.desc(x).shape;
  const EinsumPlan p =
      plan_einsum(name(), options_, Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  const int bias = weights_.size() > 1 ? b.variable(weights_[1]) : -1;
  return p.emit(g, x, b.variable(weights_[0]), bias, options_.activation, name());
}

}  // namespace nnfit
