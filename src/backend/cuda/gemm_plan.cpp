// The cuBLASLt plan of a matmul (gemm_plan.h).
#include "backend/cuda/gemm_plan.h"

#include "backend/widened_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

namespace {

// The column-major view of a row-major operand stored [rows_rm, cols_rm]: [cols_rm, rows_rm]
// with ld cols_rm; `transpose` says whether the product needs the view's transpose.
GemmOperand column_major_view(std::int64_t rows_rm, std::int64_t cols_rm, bool transpose) {
  GemmOperand o;
  o.rows = cols_rm;
  o.cols = rows_rm;
  o.ld = cols_rm;
  o.batch_stride = rows_rm * cols_rm;
  o.transpose = transpose;
  return o;
}

}  // namespace

GemmPlan plan_gemm(const KernelDesc& desc) {
  const KernelDesc f32 = widenable(desc) ? widened(desc) : desc;
  GemmPlan p;
  p.dtype = desc.inputs.at(0).dtype;
  p.out_dtype = desc.outputs.at(0).dtype;
  p.bias_dtype = desc.inputs.size() > 2 ? desc.inputs[2].dtype : p.out_dtype;
  bool ta = false, tb = false;
  if (desc.op == "batch_matmul") {
    const Shape& a = desc.inputs.at(0).shape;
    const Shape& b = desc.inputs.at(1).shape;
    NNFIT_CHECK(a.rank() == 3 && b.rank() == 3 && a[0] == b[0], InvalidArgument, "batch_matmul at node '",
                desc.node_name, "': expected a [B,M,K] and b [B,K,N], got ", a.to_string(), " and ", b.to_string());
    ta = desc.attrs.i_or("transpose_a", 0) != 0;
    tb = desc.attrs.i_or("transpose_b", 0) != 0;
    p.batch = a[0];
    p.n = ta ? a[2] : a[1];  // nnfit's M
    p.k = ta ? a[1] : a[2];
    p.m = tb ? b[1] : b[2];  // nnfit's N
    NNFIT_CHECK((tb ? b[2] : b[1]) == p.k, InvalidArgument, "batch_matmul at node '", desc.node_name,
                "': inner dimensions differ (", a.to_string(), " and ", b.to_string(), ")");
  } else {
    const MatmulGeometry g = checked_matmul(f32);
    ta = g.transpose_a;
    tb = g.transpose_b;
    p.m = g.n;
    p.n = g.m;
    p.k = g.k;
  }
  // cuBLASLt's A = nnfit's b: stored [K,N] (or [N,K] if transpose_b); op(A) must be bᵀ-as-read.
  p.a = tb ? column_major_view(p.m, p.k, true) : column_major_view(p.k, p.m, false);
  // cuBLASLt's B = nnfit's a: stored [M,K] (or [K,M] if transpose_a).
  p.b = ta ? column_major_view(p.k, p.n, true) : column_major_view(p.n, p.k, false);
  p.d = column_major_view(p.n, p.m, false);
  if (desc.op == "fused_matmul") {
    const ActivationKind act = parse_activation_kind(f32, "activation");
    p.epilogue = act == ActivationKind::relu ? GemmEpilogue::relu_bias : GemmEpilogue::bias;
    if (act != ActivationKind::relu && act != ActivationKind::linear) p.after = act;
  }
  return p;
}

}  // namespace nnfit::cuda
