// interleave: maps each input element to a dataset and round-robins over cycle_length of
// them, block_length elements at a time; an exhausted one is replaced by the next input
// element's dataset, as tf.data's sequential interleave does. The parallel form wraps each
// opened dataset in prefetch (a producer thread per cycle slot, buffer = block_length), so
// the round-robin order, and hence determinism, is unchanged.
#include <algorithm>

#include "data/element_util.h"
#include "nnfit/data/autotune.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

class InterleaveNode final : public DatasetNode {
 public:
  InterleaveNode(Dataset input, Dataset::InterleaveFn fn, ElementSpec spec, std::int64_t cycle, std::int64_t block,
                 bool parallel)
      : input_(std::move(input)), fn_(std::move(fn)), spec_(std::move(spec)), cycle_(cycle), block_(block), parallel_(parallel) {}
  const ElementSpec& element_spec() const override { return spec_; }
  std::int64_t cardinality() const override {
    return input_.cardinality() == 0 ? 0 : kUnknownCardinality;
  }
  std::string name() const override { return "interleave"; }
  std::unique_ptr<Iterator> make_iterator() const override {
    class It final : public Iterator {
     public:
      It(std::unique_ptr<Iterator> in, Dataset::InterleaveFn fn, std::int64_t cycle, std::int64_t block, bool parallel)
          : in_(std::move(in)), fn_(std::move(fn)), block_(block), parallel_(parallel), slots_(static_cast<std::size_t>(cycle)) {}
      std::optional<Element> next() override {
        for (;;) {
          bool any_open = false;
          for (std::size_t tried = 0; tried < slots_.size(); ++tried) {
            auto& slot = slots_[cur_];
            if (!slot && !input_end_) {
              auto e = in_->next();
              if (e) {
                Dataset sub = fn_(*e);
                slot = tuning_.make_iterator(
                    parallel_ ? sub.prefetch(static_cast<int>(std::min<std::int64_t>(block_, 1024))) : sub);
              } else {
                input_end_ = true;
              }
            }
            if (slot) {
              any_open = true;
              auto out = slot->next();
              if (out) {
                if (++taken_ >= block_) advance();
                return out;
              }
              slot.reset();
            }
            advance();
          }
          if (!any_open && input_end_) return std::nullopt;
        }
      }

     private:
      void advance() {
        taken_ = 0;
        cur_ = (cur_ + 1) % slots_.size();
      }
      std::unique_ptr<Iterator> in_;
      Dataset::InterleaveFn fn_;
      std::int64_t block_;
      bool parallel_;
      AutotuneContext tuning_;  // opened inputs join the tuner this iterator was made under
      std::vector<std::unique_ptr<Iterator>> slots_;
      std::size_t cur_ = 0;
      std::int64_t taken_ = 0;
      bool input_end_ = false;
    };
    return std::make_unique<It>(input_.make_iterator(), fn_, cycle_, block_, parallel_);
  }

 private:
  Dataset input_;
  Dataset::InterleaveFn fn_;
  ElementSpec spec_;
  std::int64_t cycle_, block_;
  bool parallel_;
};

}  // namespace

Dataset Dataset::interleave(InterleaveFn fn, ElementSpec out_spec, std::int64_t cycle_length,
                            std::int64_t block_length, int num_parallel_calls) const {
  NNFIT_CHECK(fn != nullptr && cycle_length >= 1 && block_length >= 1, InvalidArgument,
              "interleave: need a function, cycle_length >= 1 and block_length >= 1");
  return Dataset(std::make_shared<InterleaveNode>(*this, std::move(fn), std::move(out_spec), cycle_length, block_length,
                                                    num_parallel_calls != 0));
}

}  // namespace nnfit::data
