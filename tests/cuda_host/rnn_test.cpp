// cuda-host cases of rnn_kernels.h: rnn and rnn_grad for every case of
// conformance/rnn_cases.h (every cell, masks, go_backwards, time-ordered and zero outputs,
// initial states, recurrent dropout; the gradient from every output gradient) against the
// reference scan, at float32, bfloat16 and float16.
#include "conformance/rnn_cases.h"
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

void check_rnn(bool grad) {
  StepContext ctx;
  ctx.seed = 17;
  ctx.step = 3;
  for (const RnnCase& c : rnn_conformance_cases(5, 4, 6)) {
    SCOPED_TRACE(c.name);
    for (DType dt : float_dtypes()) {
      if (grad) expect_cuda_host_matches_reference(c.grad, c.grad_inputs, dt, 1e-5f, 1e-4f, ctx);
      else expect_cuda_host_matches_reference(c.forward, c.forward_inputs, dt, 1e-5f, 1e-4f, ctx);
    }
    // A data-parallel rank's slice (recurrent dropout's factors of rows 2.. of the batch).
    StepContext slice = ctx;
    slice.row_offset = 2;
    slice.rows = 5;
    if (grad) expect_cuda_host_matches_reference(c.grad, c.grad_inputs, DType::f32, 1e-5f, 1e-4f, slice);
    else expect_cuda_host_matches_reference(c.forward, c.forward_inputs, DType::f32, 1e-5f, 1e-4f, slice);
  }
}

}  // namespace

std::vector<OpCase> rnn_cases() { return {{"rnn", [] { check_rnn(false); }}, {"rnn_grad", [] { check_rnn(true); }}}; }

}  // namespace nnfit::testing
