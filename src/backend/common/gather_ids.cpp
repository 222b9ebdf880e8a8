// An id outside the table is bad input, not a bug: a DataError naming the node, the id and
// its position (TensorFlow raises the same; JAX would silently clamp).
#include "backend/common/gather_ids.h"

#include "nnfit/core/error.h"

namespace nnfit {

GatherGeometry::GatherGeometry(const KernelDesc& d) : grad(d.op == "gather_grad"), node(d.node_name) {
  const TensorDesc& ids = d.inputs.at(grad ? 0 : 1);
  ids_dtype = ids.dtype;
  count = ids.shape.numel();
  const Shape& table = grad ? d.outputs.at(0).shape : d.inputs.at(0).shape;
  rows = table[0];
  width = table[1];
}

const void* GatherGeometry::checked_ids(const KernelArgs& args) const {
  const void* ids = args.inputs[grad ? 0 : 1];
  check_gather_ids(node, ids, ids_dtype, count, rows);
  return ids;
}

void check_gather_ids(const std::string& node, const void* ids, DType dtype, std::int64_t count, std::int64_t rows) {
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t id = gather_id_at(ids, dtype, i);
    if (id < 0 || id >= rows) {
      throw DataError(node, -1,
                      "id " + std::to_string(id) + " at position " + std::to_string(i) + " of the batch is outside [0, " +
                          std::to_string(rows) + ")",
                      "the Embedding's input_dim must exceed every id the data holds");
    }
  }
}

}  // namespace nnfit
