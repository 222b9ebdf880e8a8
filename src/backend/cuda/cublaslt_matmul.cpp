// matmul, fused_matmul and batch_matmul on the device through cuBLASLt, from the plan of
// gemm_plan.h (whose layouts the host tests check by emulation). Everything vendor-side is
// built once, in the constructor (plan time): the matmul descriptor (float32 compute and
// scale at every dtype, the transposes, the bias epilogue), the four layouts, and the
// algorithm cuBLASLt's heuristic picks within a 4 MiB workspace; run() sets the bias
// pointer and calls cublasLtMatmul on the step's stream. An activation cuBLASLt has no
// epilogue for (sigmoid, tanh) runs after it, in place, as the own activation kernel.
// Not yet run on a GPU (docs/design/cuda.md).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/gemm_plan.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

constexpr std::size_t kMaxWorkspaceBytes = 4u << 20;

void lt_check(cublasStatus_t status, const char* what, const std::string& node) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw BackendError(std::string(what) + " at node '" + node + "': " + cublasLtGetStatusString(status),
                       "run `nnfit doctor` to check the driver, CUDA and cuBLAS versions");
  }
}

cudaDataType_t cuda_data_type(DType d) {
  return d == DType::bf16 ? CUDA_R_16BF : d == DType::f16 ? CUDA_R_16F : CUDA_R_32F;
}

// One cuBLASLt handle for the process, made on first use (a kernel is only built where a
// device exists); cuBLASLt handles are thread-safe for concurrent matmuls.
cublasLtHandle_t lt_handle() {
  static const cublasLtHandle_t kHandle = [] {
    cublasLtHandle_t h = nullptr;
    lt_check(cublasLtCreate(&h), "cublasLtCreate", "(handle)");
    return h;
  }();
  return kHandle;
}

class CublasLtMatmul final : public Kernel {
 public:
  // No per-step values and no host copies: a CUDA graph may capture it.
  bool capturable() const override { return true; }
  CublasLtMatmul(const KernelDesc& desc, const cuda::GemmPlan& plan) : node_(desc.node_name), plan_(plan) {
    const cudaDataType_t type = cuda_data_type(plan.dtype);
    lt_check(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate", node_);
    const cublasOperation_t ta = plan.a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = plan.b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    set_op(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    set_op(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
    if (plan.epilogue != cuda::GemmEpilogue::none) {
      const cublasLtEpilogue_t e = plan.epilogue == cuda::GemmEpilogue::relu_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
      set_op(CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e));
    }
    a_ = layout(type, plan.a);
    b_ = layout(type, plan.b);
    d_ = layout(cuda_data_type(plan.out_dtype), plan.d);
    if (plan.epilogue != cuda::GemmEpilogue::none) {
      const cudaDataType_t bias_type = cuda_data_type(plan.bias_dtype);
      set_op(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type));
    }
    cublasLtMatmulPreference_t pref = nullptr;
    lt_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", node_);
    const std::size_t max_ws = kMaxWorkspaceBytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), op_, a_, b_, d_, d_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    lt_check(st, "cublasLtMatmulAlgoGetHeuristic", node_);
    NNFIT_CHECK(found > 0, Unsupported, "cuBLASLt has no algorithm for ", desc.op, " at node '", node_, "' (",
                dtype_name(plan.dtype), ", m=", plan.m, " n=", plan.n, " k=", plan.k, ")");
    algo_ = result.algo;
    workspace_bytes_ = result.workspaceSize;
    if (plan.after != ActivationKind::linear) {
      // The activation cuBLASLt cannot fuse, in place on the output.
      KernelDesc act{"activation", Attrs{{"kind", std::string(desc.attrs.s("activation"))}}, {desc.outputs[0]},
                     {desc.outputs[0]}, node_ + "/activation"};
      std::string why;
      after_ = kernel_registry().create("cuda:activation", act, DeviceType::cuda, &why);
      NNFIT_CHECK(after_ != nullptr, Unsupported, "fused_matmul at node '", node_, "': ", why);
    }
  }
  ~CublasLtMatmul() override {
    for (cublasLtMatrixLayout_t l : {a_, b_, d_}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (op_) cublasLtMatmulDescDestroy(op_);
  }
  std::size_t workspace_bytes() const override { return workspace_bytes_; }
  void run(const KernelArgs& args) override {
    if (plan_.epilogue != cuda::GemmEpilogue::none) {
      const void* bias = args.inputs[2];
      set_op(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    }
    const float alpha = 1.0f, beta = 0.0f;
    auto stream = static_cast<cudaStream_t>(args.ctx ? args.ctx->stream : nullptr);
    // cuBLASLt's A is nnfit's b (input 1), its B nnfit's a (input 0): gemm_plan.h.
    lt_check(cublasLtMatmul(lt_handle(), op_, &alpha, args.inputs[1], a_, args.inputs[0], b_, &beta, args.outputs[0], d_,
                            args.outputs[0], d_, &algo_, args.workspace, workspace_bytes_, stream),
             "cublasLtMatmul", node_);
    if (after_) {
      // Three entries, though the activation reads one: GCC speculatively devirtualizes
      // after_->run() into this class's run(), which reads input 2, and warns otherwise.
      const void* in[3] = {args.outputs[0], nullptr, nullptr};
      after_->run(KernelArgs{in, args.outputs, nullptr, args.ctx});
    }
  }

 private:
  void set_op(cublasLtMatmulDescAttributes_t attr, const void* value, std::size_t bytes) {
    lt_check(cublasLtMatmulDescSetAttribute(op_, attr, value, bytes), "cublasLtMatmulDescSetAttribute", node_);
  }
  cublasLtMatrixLayout_t layout(cudaDataType_t type, const cuda::GemmOperand& o) {
    cublasLtMatrixLayout_t l = nullptr;
    lt_check(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(o.rows), static_cast<std::uint64_t>(o.cols), o.ld),
             "cublasLtMatrixLayoutCreate", node_);
    if (plan_.batch > 1) {
      const int count = static_cast<int>(plan_.batch);
      const std::int64_t stride = o.batch_stride;
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
    }
    return l;
  }

  std::string node_;
  cuda::GemmPlan plan_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::size_t workspace_bytes_ = 0;
  std::unique_ptr<Kernel> after_;
};

std::unique_ptr<Kernel> make_cublaslt_matmul(const KernelDesc& desc, std::string* why_not) {
  const cuda::GemmPlan plan = cuda::plan_gemm(desc);
  // a and b of one type; c of it or float32 (a folded cast); the bias of either.
  const auto ok = [&](DType d) { return d == plan.dtype || d == DType::f32; };
  if (desc.inputs.at(1).dtype != plan.dtype || !ok(plan.out_dtype) || !ok(plan.bias_dtype)) {
    if (why_not) *why_not = "cublaslt:" + desc.op + " takes a and b of one dtype, c and the bias of it or float32";
    return nullptr;
  }
  // cuBLASLt's batch count is an int: a count past INT32_MAX would wrap (the sibling of
  // Note [oneDNN's 32-bit dimensions]), so such a desc is declined with its reason.
  if (plan.batch > 0x7fffffff) {
    if (why_not) *why_not = "a batch count of " + std::to_string(plan.batch) + " is past cuBLASLt's 32-bit count";
    return nullptr;
  }
  return std::make_unique<CublasLtMatmul>(desc, plan);
}

}  // namespace

void register_cublaslt_kernels(KernelRegistry& registry) {
  for (const char* op : {"matmul", "fused_matmul", "batch_matmul"}) {
    for (DType d : {DType::f32, DType::bf16, DType::f16}) {
      registry.add(op, DeviceType::cuda, d, {std::string("cublaslt:") + op, make_cublaslt_matmul});
    }
  }
}

}  // namespace nnfit
