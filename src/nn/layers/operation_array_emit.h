// Private to src/nn/layers: the building blocks of the array operations' emitters
// (operation_array_emitters.cpp, operation_contraction_emitters.cpp,
// operation_gather_emitters.cpp, operation_search_emitters.cpp): float32 working copies, index tensors made from ops,
// gathers along an axis and the contraction einsum, tensordot and dot share.
//
// Note [Array operations from the engine's ops]: keras.ops' array operations (einsum, take,
// flip, sort, scatter, ...) are emitted as compositions of engine ops, each exact, with one
// op added for them where a composition would be slow (`argsort`: comparing every pair of a
// line costs n² memory and time): data moves through crop, concat, transpose, reshape and `gather` (whose
// gradient is a scatter-add), selections through `where`, contractions through matmul and
// batch_matmul. Index tensors (iota, a diagonal's positions) are made inside the graph from
// a tensor the operation reads (isnan(x[0])·0 + 1, broadcast, cumsum), not bound as host
// constants, so they live on the model's device and cost a few small ops. Indices travel
// as float32, exact below 2^24 elements, which the emitters check. Integer tensors compute
// in float32 (the engine's data-movement kernels take floats), exact below 2^24, and the
// Python front end gives eager results Keras's dtype.
#pragma once
#include <string>
#include <vector>

#include "nn/layers/operation_emit.h"

namespace nnfit::operation_emit {

// x as float32 (integers below 2^24 are exact).
int as_f32(const Emit& e, int x);
// A float32 tensor of `dims` holding `value` everywhere, made from graph value `like`
// without reading its values (its gradient to `like` is zero).
int fill(const Emit& e, int like, const Dims& dims, double value);
// 0, 1, ..., dims[axis] - 1 along `axis` of a float32 tensor of `dims`.
int iota(const Emit& e, int like, const Dims& dims, int axis);
// x moved so that axis `from` is at `to`, the others in order (a transpose, or x itself).
int move_axis(const Emit& e, int x, int from, int to);
// x[..., begin:begin+size, ...] along `axis` (crop), x itself when it is the whole axis.
int crop_axis(const Emit& e, int x, int axis, std::int64_t begin, std::int64_t size);
// x's slices along `axis` picked by float `ids` (any shape, values in [0, n)): the result's
// axis is replaced by ids' axes. A gather on x with the axis first; gradient scatter-adds.
int gather_axis(const Emit& e, int x, int axis, int ids);
// ids + n where ids < 0 (NumPy's negative indices), for a float tensor of indices.
int wrap_negative(const Emit& e, int ids, std::int64_t n);
// Checks that a tensor of `numel` elements can be indexed exactly in float32.
void check_float_index(const Emit& e, std::int64_t numel, const std::string& what);

// An einsum-style contraction of two operands by label (one char per axis): labels in both
// and in `keep` are batch axes, in both and not in `keep` are summed over (matmul), and a
// label of one operand that is not in `keep` is summed first. Returns the result, whose
// labels (batch, then a's, then b's) are written to `labels`.
int contract(const Emit& e, int a, std::string la, int b, std::string lb, const std::string& keep, std::string* labels);
// One operand: a sum over the labels not in `out`, then a transpose to `out`'s order.
int contract_one(const Emit& e, int a, const std::string& la, const std::string& out);

// The emitters of operation_contraction_emitters.cpp, operation_gather_emitters.cpp and
// operation_search_emitters.cpp.
std::vector<int> einsum(const Emit& e);
std::vector<int> tensordot(const Emit& e);
std::vector<int> dot(const Emit& e);
std::vector<int> inner(const Emit& e);
std::vector<int> vdot(const Emit& e);
std::vector<int> outer(const Emit& e);
std::vector<int> kron(const Emit& e);
std::vector<int> cross(const Emit& e);
std::vector<int> diagonal(const Emit& e);
std::vector<int> trace(const Emit& e);
std::vector<int> diag(const Emit& e);
std::vector<int> diagflat(const Emit& e);
std::vector<int> take(const Emit& e);
std::vector<int> take_along_axis(const Emit& e);
std::vector<int> top_k(const Emit& e);
std::vector<int> sort(const Emit& e);
std::vector<int> argsort(const Emit& e);
std::vector<int> in_top_k(const Emit& e);
std::vector<int> segment_sum(const Emit& e);
std::vector<int> segment_max(const Emit& e);
std::vector<int> segment_min(const Emit& e);
std::vector<int> segment_prod(const Emit& e);
std::vector<int> searchsorted(const Emit& e);
std::vector<int> digitize(const Emit& e);
std::vector<int> vander(const Emit& e);
std::vector<int> trapezoid(const Emit& e);
std::vector<int> unravel_index(const Emit& e);
std::vector<int> correlate(const Emit& e);
std::vector<int> scatter(const Emit& e);
std::vector<int> scatter_update(const Emit& e);

}  // namespace nnfit::operation_emit
