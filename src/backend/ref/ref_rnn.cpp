// Reference kernels of rnn and rnn_grad: the shared scan (backend/common/rnn_scan.h) over a
// plain GEMM with double accumulators, single-threaded.
#include "backend/common/rnn_scan.h"
#include "backend/ref/ref_nn_kernel.h"

namespace nnfit {

namespace {

void ref_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
              std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double av = ta ? a[p * lda + i] : a[i * lda + p];
        const double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        acc += av * bv;
      }
      float& out = c[i * ldc + j];
      out = static_cast<float>(alpha * acc + (beta == 0.0f ? 0.0 : static_cast<double>(beta) * out));
    }
  }
}

}  // namespace

std::unique_ptr<Kernel> make_ref_rnn(const KernelDesc& desc, std::string* why_not) {
  return make_rnn_scan(desc, ref_gemm, /*parallel=*/false, why_not);
}

}  // namespace nnfit
