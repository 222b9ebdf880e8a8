// Private: where the spatial axes of a sample are for the reshaping layers (channels last:
// 0..rank-1, channels first: 1..rank), and the checks every such layer makes first.
#pragma once
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/core/shape.h"

namespace nnfit {

inline std::int64_t spatial_axis(int i, bool channels_first) { return channels_first ? i + 1 : i; }

inline void check_spatial_rank(const Shape& s, int rank, const std::string& layer, const std::string& cls) {
  NNFIT_CHECK(s.rank() == rank + 1, InvalidArgument, layer, ": ", cls, " expects ", rank,
              " spatial axes and a channel axis, got ", s.to_string());
}

}  // namespace nnfit
