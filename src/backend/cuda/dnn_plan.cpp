// The cuDNN descriptors of the window, normalization and softmax ops (dnn_plan.h).
#include "backend/cuda/dnn_plan.h"

#include <cmath>

#include "backend/common/train_op_checks.h"
#include "backend/widened_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

namespace {

// A window op's geometry with 2 or 3 spatial axes.
struct Window {
  std::int64_t n = 0, c = 0, o = 0, groups = 1;
  std::vector<std::int64_t> in, k, out, stride, dilation, pre, post;
};

Window window_of(const KernelDesc& f32, bool three_d) {
  Window w;
  if (three_d) {
    const Window3d g = checked_window3d(f32);
    w = {g.n, g.c, g.o, g.groups, {g.in.begin(), g.in.end()}, {g.k.begin(), g.k.end()}, {g.out.begin(), g.out.end()},
         {g.stride.begin(), g.stride.end()}, {g.dilation.begin(), g.dilation.end()},
         {g.pad_before.begin(), g.pad_before.end()}, {g.pad_after.begin(), g.pad_after.end()}};
  } else {
    const Window2d g = checked_window(f32);
    w = {g.n, g.c, g.o, g.groups, {g.h, g.w}, {g.kh, g.kw}, {g.oh, g.ow}, {g.sh, g.sw}, {g.dh, g.dw},
         {g.pad_top, g.pad_left}, {g.pad_bottom, g.pad_right}};
  }
  return w;
}

TensorLayout channels_last(std::vector<std::int64_t> dims) {
  TensorLayout t;
  t.strides = channels_last_strides(dims);
  t.dims = std::move(dims);
  return t;
}

std::vector<std::int64_t> concat(std::vector<std::int64_t> head, const std::vector<std::int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

bool is_3d(const std::string& op) { return op.find("3d") != std::string::npos; }

KernelDesc as_f32(const KernelDesc& desc) { return widenable(desc) ? widened(desc) : desc; }

}  // namespace

std::vector<std::int64_t> channels_last_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  if (dims.size() < 2) return strides;
  std::int64_t s = dims[1];  // C is innermost
  for (std::size_t d = dims.size(); d-- > 2;) {
    strides[d] = s;
    s *= dims[d];
  }
  strides[0] = s;
  return strides;
}

std::size_t ConvPlan::workspace_bytes() const {
  return static_cast<std::size_t>(filter_elements) * dtype_size(filter_dtype());
}

ConvPlan plan_conv(const KernelDesc& desc) {
  const KernelDesc f32 = as_f32(desc);
  const Window w = window_of(f32, is_3d(desc.op));
  ConvPlan p;
  p.dtype = desc.inputs.at(0).dtype;
  p.out_dtype = desc.outputs.at(0).dtype;
  p.bias_dtype = desc.inputs.size() > 2 ? desc.inputs[2].dtype : p.out_dtype;
  p.direction = desc.op.find("backprop_input") != std::string::npos    ? ConvDirection::backward_data
                : desc.op.find("backprop_filter") != std::string::npos ? ConvDirection::backward_filter
                                                                       : ConvDirection::forward;
  p.x = channels_last(concat({w.n, w.c}, w.in));
  p.w = channels_last(concat({w.o, w.c / w.groups}, w.k));
  p.y = channels_last(concat({w.n, w.o}, w.out));
  p.pre_padding = w.pre;
  p.post_padding = w.post;
  p.stride = w.stride;
  p.dilation = w.dilation;
  p.groups = w.groups;
  p.filter_elements = w.o * (w.c / w.groups);
  for (std::int64_t k : w.k) p.filter_elements *= k;
  if (desc.op.rfind("fused_", 0) == 0) {
    p.bias = true;
    p.activation = parse_activation_kind(f32, "activation");
  }
  return p;
}

FilterReorder filter_reorder(const ConvPlan& plan) {
  FilterReorder r;
  r.o = plan.w.dims[0];
  r.cg = plan.w.dims[1];
  for (std::size_t d = 2; d < plan.w.dims.size(); ++d) r.taps *= plan.w.dims[d];
  return r;
}

PoolPlan plan_pool(const KernelDesc& desc) {
  const KernelDesc f32 = as_f32(desc);
  const Window w = window_of(f32, is_3d(desc.op));
  PoolPlan p;
  p.dtype = desc.inputs.at(0).dtype;
  p.mode = desc.op.rfind("max_", 0) == 0 ? PoolMode::max : PoolMode::average_exclude_padding;
  p.backward = desc.op.find("_grad") != std::string::npos;
  p.x = channels_last(concat({w.n, w.c}, w.in));
  p.y = channels_last(concat({w.n, w.c}, w.out));
  p.window = w.k;
  p.stride = w.stride;
  p.pre_padding = w.pre;
  p.post_padding = w.post;
  return p;
}

BatchNormPlan plan_batch_norm(const KernelDesc& desc) {
  BatchNormParams params;
  std::string why;
  const KernelDesc f32 = as_f32(desc);
  NNFIT_CHECK(check_batch_norm(f32, &params, &why), Unsupported, desc.op, " at node '", desc.node_name, "': ", why);
  const Shape& x = desc.inputs.at(0).shape;
  std::vector<std::int64_t> dims{x.rank() >= 1 ? x[0] : 1, params.geometry.channels};
  for (std::int64_t d = 1; d + 1 < x.rank(); ++d) dims.push_back(x[d]);
  while (dims.size() < 4) dims.push_back(1);  // cuDNN tensors have at least 4 dims
  BatchNormPlan p;
  p.x = channels_last(dims);
  std::vector<std::int64_t> param_dims(dims.size(), 1);
  param_dims[1] = params.geometry.channels;
  p.param = channels_last(param_dims);
  p.epsilon = params.epsilon;
  p.dtype = desc.inputs.at(0).dtype;
  return p;
}

SoftmaxPlan plan_softmax(const KernelDesc& desc) {
  const Shape s = checked_elementwise(as_f32(desc));
  SoftmaxPlan p;
  p.cols = s.dim(-1);
  p.rows = p.cols == 0 ? 0 : s.numel() / p.cols;
  p.log = desc.op.rfind("log_", 0) == 0;
  // NCHW [rows, cols, 1, 1]: CHANNEL mode normalizes over C for every (n, h, w).
  p.tensor.dims = {p.rows, p.cols, 1, 1};
  p.tensor.strides = {p.cols, 1, 1, 1};
  return p;
}

}  // namespace nnfit::cuda
