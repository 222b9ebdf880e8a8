// concatenate: every element of this dataset, then every element of the other. The specs
// must agree in dtypes and ranks; dimensions that differ become -1.
#include "data/element_util.h"
#include "nnfit/data/autotune.h"

namespace nnfit::data {
namespace {

class ConcatenateNode final : public DatasetNode {
 public:
  ConcatenateNode(Dataset a, Dataset b)
      : a_(std::move(a)), b_(std::move(b)), spec_(detail::merge(a_.element_spec(), b_.element_spec(), "concatenate")) {}
  const ElementSpec& element_spec() const override { return spec_; }
  std::int64_t cardinality() const override {
    const std::int64_t x = a_.cardinality(), y = b_.cardinality();
    if (x == kInfiniteCardinality || y == kInfiniteCardinality) return kInfiniteCardinality;
    if (x < 0 || y < 0) return kUnknownCardinality;
    return x + y;
  }
  std::string name() const override { return "concatenate"; }
  std::unique_ptr<Iterator> make_iterator() const override {
    class It final : public Iterator {
     public:
      It(Dataset a, Dataset b) : in_(a.make_iterator()), b_(std::move(b)) {}
      std::optional<Element> next() override {
        for (;;) {
          if (!in_) return std::nullopt;
          auto e = in_->next();
          if (e) return e;
          if (second_) {
            in_.reset();
            return std::nullopt;
          }
          second_ = true;
          in_ = tuning_.make_iterator(b_);
        }
      }

     private:
      std::unique_ptr<Iterator> in_;
      Dataset b_;
      AutotuneContext tuning_;  // the second input joins the tuner of the first
      bool second_ = false;
    };
    return std::make_unique<It>(a_, b_);
  }

 private:
  Dataset a_, b_;
  ElementSpec spec_;
};

}  // namespace

Dataset Dataset::concatenate(const Dataset& other) const {
  return Dataset(std::make_shared<ConcatenateNode>(*this, other));
}

}  // namespace nnfit::data
