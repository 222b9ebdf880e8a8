// The contractions of keras.ops (Note [Array operations from the engine's ops] in
// operation_array_emit.h): einsum, tensordot, dot, inner, vdot, outer, kron and cross, and
// the diagonals (diagonal, trace, diag, diagflat). einsum, tensordot, dot, inner and vdot
// label their operands' axes and go through one pairwise `contract`, which arranges each
// operand as [batch, free, summed] (or the transposed form a matmul reads as it is) and
// runs one matmul or batch_matmul, so an einsum in a model costs what the matmul costs and
// differentiates as it does.
#include <algorithm>
#include <array>
#include <cctype>
#include <tuple>

#include "nn/layers/operation_array_emit.h"

namespace nnfit::operation_emit {
namespace {

bool has_label(const std::string& s, char c) { return s.find(c) != std::string::npos; }

int contract_float(const Emit& e, int v) { return is_floating(e.g.desc(v).dtype) ? v : as_f32(e, v); }

// A sum over the axes of `v` whose labels are not in `keep`; `l` loses them.
int sum_out_labels(const Emit& e, int v, std::string& l, const std::string& keep) {
  Dims axes;
  std::string kept;
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (has_label(keep, l[i])) {
      kept += l[i];
    } else {
      axes.push_back(static_cast<std::int64_t>(i));
    }
  }
  if (axes.empty()) return v;
  l = kept;
  return e.add("reduce", {v}, Attrs{{"axes", axes}, {"keepdims", std::int64_t{0}}, {"kind", std::string("sum")}}, "sum");
}

int transpose_labels(const Emit& e, int v, const std::string& from, const std::string& to) {
  if (from == to) return v;
  Dims perm;
  for (char c : to) perm.push_back(static_cast<std::int64_t>(from.find(c)));
  return e.add("transpose", {v}, Attrs{{"perm", perm}}, "transpose");
}

void check_labels(const Emit& e, const std::string& l, int v) {
  if (static_cast<int>(l.size()) != e.rank(v)) {
    e.invalid("the subscripts \"" + l + "\" do not match an operand of rank " + std::to_string(e.rank(v)));
  }
  for (std::size_t i = 0; i < l.size(); ++i) {
    if (l.find(l[i], i + 1) != std::string::npos) e.unsupported("a label repeated in one operand (a diagonal) is not supported");
  }
}

}  // namespace

int contract_one(const Emit& e, int a, const std::string& la, const std::string& out) {
  std::string l = la;
  a = sum_out_labels(e, contract_float(e, a), l, out);
  for (char c : out) {
    if (!has_label(l, c)) e.invalid(std::string("the output label '") + c + "' is in no operand");
  }
  return transpose_labels(e, a, l, out);
}

int contract(const Emit& e, int a, std::string la, int b, std::string lb, const std::string& keep, std::string* labels) {
  a = contract_float(e, a), b = contract_float(e, b);
  std::tie(a, b) = e.same_dtype(a, b);
  a = sum_out_labels(e, a, la, keep + lb);
  b = sum_out_labels(e, b, lb, keep + la);
  // A label of size 1 on one side and n on the other broadcasts (NumPy's rule).
  const auto size = [&](int v, const std::string& l, char c) { return e.shape(v)[static_cast<int>(l.find(c))]; };
  for (int side = 0; side < 2; ++side) {
    int& v = side == 0 ? a : b;
    const std::string& l = side == 0 ? la : lb;
    const int other = side == 0 ? b : a;
    const std::string& lo = side == 0 ? lb : la;
    Dims dims = e.shape(v).dims();
    bool grow = false;
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (!has_label(lo, l[i])) continue;
      const std::int64_t n = size(other, lo, l[i]);
      if (dims[i] == n) continue;
      if (dims[i] != 1 && n != 1) e.invalid(std::string("label '") + l[i] + "' has sizes " + std::to_string(dims[i]) + " and " + std::to_string(n));
      if (dims[i] == 1) dims[i] = n, grow = true;
    }
    if (grow) v = e.add("broadcast_to", {v}, Attrs{{"shape", dims}}, "broadcast");
  }
  std::string batch, summed, free_a, free_b;
  for (char c : la) {
    if (!has_label(lb, c)) free_a += c;
    else if (has_label(keep, c)) batch += c;
    else summed += c;
  }
  for (char c : lb) {
    if (!has_label(la, c)) free_b += c;
  }
  const auto prod = [&](int v, const std::string& l, const std::string& of) {
    std::int64_t p = 1;
    for (char c : of) p *= size(v, l, c);
    return p;
  };
  const std::int64_t nb = prod(a, la, batch), m = prod(a, la, free_a), k = prod(a, la, summed), n = prod(b, lb, free_b);
  Dims dims;
  for (char c : batch + free_a) dims.push_back(size(a, la, c));
  for (char c : free_b) dims.push_back(size(b, lb, c));
  // Each operand as the matmul reads it: [batch, M, K] or, transposed, [batch, K, M].
  std::int64_t ta = 0, tb = 0;
  if (la == batch + summed + free_a && la != batch + free_a + summed) {
    ta = 1;
  } else {
    a = transpose_labels(e, a, la, batch + free_a + summed);
  }
  if (lb == batch + free_b + summed && lb != batch + summed + free_b) {
    tb = 1;
  } else {
    b = transpose_labels(e, b, lb, batch + summed + free_b);
  }
  const Dims da = ta ? Dims{k, m} : Dims{m, k}, db = tb ? Dims{n, k} : Dims{k, n};
  const Attrs t{{"transpose_a", ta}, {"transpose_b", tb}};
  int y;
  if (batch.empty()) {
    y = e.add("matmul", {e.reshape(a, da), e.reshape(b, db)}, t, "matmul");
  } else {
    y = e.add("batch_matmul", {e.reshape(a, {nb, da[0], da[1]}), e.reshape(b, {nb, db[0], db[1]})}, t, "matmul");
  }
  *labels = batch + free_a + free_b;
  return e.reshape(y, dims);
}

namespace {

// The labels of Einsum's subscripts, with an ellipsis spelled as digit labels ('0' + i for
// the i-th of the broadcast axes, right-aligned across operands).
struct Subscripts {
  std::vector<std::string> in;
  std::string out;
};

Subscripts parse_einsum(const Emit& e, const std::vector<int>& operands) {
  std::string s;
  for (char c : e.config().s("subscripts")) {
    if (c != ' ') s += c;
  }
  Subscripts r;
  const std::size_t arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = lhs.find(',', at);
    r.in.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (r.in.size() != operands.size()) {
    e.invalid("the subscripts name " + std::to_string(r.in.size()) + " operands, given " + std::to_string(operands.size()));
  }
  std::size_t ellipsis = 0;
  for (std::size_t i = 0; i < r.in.size(); ++i) {
    const std::size_t dots = r.in[i].find("...");
    if (dots == std::string::npos) continue;
    const std::size_t span = static_cast<std::size_t>(e.rank(operands[i])) - (r.in[i].size() - 3);
    ellipsis = std::max(ellipsis, span);
  }
  if (ellipsis > 10) e.unsupported("an ellipsis over more than 10 axes is not supported");
  std::string all_dots;
  for (std::size_t p = 0; p < ellipsis; ++p) all_dots += static_cast<char>('0' + p);
  for (std::size_t i = 0; i < r.in.size(); ++i) {
    const std::size_t dots = r.in[i].find("...");
    if (dots == std::string::npos) continue;
    const std::size_t span = static_cast<std::size_t>(e.rank(operands[i])) - (r.in[i].size() - 3);
    r.in[i].replace(dots, 3, all_dots.substr(ellipsis - span));
  }
  for (const std::string& l : r.in) {
    for (char c : l) {
      if (!std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c))) {
        e.invalid(std::string("the subscripts hold '") + c + "'");
      }
    }
  }
  if (arrow != std::string::npos) {
    r.out = s.substr(arrow + 2);
    if (const std::size_t dots = r.out.find("..."); dots != std::string::npos) r.out.replace(dots, 3, all_dots);
  } else {  // NumPy's implicit output: the broadcast axes, then the labels used once, sorted
    std::string once;
    for (char c = 'A'; c <= 'z'; ++c) {
      if (!std::isalpha(static_cast<unsigned char>(c))) continue;
      int count = 0;
      for (const std::string& l : r.in) count += static_cast<int>(std::count(l.begin(), l.end(), c));
      if (count == 1) once += c;
    }
    r.out = all_dots + once;
  }
  return r;
}

}  // namespace

std::vector<int> einsum(const Emit& e) {
  std::vector<int> xs;
  for (std::size_t k = 0; k < e.args.size(); ++k) xs.push_back(e.value(k));
  if (xs.empty()) e.invalid("needs at least one operand");
  const Subscripts sub = parse_einsum(e, xs);
  for (std::size_t i = 0; i < xs.size(); ++i) check_labels(e, sub.in[i], xs[i]);
  int cur = xs[0];
  std::string labels = sub.in[0];
  for (std::size_t i = 1; i < xs.size(); ++i) {
    std::string keep = sub.out;
    for (std::size_t j = i + 1; j < xs.size(); ++j) keep += sub.in[j];
    cur = contract(e, cur, labels, xs[i], sub.in[i], keep, &labels);
  }
  return {contract_one(e, cur, labels, sub.out)};
}

namespace {

// Labels for tensordot-style contractions: a's axes get 'a', 'b', ...; b's axes `bx` share
// the labels of a's axes `ax`, b's others get fresh ones. Returns {la, lb, out}.
std::array<std::string, 3> pair_labels(int ra, int rb, const Dims& ax, const Dims& bx) {
  std::string la, lb, out;
  for (int i = 0; i < ra; ++i) la += static_cast<char>('a' + i);
  char next = static_cast<char>('a' + ra);
  for (int i = 0; i < rb; ++i) {
    auto it = std::find(bx.begin(), bx.end(), i);
    lb += it == bx.end() ? next++ : la[static_cast<std::size_t>(ax[static_cast<std::size_t>(it - bx.begin())])];
  }
  for (int i = 0; i < ra; ++i) {
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) out += la[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < rb; ++i) {
    if (std::find(bx.begin(), bx.end(), i) == bx.end()) out += lb[static_cast<std::size_t>(i)];
  }
  return {la, lb, out};
}

int contract_axes(const Emit& e, int a, int b, Dims ax, Dims bx) {
  const int ra = e.rank(a), rb = e.rank(b);
  if (ra + rb > 52) e.unsupported("operands of more than 52 axes together are not supported");
  if (ax.size() != bx.size()) e.invalid("the two operands' contracted axes differ in number");
  for (auto& v : ax) v = e.axis(v, ra);
  for (auto& v : bx) v = e.axis(v, rb);
  auto [la, lb, out] = pair_labels(ra, rb, ax, bx);
  std::string labels;
  const int y = contract(e, a, la, b, lb, out, &labels);
  return transpose_labels(e, y, labels, out);
}

int multiply_any(const Emit& e, int a, int b) { return e.binary("multiply", contract_float(e, a), contract_float(e, b)); }

int flattened(const Emit& e, int v) { return e.reshape(v, {e.shape(v).numel()}); }

}  // namespace

std::vector<int> tensordot(const Emit& e) {
  const int a = e.value(0), b = e.value(1);
  const int ra = e.rank(a);
  const auto& items = e.config().items();
  auto it = items.find("axes");
  Dims ax, bx;
  if (it == items.end() || std::holds_alternative<std::int64_t>(it->second)) {
    const std::int64_t n = it == items.end() ? 2 : std::get<std::int64_t>(it->second);
    if (n < 0 || n > ra || n > e.rank(b)) e.invalid("\"axes\" " + std::to_string(n) + " exceeds an operand's rank");
    for (std::int64_t i = 0; i < n; ++i) ax.push_back(ra - n + i), bx.push_back(i);
  } else {
    const Dims& both = e.config().ints("axes");
    if (both.size() % 2 != 0) e.invalid("\"axes\" must be an int or two lists of equal length");
    ax.assign(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(both.size() / 2));
    bx.assign(both.begin() + static_cast<std::ptrdiff_t>(both.size() / 2), both.end());
  }
  return {contract_axes(e, a, b, ax, bx)};
}

// NumPy's dot: a scalar multiplies; otherwise a's last axis with b's only (b a vector) or
// second-to-last axis.
std::vector<int> dot(const Emit& e) {
  const int a = e.value(0), b = e.value(1);
  if (e.rank(a) == 0 || e.rank(b) == 0) return {multiply_any(e, a, b)};
  return {contract_axes(e, a, b, {-1}, {e.rank(b) == 1 ? -1 : -2})};
}

std::vector<int> inner(const Emit& e) {
  const int a = e.value(0), b = e.value(1);
  if (e.rank(a) == 0 || e.rank(b) == 0) return {multiply_any(e, a, b)};
  return {contract_axes(e, a, b, {-1}, {-1})};
}

std::vector<int> vdot(const Emit& e) { return {contract_axes(e, flattened(e, e.value(0)), flattened(e, e.value(1)), {0}, {0})}; }

std::vector<int> outer(const Emit& e) {
  const int a = e.value(0), b = e.value(1);
  const std::int64_t n = e.shape(a).numel(), m = e.shape(b).numel();
  return {multiply_any(e, e.reshape(a, {n, 1}), e.reshape(b, {1, m}))};
}

// kron: a's axis i and b's axis i interleaved ([a0, b0, a1, b1, ...]) by a broadcast
// product, then merged pairwise; the shorter operand gets leading axes of 1 (NumPy).
std::vector<int> kron(const Emit& e) {
  int a = e.value(0), b = e.value(1);
  Dims sa = e.shape(a).dims(), sb = e.shape(b).dims();
  while (sa.size() < sb.size()) sa.insert(sa.begin(), 1);
  while (sb.size() < sa.size()) sb.insert(sb.begin(), 1);
  Dims wa, wb, out;
  for (std::size_t i = 0; i < sa.size(); ++i) {
    wa.push_back(sa[i]), wa.push_back(1);
    wb.push_back(1), wb.push_back(sb[i]);
    out.push_back(sa[i] * sb[i]);
  }
  return {e.reshape(multiply_any(e, e.reshape(a, wa), e.reshape(b, wb)), out)};
}

// cross of 3-vectors along axisa / axisb, the result's vector axis at axisc (NumPy's).
std::vector<int> cross(const Emit& e) {
  int a = contract_float(e, e.value(0)), b = contract_float(e, e.value(1));
  std::int64_t axa = e.config().i_or("axisa", -1), axb = e.config().i_or("axisb", -1), axc = e.config().i_or("axisc", -1);
  if (e.config().has("axis")) axa = axb = axc = e.config().i("axis");
  a = move_axis(e, a, static_cast<int>(e.axis(axa, e.rank(a))), e.rank(a) - 1);
  b = move_axis(e, b, static_cast<int>(e.axis(axb, e.rank(b))), e.rank(b) - 1);
  const int la = e.rank(a) - 1, lb = e.rank(b) - 1;
  if (e.shape(a)[la] != 3 || e.shape(b)[lb] != 3) e.unsupported("only vectors of 3 components are supported");
  const auto c = [&](int v, int axis, int i) { return crop_axis(e, v, axis, i, 1); };
  const auto term = [&](int i, int j) {
    return e.binary("subtract", e.binary("multiply", c(a, la, i), c(b, lb, j)), e.binary("multiply", c(a, la, j), c(b, lb, i)));
  };
  const int t0 = term(1, 2), t1 = term(2, 0), t2 = term(0, 1);
  const int y = e.add("concat", {t0, t1, t2}, Attrs{{"axis", std::int64_t{e.rank(t0) - 1}}}, "cross");
  return {move_axis(e, y, e.rank(y) - 1, static_cast<int>(e.axis(axc, e.rank(y))))};
}

namespace {

// The `offset` diagonal of axes (axis1, axis2), as a new last axis (NumPy's diagonal).
int diagonal_of(const Emit& e, int x, std::int64_t offset, std::int64_t axis1, std::int64_t axis2) {
  const int r = e.rank(x);
  if (r < 2) e.invalid("needs a tensor of rank >= 2");
  const std::int64_t a1 = e.axis(axis1, r), a2 = e.axis(axis2, r);
  if (a1 == a2) e.invalid("axis1 and axis2 must differ");
  Dims perm;
  for (int i = 0; i < r; ++i) {
    if (i != a1 && i != a2) perm.push_back(i);
  }
  perm.push_back(a1), perm.push_back(a2);
  const int moved = e.add("transpose", {as_f32(e, x)}, Attrs{{"perm", perm}}, "diagonal");
  Dims dims = e.shape(moved).dims();
  const std::int64_t n = dims[dims.size() - 2], m = dims.back();
  const std::int64_t len = offset >= 0 ? std::min(n, m - offset) : std::min(n + offset, m);
  if (len <= 0) e.unsupported("an empty diagonal is not supported");
  dims.pop_back();
  dims.back() = n * m;
  const int rows = e.reshape(moved, dims);
  const double start = offset >= 0 ? static_cast<double>(offset) : static_cast<double>(-offset * m);
  const int ids = e.add("scale", {iota(e, x, {len}, 0)}, Attrs{{"factor", static_cast<double>(m + 1)}, {"offset", start}}, "diagonal");
  return gather_axis(e, rows, static_cast<int>(dims.size()) - 1, ids);
}

// diag of a vector: a square matrix with the vector on its k-th diagonal.
int diag_matrix(const Emit& e, int v, std::int64_t k) {
  const std::int64_t n = e.shape(v)[0], m = n + (k < 0 ? -k : k);
  int padded = as_f32(e, v);
  if (m != n) padded = e.add("pad", {padded}, Attrs{{"before", Dims{0}}, {"after", Dims{m - n}}}, "diag");
  // k >= 0: row i holds v[i] at column i + k; k < 0: column j holds v[j] at row j - k.
  padded = e.reshape(padded, k >= 0 ? Dims{m, 1} : Dims{1, m});
  const int offset = e.binary("subtract", iota(e, v, {1, m}, 1), iota(e, v, {m, 1}, 0));
  const int mask = e.binary("equal", offset, fill(e, v, {1}, static_cast<double>(k)));
  return e.add("where", {mask, padded, fill(e, v, {1}, 0.0)}, {}, "diag");
}

}  // namespace

std::vector<int> diagonal(const Emit& e) {
  return {diagonal_of(e, e.value(0), e.config().i_or("offset", 0), e.config().i_or("axis1", 0), e.config().i_or("axis2", 1))};
}

std::vector<int> trace(const Emit& e) {
  const int d = diagonal_of(e, e.value(0), e.config().i_or("offset", 0), e.config().i_or("axis1", 0), e.config().i_or("axis2", 1));
  return {e.add("reduce", {d}, Attrs{{"axes", Dims{e.rank(d) - 1}}, {"keepdims", std::int64_t{0}}, {"kind", std::string("sum")}}, "trace")};
}

std::vector<int> diag(const Emit& e) {
  const int x = e.value(0);
  const std::int64_t k = e.config().i_or("k", 0);
  if (e.rank(x) == 1) return {diag_matrix(e, x, k)};
  if (e.rank(x) == 2) return {diagonal_of(e, x, k, 0, 1)};
  e.invalid("needs a tensor of rank 1 or 2");
}

std::vector<int> diagflat(const Emit& e) { return {diag_matrix(e, flattened(e, e.value(0)), e.config().i_or("k", 0))}; }

}  // namespace nnfit::operation_emit
