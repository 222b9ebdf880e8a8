// Private to the CUDA backend: the cuDNN 9 descriptors of the convolution, pooling, batch
// normalization and softmax ops, computed as plain host code (no CUDA header) so their
// shapes, strides and layouts are unit-tested where no GPU exists.
// Note [cuDNN graph API]: convolutions and pooling go through cuDNN's graph (backend) API,
// not the legacy one: TensorFlow's "same" padding is asymmetric whenever the padding total
// is odd (a stride-2 layer, an even kernel), which the graph API takes as pre- and
// post-paddings while the legacy API has one symmetric pad per axis (so it would need a
// padded copy of the input every step); the graph API also fuses bias and activation into
// the convolution as pointwise nodes, and it is where cuDNN 9 adds engines (the legacy
// calls are deprecated there). Batch norm is the graph API's norm node in BATCH_NORM mode.
// Softmax stays on the legacy cudnnSoftmaxForward/Backward (cudnn_ops, still in cuDNN 9):
// one call with no padding question, no plan to build.
// Tensors are described in cuDNN's logical order (N, C, spatial...) with the strides of
// nnfit's channels-last buffers (NHWC, NDHWC). cuDNN's channels-last convolution engines
// want the filter as KRSC (O, spatial..., C/G); nnfit's is HWIO (spatial..., C/G, O), so a
// convolution reorders its filter into the workspace each step (filter_reorder below), as
// the oneDNN path does, and the filter gradient is computed in KRSC and reordered back.
#pragma once
#include <cstdint>
#include <vector>

#include "backend/common/hd.h"
#include "backend/common/nn_op_geometry.h"
#include "nnfit/backend/kernel.h"

namespace nnfit::cuda {

struct TensorLayout {
  std::vector<std::int64_t> dims, strides;  // N, C, spatial... (a filter: O, C/G, spatial...)
};

enum class ConvDirection { forward, backward_data, backward_filter };

struct ConvPlan {
  ConvDirection direction = ConvDirection::forward;
  TensorLayout x, w, y;  // y: the convolution's output (dy for the two backward directions)
  std::vector<std::int64_t> pre_padding, post_padding, stride, dilation;
  std::int64_t groups = 1;
  std::int64_t filter_elements = 0;   // reordered HWIO <-> KRSC through the workspace
  bool bias = false;                  // fused_conv*: a bias-add node [1, O, 1, ...]
  ActivationKind activation = ActivationKind::linear;  // fused_conv*: a pointwise node
  DType dtype = DType::f32;           // of the inputs; compute in float32
  // Of the output (y, dx or dw): dtype, or float32 where a cast to float32 was folded into
  // the op (fuse_output_casts); and of fused_conv's bias.
  DType out_dtype = DType::f32, bias_dtype = DType::f32;
  DType filter_dtype() const { return direction == ConvDirection::backward_filter ? out_dtype : dtype; }
  std::size_t workspace_bytes() const;  // the reordered filter (cuDNN's own workspace adds to it)
};

// conv2d, fused_conv2d, conv2d_backprop_input, conv2d_backprop_filter and the 3-D ones.
ConvPlan plan_conv(const KernelDesc& desc);

// Index j of the KRSC filter [O, spatial..., C/G] reads index hwio_index(j) of nnfit's HWIO
// filter [spatial..., C/G, O]; `spatial` holds the window's taps per axis (2 or 3 axes).
struct FilterReorder {
  std::int64_t o = 0, cg = 0, taps = 1;  // taps: the window's positions (KH·KW or KD·KH·KW)
  NNFIT_HD std::int64_t hwio_index(std::int64_t krsc) const {
    const std::int64_t c = krsc % cg, t = (krsc / cg) % taps, k = krsc / (cg * taps);
    return (t * cg + c) * o + k;
  }
};
FilterReorder filter_reorder(const ConvPlan& plan);

enum class PoolMode { max, average_exclude_padding };

struct PoolPlan {
  PoolMode mode = PoolMode::max;
  bool backward = false;
  TensorLayout x, y;
  std::vector<std::int64_t> window, stride, pre_padding, post_padding;
  DType dtype = DType::f32;
};

// max_pool2d(_grad), avg_pool2d(_grad) and the 3-D ones.
PoolPlan plan_pool(const KernelDesc& desc);

struct BatchNormPlan {
  TensorLayout x;      // [rows, C] as N, C, 1, 1 or NHWC
  TensorLayout param;  // scale, bias, mean, variance: 1, C, 1, 1
  double epsilon = 0.0;
  DType dtype = DType::f32;  // of x and y; the parameters stay float32
};

// batch_norm_train, batch_norm_grad and batch_norm_infer (x [..., C], channels last).
BatchNormPlan plan_batch_norm(const KernelDesc& desc);

// softmax, softmax_grad, log_softmax(_grad) over the last axis: cudnnSoftmax* on an
// NCHW tensor [rows, cols, 1, 1] in CUDNN_SOFTMAX_MODE_CHANNEL, algorithm ACCURATE (LOG).
struct SoftmaxPlan {
  std::int64_t rows = 0, cols = 0;
  bool log = false;
  TensorLayout tensor;
};
SoftmaxPlan plan_softmax(const KernelDesc& desc);

// The packed channels-last strides of cuDNN-ordered dims (N, C, spatial...).
std::vector<std::int64_t> channels_last_strides(const std::vector<std::int64_t>& dims);

}  // namespace nnfit::cuda
