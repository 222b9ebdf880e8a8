// An input pipeline in the nnfit config (`data.train`, `data.validation`): a source, then
// tf.data transformations in order. read_pipeline checks every key when the config is
// read (so a typo fails before any data is read); build_pipeline opens the files and
// returns the Dataset. The format is in docs/config.md ("Input pipelines").
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/data/dataset.h"
#include "nnfit/data/preprocessing.h"
#include "nnfit/data/sources.h"

namespace nnfit::config {

class Section;

struct SourceSpec {
  std::string format;                 // idx | npy | npz | csv | tfrecord | image_folder; tensors (build_pipeline_json)
  std::string where;                  // key path, for errors
  std::vector<std::string> paths;     // idx: images, labels; npy: x, y (, sample_weight); npz, csv: the file;
                                      // tfrecord: files or glob patterns; image_folder: directory
  std::vector<std::string> names;     // npz: the x, y (and sample_weight) arrays; csv: feature columns (empty: all but label)
  std::string label;                  // csv: the label column
  std::vector<data::FixedLenFeature> features;  // tfrecord: x features, then the label feature
  std::string compression;            // tfrecord: "" (sniffed), "GZIP", "ZLIB"
  int channels = 0;                   // image_folder
};

struct StageSpec {
  std::string op;                     // map, shuffle, batch, unbatch, cache, prefetch, repeat,
                                      // take, skip, shard, ignore_errors
  std::string where;                  // "data.train.pipeline[2]"
  std::string fn;                     // map: normalize, cast, convert_image_dtype, reshape, resize,
                                      // random_crop, random_flip_left_right, random_brightness,
                                      // random_contrast, one_hot
  std::int64_t count = 0;             // buffer_size, batch_size (0: fit's), count, num_shards
  std::int64_t index = 0;             // shard
  int parallel = 0;                   // map num_parallel_calls, prefetch buffer_size; kAutotune
  bool deterministic = true, drop_remainder = false, reshuffle = true;
  std::optional<std::uint64_t> seed;  // shuffle and random maps (none: fit's seed)
  std::string filename;               // cache ("" in memory)
  int component = 0;                  // map: the element component it applies to
  DType dtype = DType::f32;           // cast, convert_image_dtype
  std::vector<float> mean, stddev;    // normalize
  float scale = 1.0f;                 // normalize: applied before mean/stddev
  std::vector<std::int64_t> shape;    // reshape
  std::int64_t height = 0, width = 0, depth = 0;
  data::ResizeMethod method = data::ResizeMethod::bilinear;  // resize
  float lower = 0, upper = 0;         // random_brightness (max_delta = upper), random_contrast
};

struct PipelineSpec {
  SourceSpec source;
  std::vector<StageSpec> stages;
  // The batch stage's size (fallback when it takes fit's, or when there is none).
  std::int64_t batch_size(std::int64_t fallback) const;
  bool has_batch() const;
};

// throws: InvalidArgument naming the file and key (unknown op or key, bad value).
PipelineSpec read_pipeline(const Section& section);

// Per-stage measurement points (a measure() after the source and after every stage),
// when the caller wants them (`nnfit data bench`).
struct PipelineProbe {
  std::vector<std::string> names;     // "source: idx", "map(normalize)", ...
  std::vector<std::shared_ptr<data::StageStats>> stats;
};

// Opens the source and applies the stages. batch_size and seed are fit's (for a batch
// stage without its own size, and for shuffle and random maps without a seed); a
// pipeline without a batch stage is batched at the end with batch_size.
// throws: DataError for unreadable or corrupt files, InvalidArgument naming the stage.
data::Dataset build_pipeline(const PipelineSpec& spec, std::int64_t batch_size, std::uint64_t seed,
                             PipelineProbe* probe = nullptr);

// The stages of `spec` applied to `source` (build_pipeline after opening the source).
data::Dataset apply_stages(data::Dataset source, const PipelineSpec& spec, std::int64_t batch_size,
                           std::uint64_t seed, PipelineProbe* probe = nullptr);

// A pipeline from JSON text, the object a config's `data.train` holds ({"source": {...},
// "pipeline": [...]}), as the Python package's nnfit.data writes it. The source may also
// be {"format": "tensors"}: the rows of `tensors` are the elements (tf.data's
// from_tensor_slices). The pipeline must batch (no implicit batch stage: tf.data's
// semantics); shuffles and random maps without a seed take `seed`. `where` starts every
// error message. throws: InvalidArgument naming the key path, DataError for the files.
data::Dataset build_pipeline_json(const std::string& json_text, const std::string& where,
                                  const std::vector<Tensor>& tensors, std::uint64_t seed);

}  // namespace nnfit::config
