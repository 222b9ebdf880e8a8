// rnn and rnn_grad over a GEMM (rnn_scan.h). Step s of the scan reads time t = s, or
// T - 1 - s with go_backwards (xw, mask and dxw are indexed by t; saved by s, and y by s,
// Keras's order, or by t with time_order_output). Keras's cells, with ra the recurrent activation and act the activation:
//   simple_rnn  h = act(xw + h_prev U)
//   lstm        [i f c o] = xw + h_prev U; c = ra(f) c_prev + ra(i) act(c~); h = ra(o) act(c)
//   gru (reset_after)  inner = h_prev U + rb; z = ra(xw_z + inner_z); r = ra(xw_r + inner_r)
//                      hh = act(xw_h + r inner_h); h = z h_prev + (1 - z) hh
//   gru (reset_before) z, r as above without rb; hh = act(xw_h + (r h_prev) U_h)
// With recurrent_dropout every use of h_prev in the step (the GEMM, GRU's reset and blend)
// reads h_prev times the step-independent factors (Keras's cells drop h_tm1); a masked step
// still keeps the undropped state, and the backward pass multiplies the gradient reaching
// the dropped h_prev by the same factors.
// A masked step (mask 0) keeps the states; its output is the previous state, or zeros with
// zero_output_for_mask. The backward pass walks the steps in reverse, accumulating dU (and
// drb) with one GEMM per step and carrying dh (and dc) to the previous step.
// Activations run over whole gate rows: the reference evaluates Keras's formulas in double;
// the fast kernel evaluates tanh (and sigmoid = (1 + tanh(x / 2)) / 2) with a float rational
// approximation within 3e-7 of tanh, which the compiler vectorizes. Derivatives come from
// the activations' outputs where the function allows (tanh, sigmoid).
#include "backend/common/rnn_scan.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/common/nn_op_geometry.h"
#include "backend/common/random.h"
#include "backend/common/rnn_layout.h"
#include "backend/ref/ref_nn_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

// A [rows, cols] view with a row stride (rows of a step inside [N, T, ...]).
struct Rows {
  const float* p = nullptr;
  std::int64_t ld = 0;
  const float* row(std::int64_t i) const { return p + i * ld; }
};

// tanh as a [13/6] rational function of x on [-7.9, 7.9] (beyond it tanh rounds to +-1 in
// float): within 3e-7 of tanh, and only multiplies, adds and one division, so the loops
// that call it vectorize.
inline float fast_tanh(float x) {
  const float c = 7.90531110763549805f;
  x = std::min(c, std::max(-c, x));
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * x;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return p / q;
}

// The fast kernel's activation rows, compiled for AVX-512 and AVX2 too and chosen at load
// time (the build targets baseline x86-64).
__attribute__((target_clones("avx512f", "avx2", "default"))) void tanh_row(const float* x, float* y, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) y[j] = fast_tanh(x[j]);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void sigmoid_row(const float* x, float* y, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) y[j] = 0.5f + 0.5f * fast_tanh(0.5f * x[j]);
}

class RnnScan final : public Kernel {
 public:
  RnnScan(const KernelDesc& d, RnnGemm gemm, bool parallel)
      : l_(rnn_layout(d.attrs)), gemm_(gemm), parallel_(parallel), fast_(parallel),
        threads_(parallel ? std::max(1, omp_get_max_threads()) : 1),
        act_(default_activation_args(parse_activation_kind(d, "activation"))),
        ract_(default_activation_args(parse_activation_kind(d, "recurrent_activation"))),
        grad_(d.op == "rnn_grad") {
    const Shape& u = d.inputs.at(grad_ ? 0 : 1).shape;
    const Shape& seq = grad_ ? d.inputs.at(l_.grad_saved_input()).shape : d.inputs.at(0).shape;
    h_ = u.dim(0);
    g_ = u.dim(1);
    n_ = seq.dim(0);
    t_ = seq.dim(1);
    s_ = l_.saved_per_step(h_);
    off_h_ = s_ - h_;
    off_c_ = 4 * h_;      // lstm
    off_inner_ = 3 * h_;  // gru
  }

  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(2 * n_ * g_ + 7 * n_ * h_ + threads_ * (scratch_floats() + h_ * g_ + g_)) *
           sizeof(float);
  }

  void run(const KernelArgs& args) override {
    if (grad_) {
      backward(args);
    } else {
      forward(args);
    }
  }

 private:
  std::int64_t time_of(std::int64_t s) const { return l_.go_backwards ? t_ - 1 - s : s; }
  // Where step s's output goes in y: at s, or at its time with time_order_output.
  std::int64_t out_step(std::int64_t s) const { return l_.time_order_output ? time_of(s) : s; }
  // Per thread: a cell's activations (up to 5 rows of H) and their slopes.
  std::int64_t scratch_floats() const { return 10 * h_; }
  float* scratch(void* workspace) const {
    const int tid = parallel_ ? omp_get_thread_num() : 0;
    return static_cast<float*>(workspace) + 2 * n_ * g_ + 7 * n_ * h_ + tid * scratch_floats();
  }
  // y = a(x) over n values.
  void apply(const ActivationArgs& a, const float* x, float* y, std::int64_t n) const {
    if (fast_ && a.kind == ActivationKind::tanh) {
      tanh_row(x, y, n);
    } else if (fast_ && a.kind == ActivationKind::sigmoid) {
      sigmoid_row(x, y, n);
    } else {
      for (std::int64_t j = 0; j < n; ++j) y[j] = static_cast<float>(ref_activation(a, x[j]));
    }
  }
  // g = a'(x) over n values, given y = a(x).
  static void slope(const ActivationArgs& a, const float* x, const float* y, float* g, std::int64_t n) {
    switch (a.kind) {
      case ActivationKind::tanh:
        for (std::int64_t j = 0; j < n; ++j) g[j] = 1.0f - y[j] * y[j];
        break;
      case ActivationKind::sigmoid:
        for (std::int64_t j = 0; j < n; ++j) g[j] = y[j] * (1.0f - y[j]);
        break;
      case ActivationKind::linear:
        for (std::int64_t j = 0; j < n; ++j) g[j] = 1.0f;
        break;
      default: {
        const bool from_y = activation_grad_reads_output(a.kind);
        for (std::int64_t j = 0; j < n; ++j) g[j] = static_cast<float>(ref_activation_grad(a, from_y ? y[j] : x[j], 1.0));
      }
    }
  }
  bool valid(const float* mask, std::int64_t i, std::int64_t t) const { return !mask || mask[i * t_ + t] != 0.0f; }

  // recurrent_dropout's factors [N, H] for this run's step into rm (null without it).
  const float* recurrent_factors(const KernelArgs& args, float* rm) const {
    if (l_.recurrent_dropout <= 0.0) return nullptr;
    const float rate = static_cast<float>(l_.recurrent_dropout);
    const float keep_scale = static_cast<float>(1.0 / (1.0 - l_.recurrent_dropout));
    // Element k of the [N, H] factors is element offset + k of the global batch's (Note
    // [Random draws by global row]).
    const std::uint64_t offset = random_index_offset(args.ctx->row_offset, args.ctx->rows, n_ * h_);
    for (std::int64_t k = 0; k < n_ * h_; ++k) {
      const bool keep = dropout_keep(args.ctx->seed, static_cast<std::uint64_t>(l_.recurrent_seed),
                                     static_cast<std::uint64_t>(args.ctx->step), offset + static_cast<std::uint64_t>(k),
                                     rate);
      rm[k] = keep ? keep_scale : 0.0f;
    }
    return rm;
  }
  // h_prev as the step reads it: hp itself, or rows i0..i1 of hp times rm written to hm.
  Rows dropped(const Rows& hp, const float* rm, float* hm, std::int64_t i0, std::int64_t i1) const {
    if (!rm) return hp;
    for (std::int64_t i = i0; i < i1; ++i) {
      for (std::int64_t j = 0; j < h_; ++j) hm[i * h_ + j] = hp.row(i)[j] * rm[i * h_ + j];
    }
    return {hm, h_};
  }

  // The state (h at offset off_h_, c at off_c_) before step s: step s - 1's saved state,
  // the initial state, or zeros.
  Rows state_before(std::int64_t s, const float* saved, std::int64_t off, const float* initial, const float* zeros) const {
    if (s > 0) return {saved + (s - 1) * s_ + off, t_ * s_};
    return {initial ? initial : zeros, h_};
  }

  // Runs f(i0, i1) on contiguous row ranges of the batch: one per thread (OpenMP, one
  // parallel region), or the whole batch on this thread.
  template <typename F>
  void for_row_ranges(F& f) const {
    if (!parallel_ || threads_ == 1 || n_ < 2) {
      f(std::int64_t{0}, n_);
      return;
    }
#pragma omp parallel num_threads(threads_)
    {
      const std::int64_t k = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::int64_t i0 = n_ * k / nt, i1 = n_ * (k + 1) / nt;
      if (i1 > i0) f(i0, i1);
    }
  }

  void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
            const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) const {
    if (m == 0 || n == 0) return;
    gemm_(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  }

  void forward(const KernelArgs& args) const {
    const auto* xw = static_cast<const float*>(args.inputs[0]);
    const auto* u = static_cast<const float*>(args.inputs[1]);
    const auto* rb = l_.recurrent_bias ? static_cast<const float*>(args.inputs[l_.rb_input()]) : nullptr;
    const auto* mask = l_.mask ? static_cast<const float*>(args.inputs[l_.mask_input()]) : nullptr;
    const float* h0 = l_.initial_state ? static_cast<const float*>(args.inputs[l_.initial_state_input()]) : nullptr;
    const float* c0 = l_.initial_state && l_.cell == RnnCell::lstm
                          ? static_cast<const float*>(args.inputs[l_.initial_state_input() + 1])
                          : nullptr;
    auto* y = static_cast<float*>(args.outputs[0]);
    auto* h_out = static_cast<float*>(args.outputs[1]);
    auto* c_out = l_.cell == RnnCell::lstm ? static_cast<float*>(args.outputs[2]) : nullptr;
    auto* saved = static_cast<float*>(args.outputs[l_.cell == RnnCell::lstm ? 3 : 2]);
    float* a = static_cast<float*>(args.workspace);
    float* rh = a + n_ * g_;
    float* zeros = rh + n_ * h_;
    float* hm = zeros + n_ * h_;  // h_prev after recurrent dropout
    std::memset(zeros, 0, static_cast<std::size_t>(n_ * h_) * sizeof(float));
    const float* rm = recurrent_factors(args, hm + n_ * h_);
    const std::int64_t h = h_, g = g_;

    // Samples are independent: each thread scans its own rows of the batch through every
    // step (one parallel region per kernel, not one per step; its GEMMs run on one thread).
    auto rows = [&](std::int64_t i0, std::int64_t i1) {
    const std::int64_t count = i1 - i0;
    for (std::int64_t s = 0; s < t_; ++s) {
      const std::int64_t t = time_of(s);
      const Rows hp = state_before(s, saved, off_h_, h0, zeros);
      const Rows cp = state_before(s, saved, off_c_, c0, zeros);
      const Rows hu = dropped(hp, rm, hm, i0, i1);  // h_prev as the cell uses it
      const bool before = l_.cell == RnnCell::gru && !l_.reset_after;
      // a = h_prev U (every gate; a GRU that resets before gets its candidate's part below).
      gemm(false, false, count, before ? 2 * h : g, h, hu.row(i0), hu.ld, u, g, 0.0f, a + i0 * g, g);
      if (before) {
        for (std::int64_t i = i0; i < i1; ++i) {
          const float* x = xw + (i * t_ + t) * g;
          float* sv = saved + (i * t_ + s) * s_;
          float* r = scratch(args.workspace);
          for (std::int64_t j = 0; j < 2 * h; ++j) sv[j] = x[j] + a[i * g + j];
          apply(ract_, sv + h, r, h);
          for (std::int64_t j = 0; j < h; ++j) rh[i * h + j] = r[j] * hu.row(i)[j];
        }
        gemm(false, false, count, h, h, rh + i0 * h, h, u + 2 * h, g, 0.0f, a + i0 * g + 2 * h, g);
      }
      for (std::int64_t i = i0; i < i1; ++i) {
        const float* x = xw + (i * t_ + t) * g;
        const float* ai = a + i * g;
        const float* hpi = hp.row(i);
        const float* hui = hu.row(i);
        float* sv = saved + (i * t_ + s) * s_;
        float* hn = sv + off_h_;
        float* v = scratch(args.workspace);  // gate activations
        switch (l_.cell) {
          case RnnCell::simple_rnn:
            for (std::int64_t j = 0; j < h; ++j) sv[j] = x[j] + ai[j];
            apply(act_, sv, hn, h);
            break;
          case RnnCell::lstm: {
            const float* cpi = cp.row(i);
            float* cn = sv + off_c_;
            for (std::int64_t j = 0; j < g; ++j) sv[j] = x[j] + ai[j];
            apply(ract_, sv, v, 2 * h);  // i, f
            apply(act_, sv + 2 * h, v + 2 * h, h);
            apply(ract_, sv + 3 * h, v + 3 * h, h);
            for (std::int64_t j = 0; j < h; ++j) cn[j] = v[h + j] * cpi[j] + v[j] * v[2 * h + j];
            apply(act_, cn, v + 4 * h, h);
            for (std::int64_t j = 0; j < h; ++j) hn[j] = v[3 * h + j] * v[4 * h + j];
            break;
          }
          case RnnCell::gru: {
            float* inner = sv + off_inner_;
            if (l_.reset_after) {
              for (std::int64_t j = 0; j < 2 * h; ++j) sv[j] = x[j] + ai[j] + rb[j];
              for (std::int64_t j = 0; j < h; ++j) inner[j] = ai[2 * h + j] + rb[2 * h + j];
              apply(ract_, sv + h, v + h, h);
              for (std::int64_t j = 0; j < h; ++j) sv[2 * h + j] = x[2 * h + j] + v[h + j] * inner[j];
            } else {
              for (std::int64_t j = 0; j < h; ++j) {
                sv[2 * h + j] = x[2 * h + j] + ai[2 * h + j];
                inner[j] = 0.0f;
              }
            }
            apply(ract_, sv, v, h);
            apply(act_, sv + 2 * h, v + 2 * h, h);
            for (std::int64_t j = 0; j < h; ++j) hn[j] = v[j] * hui[j] + (1.0f - v[j]) * v[2 * h + j];
            break;
          }
        }
        float* yi = y + (i * t_ + out_step(s)) * h;
        if (valid(mask, i, t)) {
          std::memcpy(yi, hn, static_cast<std::size_t>(h) * sizeof(float));
        } else {
          // A masked step keeps the states; its output is the previous state (or zeros).
          std::memcpy(hn, hpi, static_cast<std::size_t>(h) * sizeof(float));
          if (l_.cell == RnnCell::lstm) std::memcpy(sv + off_c_, cp.row(i), static_cast<std::size_t>(h) * sizeof(float));
          if (l_.zero_output_for_mask) {
            std::memset(yi, 0, static_cast<std::size_t>(h) * sizeof(float));
          } else {
            std::memcpy(yi, hpi, static_cast<std::size_t>(h) * sizeof(float));
          }
        }
      }
    }
    };
    for_row_ranges(rows);
    const Rows h_last = state_before(t_, saved, off_h_, h0, zeros);
    const Rows c_last = state_before(t_, saved, off_c_, c0, zeros);
    for (std::int64_t i = 0; i < n_; ++i) {
      std::memcpy(h_out + i * h, h_last.row(i), static_cast<std::size_t>(h) * sizeof(float));
      if (c_out) std::memcpy(c_out + i * h, c_last.row(i), static_cast<std::size_t>(h) * sizeof(float));
    }
  }

  void backward(const KernelArgs& args) const {
    const auto* u = static_cast<const float*>(args.inputs[0]);
    const auto* mask = l_.mask ? static_cast<const float*>(args.inputs[l_.grad_mask_input()]) : nullptr;
    const float* h0 = l_.initial_state ? static_cast<const float*>(args.inputs[l_.grad_initial_state_input()]) : nullptr;
    const float* c0 = l_.initial_state && l_.cell == RnnCell::lstm
                          ? static_cast<const float*>(args.inputs[l_.grad_initial_state_input() + 1])
                          : nullptr;
    std::size_t next = l_.grad_saved_input();
    const auto* saved = static_cast<const float*>(args.inputs[next++]);
    const float* dy = l_.has_dy ? static_cast<const float*>(args.inputs[next++]) : nullptr;
    const float* dh = l_.has_dh ? static_cast<const float*>(args.inputs[next++]) : nullptr;
    const float* dc = l_.has_dc ? static_cast<const float*>(args.inputs[next++]) : nullptr;
    auto* dxw = static_cast<float*>(args.outputs[0]);
    auto* du = static_cast<float*>(args.outputs[1]);
    std::size_t out = 2;
    float* drb = l_.recurrent_bias ? static_cast<float*>(args.outputs[out++]) : nullptr;
    float* dh0 = l_.initial_state ? static_cast<float*>(args.outputs[out++]) : nullptr;
    float* dc0 = l_.initial_state && l_.cell == RnnCell::lstm ? static_cast<float*>(args.outputs[out++]) : nullptr;

    const std::int64_t h = h_, g = g_;
    const std::size_t nh = static_cast<std::size_t>(n_ * h) * sizeof(float);
    const std::size_t hg = static_cast<std::size_t>(h * g) * sizeof(float);
    float* dinner = static_cast<float*>(args.workspace);
    float* rh = dinner + n_ * g;
    float* gh = rh + n_ * h;   // d state h after the current step
    float* gc = gh + n_ * h;   // d state c after the current step (lstm)
    float* dhp = gc + n_ * h;  // d state h before the current step
    float* drh = dhp + n_ * h;
    float* zeros = drh + n_ * h;
    float* hm = zeros + n_ * h;  // h_prev after recurrent dropout
    std::memset(zeros, 0, nh);
    const float* rm = recurrent_factors(args, hm + n_ * h);
    // Each thread accumulates dU (and drb) over its rows into a partial of its own; the
    // partials are summed in thread order at the end (the same sum for the same threads).
    float* partials = static_cast<float*>(args.workspace) + 2 * n_ * g_ + 7 * n_ * h_ + threads_ * scratch_floats();
    std::memset(partials, 0, static_cast<std::size_t>(threads_ * (h * g + g)) * sizeof(float));
    if (dh) {
      std::memcpy(gh, dh, nh);
    } else {
      std::memset(gh, 0, nh);
    }
    if (dc) {
      std::memcpy(gc, dc, nh);
    } else {
      std::memset(gc, 0, nh);
    }
    const bool before = l_.cell == RnnCell::gru && !l_.reset_after;

    auto rows = [&](std::int64_t i0, std::int64_t i1) {
    const std::int64_t count = i1 - i0;
    const int tid = parallel_ ? omp_get_thread_num() : 0;
    float* du_part = partials + tid * (h * g + g);
    float* drb_part = du_part + h * g;
    for (std::int64_t s = t_ - 1; s >= 0; --s) {
      const std::int64_t t = time_of(s);
      const Rows hp = dropped(state_before(s, saved, off_h_, h0, zeros), rm, hm, i0, i1);  // as the step read it
      const Rows cp = state_before(s, saved, off_c_, c0, zeros);
      float* dx_t = dxw + t * g;  // rows i * T * G apart
      const std::int64_t ldx = t_ * g;
      float* dx0 = dx_t + i0 * ldx;
      for (std::int64_t i = i0; i < i1; ++i) {
        const bool m = valid(mask, i, t);
        float* ghi = gh + i * h;
        if (dy && (m || !l_.zero_output_for_mask)) {
          const float* dyi = dy + (i * t_ + out_step(s)) * h;
          for (std::int64_t j = 0; j < h; ++j) ghi[j] += dyi[j];
        }
        float* dxi = dx_t + i * ldx;
        float* dpi = dhp + i * h;
        if (!m) {
          // Masked: the states (and their gradients) pass through; no gate gradient.
          std::memset(dxi, 0, static_cast<std::size_t>(g) * sizeof(float));
          if (l_.recurrent_bias) std::memset(dinner + i * g, 0, static_cast<std::size_t>(g) * sizeof(float));
          if (before) std::memset(rh + i * h, 0, static_cast<std::size_t>(h) * sizeof(float));
          std::memcpy(dpi, ghi, static_cast<std::size_t>(h) * sizeof(float));
          continue;
        }
        const float* sv = saved + (i * t_ + s) * s_;
        const float* hpi = hp.row(i);
        float* v = scratch(args.workspace);  // gate activations
        float* d = v + 5 * h;                // their slopes
        switch (l_.cell) {
          case RnnCell::simple_rnn:
            slope(act_, sv, sv + off_h_, d, h);  // an unmasked step saved h = act(pre)
            for (std::int64_t j = 0; j < h; ++j) {
              dxi[j] = ghi[j] * d[j];
              dpi[j] = 0.0f;
            }
            break;
          case RnnCell::lstm: {
            const float* cpi = cp.row(i);
            const float* c = sv + off_c_;
            float* gci = gc + i * h;
            apply(ract_, sv, v, 2 * h);  // i, f
            apply(act_, sv + 2 * h, v + 2 * h, h);
            apply(ract_, sv + 3 * h, v + 3 * h, h);
            apply(act_, c, v + 4 * h, h);
            slope(ract_, sv, v, d, 2 * h);
            slope(act_, sv + 2 * h, v + 2 * h, d + 2 * h, h);
            slope(ract_, sv + 3 * h, v + 3 * h, d + 3 * h, h);
            slope(act_, c, v + 4 * h, d + 4 * h, h);
            for (std::int64_t j = 0; j < h; ++j) {
              const float dct = gci[j] + ghi[j] * v[3 * h + j] * d[4 * h + j];
              dxi[j] = dct * v[2 * h + j] * d[j];
              dxi[h + j] = dct * cpi[j] * d[h + j];
              dxi[2 * h + j] = dct * v[j] * d[2 * h + j];
              dxi[3 * h + j] = ghi[j] * v[4 * h + j] * d[3 * h + j];
              gci[j] = dct * v[h + j];
              dpi[j] = 0.0f;
            }
            break;
          }
          case RnnCell::gru: {
            const float* inner = sv + off_inner_;
            float* di = dinner + i * g;
            apply(ract_, sv, v, 2 * h);  // z, r
            apply(act_, sv + 2 * h, v + 2 * h, h);
            slope(ract_, sv, v, d, 2 * h);
            slope(act_, sv + 2 * h, v + 2 * h, d + 2 * h, h);
            for (std::int64_t j = 0; j < h; ++j) {
              const float z = v[j], r = v[h + j], hh = v[2 * h + j];
              const float dpre_h = ghi[j] * (1.0f - z) * d[2 * h + j];
              dxi[j] = ghi[j] * (hpi[j] - hh) * d[j];
              dxi[2 * h + j] = dpre_h;
              dpi[j] = ghi[j] * z;
              if (l_.reset_after) {
                dxi[h + j] = dpre_h * inner[j] * d[h + j];
                di[j] = dxi[j];
                di[h + j] = dxi[h + j];
                di[2 * h + j] = dpre_h * r;
              } else {
                rh[i * h + j] = r * hpi[j];
              }
            }
            break;
          }
        }
      }
      if (l_.cell == RnnCell::gru && l_.reset_after) {
        // inner = h_prev U + rb: dU += h_prev^T dinner, drb += sum dinner, dh_prev += dinner U^T.
        gemm(true, false, h, g, count, hp.row(i0), hp.ld, dinner + i0 * g, g, 1.0f, du_part, g);
        for (std::int64_t i = i0; i < i1; ++i) {
          for (std::int64_t j = 0; j < g; ++j) drb_part[j] += dinner[i * g + j];
        }
        gemm(false, true, count, h, g, dinner + i0 * g, g, u, g, 1.0f, dhp + i0 * h, h);
      } else if (before) {
        // hh's pre-activation reads (r h_prev) U_h: its gradient reaches r and h_prev.
        gemm(false, true, count, h, h, dx0 + 2 * h, ldx, u + 2 * h, g, 0.0f, drh + i0 * h, h);
        for (std::int64_t i = i0; i < i1; ++i) {
          if (!valid(mask, i, t)) continue;
          const float* sv = saved + (i * t_ + s) * s_;
          const float* hpi = hp.row(i);
          float* dxi = dx_t + i * ldx;
          float* r = scratch(args.workspace);
          float* dr = r + h;
          apply(ract_, sv + h, r, h);
          slope(ract_, sv + h, r, dr, h);
          for (std::int64_t j = 0; j < h; ++j) {
            dxi[h + j] = drh[i * h + j] * hpi[j] * dr[j];
            dhp[i * h + j] += drh[i * h + j] * r[j];
          }
        }
        gemm(true, false, h, 2 * h, count, hp.row(i0), hp.ld, dx0, ldx, 1.0f, du_part, g);
        gemm(true, false, h, h, count, rh + i0 * h, h, dx0 + 2 * h, ldx, 1.0f, du_part + 2 * h, g);
        gemm(false, true, count, h, 2 * h, dx0, ldx, u, g, 1.0f, dhp + i0 * h, h);
      } else {
        gemm(true, false, h, g, count, hp.row(i0), hp.ld, dx0, ldx, 1.0f, du_part, g);
        gemm(false, true, count, h, g, dx0, ldx, u, g, 1.0f, dhp + i0 * h, h);
      }
      if (rm) {  // the gradient reaching the dropped h_prev, back to h_prev (a masked step passed it through)
        for (std::int64_t i = i0; i < i1; ++i) {
          if (!valid(mask, i, t)) continue;
          for (std::int64_t j = 0; j < h; ++j) dhp[i * h + j] *= rm[i * h + j];
        }
      }
      std::memcpy(gh + i0 * h, dhp + i0 * h, static_cast<std::size_t>(count * h) * sizeof(float));
    }
    };
    for_row_ranges(rows);
    std::memcpy(du, partials, hg);
    if (drb) std::memcpy(drb, partials + h * g, static_cast<std::size_t>(g) * sizeof(float));
    for (int k = 1; k < threads_; ++k) {
      const float* part = partials + k * (h * g + g);
      for (std::int64_t j = 0; j < h * g; ++j) du[j] += part[j];
      for (std::int64_t j = 0; drb && j < g; ++j) drb[j] += part[h * g + j];
    }
    if (dh0) std::memcpy(dh0, gh, nh);
    if (dc0) std::memcpy(dc0, gc, nh);
  }

  RnnLayout l_;
  RnnGemm gemm_;
  bool parallel_;
  bool fast_;    // float rational tanh/sigmoid (the oneDNN family), else Keras's formulas in double
  int threads_;  // OpenMP threads whose scratch the workspace holds
  ActivationArgs act_, ract_;
  bool grad_;
  std::int64_t n_ = 0, t_ = 0, h_ = 0, g_ = 0, s_ = 0;
  std::int64_t off_h_ = 0, off_c_ = 0, off_inner_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_rnn_scan(const KernelDesc& d, RnnGemm gemm, bool parallel, std::string* why_not) {
  if (!all_float32(d, why_not)) return nullptr;
  return std::make_unique<RnnScan>(d, gemm, parallel);
}

}  // namespace nnfit
