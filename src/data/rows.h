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
// Consumers that want many indices take them in blocks with next_n, so that a stage
// that does something per call (measure reads the clock) does it per block, not per row.
class RowIterator {
 public:
  virtual ~RowIterator() = default;
  virtual std::optional<std::int64_t> next() = 0;
  // Writes up to n indices to out; fewer only at the end of the pass. Returns the count.
  virtual std::size_t next_n(std::int64_t* out, std::size_t n) {
    std::size_t k = 0;
    while (k < n) {
      const std::optional<std::int64_t> i = next();
      if (!i) break;
      out[k++] = *i;
    }
    return k;
  }
};

// Reads an input RowIterator a block at a time for a stage that consumes indices one by
// one (shuffle), so the input sees next_n calls.
class RowBlockReader {
 public:
  explicit RowBlockReader(std::unique_ptr<RowIterator> in) : in_(std::move(in)) {}
  std::optional<std::int64_t> next() {
    if (pos_ == size_) {
      if (end_) return std::nullopt;
      size_ = in_->next_n(block_, kBlock);
      pos_ = 0;
      end_ = size_ < kBlock;
      if (size_ == 0) return std::nullopt;
    }
    return block_[pos_++];
  }

 private:
  static constexpr std::size_t kBlock = 256;
  std::unique_ptr<RowIterator> in_;
  std::int64_t block_[kBlock];
  std::size_t pos_ = 0, size_ = 0;
  bool end_ = false;
};

struct RowStream {
  std::shared_ptr<const RowTable> table;
  std::unique_ptr<RowIterator> rows;
};

// The indices first, first + 1, ... of `count` rows.
std::unique_ptr<RowIterator> sequential_rows(std::int64_t count);

}  // namespace nnfit::data
