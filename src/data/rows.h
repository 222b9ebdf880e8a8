// Note [Row streams]. The per-element path moves every element through every stage as
// its own tensors; for a pipeline that replays fixed-shape elements from memory (from
// tensor slices, or an in-memory cache once complete) and then shuffles and batches
// them, that per-element work is most of the pipeline's CPU time (about 1.7 us per
// Fashion-MNIST image here, a quarter of an MLP step's budget). So such nodes can also
// hand out a pass as row *indices* into a table: from_tensor_slices and a complete
// in-memory cache produce one; shuffle applies its exact algorithm (same buffer, same
// draws) to the indices, so the order is the one the element path gives; measure counts
// and times the indices; batch gathers the rows of each batch straight into the batch's
// tensors. Stages that change elements (map, filter, ...) have no row stream, and
// batch then takes the element path.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "nnfit/data/dataset.h"

namespace nnfit::data {

// Fixed-shape rows addressable by index: component c of row i is row_bytes(c) bytes at
// row(i, c), with the shapes and dtypes of spec(). Immutable; shared by the passes.
class RowTable {
 public:
  virtual ~RowTable() = default;
  virtual std::int64_t rows() const = 0;
  virtual const void* row(std::int64_t i, std::size_t c) const = 0;
  const ElementSpec& spec() const { return spec_; }
  std::size_t row_bytes(std::size_t c) const { return row_bytes_[c]; }

 protected:
  explicit RowTable(ElementSpec spec);  // throws if a dimension is unknown
  ElementSpec spec_;
  std::vector<std::size_t> row_bytes_;
};

// One pass over a table: the indices of its rows in pass order, nullopt at the end.
class RowIterator {
 public:
  virtual ~RowIterator() = default;
  virtual std::optional<std::int64_t> next() = 0;
};

struct RowStream {
  std::shared_ptr<const RowTable> table;
  std::unique_ptr<RowIterator> rows;
};

// The indices first, first + 1, ... of `count` rows.
std::unique_ptr<RowIterator> sequential_rows(std::int64_t count);

}  // namespace nnfit::data
