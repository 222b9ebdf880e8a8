// shuffle: tf.data's buffered shuffle. A buffer of buffer_size elements is filled from the
// input; each output is a uniformly drawn buffer slot, refilled from the input. The draw
// uses std::mt19937_64 seeded from (seed, epoch) with a rejection-sampled bound, so a
// seeded run repeats exactly on any platform. Each make_iterator() is one epoch: with
// reshuffle_each_iteration the epoch number advances (an atomic counter in the node),
// otherwise every pass uses epoch 0 and yields the same order. Over a row stream it
// shuffles indices the same way (Note [Row streams]).
#include <atomic>
#include <random>

#include "data/element_util.h"
#include "data/rows.h"
#include "nnfit/data/ram_budget.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

// The buffered draw, over elements or over row indices (Note [Row streams]): the same
// fills and the same draws, so both give the same order.
template <typename T>
class ShuffleBuffer {
 public:
  ShuffleBuffer(std::size_t buffer_size, std::uint64_t seed, std::uint64_t epoch) : buffer_size_(buffer_size) {
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)};
    rng_.seed(seq);
  }
  // pull() gives the input's next value or nullopt at its end.
  template <typename Pull>
  std::optional<T> next(Pull&& pull) {
    while (!input_end_ && buffer_.size() < buffer_size_) {
      std::optional<T> v = pull();
      if (!v) {
        input_end_ = true;
        break;
      }
      buffer_.push_back(std::move(*v));
    }
    if (buffer_.empty()) return std::nullopt;
    const std::size_t i = detail::bounded(rng_, buffer_.size());
    std::swap(buffer_[i], buffer_.back());
    T out = std::move(buffer_.back());
    buffer_.pop_back();
    return out;
  }

 private:
  std::size_t buffer_size_;
  std::mt19937_64 rng_;
  std::vector<T> buffer_;
  bool input_end_ = false;
};

class ShuffleNode final : public DatasetNode {
 public:
  ShuffleNode(Dataset input, std::int64_t buffer_size, std::uint64_t seed, bool reshuffle)
      : input_(std::move(input)), buffer_size_(buffer_size), seed_(seed), reshuffle_(reshuffle) {}
  const ElementSpec& element_spec() const override { return input_.element_spec(); }
  std::int64_t cardinality() const override { return input_.cardinality(); }
  std::string name() const override { return "shuffle"; }

  std::unique_ptr<Iterator> make_iterator() const override {
    // The buffer's elements count against the pipelines' RAM budget (ram_budget.h).
    class It final : public Iterator {
     public:
      It(std::unique_ptr<Iterator> in, std::size_t buffer_size, std::uint64_t seed, std::uint64_t epoch)
          : in_(std::move(in)), buffer_(buffer_size, seed, epoch), buffer_size_(buffer_size) {}
      std::optional<Element> next() override {
        std::optional<Element> out = buffer_.next([&]() -> std::optional<Element> {
          std::optional<Element> e = in_->next();
          if (e) {
            const std::int64_t b = bytes(*e);
            ram_.add(b, "use a smaller shuffle buffer than " + std::to_string(buffer_size_) +
                            " elements, shuffle before a decoding map (file names are small), or raise "
                            "NNFIT_PIPELINE_RAM_LIMIT");
          }
          return e;
        });
        if (out) ram_.sub(bytes(*out));
        return out;
      }

     private:
      static std::int64_t bytes(const Element& e) {
        std::int64_t n = 0;
        for (const Tensor& t : e) n += static_cast<std::int64_t>(t.nbytes());
        return n;
      }
      std::unique_ptr<Iterator> in_;
      ShuffleBuffer<Element> buffer_;
      std::size_t buffer_size_;
      RamReservation ram_{"shuffle buffer"};
    };
    auto in = input_.make_iterator();
    return std::make_unique<It>(std::move(in), static_cast<std::size_t>(buffer_size_), seed_, next_epoch());
  }

  std::unique_ptr<RowStream> make_row_stream() const override {
    std::unique_ptr<RowStream> s = input_.node()->make_row_stream();
    if (!s) return nullptr;  // the epoch advances only for a pass that happens
    class It final : public RowIterator {
     public:
      It(std::unique_ptr<RowIterator> in, std::size_t buffer_size, std::uint64_t seed, std::uint64_t epoch)
          : in_(std::move(in)), buffer_(buffer_size, seed, epoch) {}
      std::optional<std::int64_t> next() override {
        return buffer_.next([&] { return in_.next(); });
      }

     private:
      RowBlockReader in_;
      ShuffleBuffer<std::int64_t> buffer_;
    };
    s->rows = std::make_unique<It>(std::move(s->rows), static_cast<std::size_t>(buffer_size_), seed_, next_epoch());
    return s;
  }

 private:
  std::uint64_t next_epoch() const {
    if (!reshuffle_) return 0;
    if (const std::optional<std::uint64_t> pass = PassScope::current()) {  // Note [Resumed passes]
      epochs_.store(*pass + 1);
      return *pass;
    }
    return epochs_.fetch_add(1);
  }

  Dataset input_;
  std::int64_t buffer_size_;
  std::uint64_t seed_;
  bool reshuffle_;
  mutable std::atomic<std::uint64_t> epochs_{0};
};

}  // namespace

Dataset Dataset::shuffle(std::int64_t buffer_size, ShuffleOptions options) const {
  NNFIT_CHECK(buffer_size >= 1, InvalidArgument, "shuffle: buffer_size must be >= 1, got ", buffer_size);
  const std::uint64_t seed =
      options.seed ? *options.seed : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  return Dataset(std::make_shared<ShuffleNode>(*this, buffer_size, seed, options.reshuffle_each_iteration));
}

}  // namespace nnfit::data
