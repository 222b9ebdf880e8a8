// The argmax byte of max_pool2d_argmax (Note [Pool argmax]), shared by its shape rule, the
// rewrite that makes it (fuse_pool_argmax) and the kernels that write and read it.
//
// Note [Pool argmax]: the max-pool forward of a training step keeps, per element of y, one
// byte saying where in its window the maximum was, so the gradient reads that byte and dy
// instead of the whole input x again (x, a convnet's largest activation, then dies after
// the forward). Bits 0-6: the position of the first maximum in the row-major order of the
// whole kh x kw window, padding included (padding never wins); bit 7: the maximum is not
// > 0, which a relu gradient folded into the pool gradient needs (x is then a relu
// output, and relu's gradient at the maximum is 0 unless it is > 0). The argmax is the
// reference's: the first in-bounds position, replaced by each later one strictly greater
// (so a NaN there keeps the first position, and a NaN elsewhere never wins).
#pragma once
#include <cstdint>

namespace nnfit {

inline constexpr std::int64_t kMaxArgmaxWindow = 64;  // positions (kh * kw) a byte encodes
inline constexpr std::uint8_t kArgmaxNotPositive = 0x80;
inline constexpr std::uint8_t kArgmaxPosition = 0x7f;

}  // namespace nnfit
