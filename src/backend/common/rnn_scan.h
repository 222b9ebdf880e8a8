// The kernels of rnn and rnn_grad (docs/design/ops.md, "Recurrent"), written once over a
// GEMM: the reference family passes a plain loop with double accumulators (the oracle),
// the oneDNN family dnnl_sgemm with the per-sample cell math under OpenMP. Everything
// but the GEMM (the cell formulas, masking, go_backwards, the saved layout) is shared, so
// the conformance test compares the two GEMMs and threading, and the gradient check and
// the Keras parity tests check the formulas.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "nnfit/backend/kernel.h"

namespace nnfit {

// Row-major C[m,n] = alpha * op(A) * op(B) + beta * C, op(X) = X^T when its flag is set;
// A is [m,k] (or [k,m] transposed) with leading dimension lda, likewise B [k,n] and C.
// C is not read when beta is 0.
using RnnGemm = void (*)(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                         const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                         std::int64_t ldc);

// A kernel for an rnn or rnn_grad desc; threaded (OpenMP over the batch) when `parallel`.
// Declines (null, *why_not set) a desc that is not float32.
std::unique_ptr<Kernel> make_rnn_scan(const KernelDesc& desc, RnnGemm gemm, bool parallel, std::string* why_not);

}  // namespace nnfit
