// conv2d/conv3d, fused_conv2d/3d and both backprops on the device through cuDNN 9's graph
// (backend) API, from the plans of dnn_plan.h (Note [cuDNN graph API]; their layouts,
// paddings and the filter reorder are checked on the host by emulation). At plan time: the
// tensors, the convolution (pre/post paddings for TF's asymmetric same padding), the
// operation graph (fused_conv*: convolution -> bias add -> activation as pointwise nodes
// on virtual float32 tensors), the heuristics' engine configs in order until one finalizes
// into an execution plan, and its workspace size. run(): the filter reordered HWIO ->
// KRSC into the workspace (the filter gradient is computed in KRSC and reordered back),
// one variant pack, cudnnBackendExecute on the step's stream. Not yet run on a GPU.
#include <cudnn.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/dnn_plan.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

void dnn_check(cudnnStatus_t status, const char* what, const std::string& node) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw BackendError(std::string(what) + " at node '" + node + "': " + cudnnGetErrorString(status),
                       "run `nnfit doctor` to check the driver, CUDA and cuDNN versions");
  }
}

cudnnHandle_t dnn_handle() {
  static const cudnnHandle_t kHandle = [] {
    cudnnHandle_t h = nullptr;
    dnn_check(cudnnCreate(&h), "cudnnCreate", "(handle)");
    return h;
  }();
  return kHandle;
}

cudnnDataType_t cudnn_data_type(DType d) {
  return d == DType::bf16 ? CUDNN_DATA_BFLOAT16 : d == DType::f16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc(cudnnBackendDescriptorType_t type, const std::string* node) : node_(node) {
    dnn_check(cudnnBackendCreateDescriptor(type, &d_), "cudnnBackendCreateDescriptor", *node_);
  }
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)), node_(o.node_) {}
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
    dnn_check(cudnnBackendSetAttribute(d_, name, type, count, values), "cudnnBackendSetAttribute", *node_);
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t d = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
  }
  void finalize() { dnn_check(cudnnBackendFinalize(d_), "cudnnBackendFinalize", *node_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  const std::string* node_;
};

enum Uid : std::int64_t { kX = 1, kW = 2, kY = 3, kBias = 4, kConvOut = 5, kBiased = 6 };

class CudnnConv final : public Kernel {
 public:
  // No per-step values and no host copies: a CUDA graph may capture it.
  bool capturable() const override { return true; }
  CudnnConv(const KernelDesc& desc, cuda::ConvPlan plan) : node_(desc.node_name), plan_(std::move(plan)) {
    const cudnnDataType_t io = cudnn_data_type(plan_.dtype);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    std::vector<Desc>& ops = ops_;
    // The op's output tensor takes the output's type (float32 where a cast was folded in).
    const cudnnDataType_t out = cudnn_data_type(plan_.out_dtype);
    const cuda::ConvDirection dir = plan_.direction;
    tensors_.push_back(tensor(kX, plan_.x, dir == cuda::ConvDirection::backward_data ? out : io, false));
    tensors_.push_back(tensor(kW, plan_.w, dir == cuda::ConvDirection::backward_filter ? out : io, false));
    const bool fused = plan_.bias;
    const bool act = fused && plan_.activation != ActivationKind::linear;
    tensors_.push_back(tensor(kY, plan_.y, dir == cuda::ConvDirection::forward ? out : io, false));
    conv_ = std::make_unique<Desc>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &node_);
    Desc& conv = *conv_;
    const std::int64_t spatial = static_cast<std::int64_t>(plan_.stride.size());
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32)
        .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
        .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial)
        .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, plan_.dilation.data())
        .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, plan_.stride.data())
        .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, plan_.pre_padding.data())
        .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, plan_.post_padding.data());
    conv.finalize();
    const double alpha = 1.0, beta = 0.0;
    if (plan_.direction == cuda::ConvDirection::forward) {
      Desc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &node_);
      // The convolution writes y, or a virtual float32 tensor the bias node reads.
      if (fused) tensors_.push_back(tensor(kConvOut, plan_.y, f32, true));
      op.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, tensors_[0])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, tensors_[1])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, fused ? tensors_.back() : tensors_[2])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
          .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_DOUBLE, 1, &alpha)
          .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_DOUBLE, 1, &beta);
      op.finalize();
      ops.push_back(std::move(op));
      if (fused) {
        cuda::TensorLayout bias_layout;
        bias_layout.dims.assign(plan_.y.dims.size(), 1);
        bias_layout.dims[1] = plan_.y.dims[1];
        bias_layout.strides = cuda::channels_last_strides(bias_layout.dims);
        tensors_.push_back(tensor(kBias, bias_layout, cudnn_data_type(plan_.bias_dtype), false));
        const std::size_t conv_out = tensors_.size() - 2, bias = tensors_.size() - 1;
        if (act) tensors_.push_back(tensor(kBiased, plan_.y, f32, true));
        ops.push_back(pointwise(CUDNN_POINTWISE_ADD, tensors_[conv_out], &tensors_[bias], act ? tensors_.back() : tensors_[2]));
        if (act) ops.push_back(pointwise(activation_mode(plan_.activation), tensors_.back(), nullptr, tensors_[2]));
      }
    } else if (plan_.direction == cuda::ConvDirection::backward_data) {
      Desc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, &node_);
      op.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, tensors_[0])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, tensors_[1])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, tensors_[2])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv)
          .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_DOUBLE, 1, &alpha)
          .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_DOUBLE, 1, &beta);
      op.finalize();
      ops.push_back(std::move(op));
    } else {
      Desc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, &node_);
      op.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, tensors_[1])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, tensors_[0])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, tensors_[2])
          .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv)
          .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_DOUBLE, 1, &alpha)
          .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_DOUBLE, 1, &beta);
      op.finalize();
      ops.push_back(std::move(op));
    }
    build_plan(desc, ops);
  }
  std::size_t workspace_bytes() const override { return filter_bytes() + dnn_workspace_; }
  void run(const KernelArgs& args) override {
    auto stream = static_cast<cudaStream_t>(args.ctx ? args.ctx->stream : nullptr);
    dnn_check(cudnnSetStream(dnn_handle(), stream), "cudnnSetStream", node_);
    char* ws = static_cast<char*>(args.workspace);
    void* krsc = ws;  // the filter in cuDNN's layout
    void* dnn_ws = ws + filter_bytes();
    const cuda::FilterReorder r = cuda::filter_reorder(plan_);
    const std::size_t element = dtype_size(plan_.filter_dtype());
    // The buffers by unique id: x, w (KRSC), y, bias (fused).
    const void* x = nullptr;
    const void* y = nullptr;
    switch (plan_.direction) {
      case cuda::ConvDirection::forward:  // x, w (, bias) -> y
        reorder_filter_on_device(r, plan_.filter_elements, element, args.inputs[1], krsc, true, args.ctx);
        x = args.inputs[0];
        y = args.outputs[0];
        break;
      case cuda::ConvDirection::backward_data:  // dy, w -> dx
        reorder_filter_on_device(r, plan_.filter_elements, element, args.inputs[1], krsc, true, args.ctx);
        x = args.outputs[0];
        y = args.inputs[0];
        break;
      case cuda::ConvDirection::backward_filter:  // x, dy -> dw (in KRSC, reordered below)
        x = args.inputs[0];
        y = args.inputs[1];
        break;
    }
    std::vector<std::int64_t> uids{kX, kW, kY};
    std::vector<void*> ptrs{const_cast<void*>(x), krsc, const_cast<void*>(y)};
    if (plan_.bias) {
      uids.push_back(kBias);
      ptrs.push_back(const_cast<void*>(args.inputs[2]));
    }
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &node_);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()), uids.data())
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(ptrs.size()), ptrs.data())
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &dnn_ws);
    pack.finalize();
    dnn_check(cudnnBackendExecute(dnn_handle(), plan_desc_->get(), pack.get()), "cudnnBackendExecute", node_);
    if (plan_.direction == cuda::ConvDirection::backward_filter) {
      reorder_filter_on_device(r, plan_.filter_elements, element, krsc, args.outputs[0], false, args.ctx);
    }
  }

 private:
  std::size_t filter_bytes() const { return (plan_.workspace_bytes() + 255) / 256 * 256; }

  Desc tensor(std::int64_t uid, const cuda::TensorLayout& t, cudnnDataType_t type, bool is_virtual) {
    Desc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &node_);
    const std::int64_t rank = static_cast<std::int64_t>(t.dims.size()), alignment = 16;
    d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, t.dims.data())
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, t.strides.data())
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    d.finalize();
    return d;
  }

  static cudnnPointwiseMode_t activation_mode(ActivationKind k) {
    switch (k) {
      case ActivationKind::relu: return CUDNN_POINTWISE_RELU_FWD;
      case ActivationKind::sigmoid: return CUDNN_POINTWISE_SIGMOID_FWD;
      case ActivationKind::tanh: return CUDNN_POINTWISE_TANH_FWD;
      default: return CUDNN_POINTWISE_IDENTITY;
    }
  }

  Desc pointwise(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y) {
    Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &node_);
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    pw.finalize();
    Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &node_);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    op.finalize();
    pointwise_descs_.push_back(std::move(pw));
    return op;
  }

  // The operation graph, then the heuristics' engine configs in order until one finalizes.
  // Every descriptor stays alive as long as the kernel: the plan was finalized from them.
  void build_plan(const KernelDesc& desc, const std::vector<Desc>& ops) {
    cudnnHandle_t handle = dnn_handle();
    graph_ = std::make_unique<Desc>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &node_);
    Desc& graph = *graph_;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (const Desc& op : ops) raw.push_back(op.get());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(raw.size()), raw.data())
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    graph.finalize();
    heur_ = std::make_unique<Desc>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &node_);
    Desc& heur = *heur_;
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    heur.finalize();
    constexpr int kConfigs = 8;
    std::vector<Desc>& configs = configs_;
    std::vector<cudnnBackendDescriptor_t> config_raw;
    for (int i = 0; i < kConfigs; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &node_);
      config_raw.push_back(configs.back().get());
    }
    std::int64_t found = 0;
    dnn_check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, kConfigs, &found,
                                       config_raw.data()),
              "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS)", node_);
    std::string last_error = "the heuristics returned no engine";
    for (std::int64_t i = 0; i < found; ++i) {
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &node_);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
          .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[static_cast<std::size_t>(i)]);
      const cudnnStatus_t st = cudnnBackendFinalize(plan->get());
      if (st != CUDNN_STATUS_SUCCESS) {
        last_error = cudnnGetErrorString(st);
        continue;  // this engine does not take the graph; the next may
      }
      std::int64_t ws = 0, count = 0;
      dnn_check(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count, &ws),
                "cudnnBackendGetAttribute(WORKSPACE_SIZE)", node_);
      dnn_workspace_ = static_cast<std::size_t>(ws);
      plan_desc_ = std::move(plan);
      return;
    }
    throw Unsupported("cuDNN has no engine for " + desc.op + " at node '" + node_ + "' (" + std::string(dtype_name(plan_.dtype)) +
                      "): " + last_error);
  }

  std::string node_;
  cuda::ConvPlan plan_;
  std::vector<Desc> tensors_, pointwise_descs_, ops_, configs_;
  std::unique_ptr<Desc> conv_, graph_, heur_, plan_desc_;
  std::size_t dnn_workspace_ = 0;
};

std::unique_ptr<Kernel> make_cudnn_conv(const KernelDesc& desc, std::string* why_not) {
  cuda::ConvPlan plan = cuda::plan_conv(desc);
  // The two data inputs of one type; the output of it or float32 (a folded cast); the bias of either.
  const auto ok = [&](DType d) { return d == plan.dtype || d == DType::f32; };
  if (desc.inputs.at(1).dtype != plan.dtype || !ok(plan.out_dtype) || !ok(plan.bias_dtype)) {
    if (why_not) *why_not = "cudnn:" + desc.op + " takes its data inputs of one dtype, the output and bias of it or float32";
    return nullptr;
  }
  return std::make_unique<CudnnConv>(desc, std::move(plan));
}

}  // namespace

void register_cudnn_kernels(KernelRegistry& registry) {
  for (const char* op : {"conv2d", "fused_conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv3d", "fused_conv3d",
                         "conv3d_backprop_input", "conv3d_backprop_filter"}) {
    for (DType d : {DType::f32, DType::bf16, DType::f16}) {
      registry.add(op, DeviceType::cuda, d, {std::string("cudnn:") + op, make_cudnn_conv});
    }
  }
}

}  // namespace nnfit
