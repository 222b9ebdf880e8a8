// repeat: count passes over the input (forever when count < 0), each a fresh input
// iterator, so shuffle reshuffles and cache replays. An input that yields nothing in a
// pass ends the repetition instead of spinning.
#include "data/element_util.h"
#include "nnfit/data/autotune.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

class RepeatNode final : public DatasetNode {
 public:
  RepeatNode(Dataset input, std::int64_t count) : input_(std::move(input)), count_(count) {}
  const ElementSpec& element_spec() const override { return input_.element_spec(); }
  std::int64_t cardinality() const override {
    const std::int64_t n = input_.cardinality();
    if (n == 0 || count_ == 0) return 0;
    if (n == kInfiniteCardinality || count_ < 0) return n == kUnknownCardinality ? n : kInfiniteCardinality;
    if (n == kUnknownCardinality) return n;
    return n * count_;
  }
  std::string name() const override { return "repeat"; }

  std::unique_ptr<Iterator> make_iterator() const override {
    class It final : public Iterator {
     public:
      It(Dataset input, std::int64_t count) : input_(std::move(input)), count_(count) {}
      std::optional<Element> next() override {
        for (;;) {
          if (count_ >= 0 && pass_ >= count_) return std::nullopt;
          if (!in_) {
            in_ = tuning_.make_iterator(input_);
            produced_ = false;
          }
          auto e = in_->next();
          if (e) {
            produced_ = true;
            return e;
          }
          in_.reset();
          ++pass_;
          if (!produced_) return std::nullopt;
        }
      }

     private:
      Dataset input_;
      AutotuneContext tuning_;  // every pass joins the tuner this iterator was made under
      std::int64_t count_;
      std::int64_t pass_ = 0;
      bool produced_ = false;
      std::unique_ptr<Iterator> in_;
    };
    return std::make_unique<It>(input_, count_);
  }

 private:
  Dataset input_;
  std::int64_t count_;
};

}  // namespace

Dataset Dataset::repeat(std::int64_t count) const {
  return Dataset(std::make_shared<RepeatNode>(*this, count));
}

}  // namespace nnfit::data
