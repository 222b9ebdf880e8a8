// Private to the CUDA backend: how an nnfit matmul becomes one cuBLASLt call, as plain host
// code (no CUDA header), so the layout arithmetic is unit-tested where no GPU exists.
// nnfit's matrices are row-major; cuBLASLt's are column-major (its row-order layouts lack
// many algorithms and epilogues). A row-major [R, C] buffer read column-major is its
// transpose [C, R] with leading dimension C, so c = op(a)·op(b) is computed as
// cᵀ = op(b)ᵀ · op(a)ᵀ: cuBLASLt's A is nnfit's b, its B is nnfit's a, D is c read as
// cᵀ; no data moves. fused_matmul's bias [N] is then a bias over D's m = N rows, which is
// exactly cuBLASLt's bias epilogue; relu (and bias) fold into the epilogue too, sigmoid and
// tanh, which cuBLASLt has no epilogue for, run after it as the own activation kernel.
#pragma once
#include <cstdint>

#include "backend/common/nn_op_geometry.h"
#include "nnfit/backend/kernel.h"

namespace nnfit::cuda {

// One operand as cuBLASLt sees it: the stored column-major matrix (rows × cols, leading
// dimension ld, batch stride in elements) and whether the product reads it transposed.
struct GemmOperand {
  std::int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
  bool transpose = false;
};

enum class GemmEpilogue { none, bias, relu_bias };

struct GemmPlan {
  std::int64_t m = 0, n = 0, k = 0;  // D[m×n] = op(A)[m×k] · op(B)[k×n]
  GemmOperand a, b;                  // a: nnfit's b, b: nnfit's a
  GemmOperand d;                     // nnfit's c (never transposed)
  std::int64_t batch = 1;
  GemmEpilogue epilogue = GemmEpilogue::none;
  ActivationKind after = ActivationKind::linear;  // an activation run after the GEMM
  DType dtype = DType::f32;      // of A and B; accumulation and scale are float32 always
  DType out_dtype = DType::f32;  // of D: dtype, or float32 where a cast was folded in (fuse_output_casts)
  DType bias_dtype = DType::f32; // fused_matmul's bias
};

// The plan of a matmul, fused_matmul or batch_matmul desc; throws InvalidArgument for a
// malformed desc (the shared checks of nn_op_geometry.h).
GemmPlan plan_gemm(const KernelDesc& desc);

}  // namespace nnfit::cuda
