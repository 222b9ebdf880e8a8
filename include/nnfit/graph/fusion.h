// Graph rewrites that fuse ops for the backends (Note [Fusion is a rewrite]): layers emit
// plain matmul/conv2d/conv3d, bias_add and activation nodes; this pass replaces chains
// whose intermediates have no other reader by fused_matmul / fused_conv2d / fused_conv3d
// with the activation as a post-op.
#pragma once
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

// Every rewrite above, in order.
int fuse_all(Graph& graph);

}  // namespace nnfit
