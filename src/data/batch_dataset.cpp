// batch: stacks batch_size consecutive elements into one (a new leading dimension). The
// last, partial batch is kept unless drop_remainder. Elements must agree in shape
// (padded_batch handles ragged ones). Over a row stream the rows are gathered straight
// into the batch (Note [Row streams]).
#include <algorithm>
#include <cstring>

#include "data/element_util.h"
#include "data/rows.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

// Batches gathered straight from a row table (Note [Row streams]): one copy per row and
// component into the batch's tensors, no per-element tensors.
class RowBatchIterator final : public Iterator {
 public:
  RowBatchIterator(RowStream stream, std::int64_t n, bool drop) : s_(std::move(stream)), n_(n), drop_(drop) {
    indices_.resize(static_cast<std::size_t>(n));
  }
  std::optional<Element> next() override {
    indices_.resize(static_cast<std::size_t>(n_));
    indices_.resize(s_.rows->next_n(indices_.data(), indices_.size()));
    if (indices_.empty() || (drop_ && static_cast<std::int64_t>(indices_.size()) < n_)) return std::nullopt;
    const RowTable& t = *s_.table;
    Element out;
    for (std::size_t c = 0; c < t.spec().size(); ++c) {
      std::vector<std::int64_t> dims{static_cast<std::int64_t>(indices_.size())};
      dims.insert(dims.end(), t.spec()[c].shape.dims().begin(), t.spec()[c].shape.dims().end());
      Tensor b = Tensor::uninitialized(Shape(std::move(dims)), t.spec()[c].dtype);
      const std::size_t bytes = t.row_bytes(c);
      auto* dst = static_cast<char*>(b.raw());
      // Rows of a big table are cache misses: start fetching a few rows ahead.
      constexpr std::size_t kAhead = 4;
      for (std::size_t k = 0; k < std::min(kAhead, indices_.size()); ++k) __builtin_prefetch(t.row(indices_[k], c));
      for (std::size_t k = 0; k < indices_.size(); ++k) {
        if (k + kAhead < indices_.size()) __builtin_prefetch(t.row(indices_[k + kAhead], c));
        std::memcpy(dst + k * bytes, t.row(indices_[k], c), bytes);
      }
      out.push_back(std::move(b));
    }
    return out;
  }

 private:
  RowStream s_;
  std::int64_t n_;
  bool drop_;
  std::vector<std::int64_t> indices_;
};

class BatchNode final : public DatasetNode {
 public:
  BatchNode(Dataset input, std::int64_t batch_size, bool drop_remainder)
      : input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        spec_(detail::batched(input_.element_spec(), drop_remainder ? batch_size : -1)) {}
  const ElementSpec& element_spec() const override { return spec_; }
  std::int64_t cardinality() const override {
    const std::int64_t n = input_.cardinality();
    if (n < 0) return n;
    return drop_remainder_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
  }
  std::string name() const override { return "batch"; }

  std::unique_ptr<Iterator> make_iterator() const override {
    if (std::unique_ptr<RowStream> rows = input_.node()->make_row_stream()) {
      return std::make_unique<RowBatchIterator>(std::move(*rows), batch_size_, drop_remainder_);
    }
    class It final : public Iterator {
     public:
      It(std::unique_ptr<Iterator> in, std::int64_t n, bool drop) : in_(std::move(in)), n_(n), drop_(drop) {}
      std::optional<Element> next() override {
        std::vector<Element> rows;
        while (static_cast<std::int64_t>(rows.size()) < n_) {
          auto e = in_->next();
          if (!e) break;
          rows.push_back(std::move(*e));
        }
        if (rows.empty() || (drop_ && static_cast<std::int64_t>(rows.size()) < n_)) return std::nullopt;
        Element out;
        std::vector<Tensor> parts(rows.size());
        for (std::size_t c = 0; c < rows[0].size(); ++c) {
          for (std::size_t i = 0; i < rows.size(); ++i) {
            NNFIT_CHECK(rows[i].size() == rows[0].size(), InvalidArgument,
                        "batch: elements have different numbers of components");
            parts[i] = rows[i][c];
          }
          out.push_back(detail::stack(parts, "batch", c));
        }
        return out;
      }

     private:
      std::unique_ptr<Iterator> in_;
      std::int64_t n_;
      bool drop_;
    };
    return std::make_unique<It>(input_.make_iterator(), batch_size_, drop_remainder_);
  }

 private:
  Dataset input_;
  std::int64_t batch_size_;
  bool drop_remainder_;
  ElementSpec spec_;
};

}  // namespace

Dataset Dataset::batch(std::int64_t batch_size, bool drop_remainder) const {
  NNFIT_CHECK(batch_size >= 1, InvalidArgument, "batch: batch_size must be >= 1, got ", batch_size);
  return Dataset(std::make_shared<BatchNode>(*this, batch_size, drop_remainder));
}

}  // namespace nnfit::data
