// cache: the first pass that runs to the end records the elements; later passes replay
// them without creating an input iterator, so the source and any decode before the cache
// do not run again. In memory (filename empty), the record is a shared vector in the
// node; with a filename it is a file written as <filename>.tmp and renamed when the pass
// completes, so a pass cut short never leaves a partial cache, and a later process reuses
// a complete one. A pass cut short records nothing (as tf.data).
//
// File layout (little-endian): "NNFITCACHE1\n", then per element: u32 components, per
// component: u8 dtype, u32 rank, i64 dims[rank], raw bytes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "data/element_util.h"
#include "data/rows.h"
#include "nnfit/data/ram_budget.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

constexpr char kMagic[] = "NNFITCACHE1\n";
constexpr std::size_t kMagicLen = sizeof(kMagic) - 1;

using Elements = std::vector<Element>;

void write_element(std::ofstream& out, const Element& e) {
  auto put = [&](const void* p, std::size_t n) { out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); };
  const auto count = static_cast<std::uint32_t>(e.size());
  put(&count, 4);
  for (const Tensor& t : e) {
    const auto dtype = static_cast<std::uint8_t>(t.dtype());
    const auto rank = static_cast<std::uint32_t>(t.shape().rank());
    put(&dtype, 1);
    put(&rank, 4);
    put(t.shape().dims().data(), 8 * rank);
    put(t.raw(), t.nbytes());
  }
}

class CacheNode final : public DatasetNode {
 public:
  CacheNode(Dataset input, std::string filename)
      : input_(std::move(input)), filename_(std::move(filename)), state_(std::make_shared<State>()) {}
  const ElementSpec& element_spec() const override { return input_.element_spec(); }
  std::int64_t cardinality() const override { return input_.cardinality(); }
  std::string name() const override { return "cache"; }

  // Once complete in memory, the cached elements are the table when they all have the
  // spec's fixed shapes (Note [Row streams]).
  std::unique_ptr<RowStream> make_row_stream() const override {
    if (!filename_.empty()) return nullptr;
    std::shared_ptr<const Elements> memory;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      memory = state_->memory;
    }
    if (!memory) return nullptr;
    for (const ComponentSpec& c : element_spec()) {
      if (c.shape.rank() > 0 && *std::min_element(c.shape.dims().begin(), c.shape.dims().end()) < 0) return nullptr;
    }
    class Table final : public RowTable {
     public:
      Table(std::shared_ptr<const Elements> e, ElementSpec spec) : RowTable(std::move(spec)), elements_(std::move(e)) {}
      std::int64_t rows() const override { return static_cast<std::int64_t>(elements_->size()); }
      const void* row(std::int64_t i, std::size_t c) const override {
        return (*elements_)[static_cast<std::size_t>(i)][c].raw();
      }

     private:
      std::shared_ptr<const Elements> elements_;
    };
    auto table = std::make_shared<Table>(memory, element_spec());
    for (const Element& e : *memory) {
      if (e.size() != table->spec().size()) return nullptr;
      for (std::size_t c = 0; c < e.size(); ++c) {
        if (e[c].nbytes() != table->row_bytes(c) || e[c].dtype() != table->spec()[c].dtype) return nullptr;
      }
    }
    auto s = std::make_unique<RowStream>();
    s->rows = sequential_rows(table->rows());
    s->table = std::move(table);
    return s;
  }

  std::unique_ptr<Iterator> make_iterator() const override {
    if (filename_.empty()) {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->memory) return std::make_unique<ReplayIterator>(state_->memory);
    } else if (std::filesystem::exists(filename_)) {
      return std::make_unique<FileReadIterator>(filename_);
    }
    return std::make_unique<RecordingIterator>(state_, filename_, input_.make_iterator());
  }

 private:
  // Shared with recording iterators, which may outlive the node.
  struct State {
    std::mutex mu;
    std::shared_ptr<const Elements> memory;  // guarded by mu; set once
  };

  class ReplayIterator final : public Iterator {
   public:
    explicit ReplayIterator(std::shared_ptr<const Elements> e) : elements_(std::move(e)) {}
    std::optional<Element> next() override {
      if (i_ >= elements_->size()) return std::nullopt;
      return (*elements_)[i_++];
    }

   private:
    std::shared_ptr<const Elements> elements_;
    std::size_t i_ = 0;
  };

  class FileReadIterator final : public Iterator {
   public:
    explicit FileReadIterator(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
      char magic[kMagicLen];
      in_.read(magic, kMagicLen);
      if (!in_ || std::string(magic, kMagicLen) != kMagic) {
        throw DataError(path_, 0, "not an nnfit cache file", "delete it to rebuild the cache");
      }
    }
    std::optional<Element> next() override {
      const std::int64_t offset = in_.tellg();
      std::uint32_t count = 0;
      in_.read(reinterpret_cast<char*>(&count), 4);
      if (in_.eof() && in_.gcount() == 0) return std::nullopt;
      Element e;
      for (std::uint32_t c = 0; c < count && in_; ++c) {
        std::uint8_t dtype = 0;
        std::uint32_t rank = 0;
        in_.read(reinterpret_cast<char*>(&dtype), 1);
        in_.read(reinterpret_cast<char*>(&rank), 4);
        if (!in_ || rank > 32 || dtype > static_cast<std::uint8_t>(DType::boolean)) break;
        std::vector<std::int64_t> dims(rank);
        in_.read(reinterpret_cast<char*>(dims.data()), 8 * rank);
        Tensor t = Tensor::zeros(Shape(std::move(dims)), static_cast<DType>(dtype));
        in_.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(t.nbytes()));
        e.push_back(std::move(t));
      }
      if (!in_ || e.size() != count) {
        throw DataError(path_, offset, "truncated or corrupt cache element",
                        "delete the cache file to rebuild it");
      }
      return e;
    }

   private:
    std::string path_;
    std::ifstream in_;
  };

  // Passes the input through and records it; publishes the record only at the end.
  class RecordingIterator final : public Iterator {
   public:
    RecordingIterator(std::shared_ptr<State> state, std::string filename, std::unique_ptr<Iterator> in)
        : state_(std::move(state)), filename_(std::move(filename)), in_(std::move(in)) {
      if (!filename_.empty()) {
        tmp_ = filename_ + ".tmp";
        out_.open(tmp_, std::ios::binary | std::ios::trunc);
        if (!out_) throw DataError(filename_, -1, "cannot create the cache file", "check the directory exists and is writable");
        out_.write(kMagic, kMagicLen);
      }
    }
    ~RecordingIterator() override {
      if (out_.is_open()) {
        out_.close();
        std::remove(tmp_.c_str());
      }
    }
    std::optional<Element> next() override {
      if (done_) return std::nullopt;
      auto e = in_->next();
      if (!e) {
        done_ = true;
        publish();
        return std::nullopt;
      }
      if (out_.is_open()) {
        write_element(out_, *e);
      } else {
        std::int64_t bytes = 0;
        for (const Tensor& t : *e) bytes += static_cast<std::int64_t>(t.nbytes());
        ram_->add(bytes, "cache to a file instead ({\"cache\": \"PATH\"}, Dataset::cache(path)): the second epoch "
                         "reads it back without decoding again; or raise NNFIT_PIPELINE_RAM_LIMIT");
        recorded_.push_back(*e);
      }
      return e;
    }

   private:
    void publish() {
      if (out_.is_open()) {
        out_.close();
        std::error_code ec;
        std::filesystem::rename(tmp_, filename_, ec);
        if (ec) throw DataError(filename_, -1, "cannot finish the cache file: " + ec.message());
        return;
      }
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->memory) return;
      // The reservation lives as long as the cached elements do.
      std::shared_ptr<RamReservation> ram(std::move(ram_));
      state_->memory = std::shared_ptr<const Elements>(new Elements(std::move(recorded_)),
                                                       [ram](const Elements* p) { delete p; });
    }

    std::shared_ptr<State> state_;
    std::string filename_;
    std::unique_ptr<Iterator> in_;
    Elements recorded_;
    std::unique_ptr<RamReservation> ram_ = std::make_unique<RamReservation>("cache (in memory)");
    std::string tmp_;
    std::ofstream out_;
    bool done_ = false;
  };

  Dataset input_;
  std::string filename_;
  std::shared_ptr<State> state_;
};

}  // namespace

Dataset Dataset::cache(const std::string& filename) const {
  return Dataset(std::make_shared<CacheNode>(*this, filename));
}

}  // namespace nnfit::data
