// The Dataset handle: construction, collect() and printing element specs. The
// transformations that return new Datasets live one per file (<name>_dataset.cpp).
#include "nnfit/data/dataset.h"

#include <algorithm>
#include <sstream>

#include "data/rows.h"
#include "nnfit/core/error.h"

namespace nnfit::data {

std::unique_ptr<RowStream> DatasetNode::make_row_stream() const { return nullptr; }

RowTable::RowTable(ElementSpec spec) : spec_(std::move(spec)) {
  for (const ComponentSpec& c : spec_) {
    NNFIT_CHECK(c.shape.rank() == 0 || *std::min_element(c.shape.dims().begin(), c.shape.dims().end()) >= 0,
                InvalidArgument, "internal: a row table needs fixed shapes, got ", c.shape.to_string());
    row_bytes_.push_back(static_cast<std::size_t>(c.shape.numel()) * dtype_size(c.dtype));
  }
}

std::unique_ptr<RowIterator> sequential_rows(std::int64_t count) {
  class It final : public RowIterator {
   public:
    explicit It(std::int64_t n) : n_(n) {}
    std::optional<std::int64_t> next() override {
      if (i_ >= n_) return std::nullopt;
      return i_++;
    }
    std::size_t next_n(std::int64_t* out, std::size_t n) override {
      std::size_t k = 0;
      for (; k < n && i_ < n_; ++k) out[k] = i_++;
      return k;
    }

   private:
    std::int64_t n_, i_ = 0;
  };
  return std::make_unique<It>(count);
}

std::string to_string(const ElementSpec& spec) {
  std::ostringstream out;
  out << "(";
  for (std::size_t i = 0; i < spec.size(); ++i) {
    if (i) out << ", ";
    out << dtype_name(spec[i].dtype) << " " << spec[i].shape.to_string();
  }
  out << ")";
  return out.str();
}

Dataset::Dataset(std::shared_ptr<const DatasetNode> node) : node_(std::move(node)) {
  NNFIT_CHECK(node_ != nullptr, InvalidArgument, "Dataset: null node");
}

std::vector<Element> Dataset::collect() const {
  NNFIT_CHECK(cardinality() != kInfiniteCardinality, InvalidArgument,
              "collect() on an infinite dataset (", node_->name(), "); take(n) first");
  std::vector<Element> out;
  auto it = make_iterator();
  while (auto e = it->next()) out.push_back(std::move(*e));
  return out;
}

namespace {
thread_local std::optional<std::uint64_t> t_pass;
}  // namespace

PassScope::PassScope(std::uint64_t pass) : previous_(t_pass) { t_pass = pass; }
PassScope::~PassScope() { t_pass = previous_; }
std::optional<std::uint64_t> PassScope::current() { return t_pass; }

}  // namespace nnfit::data
