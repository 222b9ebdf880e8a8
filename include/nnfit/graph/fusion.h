// Graph rewrites that fuse ops for the backends (Note [Fusion is a rewrite]): layers emit
// plain matmul/conv2d/conv3d, bias_add and activation nodes; this pass replaces chains
// whose intermediates have no other reader by fused_matmul / fused_conv2d / fused_conv3d
// with the activation as a post-op.
#pragma once
#include <vector>

#include "nnfit/graph/graph.h"

namespace nnfit {

// Returns the number of chains fused. Run after autodiff (so backward readers count).
int fuse_bias_activation(Graph& graph);

// Folds relu's gradient into the max-pool gradient before it: for
//   dp = max_pool2d_grad(x, y, dy);  dx = activation_grad[relu](x, dp)   (or max_pool3d_grad)
// (x the relu's output and the pool's input, dp read by nothing else) the pool gradient
// gets attr relu=1 and writes dx directly, saving a full pass over the largest tensor of a
// convnet's backward step. Returns the number of pairs fused.
int fuse_relu_into_max_pool_grad(Graph& graph);

// Folds a cast to float32 into the op that makes its bfloat16 / float16 input, when the
// cast is that value's only reader: matmul, fused_matmul, the convolutions and their
// gradients, bias_add_grad. The op then writes float32 itself (oneDNN takes low-precision
// inputs with a float32 output), saving the cast's pass and the rounding to the low type:
// the mixed policies' float32 logits and the weight and bias gradients of their float32
// variables. Returns the number of casts folded.
int fuse_output_casts(Graph& graph);

// Gives the max-pool gradient the bias gradient of the layer before the pool: for
//   dx = max_pool2d_grad(x, y, dy);  db = bias_add_grad(dx)
// the two become max_pool2d_grad_bias(x, y, dy) -> (dx, db), which sums each image's dx
// while it is still in cache: the bias gradient's own pass over dx (a convnet's largest
// gradient, written just before) is gone. oneDNN's filter gradient with a bias was tried
// first and was slower on channels-last tensors (docs/design/kernels.md). Run after
// fuse_relu_into_max_pool_grad (conv -> relu -> pool is the chain it serves) and
// fuse_output_casts (it keeps the float32 db a folded cast gave). Only for backends that
// register the fused op (FusionOptions). Returns the number of pairs fused.
int fuse_bias_grad_into_pool_grad(Graph& graph);

// Gives a max pool's gradient the argmax its forward found (Note [Pool argmax],
// nnfit/core/pool_argmax.h): for
//   y = max_pool2d(x);  dx = max_pool2d_grad[_bias](x, y, dy)
// the forward becomes max_pool2d_argmax(x) -> (y, argmax), a byte per element of y, and
// the gradient max_pool2d_argmax_grad[_bias](dy, argmax), keeping its attrs (relu) and
// outputs. The gradient no longer reads x, a convnet's largest activation, which then
// dies after the forward: one read of it less per step and that much less memory at
// the step's peak. Windows of up to kMaxArgmaxWindow positions. Run after the pool
// gradient's other rewrites. Only for backends that register the ops (FusionOptions).
// Returns the number of pools rewritten.
int fuse_pool_argmax(Graph& graph);

// Joins a convolution over one input channel to the max pool after it: for
//   y1 = fused_conv2d(x, w, b) (relu or no activation);  (y, argmax) = max_pool2d_argmax(y1)
// with y1 read by the pool alone and not in `keep`, the two become
// fused_conv2d_max_pool_argmax(x, w, b) -> (y, argmax), keeping the pool's outputs: y1, a
// convnet's largest activation, is never written or read. After fuse_pool_argmax nothing
// else reads it (the pool gradient reads the argmax). One input channel only (a grayscale
// image's first layer): there the kernel's direct loop is a few taps per output, where
// oneDNN's convolution over more channels is the faster (docs/design/kernels.md). float32
// and bfloat16 (x, w, b and y1 of one type). Run after fuse_pool_argmax. Only for
// backends that register the op (FusionOptions). Returns the number of pairs joined.
int fuse_conv_into_pool_argmax(Graph& graph, const std::vector<int>& keep);

// Joins the filter gradient of a convolution over one input channel to the gradient of
// the max pool after it: for
//   (dy1, db) = max_pool2d_argmax_grad_bias(dy, argmax);  dw = conv2d_backprop_filter(x, dy1)
// with dy1 read by the filter gradient alone (no input gradient: a first layer) and not in
// `keep`, and argmax made by fused_conv2d_max_pool_argmax, the two become
// fused_conv2d_max_pool_argmax_grad(x, dy, argmax) -> (dw, db), keeping their output
// values: dy1, the convolution's output gradient (a convnet's largest), is never written.
// float32 and bfloat16 (x and dy of one type). Run after fuse_conv_into_pool_argmax. Only
// for backends that register the op (FusionOptions). Returns the number of pairs joined.
int fuse_pool_grad_into_filter_grad(Graph& graph, const std::vector<int>& keep);

// The rewrites whose fused op a backend may lack, off unless the planner finds the op in
// the backend's kernels (StepEngine::plan): the CUDA plugin has none of them.
struct FusionOptions {
  bool pool_bias_grad = false;  // max_pool2d_grad_bias (fuse_bias_grad_into_pool_grad)
  bool pool_argmax = false;     // max_pool2d_argmax and its gradients (fuse_pool_argmax)
  bool conv_pool = false;       // fused_conv2d_max_pool_argmax (fuse_conv_into_pool_argmax)
  bool conv_pool_grad = false;  // fused_conv2d_max_pool_argmax_grad (fuse_pool_grad_into_filter_grad)
  std::vector<int> keep;        // values the program must still produce (its fetches)
};

// Every rewrite above, in order.
int fuse_all(Graph& graph, const FusionOptions& options = {});

}  // namespace nnfit
