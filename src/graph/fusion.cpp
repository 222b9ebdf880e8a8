// The planner's fusions (include/nnfit/graph/fusion.h says what each rewrites). Bias +
// activation: a chain  p = matmul|conv2d|conv3d(x, w); z = bias_add(p, b);
// [y = activation(z) with kind relu|sigmoid|tanh]  is fused when p is read only by the
// bias_add and z only by the activation. gelu is not fused: its gradient reads z.
#include "nnfit/graph/fusion.h"

#include <algorithm>
#include <iterator>

#include "nnfit/core/pool_argmax.h"

namespace nnfit {

int fuse_bias_activation(Graph& graph) {
  std::vector<std::vector<int>> readers = graph.consumers();
  auto only_reader = [&](int value) -> int {
    const auto& r = readers[static_cast<std::size_t>(value)];
    return r.size() == 1 ? r[0] : -1;
  };
  int fused = 0;
  for (int n = 0; n < graph.num_nodes(); ++n) {
    Node& producer = graph.node(n);
    if (producer.removed) continue;
    bool is_matmul = producer.op == "matmul" && producer.attrs.i_or("transpose_a", 0) == 0 &&
                     producer.attrs.i_or("transpose_b", 0) == 0;
    bool is_conv = (producer.op == "conv2d" || producer.op == "conv3d") && producer.inputs.size() == 2;
    if (!is_matmul && !is_conv) continue;
    int bias_node = only_reader(producer.outputs[0]);
    if (bias_node < 0 || graph.node(bias_node).op != "bias_add" ||
        graph.node(bias_node).inputs[0] != producer.outputs[0]) {
      continue;
    }
    Node& bias = graph.node(bias_node);
    std::string activation = "linear";
    int last = bias_node;
    int act_node = only_reader(bias.outputs[0]);
    if (act_node >= 0 && graph.node(act_node).op == "activation") {
      const std::string& kind = graph.node(act_node).attrs.s("kind");
      if (kind == "relu" || kind == "sigmoid" || kind == "tanh") {
        activation = kind;
        last = act_node;
      }
    }
    // The fused node takes the place of the chain's last node, keeping its output id.
    Node& target = graph.node(last);
    Attrs attrs = producer.attrs;
    attrs.set("activation", activation);
    std::vector<int> inputs{producer.inputs[0], producer.inputs[1], bias.inputs[1]};
    std::string name = producer.name;
    target.op = is_matmul ? "fused_matmul" : "fused_" + producer.op;
    target.attrs = attrs;
    target.inputs = inputs;
    target.name = name + "+bias" + (activation == "linear" ? std::string() : "+" + activation);
    // Remove the other nodes of the chain.
    producer.removed = (n != last);
    if (bias_node != last) graph.node(bias_node).removed = true;
    // The fused node must run where the chain ran: it is at index `last` > n, which is
    // still after all its inputs (they precede the producer) and before every reader.
    readers = graph.consumers();
    ++fused;
  }
  return fused;
}

int fuse_relu_into_max_pool_grad(Graph& graph) {
  std::vector<std::vector<int>> readers = graph.consumers();
  int fused = 0;
  for (int n = 0; n < graph.num_nodes(); ++n) {
    Node& act = graph.node(n);
    if (act.removed || act.op != "activation_grad" || act.attrs.s("kind") != "relu") continue;
    int pool_id = graph.value(act.inputs[1]).producer;
    if (pool_id < 0) continue;
    Node& pool = graph.node(pool_id);
    if (pool.removed || (pool.op != "max_pool2d_grad" && pool.op != "max_pool3d_grad") ||
        pool.attrs.i_or("relu", 0) != 0) {
      continue;
    }
    if (pool.inputs[0] != act.inputs[0]) continue;  // t must be the pool's input (the relu output)
    if (readers[static_cast<std::size_t>(pool.outputs[0])].size() != 1) continue;
    act.op = pool.op;
    act.attrs = pool.attrs;
    act.attrs.set("relu", std::int64_t{1});
    act.inputs = pool.inputs;
    act.name = pool.name + "+relu_grad";
    pool.removed = true;
    readers = graph.consumers();
    ++fused;
  }
  return fused;
}

int fuse_output_casts(Graph& graph) {
  static const char* const kProducers[] = {"matmul", "fused_matmul", "conv2d", "fused_conv2d", "conv2d_backprop_input",
                                           "conv2d_backprop_filter", "conv3d", "fused_conv3d", "conv3d_backprop_input",
                                           "conv3d_backprop_filter", "bias_add_grad"};
  const std::vector<std::vector<int>> readers = graph.consumers();
  int fused = 0;
  for (int n = 0; n < graph.num_nodes(); ++n) {
    Node& cast = graph.node(n);
    if (cast.removed || cast.op != "cast" || graph.desc(cast.outputs[0]).dtype != DType::f32) continue;
    const int v = cast.inputs[0];
    if (!is_low_precision(graph.desc(v).dtype) || readers[static_cast<std::size_t>(v)].size() != 1) continue;
    const int p = graph.value(v).producer;
    if (p < 0 || graph.node(p).removed || graph.node(p).outputs.size() != 1) continue;
    if (std::none_of(std::begin(kProducers), std::end(kProducers),
                     [&](const char* op) { return graph.node(p).op == op; })) {
      continue;
    }
    // The producer writes the cast's float32 output; v is left unread and unplanned.
    Node& producer = graph.node(p);
    producer.outputs[0] = cast.outputs[0];
    producer.name += "+cast_float32";
    graph.value(cast.outputs[0]).producer = p;
    graph.value(cast.outputs[0]).output_index = 0;
    cast.removed = true;
    ++fused;
  }
  return fused;
}

int fuse_bias_grad_into_pool_grad(Graph& graph) {
  int fused = 0;
  for (int b = 0; b < graph.num_nodes(); ++b) {
    Node& bias = graph.node(b);
    if (bias.removed || bias.op != "bias_add_grad" || bias.outputs.size() != 1) continue;
    const int p = graph.value(bias.inputs[0]).producer;
    if (p < 0) continue;
    Node& pool = graph.node(p);
    if (pool.removed || pool.op != "max_pool2d_grad" || pool.outputs.size() != 1) continue;
    // The pool gradient runs before the bias gradient (which reads its dx), so the fused
    // node can run in its place: db's readers all come after the bias gradient.
    pool.op = "max_pool2d_grad_bias";
    pool.outputs.push_back(bias.outputs[0]);
    pool.name += "+bias_grad";
    graph.value(bias.outputs[0]).producer = p;
    graph.value(bias.outputs[0]).output_index = 1;
    bias.removed = true;
    ++fused;
  }
  return fused;
}

int fuse_pool_argmax(Graph& graph) {
  int fused = 0;
  for (int b = 0; b < graph.num_nodes(); ++b) {
    const Node& grad = graph.node(b);
    if (grad.removed || (grad.op != "max_pool2d_grad" && grad.op != "max_pool2d_grad_bias")) continue;
    const int x = grad.inputs[0], y = grad.inputs[1], dy = grad.inputs[2];
    const int f = graph.value(y).producer;
    if (f < 0 || graph.node(f).removed || graph.node(f).op != "max_pool2d" || graph.node(f).inputs[0] != x) continue;
    const auto& ps = grad.attrs.ints("pool_size");
    if (ps.size() != 2 || ps[0] * ps[1] > kMaxArgmaxWindow) continue;
    // Rewriting adds values, never nodes: the references into the node list stay valid.
    const Node& forward = graph.node(f);
    const int argmax = graph.rewrite_node(f, "max_pool2d_argmax", forward.inputs, forward.attrs, forward.name + "+argmax")[1];
    Attrs attrs = grad.attrs;
    attrs.set("input_shape", graph.desc(x).shape.dims());
    const char* op = grad.op == "max_pool2d_grad_bias" ? "max_pool2d_argmax_grad_bias" : "max_pool2d_argmax_grad";
    graph.rewrite_node(b, op, {dy, argmax}, std::move(attrs), grad.name + "+argmax");
    ++fused;
  }
  return fused;
}

int fuse_conv_into_pool_argmax(Graph& graph, const std::vector<int>& keep) {
  const std::vector<std::vector<int>> readers = graph.consumers();
  int fused = 0;
  for (int p = 0; p < graph.num_nodes(); ++p) {
    const Node& pool = graph.node(p);
    if (pool.removed || pool.op != "max_pool2d_argmax") continue;
    const int y1 = pool.inputs[0];
    const int c = graph.value(y1).producer;
    if (c < 0 || graph.node(c).removed || graph.node(c).op != "fused_conv2d") continue;
    if (readers[static_cast<std::size_t>(y1)].size() != 1 || std::find(keep.begin(), keep.end(), y1) != keep.end()) {
      continue;
    }
    const Node& conv = graph.node(c);
    const std::string activation = conv.attrs.s_or("activation", "linear");
    if (conv.attrs.i_or("groups", 1) != 1 || (activation != "relu" && activation != "linear")) continue;
    if (graph.desc(conv.inputs[1]).shape[2] != 1) continue;  // one input channel (see fusion.h)
    const DType dtype = graph.desc(y1).dtype;
    if (dtype != DType::f32 && dtype != DType::bf16) continue;
    bool one_type = true;
    for (int in : conv.inputs) one_type = one_type && graph.desc(in).dtype == dtype;
    if (!one_type) continue;
    Attrs attrs = conv.attrs;
    attrs.set("activation", activation);
    attrs.set("pool_size", pool.attrs.ints("pool_size"));
    attrs.set("pool_strides", pool.attrs.ints("strides"));
    attrs.set("pool_padding", pool.attrs.s("padding"));
    const std::vector<int> inputs = conv.inputs;
    const std::string name = conv.name + "+" + pool.name;
    // Rewriting adds values, never nodes: the pool's node runs where the pool ran, after x,
    // w and b (they precede the convolution). The convolution goes only once that succeeded.
    graph.rewrite_node(p, "fused_conv2d_max_pool_argmax", inputs, std::move(attrs), name);
    graph.node(c).removed = true;
    ++fused;
  }
  return fused;
}

int fuse_pool_grad_into_filter_grad(Graph& graph, const std::vector<int>& keep) {
  const std::vector<std::vector<int>> readers = graph.consumers();
  int fused = 0;
  for (int f = 0; f < graph.num_nodes(); ++f) {
    Node& filter = graph.node(f);
    if (filter.removed || filter.op != "conv2d_backprop_filter") continue;
    const int x = filter.inputs[0], dy1 = filter.inputs[1];
    const int p = graph.value(dy1).producer;
    if (p < 0 || graph.node(p).removed || graph.node(p).op != "max_pool2d_argmax_grad_bias") continue;
    if (graph.value(dy1).output_index != 0 || readers[static_cast<std::size_t>(dy1)].size() != 1 ||
        std::find(keep.begin(), keep.end(), dy1) != keep.end()) {
      continue;
    }
    Node& pool = graph.node(p);
    const int dy = pool.inputs[0], argmax = pool.inputs[1];
    const int forward = graph.value(argmax).producer;
    if (forward < 0 || graph.node(forward).op != "fused_conv2d_max_pool_argmax" || graph.node(forward).inputs[0] != x) {
      continue;
    }
    if (filter.attrs.i_or("groups", 1) != 1 || graph.desc(x).shape[3] != 1) continue;  // one input channel
    const DType dtype = graph.desc(x).dtype;
    if ((dtype != DType::f32 && dtype != DType::bf16) || graph.desc(dy).dtype != dtype) continue;
    Attrs attrs = filter.attrs;
    attrs.set("pool_size", pool.attrs.ints("pool_size"));
    attrs.set("pool_strides", pool.attrs.ints("strides"));
    attrs.set("pool_padding", pool.attrs.s("padding"));
    attrs.set("relu", pool.attrs.i_or("relu", 0));
    attrs.set("input_shape", pool.attrs.ints("input_shape"));
    // The filter gradient's node becomes the joined op, its dw kept as output 0 and the pool
    // gradient's db moved to it as output 1 (their readers and the step's gradient lists
    // keep their value ids). It reads x, dy and the argmax, all made before the pool
    // gradient ran; db's readers follow it in the schedule (data edges).
    const int db = pool.outputs[1];
    const std::string name = pool.name + "+" + filter.name;
    graph.rewrite_node(f, "fused_conv2d_max_pool_argmax_grad", {x, dy, argmax}, std::move(attrs), name);
    Node& joined = graph.node(f);
    NNFIT_CHECK(joined.outputs.size() == 2 && graph.desc(joined.outputs[1]).shape == graph.desc(db).shape,
                InvalidArgument, name, ": the joined op's db does not have the pool gradient's shape");
    graph.value(joined.outputs[1]).producer = -1;  // the value the rewrite added, left unread
    joined.outputs[1] = db;
    graph.value(db).producer = f;
    graph.value(db).output_index = 1;
    graph.node(p).removed = true;
    ++fused;
  }
  return fused;
}

int fuse_all(Graph& graph, const FusionOptions& options) {
  int fused = fuse_bias_activation(graph) + fuse_relu_into_max_pool_grad(graph) + fuse_output_casts(graph);
  if (options.pool_bias_grad) fused += fuse_bias_grad_into_pool_grad(graph);
  if (options.pool_argmax) fused += fuse_pool_argmax(graph);
  if (options.conv_pool) fused += fuse_conv_into_pool_argmax(graph, options.keep);
  if (options.conv_pool_grad) fused += fuse_pool_grad_into_filter_grad(graph, options.keep);
  return fused;
}

}  // namespace nnfit
