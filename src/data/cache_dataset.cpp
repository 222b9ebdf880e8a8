// cache: the first pass that runs to the end records the elements; later passes replay
// them without creating an input iterator, so the source and any decode before the cache
// do not run again. In memory (filename empty), the record is a shared vector in the
// node; with a filename it is a file written as <filename>.tmp and renamed when the pass
// completes, so a pass cut short never leaves a partial cache, and a later process reuses
// a complete one. A pass cut short records nothing (as tf.data).
//
// Note [Cache row storage]. In memory, elements whose spec has fixed shapes are copied
// as they pass into contiguous chunks (one per component, 2^k rows of at most 4 MiB),
// and later passes hand out views into them. A shuffled batch then gathers each row
// from an address computed from its index, instead of chasing an element's vector, its
// tensor's buffer and the bytes, three dependent cache misses per row of a table far
// bigger than the cache: with Fashion-MNIST (188 MB of f32 images) that pointer chasing
// was half the cost of a batch of 128. Elements that break their spec (a map that
// declared the wrong shape) switch the record back to whole elements.
//
// File layout (little-endian): "NNFITCACHE1\n", then per element: u32 components, per
// component: u8 dtype, u32 rank, i64 dims[rank], raw bytes.
#include <stdlib.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "data/element_util.h"
#include "data/rows.h"
#include "nnfit/data/ram_budget.h"
#include "nnfit/core/error.h"
#include "nnfit/io/regular_file.h"

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

bool fixed_shapes(const ElementSpec& spec) {
  for (const ComponentSpec& c : spec) {
    if (c.shape.rank() > 0 && *std::min_element(c.shape.dims().begin(), c.shape.dims().end()) < 0) return false;
  }
  return true;
}

// A chunk's memory: 2 MiB aligned and, for whole huge pages, backed by transparent huge
// pages where the kernel offers them (madvise mode): rows gathered in random order from
// a table of hundreds of MB otherwise cost a TLB miss and a page walk each. The
// Fashion-MNIST pipeline alone (nnfit_pipeline_bench --only fmnist --setting sequential,
// 5 alternating runs): median 1.73M samples/s with 4 KiB pages, 2.12M with huge pages.
std::shared_ptr<Buffer> allocate_chunk(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < kHuge) {
    Tensor t = Tensor::uninitialized(Shape{static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1))}, DType::u8);
    return t.buffer();
  }
  // The exact size, not rounded up to 2 MiB: the whole huge pages it covers get huge
  // pages, and a tail that is not one stays in 4 KiB pages instead of a mostly empty huge
  // page (3.2 MB chunks of 784-byte rows would otherwise hold 0.8 MB of nothing each).
  void* p = nullptr;
  if (posix_memalign(&p, kHuge, bytes) != 0 || p == nullptr) {
    throw OutOfMemory("cache: host allocation of " + std::to_string(bytes) + " bytes failed");
  }
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the pages stay 4 KiB
  return std::make_shared<Buffer>(p, bytes, Device{}, [](void* q) { std::free(q); });
}

// Rows of a fixed-shape spec in contiguous chunks (Note [Cache row storage]).
class ChunkedRows final : public RowTable {
 public:
  explicit ChunkedRows(ElementSpec spec) : RowTable(std::move(spec)) {
    std::size_t widest = 1;
    for (std::size_t c = 0; c < spec_.size(); ++c) widest = std::max(widest, row_bytes(c));
    while (shift_ < 20 && (std::size_t{2} << shift_) * widest <= kChunkBytes) ++shift_;
    chunks_.resize(spec_.size());
    bases_.resize(spec_.size());
  }
  std::int64_t rows() const override { return rows_; }
  const void* row(std::int64_t i, std::size_t c) const override {
    return bases_[c][static_cast<std::size_t>(i >> shift_)] + static_cast<std::size_t>(i & mask()) * row_bytes(c);
  }
  // Appends a copy of e's bytes; false (and nothing appended) if e breaks the spec.
  bool append(const Element& e) {
    if (e.size() != spec_.size()) return false;
    for (std::size_t c = 0; c < e.size(); ++c) {
      if (e[c].dtype() != spec_[c].dtype || e[c].nbytes() != row_bytes(c)) return false;
    }
    if ((rows_ & mask()) == 0) {
      for (std::size_t c = 0; c < e.size(); ++c) {
        std::shared_ptr<Buffer> chunk = allocate_chunk(static_cast<std::size_t>(mask() + 1) * row_bytes(c));
        bases_[c].push_back(static_cast<char*>(chunk->data()));
        chunks_[c].push_back(std::move(chunk));
      }
    }
    for (std::size_t c = 0; c < e.size(); ++c) std::memcpy(const_cast<void*>(row(rows_, c)), e[c].raw(), row_bytes(c));
    ++rows_;
    return true;
  }
  // Row i as an element of views into the chunks.
  Element element(std::int64_t i) const {
    Element e;
    e.reserve(spec_.size());
    for (std::size_t c = 0; c < spec_.size(); ++c) {
      const auto chunk = static_cast<std::size_t>(i >> shift_);
      e.emplace_back(chunks_[c][chunk], spec_[c].shape, spec_[c].dtype,
                     static_cast<std::size_t>(i & mask()) * row_bytes(c));
    }
    return e;
  }

 private:
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
  std::int64_t mask() const { return (std::int64_t{1} << shift_) - 1; }
  int shift_ = 0;  // log2 of the rows per chunk
  std::int64_t rows_ = 0;
  std::vector<std::vector<std::shared_ptr<Buffer>>> chunks_;  // [component][chunk]
  std::vector<std::vector<char*>> bases_;                     // their bytes
};

class CacheNode final : public DatasetNode {
 public:
  CacheNode(Dataset input, std::string filename)
      : input_(std::move(input)), filename_(std::move(filename)), state_(std::make_shared<State>()) {}
  const ElementSpec& element_spec() const override { return input_.element_spec(); }
  std::int64_t cardinality() const override { return input_.cardinality(); }
  std::string name() const override { return "cache"; }

  // Once complete in memory, fixed-shape elements are a table (Note [Row streams]).
  std::unique_ptr<RowStream> make_row_stream() const override {
    if (!filename_.empty()) return nullptr;
    std::shared_ptr<const ChunkedRows> rows;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      rows = state_->rows;
    }
    if (!rows) return nullptr;
    auto s = std::make_unique<RowStream>();
    s->rows = sequential_rows(rows->rows());
    s->table = std::move(rows);
    return s;
  }

  std::unique_ptr<Iterator> make_iterator() const override {
    if (filename_.empty()) {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->memory) return std::make_unique<ReplayIterator>(state_->memory);
      if (state_->rows) return std::make_unique<ReplayRowsIterator>(state_->rows);
    } else if (io::file_kind(filename_) != io::FileKind::missing) {
      io::require_regular_file(filename_, "a cache file");  // a FIFO would block the open
      return std::make_unique<FileReadIterator>(filename_);
    }
    return std::make_unique<RecordingIterator>(state_, filename_, input_.make_iterator(), element_spec());
  }

 private:
  // Shared with recording iterators, which may outlive the node.
  struct State {
    std::mutex mu;
    // Guarded by mu; one of them is set once, when a pass completes.
    std::shared_ptr<const Elements> memory;
    std::shared_ptr<const ChunkedRows> rows;
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

  class ReplayRowsIterator final : public Iterator {
   public:
    explicit ReplayRowsIterator(std::shared_ptr<const ChunkedRows> rows) : rows_(std::move(rows)) {}
    std::optional<Element> next() override {
      if (i_ >= rows_->rows()) return std::nullopt;
      return rows_->element(i_++);
    }

   private:
    std::shared_ptr<const ChunkedRows> rows_;
    std::int64_t i_ = 0;
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
    RecordingIterator(std::shared_ptr<State> state, std::string filename, std::unique_ptr<Iterator> in,
                      const ElementSpec& spec)
        : state_(std::move(state)), filename_(std::move(filename)), in_(std::move(in)) {
      if (filename_.empty() && fixed_shapes(spec)) rows_ = std::make_unique<ChunkedRows>(spec);
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
        if (rows_ && !rows_->append(*e)) {
          // The element breaks the spec: keep whole elements from here on.
          for (std::int64_t i = 0; i < rows_->rows(); ++i) recorded_.push_back(rows_->element(i));
          rows_.reset();
        }
        if (!rows_) recorded_.push_back(*e);
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
      // The reservation lives as long as the cached elements do.
      std::shared_ptr<RamReservation> ram(std::move(ram_));
      if (state_->memory || state_->rows) return;
      if (rows_) {
        state_->rows = std::shared_ptr<const ChunkedRows>(rows_.release(), [ram](const ChunkedRows* p) { delete p; });
        return;
      }
      state_->memory = std::shared_ptr<const Elements>(new Elements(std::move(recorded_)),
                                                       [ram](const Elements* p) { delete p; });
    }

    std::shared_ptr<State> state_;
    std::string filename_;
    std::unique_ptr<Iterator> in_;
    std::unique_ptr<ChunkedRows> rows_;  // fixed-shape elements (Note [Cache row storage])
    Elements recorded_;                   // otherwise
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
