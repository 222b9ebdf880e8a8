// The ids of gather and gather_grad (graph/gather_op_defs.cpp), their geometry and row
// functions, shared by the reference and OpenMP kernels so both read an id, reject a bad one
// and move a row alike; the kernels differ only in how they split the rows.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "nnfit/backend/kernel.h"
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

// gather (table, ids -> y) or gather_grad (ids, dy -> dtable) as a kernel sees it: `count`
// ids into a table of `rows` rows of `width` floats.
struct GatherGeometry {
  explicit GatherGeometry(const KernelDesc& d);
  // The ids of a run, checked (throws DataError naming the node).
  const void* checked_ids(const KernelArgs& args) const;

  bool grad = false;
  std::string node;
  DType ids_dtype = DType::f32;
  std::int64_t count = 0, rows = 0, width = 0;
};

// y's row i = the table's row ids[i].
inline void gather_row(const GatherGeometry& g, const float* table, const void* ids, std::int64_t i, float* y) {
  std::memcpy(y + i * g.width, table + gather_id_at(ids, g.ids_dtype, i) * g.width, static_cast<std::size_t>(g.width) * sizeof(float));
}

// dtable's row ids[i] += dy's row i, columns [j0, j1).
inline void scatter_add_row(const GatherGeometry& g, const void* ids, std::int64_t i, const float* dy, float* dtable,
                            std::int64_t j0, std::int64_t j1) {
  float* row = dtable + gather_id_at(ids, g.ids_dtype, i) * g.width;
  const float* d = dy + i * g.width;
#pragma omp simd
  for (std::int64_t j = j0; j < j1; ++j) row[j] += d[j];
}

}  // namespace nnfit
