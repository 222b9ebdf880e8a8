// from_tensor_slices: element i is row i of every tensor, as views sharing the tensors'
// buffers (no copy), so a slice dataset over a 47 MB image tensor costs nothing to build.
#include "data/element_util.h"
#include "data/rows.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

class TensorSlicesNode final : public DatasetNode {
 public:
  explicit TensorSlicesNode(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
    NNFIT_CHECK(!tensors_.empty(), InvalidArgument, "from_tensor_slices: no tensors");
    for (std::size_t c = 0; c < tensors_.size(); ++c) {
      const Tensor& t = tensors_[c];
      NNFIT_CHECK(t.defined() && t.shape().rank() >= 1, InvalidArgument,
                  "from_tensor_slices: tensor ", c, " needs a first dimension to slice");
      NNFIT_CHECK(t.shape()[0] == tensors_[0].shape()[0], InvalidArgument,
                  "from_tensor_slices: tensor ", c, " has ", t.shape()[0], " rows but tensor 0 has ",
                  tensors_[0].shape()[0]);
      spec_.push_back({t.dtype(), t.shape()});
    }
    spec_ = detail::unbatched(spec_, "from_tensor_slices");
  }
  const ElementSpec& element_spec() const override { return spec_; }
  std::int64_t cardinality() const override { return tensors_[0].shape()[0]; }
  std::string name() const override { return "from_tensor_slices"; }

  std::unique_ptr<Iterator> make_iterator() const override {
    class It final : public Iterator {
     public:
      explicit It(const std::vector<Tensor>& t) : tensors_(t) {}
      std::optional<Element> next() override {
        if (tensors_.empty() || i_ >= tensors_[0].shape()[0]) return std::nullopt;
        Element e;
        for (const Tensor& t : tensors_) e.push_back(detail::row(t, i_));
        ++i_;
        return e;
      }

     private:
      std::vector<Tensor> tensors_;  // handles: the iterator may outlive the dataset
      std::int64_t i_ = 0;
    };
    return std::make_unique<It>(tensors_);
  }

  // The tensors themselves are the table (Note [Row streams]).
  std::unique_ptr<RowStream> make_row_stream() const override {
    class Table final : public RowTable {
     public:
      Table(const std::vector<Tensor>& t, ElementSpec spec) : RowTable(std::move(spec)), tensors_(t) {}
      std::int64_t rows() const override { return tensors_[0].shape()[0]; }
      const void* row(std::int64_t i, std::size_t c) const override {
        return static_cast<const char*>(tensors_[c].raw()) + static_cast<std::size_t>(i) * row_bytes(c);
      }

     private:
      std::vector<Tensor> tensors_;
    };
    auto s = std::make_unique<RowStream>();
    s->table = std::make_shared<Table>(tensors_, spec_);
    s->rows = sequential_rows(tensors_[0].shape()[0]);
    return s;
  }

 private:
  std::vector<Tensor> tensors_;
  ElementSpec spec_;
};

}  // namespace

Dataset Dataset::from_tensor_slices(std::vector<Tensor> tensors) {
  return Dataset(std::make_shared<TensorSlicesNode>(std::move(tensors)));
}

}  // namespace nnfit::data
