// The ids of gather and gather_grad (graph/gather_op_defs.cpp), shared by the reference
// and OpenMP kernels so both read an id and reject a bad one alike.
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/core/dtype.h"

namespace nnfit {

// Id i of `ids` (int32, int64 or float32). Keras casts float ids to int32 (truncation); a
// non-finite or out-of-int32 float id reads as -1, out of range.
inline std::int64_t gather_id_at(const void* ids, DType dtype, std::int64_t i) {
  switch (dtype) {
    case DType::i32: return static_cast<const std::int32_t*>(ids)[i];
    case DType::i64: return static_cast<const std::int64_t*>(ids)[i];
    default: {
      const float v = static_cast<const float*>(ids)[i];
      return v == v && v > -2147483648.0f && v < 2147483648.0f ? static_cast<std::int64_t>(v) : -1;
    }
  }
}

// Throws DataError naming `node`, the first id outside [0, rows) and its position. Serial:
// kernels call it before their parallel loops, since an exception must not leave an
// OpenMP region.
void check_gather_ids(const std::string& node, const void* ids, DType dtype, std::int64_t count, std::int64_t rows);

}  // namespace nnfit
