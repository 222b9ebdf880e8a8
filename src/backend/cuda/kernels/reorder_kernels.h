// Private to the CUDA backend: the filter reorder between nnfit's HWIO filters and the
// KRSC layout cuDNN's channels-last convolutions take (dnn_plan.h), as a functor of the
// KRSC index (Note [Kernel/launcher split]); a bijection, so either direction writes each
// element once. Copies the storage bits (no conversion) at any 2- or 4-byte dtype.
#pragma once
#include <cstdint>

#include "backend/cuda/dnn_plan.h"

namespace nnfit::cuda {

template <class Bits>
struct FilterReorderFn {
  const Bits* src;
  Bits* dst;
  FilterReorder r;
  bool to_krsc;  // HWIO -> KRSC (forward, backward data); else KRSC -> HWIO (filter gradient)
  NNFIT_HD void operator()(std::int64_t j) const {
    if (to_krsc) {
      dst[j] = src[r.hwio_index(j)];
    } else {
      dst[r.hwio_index(j)] = src[j];
    }
  }
};

template <class Launch>
void reorder_filter(const FilterReorder& r, std::int64_t elements, std::size_t element_bytes, const void* src, void* dst,
                    bool to_krsc, const StepContext* ctx) {
  if (element_bytes == 4) {
    Launch::run(FilterReorderFn<std::uint32_t>{static_cast<const std::uint32_t*>(src), static_cast<std::uint32_t*>(dst), r, to_krsc},
                elements, ctx);
  } else {
    Launch::run(FilterReorderFn<std::uint16_t>{static_cast<const std::uint16_t*>(src), static_cast<std::uint16_t*>(dst), r, to_krsc},
                elements, ctx);
  }
}

}  // namespace nnfit::cuda
