// The tf.data model: an immutable Dataset describes a stream of elements (its element spec
// and cardinality) and builds stateful Iterators that produce them. Transformations return
// new Datasets that hold their input by shared pointer; each lives in its own file,
// src/data/<name>_dataset.cpp. See docs/design/data.md.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"

namespace nnfit::data {

// One element: a tuple of tensors (features, label, ...), all host tensors.
using Element = std::vector<Tensor>;

// dtype and shape of one component; a dimension of -1 is unknown (varies per element).
struct ComponentSpec {
  DType dtype = DType::f32;
  Shape shape;
  bool operator==(const ComponentSpec&) const = default;
};
using ElementSpec = std::vector<ComponentSpec>;
std::string to_string(const ElementSpec& spec);  // "(float32 (28, 28), int64 ())"
// The text held by a u8 [-1] tensor (a path from list_files, a bytes feature).
std::string to_path(const Tensor& bytes);

// Cardinality values besides a count >= 0, as tf.data.INFINITE/UNKNOWN_CARDINALITY.
inline constexpr std::int64_t kInfiniteCardinality = -1;
inline constexpr std::int64_t kUnknownCardinality = -2;
// Pass as num_parallel_calls or a prefetch buffer size to let nnfit choose.
inline constexpr int kAutotune = -1;

// A pass over a Dataset. Stateful; not thread-safe: one consumer calls next() at a time
// (iterators that run threads inside, map and prefetch, synchronise those internally).
// Destroying an iterator stops and joins its threads.
class Iterator {
 public:
  virtual ~Iterator() = default;
  // The next element, or nullopt at the end. An error raised while producing the element,
  // on this thread or on a worker, is rethrown here; the iterator may be advanced again
  // afterwards (ignore_errors relies on it), and then continues past the failed element
  // where the stage can (map, filter) or ends (a source that lost its place).
  virtual std::optional<Element> next() = 0;
};

struct RowStream;  // src/data/rows.h: Note [Row streams]

// Note [Resumed passes]: shuffle numbers its passes (pass n reshuffles with seed and n), so
// a run resumed at epoch E must see pass E's order, not pass 0's. While a PassScope lives,
// the passes this thread starts are numbered from `pass` on (each shuffle node continues
// counting from there), as if the dataset had made `pass` passes before.
class PassScope {
 public:
  explicit PassScope(std::uint64_t pass);
  ~PassScope();
  PassScope(const PassScope&) = delete;
  PassScope& operator=(const PassScope&) = delete;
  // The pass number the scope asks for on this thread, if any.
  static std::optional<std::uint64_t> current();

 private:
  std::optional<std::uint64_t> previous_;
};

// The node behind a Dataset handle. Implementations are immutable after construction
// (state that spans epochs, such as shuffle's epoch counter or cache contents, is guarded
// internally), so a node may be shared by many datasets and iterators on any thread.
class DatasetNode {
 public:
  virtual ~DatasetNode() = default;
  virtual const ElementSpec& element_spec() const = 0;
  virtual std::int64_t cardinality() const = 0;
  virtual std::unique_ptr<Iterator> make_iterator() const = 0;
  virtual std::string name() const = 0;  // "batch", "map", ... for stats and errors
  // A pass as row indices into a table of fixed-shape elements, for the stages that can
  // be fused over one (Note [Row streams]); null where the node cannot (the default).
  virtual std::unique_ptr<RowStream> make_row_stream() const;
};

struct MapOptions {
  int num_parallel_calls = 0;  // 0: sequential on the consumer thread; N threads; kAutotune
  bool deterministic = true;   // false: a parallel map yields elements as they finish
  std::string name = "map";    // how stats and the Autotuner's log name the stage
};

struct ShuffleOptions {
  std::optional<std::uint64_t> seed;  // none: a fresh random seed per dataset
  bool reshuffle_each_iteration = true;
};

// Padding for padded_batch: a shape per component (-1 dims pad to the longest in the
// batch; empty vector = pad every dimension to the batch's longest) and a value per
// component (default 0).
struct PaddedBatchOptions {
  std::vector<Shape> padded_shapes;
  std::vector<double> padding_values;
  bool drop_remainder = false;
};

// What a measure() point saw: elements that passed, time its consumer spent inside
// next() (waiting for the stages before it, inclusive), and when the first and last
// element passed. Counters are atomics, readable from any thread while the pipeline runs.
struct StageStats {
  std::atomic<std::int64_t> elements{0};
  std::atomic<std::int64_t> wait_ns{0};
  std::atomic<std::int64_t> first_ns{0};  // steady_clock, 0 until the first element
  std::atomic<std::int64_t> last_ns{0};
  double elements_per_second() const;  // over [first, last]; 0 with fewer than 2 elements
};

// Handle to an immutable dataset: cheap to copy, safe to share between threads.
class Dataset {
 public:
  using MapFn = std::function<Element(Element)>;
  using PredicateFn = std::function<bool(const Element&)>;
  using InterleaveFn = std::function<Dataset(const Element&)>;

  explicit Dataset(std::shared_ptr<const DatasetNode> node);

  const ElementSpec& element_spec() const { return node_->element_spec(); }
  std::int64_t cardinality() const { return node_->cardinality(); }
  std::unique_ptr<Iterator> make_iterator() const { return node_->make_iterator(); }
  const std::shared_ptr<const DatasetNode>& node() const { return node_; }
  // All elements of one pass (tests, small data). Throws what the pipeline throws.
  std::vector<Element> collect() const;

  // Sources. Element i is row i of every tensor (views of the same buffers, no copies).
  // throws: InvalidArgument if the tensors disagree on the first dimension or are rank 0.
  static Dataset from_tensor_slices(std::vector<Tensor> tensors);
  // Elements from an arbitrary generator (returns nullopt at the end); make_iterator calls
  // factory once per pass. spec must describe what the generator yields.
  static Dataset from_generator(std::function<std::function<std::optional<Element>()>()> factory,
                                ElementSpec spec, std::int64_t cardinality = kUnknownCardinality);
  static Dataset range(std::int64_t start, std::int64_t stop, std::int64_t step = 1);
  static Dataset zip(std::vector<Dataset> datasets);
  // The files matching a glob pattern (POSIX glob: *, ?, [...]), sorted, as u8 [-1]
  // tensors holding the path (to_path() reads one back); shuffled when a seed is given.
  // throws: DataError(pattern, -1, ...) if nothing matches.
  static Dataset list_files(const std::string& pattern, std::optional<std::uint64_t> shuffle_seed = {});

  // Transformations (tf.data names and semantics).
  // out_spec: the spec of fn's results; omitted = the input's spec (fn keeps it).
  // fn runs on worker threads when num_parallel_calls != 0: it must be safe to call
  // concurrently. What it throws reaches the consumer from next().
  Dataset map(MapFn fn, MapOptions options = {}, std::optional<ElementSpec> out_spec = {}) const;
  Dataset filter(PredicateFn predicate) const;
  Dataset shuffle(std::int64_t buffer_size, ShuffleOptions options = {}) const;
  Dataset batch(std::int64_t batch_size, bool drop_remainder = false) const;
  Dataset padded_batch(std::int64_t batch_size, PaddedBatchOptions options = {}) const;
  Dataset unbatch() const;
  // Empty filename: in memory. Otherwise elements are written to filename during the first
  // complete pass and read back from it afterwards (also by later processes).
  Dataset cache(const std::string& filename = {}) const;
  Dataset prefetch(int buffer_size = kAutotune) const;
  Dataset repeat(std::int64_t count = -1) const;  // -1: forever
  Dataset take(std::int64_t count) const;         // -1: all
  Dataset skip(std::int64_t count) const;         // -1: all
  Dataset concatenate(const Dataset& other) const;
  Dataset shard(std::int64_t num_shards, std::int64_t index) const;
  Dataset enumerate(std::int64_t start = 0) const;  // prepends an i64 scalar component
  // Skips elements whose production raised a DataError (a corrupt record, an undecodable
  // image) and counts them in *skipped when given; other errors still propagate, since
  // they are bugs or misconfiguration rather than bad data.
  Dataset ignore_errors(std::shared_ptr<std::atomic<std::int64_t>> skipped = nullptr) const;
  // Passes elements through and records, into *stats, how long the consumer waited in
  // next() and how many elements passed. At the end of a pipeline, wait_ns over the
  // epoch's time is the input-wait share the training loop reports; between stages it
  // gives each prefix's cost (the Autotuner's inputs, issue 3).
  Dataset measure(std::shared_ptr<StageStats> stats) const;
  // Opens fn(element) for cycle_length input elements at a time and takes block_length
  // elements from each in turn (e.g. records from several files); out_spec is the spec of
  // the datasets fn returns. num_parallel_calls != 0 reads the open datasets ahead on one
  // background thread each (their prefetch), so slow files overlap; the output order is
  // the same as the sequential one.
  Dataset interleave(InterleaveFn fn, ElementSpec out_spec, std::int64_t cycle_length,
                     std::int64_t block_length = 1, int num_parallel_calls = 0) const;

 private:
  std::shared_ptr<const DatasetNode> node_;
};

}  // namespace nnfit::data
