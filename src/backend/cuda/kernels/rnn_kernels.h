// Private to the CUDA backend: own kernels of the recurrent scan, rnn and rnn_grad
// (SimpleRNN, LSTM, GRU with reset_after on or off; masks, go_backwards, time_order_output,
// zero_output_for_mask, initial states, recurrent_dropout) at float32, bfloat16 and float16
// (the scan's own state, saved values and sums in float32), with the formulas of
// backend/common/rnn_scan.cpp (the CPU's scan; read its header comment for the cells and
// the saved layout, rnn_layout.h). Note [Kernel/launcher split]: steps depend on the step
// before, so the scan is a sequence of launches, each a functor over independent indices:
//   forward, per step: one index per (sample, unit) computes its gates' pre-activations
//   (the row of h_prev·U it needs, a dot product over H) and the cell; a GRU that resets
//   before first runs one launch per (sample, unit) for z, r and r·h_prev.
//   backward, per step in reverse: one index per (sample, unit) for the gate gradients,
//   then dU (and drb) per (row of U, gate column) summing the batch, then per (sample,
//   unit) the gradient reaching h_prev through U.
// The products run as per-index dot products, not through cuBLAS: correct and checked
// here; a GPU run should move the h_prev·U products of a step onto cuBLASLt where H is
// large (docs/design/cuda.md).
#pragma once
#include "backend/common/nn_op_geometry.h"
#include "backend/common/random.h"
#include "backend/common/rnn_layout.h"
#include "backend/cuda/kernels/activation_fns.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

struct RnnGeometry {
  std::int64_t n = 0, t = 0, h = 0, g = 0, s = 0;  // batch, time, units, gates·units, saved per step
  std::int64_t off_h = 0, off_c = 0, off_inner = 0;
  RnnCell cell = RnnCell::simple_rnn;
  bool reset_after = false, go_backwards = false, time_order_output = false, zero_output_for_mask = false;
  ActParams act, ract;
  bool act_reads_y = false, ract_reads_y = false;

  NNFIT_HD std::int64_t time_of(std::int64_t step) const { return go_backwards ? t - 1 - step : step; }
  NNFIT_HD std::int64_t out_step(std::int64_t step) const { return time_order_output ? time_of(step) : step; }
  NNFIT_HD float act_f(float x) const { return act_forward(act, x); }
  NNFIT_HD float ract_f(float x) const { return act_forward(ract, x); }
  NNFIT_HD float act_slope(float x, float y) const { return act_backward(act, act_reads_y ? y : x, 1.0f); }
  NNFIT_HD float ract_slope(float x, float y) const { return act_backward(ract, ract_reads_y ? y : x, 1.0f); }
};

// What every step reads: the saved per-step values (float32 in the forward pass's
// workspace, T in the gradient's input), the initial states, the mask (T) and the
// recurrent dropout factors (null where absent).
template <class T>
struct RnnState {
  const void* saved;
  bool saved_f32;
  const void* h0;
  const void* c0;
  const void* mask;
  const float* rm;
  RnnGeometry geo;
  NNFIT_HD float saved_at(std::int64_t k) const { return saved_f32 ? static_cast<const float*>(saved)[k] : load<T>(saved, k); }
  // State h (or c) before step s: step s − 1's saved state, the initial state, or zero.
  NNFIT_HD float before(std::int64_t i, std::int64_t step, std::int64_t off, const void* initial, std::int64_t k) const {
    if (step > 0) return saved_at((i * geo.t + step - 1) * geo.s + off + k);
    return initial ? load<T>(initial, i * geo.h + k) : 0.0f;
  }
  NNFIT_HD float h_prev(std::int64_t i, std::int64_t step, std::int64_t k) const { return before(i, step, geo.off_h, h0, k); }
  NNFIT_HD float c_prev(std::int64_t i, std::int64_t step, std::int64_t k) const { return before(i, step, geo.off_c, c0, k); }
  // h_prev as the cell uses it (after recurrent dropout).
  NNFIT_HD float h_used(std::int64_t i, std::int64_t step, std::int64_t k) const {
    const float v = h_prev(i, step, k);
    return rm ? v * rm[i * geo.h + k] : v;
  }
  NNFIT_HD bool valid(std::int64_t i, std::int64_t time) const { return !mask || load<T>(mask, i * geo.t + time) != 0.0f; }
};

struct RnnFactorsFn {  // recurrent_dropout's factor per (sample, unit), the same every step
  float* rm;
  // random_draw's: the key of (run, node, step) and (data-parallel) the first global row's
  // index (Note [Random draws by global row]).
  const std::uint64_t* drawn;
  float rate, keep_scale;
  NNFIT_HD void operator()(std::int64_t k) const {
    rm[k] = dropout_uniform_keyed(drawn[0], drawn[1] + static_cast<std::uint64_t>(k)) >= rate ? keep_scale : 0.0f;
  }
};

// Σ_k h_used[i, k] · U[k, col].
template <class T>
NNFIT_HD float rnn_dot_hu(const RnnState<T>& st, const void* u, std::int64_t i, std::int64_t step, std::int64_t col) {
  float sum = 0.0f;
  for (std::int64_t k = 0; k < st.geo.h; ++k) sum += st.h_used(i, step, k) * load<T>(u, k * st.geo.g + col);
  return sum;
}

// GRU resetting before: z and r pre-activations and r·h_prev for (sample, unit).
template <class T>
struct GruResetBeforeFn {
  RnnState<T> st;
  const void* xw;
  const void* u;
  float* saved;  // float32 (workspace)
  float* rh;  // [N, H]
  std::int64_t step;
  NNFIT_HD void operator()(std::int64_t ij) const {
    const RnnGeometry& g = st.geo;
    const std::int64_t i = ij / g.h, j = ij % g.h, time = g.time_of(step);
    const std::int64_t x = (i * g.t + time) * g.g;
    float* sv = saved + (i * g.t + step) * g.s;
    sv[j] = load<T>(xw, x + j) + rnn_dot_hu(st, u, i, step, j);
    sv[g.h + j] = load<T>(xw, x + g.h + j) + rnn_dot_hu(st, u, i, step, g.h + j);
    rh[ij] = g.ract_f(sv[g.h + j]) * st.h_used(i, step, j);
  }
};

template <class T>
struct RnnCellFn {
  RnnState<T> st;
  const void* xw;
  const void* u;
  const void* rb;   // GRU reset_after
  const float* rh;  // GRU reset_before
  float* saved;     // float32 (workspace)
  void* y;
  std::int64_t step;
  NNFIT_HD float xat(std::int64_t x, std::int64_t col) const { return load<T>(xw, x + col); }
  NNFIT_HD void operator()(std::int64_t ij) const {
    const RnnGeometry& g = st.geo;
    const std::int64_t i = ij / g.h, j = ij % g.h, time = g.time_of(step), H = g.h;
    const std::int64_t x = (i * g.t + time) * g.g;
    float* sv = saved + (i * g.t + step) * g.s;
    float hn = 0.0f;
    switch (g.cell) {
      case RnnCell::simple_rnn:
        sv[j] = xat(x, j) + rnn_dot_hu(st, u, i, step, j);
        hn = g.act_f(sv[j]);
        break;
      case RnnCell::lstm: {
        for (std::int64_t gate = 0; gate < 4; ++gate) sv[gate * H + j] = xat(x, gate * H + j) + rnn_dot_hu(st, u, i, step, gate * H + j);
        const float vi = g.ract_f(sv[j]), vf = g.ract_f(sv[H + j]), vc = g.act_f(sv[2 * H + j]), vo = g.ract_f(sv[3 * H + j]);
        const float cn = vf * st.c_prev(i, step, j) + vi * vc;
        sv[g.off_c + j] = cn;
        hn = vo * g.act_f(cn);
        break;
      }
      case RnnCell::gru: {
        if (g.reset_after) {
          const float az = rnn_dot_hu(st, u, i, step, j), ar = rnn_dot_hu(st, u, i, step, H + j);
          const float inner = rnn_dot_hu(st, u, i, step, 2 * H + j) + load<T>(rb, 2 * H + j);
          sv[j] = xat(x, j) + az + load<T>(rb, j);
          sv[H + j] = xat(x, H + j) + ar + load<T>(rb, H + j);
          sv[g.off_inner + j] = inner;
          sv[2 * H + j] = xat(x, 2 * H + j) + g.ract_f(sv[H + j]) * inner;
        } else {  // z and r: GruResetBeforeFn
          float a = 0.0f;
          for (std::int64_t k = 0; k < H; ++k) a += rh[i * H + k] * load<T>(u, k * g.g + 2 * H + j);
          sv[2 * H + j] = xat(x, 2 * H + j) + a;
          sv[g.off_inner + j] = 0.0f;
        }
        const float z = g.ract_f(sv[j]), hh = g.act_f(sv[2 * H + j]);
        hn = z * st.h_used(i, step, j) + (1.0f - z) * hh;
        break;
      }
    }
    const std::int64_t yi = (i * g.t + g.out_step(step)) * H + j;
    if (st.valid(i, time)) {
      sv[g.off_h + j] = hn;
      store<T>(y, yi, hn);
      return;
    }
    // A masked step keeps the states; its output is the previous state (or zeros).
    const float hp = st.h_prev(i, step, j);
    sv[g.off_h + j] = hp;
    if (g.cell == RnnCell::lstm) sv[g.off_c + j] = st.c_prev(i, step, j);
    store<T>(y, yi, g.zero_output_for_mask ? 0.0f : hp);
  }
};

template <class T>
struct RnnFinalStateFn {  // h (and c) after the last step
  RnnState<T> st;
  void* h_out;
  void* c_out;
  NNFIT_HD void operator()(std::int64_t ik) const {
    const std::int64_t i = ik / st.geo.h, k = ik % st.geo.h;
    store<T>(h_out, ik, st.h_prev(i, st.geo.t, k));
    if (c_out) store<T>(c_out, ik, st.c_prev(i, st.geo.t, k));
  }
};

// ---- backward ----

// The backward pass's own buffers (workspace): gh and gc, the gradients of the states after
// the current step; dhp, of h_prev; drh and rh (GRU resetting before); dinner (reset_after).
struct RnnGradBuffers {
  float* gh;
  float* gc;
  float* dhp;
  float* drh;
  float* rh;
  float* dinner;  // [N, G]
  float* dxw;     // [N, T, G], float32 until the end
  float* du;      // [H, G], summed over the steps in float32
  float* drb;     // [G]
  // The gradient reaching h_prev·U's column `col` for sample i at `time`: the inner
  // products' (GRU resetting after, where rb is added) or the gates' pre-activations'.
  NNFIT_HD float through_u(const RnnGeometry& g, std::int64_t i, std::int64_t time, std::int64_t col) const {
    return g.reset_after ? dinner[i * g.g + col] : dxw[(i * g.t + time) * g.g + col];
  }
};

template <class T>
struct RnnGradInitFn {
  RnnGradBuffers b;
  const void* dh;
  const void* dc;
  NNFIT_HD void operator()(std::int64_t k) const {
    b.gh[k] = dh ? load<T>(dh, k) : 0.0f;
    b.gc[k] = dc ? load<T>(dc, k) : 0.0f;
  }
};

template <class T>
struct RnnCellGradFn {
  RnnState<T> st;
  RnnGradBuffers b;
  const void* dy;
  std::int64_t step;
  NNFIT_HD void operator()(std::int64_t ij) const {
    const RnnGeometry& g = st.geo;
    const std::int64_t i = ij / g.h, j = ij % g.h, time = g.time_of(step), H = g.h;
    const bool m = st.valid(i, time);
    float gh = b.gh[ij];
    if (dy && (m || !g.zero_output_for_mask)) gh += load<T>(dy, (i * g.t + g.out_step(step)) * H + j);
    b.gh[ij] = gh;
    float* dx = b.dxw + (i * g.t + time) * g.g;
    const std::int64_t gates = g.g / H;
    if (!m) {  // masked: the states (and their gradients) pass through; no gate gradient
      for (std::int64_t gate = 0; gate < gates; ++gate) dx[gate * H + j] = 0.0f;
      if (g.reset_after) {
        for (std::int64_t gate = 0; gate < gates; ++gate) b.dinner[i * g.g + gate * H + j] = 0.0f;
      }
      if (g.cell == RnnCell::gru && !g.reset_after) b.rh[ij] = 0.0f;
      b.dhp[ij] = gh;
      return;
    }
    const std::int64_t sv0 = (i * g.t + step) * g.s;
    const auto sv = [&](std::int64_t k) { return st.saved_at(sv0 + k); };
    switch (g.cell) {
      case RnnCell::simple_rnn:
        dx[j] = gh * g.act_slope(sv(j), sv(g.off_h + j));  // an unmasked step saved h = act(pre)
        b.dhp[ij] = 0.0f;
        break;
      case RnnCell::lstm: {
        const float pi = sv(j), pf = sv(H + j), pc = sv(2 * H + j), po = sv(3 * H + j), c = sv(g.off_c + j);
        const float vi = g.ract_f(pi), vf = g.ract_f(pf), vc = g.act_f(pc), vo = g.ract_f(po), va = g.act_f(c);
        const float dct = b.gc[ij] + gh * vo * g.act_slope(c, va);
        dx[j] = dct * vc * g.ract_slope(pi, vi);
        dx[H + j] = dct * st.c_prev(i, step, j) * g.ract_slope(pf, vf);
        dx[2 * H + j] = dct * vi * g.act_slope(pc, vc);
        dx[3 * H + j] = gh * va * g.ract_slope(po, vo);
        b.gc[ij] = dct * vf;
        b.dhp[ij] = 0.0f;
        break;
      }
      case RnnCell::gru: {
        const float pz = sv(j), pr = sv(H + j), ph = sv(2 * H + j);
        const float z = g.ract_f(pz), r = g.ract_f(pr), hh = g.act_f(ph), hp = st.h_used(i, step, j);
        const float dpre_h = gh * (1.0f - z) * g.act_slope(ph, hh);
        dx[j] = gh * (hp - hh) * g.ract_slope(pz, z);
        dx[2 * H + j] = dpre_h;
        b.dhp[ij] = gh * z;
        if (g.reset_after) {
          dx[H + j] = dpre_h * sv(g.off_inner + j) * g.ract_slope(pr, r);
          float* di = b.dinner + i * g.g;
          di[j] = dx[j];
          di[H + j] = dx[H + j];
          di[2 * H + j] = dpre_h * r;
        } else {
          b.rh[ij] = r * hp;
        }
        break;
      }
    }
  }
};

// GRU resetting before: hh's pre-activation reads (r·h_prev)·U_h, so its gradient reaches r
// (dx's r columns) and h_prev.
template <class T>
struct GruResetBeforeGradFn {
  RnnState<T> st;
  RnnGradBuffers b;
  const void* u;
  std::int64_t step;
  NNFIT_HD void operator()(std::int64_t ij) const {
    const RnnGeometry& g = st.geo;
    const std::int64_t i = ij / g.h, j = ij % g.h, time = g.time_of(step), H = g.h;
    float* dx = b.dxw + (i * g.t + time) * g.g;
    float drh = 0.0f;  // Σ_c dx[2H + c] · U[j, 2H + c]
    for (std::int64_t c = 0; c < H; ++c) drh += dx[2 * H + c] * load<T>(u, j * g.g + 2 * H + c);
    b.drh[ij] = drh;
    if (!st.valid(i, time)) return;
    const float pr = st.saved_at((i * g.t + step) * g.s + H + j), r = g.ract_f(pr);
    dx[H + j] = drh * st.h_used(i, step, j) * g.ract_slope(pr, r);
    b.dhp[ij] += drh * r;
  }
};

// dU[k, col] += Σ_i a[i, k] · d[i, col] for this step: a = h_used, d = dx (or dinner with
// reset_after); a GRU resetting before takes r·h_prev for the candidate's columns. drb too.
template <class T>
struct RnnDuFn {
  RnnState<T> st;
  RnnGradBuffers b;
  bool with_drb;  // reset_after
  std::int64_t step;
  NNFIT_HD void operator()(std::int64_t kc) const {
    const RnnGeometry& g = st.geo;
    const std::int64_t k = kc / g.g, col = kc % g.g, time = g.time_of(step);
    const bool before = g.cell == RnnCell::gru && !g.reset_after;
    float sum = 0.0f, bias = 0.0f;
    for (std::int64_t i = 0; i < g.n; ++i) {
      const float d = b.through_u(g, i, time, col);
      const float a = before && col >= 2 * g.h ? b.rh[i * g.h + k] : st.h_used(i, step, k);
      sum += a * d;
      bias += d;
    }
    b.du[kc] += sum;
    if (with_drb && k == 0) b.drb[col] += bias;
  }
};

// dh_prev[i, k] += Σ_col d[i, col] · U[k, col] (a GRU resetting before: the z and r columns;
// its candidate's part came through r·h_prev), times the dropout factor, becomes the state
// gradient of the step before.
template <class T>
struct RnnDhPrevFn {
  RnnState<T> st;
  RnnGradBuffers b;
  const void* u;
  std::int64_t step;
  NNFIT_HD void operator()(std::int64_t ik) const {
    const RnnGeometry& g = st.geo;
    const std::int64_t i = ik / g.h, k = ik % g.h, time = g.time_of(step);
    const std::int64_t cols = g.cell == RnnCell::gru && !g.reset_after ? 2 * g.h : g.g;
    float sum = 0.0f;
    for (std::int64_t col = 0; col < cols; ++col) {
      const float d = b.through_u(g, i, time, col);
      sum += d * load<T>(u, k * g.g + col);
    }
    float v = b.dhp[ik] + sum;
    if (st.rm && st.valid(i, time)) v *= st.rm[ik];
    b.dhp[ik] = v;
    b.gh[ik] = v;
  }
};

template <class T>
struct RnnGradFinishFn {
  RnnGradBuffers b;
  void* dh0;
  void* dc0;
  NNFIT_HD void operator()(std::int64_t k) const {
    if (dh0) store<T>(dh0, k, b.gh[k]);
    if (dc0) store<T>(dc0, k, b.gc[k]);
  }
};


template <class Launch, class T>
std::unique_ptr<Kernel> make_rnn(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const RnnLayout l = rnn_layout(desc.attrs);
  const bool grad = desc.op == "rnn_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? l.num_grad_inputs() : l.num_forward_inputs()), InvalidArgument, desc.op,
              " at node '", desc.node_name, "': ", desc.inputs.size(), " inputs where its attributes name ",
              grad ? l.num_grad_inputs() : l.num_forward_inputs());
  const Shape& u = desc.inputs[grad ? 0 : 1].shape;
  const Shape& seq = desc.inputs[grad ? l.grad_saved_input() : 0].shape;
  RnnGeometry g;
  g.h = u.dim(0);
  g.g = u.dim(1);
  g.n = seq.dim(0);
  g.t = seq.dim(1);
  g.s = l.saved_per_step(g.h);
  g.off_h = g.s - g.h;
  g.off_c = 4 * g.h;
  g.off_inner = 3 * g.h;
  g.cell = l.cell;
  g.reset_after = l.reset_after;
  g.go_backwards = l.go_backwards;
  g.time_order_output = l.time_order_output;
  g.zero_output_for_mask = l.zero_output_for_mask;
  NNFIT_CHECK(g.g == l.gates * g.h, InvalidArgument, desc.op, ": U ", u.to_string(), " does not hold ", l.gates, " gates of ",
              g.h, " units");
  const ActivationArgs act = default_activation_args(parse_activation_kind(desc, "activation"));
  const ActivationArgs ract = default_activation_args(parse_activation_kind(desc, "recurrent_activation"));
  g.act = act_params(act);
  g.ract = act_params(ract);
  g.act_reads_y = activation_grad_reads_output(act.kind);
  g.ract_reads_y = activation_grad_reads_output(ract.kind);
  const std::int64_t nh = g.n * g.h, seq_saved = g.n * g.t * g.s, seq_gates = g.n * g.t * g.g;
  // Workspace (floats): rm, then forward: rh, saved; backward: gh, gc, dhp, drh, rh, dinner,
  // dxw, du, drb.
  const std::int64_t floats = grad ? nh + 5 * nh + g.n * g.g + seq_gates + g.h * g.g + g.g : 2 * nh + seq_saved;
  return launch_kernel(
      [l, g, grad, nh, seq_saved, seq_gates, floats](const KernelArgs& a) {
        auto* w = static_cast<float*>(a.workspace);
        float* rm = nullptr;
        if (l.recurrent_dropout > 0.0 && nh > 0) {
          rm = w;
          // The draw's words after the floats (the workspace's last kRandomDrawWorkspace bytes).
          void* at = static_cast<char*>(a.workspace) + aligned_bytes(static_cast<std::size_t>(floats) * sizeof(float));
          const std::uint64_t* drawn = random_draw<Launch>(a, static_cast<std::uint64_t>(l.recurrent_seed), nh, 0, 0, at);
          Launch::run(RnnFactorsFn{rm, drawn, static_cast<float>(l.recurrent_dropout),
                                   static_cast<float>(1.0 / (1.0 - l.recurrent_dropout))},
                      nh, a.ctx);
        }
        const bool lstm = g.cell == RnnCell::lstm;
        const auto in = [&](std::size_t k) { return a.inputs[k]; };
        if (!grad) {
          const void* rb = l.recurrent_bias ? in(l.rb_input()) : nullptr;
          const void* mask = l.mask ? in(l.mask_input()) : nullptr;
          const void* h0 = l.initial_state ? in(l.initial_state_input()) : nullptr;
          const void* c0 = l.initial_state && lstm ? in(l.initial_state_input() + 1) : nullptr;
          float* rh = w + nh;
          float* saved = w + 2 * nh;  // float32 through the scan, stored at T at the end
          const RnnState<T> st{saved, true, h0, c0, mask, rm, g};
          for (std::int64_t s = 0; s < g.t && nh > 0; ++s) {
            if (g.cell == RnnCell::gru && !g.reset_after) Launch::run(GruResetBeforeFn<T>{st, in(0), in(1), saved, rh, s}, nh, a.ctx);
            Launch::run(RnnCellFn<T>{st, in(0), in(1), rb, rh, saved, a.outputs[0], s}, nh, a.ctx);
          }
          if (nh > 0) Launch::run(RnnFinalStateFn<T>{st, a.outputs[1], lstm ? a.outputs[2] : nullptr}, nh, a.ctx);
          if (seq_saved > 0) Launch::run(StoreF32Fn<T>{saved, a.outputs[lstm ? 3 : 2]}, seq_saved, a.ctx);
          return;
        }
        const void* mask = l.mask ? in(l.grad_mask_input()) : nullptr;
        const void* h0 = l.initial_state ? in(l.grad_initial_state_input()) : nullptr;
        const void* c0 = l.initial_state && lstm ? in(l.grad_initial_state_input() + 1) : nullptr;
        std::size_t next = l.grad_saved_input();
        const void* saved = in(next++);
        const void* dy = l.has_dy ? in(next++) : nullptr;
        const void* dh = l.has_dh ? in(next++) : nullptr;
        const void* dc = l.has_dc ? in(next++) : nullptr;
        std::size_t o = 2;
        void* drb = l.recurrent_bias ? a.outputs[o++] : nullptr;
        void* dh0 = l.initial_state ? a.outputs[o++] : nullptr;
        void* dc0 = l.initial_state && lstm ? a.outputs[o++] : nullptr;
        const RnnState<T> st{saved, false, h0, c0, mask, rm, g};
        float* base = w + nh;
        RnnGradBuffers b{base, base + nh, base + 2 * nh, base + 3 * nh, base + 4 * nh, base + 5 * nh, nullptr, nullptr, nullptr};
        b.dxw = b.dinner + g.n * g.g;
        b.du = b.dxw + seq_gates;
        b.drb = b.du + g.h * g.g;
        if (g.h * g.g) Launch::run(ZeroFn<float>{b.du}, g.h * g.g, a.ctx);
        if (g.g) Launch::run(ZeroFn<float>{b.drb}, g.g, a.ctx);
        if (seq_gates) Launch::run(ZeroFn<float>{b.dxw}, seq_gates, a.ctx);
        if (nh > 0) {
          Launch::run(RnnGradInitFn<T>{b, dh, dc}, nh, a.ctx);
          for (std::int64_t s = g.t - 1; s >= 0; --s) {
            Launch::run(RnnCellGradFn<T>{st, b, dy, s}, nh, a.ctx);
            if (g.cell == RnnCell::gru && !g.reset_after) Launch::run(GruResetBeforeGradFn<T>{st, b, in(0), s}, nh, a.ctx);
            Launch::run(RnnDuFn<T>{st, b, drb != nullptr, s}, g.h * g.g, a.ctx);
            Launch::run(RnnDhPrevFn<T>{st, b, in(0), s}, nh, a.ctx);
          }
          Launch::run(RnnGradFinishFn<T>{b, dh0, dc0}, nh, a.ctx);
        }
        if (seq_gates) Launch::run(StoreF32Fn<T>{b.dxw, a.outputs[0]}, seq_gates, a.ctx);
        if (g.h * g.g) Launch::run(StoreF32Fn<T>{b.du, a.outputs[1]}, g.h * g.g, a.ctx);
        if (drb && g.g) Launch::run(StoreF32Fn<T>{b.drb, drb}, g.g, a.ctx);
      },
      aligned_bytes(static_cast<std::size_t>(floats) * sizeof(float)) + (l.recurrent_dropout > 0.0 ? kRandomDrawWorkspace : 0));
}

template <class Launch>
void register_rnn_kernels(KernelRegistry& r) {
  for (const char* op : {"rnn", "rnn_grad"}) {
    add_float_kernels(r, op, make_rnn<Launch, float>, make_rnn<Launch, Bf16>, make_rnn<Launch, F16>);
  }
}

}  // namespace nnfit::cuda
