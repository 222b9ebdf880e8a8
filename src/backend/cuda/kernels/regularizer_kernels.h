// Private to the CUDA backend: own kernels of weight_penalty, weight_penalty_grad and
// apply_constraint (Note [Kernel/launcher split]), float32 only as on the CPU (they run on
// variables, which stay float32), in double as the reference (ref_regularizers.cpp), with
// Keras 3's formulas. Every sum runs in a fixed order (per-chunk partials, then the chunks
// in order; per-vector and per-group loops), so results do not depend on the launch shape.
//   l1l2: penalty over 4096-element chunks, then one index adds the chunks; the gradient
//   element-wise.
//   orthogonal: per vector its normalized copy (workspace), then per vector the sum of
//   |n_i·n_j| (forward), or the signs of n_i·n_j, dn, n·dn and dx (gradient), each a pass.
//   apply_constraint: per group (the coordinates on the axes not reduced over) its factor,
//   then every element scaled by its group's factor, in place.
#pragma once
#include <math.h>

#include <array>

#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

inline constexpr std::int64_t kPenaltyChunk = 4096;
inline constexpr double kRegularizerEpsilon = 1e-7;  // Keras's backend epsilon

NNFIT_HD double sign_of(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

struct L1L2PartialFn {
  const float* x;
  double* partial;
  std::int64_t n;
  double l1, l2;
  NNFIT_HD void operator()(std::int64_t chunk) const {
    const std::int64_t end = (chunk + 1) * kPenaltyChunk < n ? (chunk + 1) * kPenaltyChunk : n;
    double s = 0.0;
    for (std::int64_t i = chunk * kPenaltyChunk; i < end; ++i) {
      const double v = x[i];
      s += l1 * fabs(v) + l2 * v * v;
    }
    partial[chunk] = s;
  }
};

// out[0] = scale · Σ partial, in order.
struct SumPartialsFn {
  const double* partial;
  std::int64_t count;
  double scale;
  float* out;
  NNFIT_HD void operator()(std::int64_t) const {
    double s = 0.0;
    for (std::int64_t k = 0; k < count; ++k) s += partial[k];
    out[0] = static_cast<float>(scale * s);
  }
};

struct L1L2GradFn {
  const float* x;
  const float* dloss;
  float* dx;
  double l1, l2;
  NNFIT_HD void operator()(std::int64_t i) const {
    const double v = x[i];
    dx[i] = static_cast<float>(static_cast<double>(dloss[0]) * (l1 * sign_of(v) + 2.0 * l2 * v));
  }
};

// The vectors of the orthogonal penalty: s vectors of len, element k of vector i at
// x[i·cols + k] (rows) or x[k·cols + i] (columns).
struct OrthoGeometry {
  std::int64_t s = 0, len = 0, cols = 0;
  bool rows = true;
  NNFIT_HD std::int64_t at(std::int64_t i, std::int64_t k) const { return rows ? i * cols + k : k * cols + i; }
};

// Workspace of the orthogonal kernels, in doubles: nrm [s·len], inv [s], clamped [s],
// sgn [s·s], dn [s·len], ndn [s], row [s].
struct OrthoScratch {
  double* nrm;
  double* inv;
  double* clamped;
  double* sgn;
  double* dn;
  double* ndn;
  double* row;
  static std::size_t doubles(const OrthoGeometry& g) { return static_cast<std::size_t>(2 * g.s * g.len + g.s * g.s + 4 * g.s); }
  static OrthoScratch in(void* workspace, const OrthoGeometry& g) {
    auto* p = static_cast<double*>(workspace);
    OrthoScratch w{};
    w.nrm = p;
    w.inv = w.nrm + g.s * g.len;
    w.clamped = w.inv + g.s;
    w.sgn = w.clamped + g.s;
    w.dn = w.sgn + g.s * g.s;
    w.ndn = w.dn + g.s * g.len;
    w.row = w.ndn + g.s;
    return w;
  }
};

struct OrthoNormalizeFn {
  const float* x;
  OrthoScratch w;
  OrthoGeometry g;
  NNFIT_HD void operator()(std::int64_t i) const {
    double sq = 0.0;
    for (std::int64_t k = 0; k < g.len; ++k) sq += static_cast<double>(x[g.at(i, k)]) * x[g.at(i, k)];
    const double cap = 1.0 / kRegularizerEpsilon;
    const double r = sq > 0 ? 1.0 / sqrt(sq) : cap;
    w.clamped[i] = r >= cap ? 1.0 : 0.0;
    w.inv[i] = r < cap ? r : cap;
    for (std::int64_t k = 0; k < g.len; ++k) w.nrm[i * g.len + k] = x[g.at(i, k)] * w.inv[i];
  }
};

NNFIT_HD double ortho_dot(const OrthoScratch& w, const OrthoGeometry& g, std::int64_t i, std::int64_t j) {
  double d = 0.0;
  for (std::int64_t k = 0; k < g.len; ++k) d += w.nrm[i * g.len + k] * w.nrm[j * g.len + k];
  return d;
}

struct OrthoRowFn {  // row[i] = Σ_{j≠i} |n_i·n_j|
  OrthoScratch w;
  OrthoGeometry g;
  NNFIT_HD void operator()(std::int64_t i) const {
    double s = 0.0;
    for (std::int64_t j = 0; j < g.s; ++j) s += j == i ? 0.0 : fabs(ortho_dot(w, g, i, j));
    w.row[i] = s;
  }
};

struct OrthoSignFn {  // sgn[i·s + j] = sign(n_i·n_j), 0 on the diagonal
  OrthoScratch w;
  OrthoGeometry g;
  NNFIT_HD void operator()(std::int64_t ij) const {
    const std::int64_t i = ij / g.s, j = ij % g.s;
    w.sgn[ij] = i == j ? 0.0 : sign_of(ortho_dot(w, g, i, j));
  }
};

struct OrthoDnFn {  // dn[i·len + k] = Σ_j 2·coef·sgn_ij·n_jk
  OrthoScratch w;
  OrthoGeometry g;
  double coef;
  NNFIT_HD void operator()(std::int64_t ik) const {
    const std::int64_t i = ik / g.len, k = ik % g.len;
    double s = 0.0;
    for (std::int64_t j = 0; j < g.s; ++j) s += 2.0 * coef * w.sgn[i * g.s + j] * w.nrm[j * g.len + k];
    w.dn[ik] = s;
  }
};

struct OrthoNdnFn {  // ndn[i] = n_i·dn_i
  OrthoScratch w;
  OrthoGeometry g;
  NNFIT_HD void operator()(std::int64_t i) const {
    double s = 0.0;
    for (std::int64_t k = 0; k < g.len; ++k) s += w.nrm[i * g.len + k] * w.dn[i * g.len + k];
    w.ndn[i] = s;
  }
};

struct OrthoGradFn {  // through the normalization (the clamped branch passes dn·(1/ε))
  OrthoScratch w;
  OrthoGeometry g;
  const float* dloss;
  float* dx;
  NNFIT_HD void operator()(std::int64_t ik) const {
    const std::int64_t i = ik / g.len, k = ik % g.len;
    const double r = w.inv[i], dn = w.dn[ik];
    const double dv = w.clamped[i] != 0.0 ? dn * r : r * (dn - w.nrm[ik] * w.ndn[i]);
    dx[g.at(i, k)] = static_cast<float>(static_cast<double>(dloss[0]) * dv);
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_weight_penalty(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<float>(desc, why_not)) return nullptr;
  const bool grad = desc.op == "weight_penalty_grad";
  NNFIT_CHECK(desc.inputs.size() == (grad ? 2u : 1u) && desc.outputs.size() == 1, InvalidArgument, desc.op, " at node '",
              desc.node_name, "': expected ", grad ? "x and dloss" : "x alone");
  const Shape& x = desc.inputs[0].shape;
  const std::int64_t n = x.numel();
  if (desc.attrs.s("kind") == "l1l2") {
    const double l1 = desc.attrs.f("l1"), l2 = desc.attrs.f("l2");
    if (grad) {
      return launch_kernel([n, l1, l2](const KernelArgs& a) {
        if (n) Launch::run(L1L2GradFn{static_cast<const float*>(a.inputs[0]), static_cast<const float*>(a.inputs[1]),
                                      static_cast<float*>(a.outputs[0]), l1, l2}, n, a.ctx);
      });
    }
    const std::int64_t chunks = (n + kPenaltyChunk - 1) / kPenaltyChunk;
    return launch_kernel(
        [n, chunks, l1, l2](const KernelArgs& a) {
          auto* partial = static_cast<double*>(a.workspace);
          if (chunks) Launch::run(L1L2PartialFn{static_cast<const float*>(a.inputs[0]), partial, n, l1, l2}, chunks, a.ctx);
          Launch::run(SumPartialsFn{partial, chunks, 1.0, static_cast<float*>(a.outputs[0])}, 1, a.ctx);
        },
        aligned_bytes(static_cast<std::size_t>(chunks) * sizeof(double)));
  }
  NNFIT_CHECK(x.rank() == 2, InvalidArgument, desc.op, ": an orthogonal penalty needs a 2-D tensor, got ", x.to_string());
  OrthoGeometry g;
  g.rows = desc.attrs.s("mode") == "rows";
  g.s = x[g.rows ? 0 : 1];
  g.len = x[g.rows ? 1 : 0];
  g.cols = x[1];
  NNFIT_CHECK(g.s >= 2, InvalidArgument, desc.op, ": an orthogonal penalty needs at least 2 vectors, got ", g.s);
  const double coef = desc.attrs.f("factor") * 0.5 / (static_cast<double>(g.s) * (static_cast<double>(g.s) - 1.0) / 2.0);
  const std::size_t bytes = aligned_bytes(OrthoScratch::doubles(g) * sizeof(double));
  return launch_kernel(
      [g, coef, grad](const KernelArgs& a) {
        const OrthoScratch w = OrthoScratch::in(a.workspace, g);
        const auto* x = static_cast<const float*>(a.inputs[0]);
        Launch::run(OrthoNormalizeFn{x, w, g}, g.s, a.ctx);
        if (!grad) {
          Launch::run(OrthoRowFn{w, g}, g.s, a.ctx);
          Launch::run(SumPartialsFn{w.row, g.s, coef, static_cast<float*>(a.outputs[0])}, 1, a.ctx);
          return;
        }
        Launch::run(OrthoSignFn{w, g}, g.s * g.s, a.ctx);
        if (g.len == 0) return;
        Launch::run(OrthoDnFn{w, g, coef}, g.s * g.len, a.ctx);
        Launch::run(OrthoNdnFn{w, g}, g.s, a.ctx);
        Launch::run(OrthoGradFn{w, g, static_cast<const float*>(a.inputs[1]), static_cast<float*>(a.outputs[0])}, g.s * g.len,
                    a.ctx);
      },
      bytes);
}

inline constexpr int kConstraintMaxRank = 8;

// The norms of apply_constraint: one per combination of coordinates on the kept axes.
struct ConstraintGeometry {
  int rank = 0;
  std::array<std::int64_t, kConstraintMaxRank> dims{};
  std::array<bool, kConstraintMaxRank> reduced{};
  std::int64_t numel = 0, groups = 1;
  NNFIT_HD std::int64_t group_of(std::int64_t i) const {
    std::int64_t g = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const std::int64_t c = i % dims[d];
      i /= dims[d];
      if (!reduced[d]) {
        g += c * stride;
        stride *= dims[d];
      }
    }
    return g;
  }
  // Element j (of numel / groups) of group g: kept axes from g, reduced axes from j.
  NNFIT_HD std::int64_t member(std::int64_t g, std::int64_t j) const {
    std::int64_t x = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      std::int64_t c;
      if (reduced[d]) {
        c = j % dims[d];
        j /= dims[d];
      } else {
        c = g % dims[d];
        g /= dims[d];
      }
      x += c * stride;
      stride *= dims[d];
    }
    return x;
  }
};

enum class ConstraintKind { max_norm, min_max_norm, unit_norm, non_neg };

struct ConstraintFactorFn {
  const float* w;
  double* factor;
  ConstraintGeometry geo;
  ConstraintKind kind;
  double min_value, max_value, rate;
  NNFIT_HD void operator()(std::int64_t g) const {
    const std::int64_t members = geo.numel / geo.groups;
    double sq = 0.0;
    for (std::int64_t j = 0; j < members; ++j) {
      const double v = w[geo.member(g, j)];
      sq += v * v;
    }
    const double norm = sqrt(sq);
    const double clipped = norm < min_value ? min_value : (norm > max_value ? max_value : norm);
    double desired = norm;
    if (kind == ConstraintKind::max_norm) desired = norm > max_value ? max_value : norm;
    if (kind == ConstraintKind::min_max_norm) desired = rate * clipped + (1.0 - rate) * norm;
    if (kind == ConstraintKind::unit_norm) desired = 1.0;
    factor[g] = desired / (kRegularizerEpsilon + norm);
  }
};

struct ConstraintApplyFn {
  float* w;
  const double* factor;  // null: NonNeg
  ConstraintGeometry geo;
  NNFIT_HD void operator()(std::int64_t i) const {
    if (!factor) {
      w[i] = w[i] > 0.0f ? w[i] : 0.0f;
      return;
    }
    w[i] = static_cast<float>(w[i] * factor[geo.group_of(i)]);
  }
};

template <class Launch>
std::unique_ptr<Kernel> make_apply_constraint(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<float>(desc, why_not)) return nullptr;
  NNFIT_CHECK(desc.inputs.size() == 1, InvalidArgument, desc.op, " at node '", desc.node_name, "': expected the variable only");
  const Shape& s = desc.inputs[0].shape;
  NNFIT_CHECK(s.rank() <= kConstraintMaxRank, Unsupported, "cuda:apply_constraint takes variables of rank up to ",
              kConstraintMaxRank, ", got ", s.to_string());
  const std::string kind_name = desc.attrs.s("kind");
  ConstraintKind kind = ConstraintKind::non_neg;
  if (kind_name == "MaxNorm") kind = ConstraintKind::max_norm;
  else if (kind_name == "MinMaxNorm") kind = ConstraintKind::min_max_norm;
  else if (kind_name == "UnitNorm") kind = ConstraintKind::unit_norm;
  else NNFIT_CHECK(kind_name == "NonNeg", InvalidArgument, "apply_constraint: unknown kind \"", kind_name, "\"");
  ConstraintGeometry geo;
  geo.rank = static_cast<int>(s.rank());
  geo.numel = s.numel();
  for (int d = 0; d < geo.rank; ++d) geo.dims[static_cast<std::size_t>(d)] = s[d];
  if (kind != ConstraintKind::non_neg) {
    for (std::int64_t axis : desc.attrs.ints("axes")) {
      const std::int64_t a = axis < 0 ? axis + s.rank() : axis;
      NNFIT_CHECK(a >= 0 && a < s.rank(), InvalidArgument, "apply_constraint: axis ", axis, " is out of range for ", s.to_string());
      geo.reduced[static_cast<std::size_t>(a)] = true;
    }
  }
  for (int d = 0; d < geo.rank; ++d) geo.groups *= geo.reduced[static_cast<std::size_t>(d)] ? 1 : geo.dims[static_cast<std::size_t>(d)];
  const double min_value = desc.attrs.f("min_value"), max_value = desc.attrs.f("max_value"), rate = desc.attrs.f("rate");
  const std::size_t bytes = kind == ConstraintKind::non_neg ? 0 : aligned_bytes(static_cast<std::size_t>(geo.groups) * sizeof(double));
  return launch_kernel(
      [geo, kind, min_value, max_value, rate](const KernelArgs& a) {
        if (geo.numel == 0) return;
        auto* w = static_cast<float*>(const_cast<void*>(a.inputs[0]));  // mutated in place
        double* factor = nullptr;
        if (kind != ConstraintKind::non_neg) {
          factor = static_cast<double*>(a.workspace);
          Launch::run(ConstraintFactorFn{w, factor, geo, kind, min_value, max_value, rate}, geo.groups, a.ctx);
        }
        Launch::run(ConstraintApplyFn{w, factor, geo}, geo.numel, a.ctx);
      },
      bytes);
}

template <class Launch>
void register_regularizer_kernels(KernelRegistry& r) {
  for (const char* op : {"weight_penalty", "weight_penalty_grad"}) {
    r.add(op, DeviceType::cuda, DType::f32, {std::string("cuda:") + op, make_weight_penalty<Launch>});
  }
  r.add("apply_constraint", DeviceType::cuda, DType::f32, {"cuda:apply_constraint", make_apply_constraint<Launch>});
}

}  // namespace nnfit::cuda
