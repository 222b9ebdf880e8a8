// rnn and rnn_grad on oneDNN's GEMM: the shared scan (backend/common/rnn_scan.h) with
// dnnl_sgemm for the recurrent products and OpenMP over the batch for the cell math.
// (oneDNN's RNN primitive has no masking, no GRU without reset_after in Keras's gate
// order, and only a fixed set of activations; one scan serves every Keras option.)
#include <dnnl.h>

#include "backend/common/rnn_scan.h"
#include "backend/cpu/onednn_common.h"
#include "backend/cpu/onednn_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

void onednn_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                 std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  NNFIT_CHECK(st == dnnl_success, BackendError, "dnnl_sgemm failed (status ", static_cast<int>(st), ") for ", m, "x", n,
              "x", k);
}

}  // namespace

std::unique_ptr<Kernel> make_onednn_rnn(const KernelDesc& desc, std::string* why_not) {
  if (std::string r = onednn::dimension_limit_reason(desc); !r.empty()) {  // Note [oneDNN's 32-bit dimensions]
    if (why_not) *why_not = std::move(r);
    return nullptr;
  }
  return make_rnn_scan(desc, onednn_gemm, /*parallel=*/true, why_not);
}

}  // namespace nnfit
