// Reads and builds the config's input pipelines (pipeline_config.h).
#include "nnfit/config/pipeline.h"

#include <glob.h>

#include <algorithm>
#include <cmath>

#include "nnfit/config/section.h"
#include "nnfit/io/csv.h"

namespace nnfit::config {
namespace {

const char* const kOps[] = {"map", "shuffle", "batch", "unbatch", "cache", "prefetch", "repeat",
                            "take", "skip", "shard", "ignore_errors"};
constexpr std::int64_t kMaxImageSide = 2147483647;     // int32, as tf.image.resize's size
constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 31;
constexpr std::int64_t kMaxOneHotDepth = std::int64_t{1} << 24;

const char* const kMaps[] = {"normalize", "cast", "convert_image_dtype", "reshape", "resize", "random_crop",
                             "random_flip_left_right", "random_brightness", "random_contrast", "one_hot"};

std::string list(const char* const* names, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::string(names[i]);
  return s;
}

// A count, or "AUTOTUNE" (-> data::kAutotune) where allowed.
int parallelism(const Section& s, const char* key, int fallback) {
  const json* v = s.find(key);
  if (!v) return fallback;
  if (v->is_string() && v->get<std::string>() == "AUTOTUNE") return data::kAutotune;
  if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > 1024) {
    s.fail("expected \"AUTOTUNE\" or an integer in [0, 1024], got " + v->dump(), key);
  }
  return static_cast<int>(v->get<std::int64_t>());
}

DType dtype(const Section& s, const char* key) {
  const std::string name = s.string(key);
  try {
    return dtype_from_name(name);
  } catch (const Error&) {
    s.fail("unknown dtype \"" + name + "\"", key, "dtypes: float32, float16, bfloat16, int32, int64, uint8, bool");
  }
}

// A shape: integer sizes >= 1, or one -1 for a size to infer, whose product fits 64 bits
// (elements per record are counted with it).
std::vector<std::int64_t> shape_list(const Section& s, const char* key, bool required) {
  const json* v = s.find(key);
  if (!v) {
    if (required) s.require(key);
    return {};
  }
  const json arr = v->is_array() ? *v : json::array({*v});
  std::vector<std::int64_t> out;
  std::int64_t product = 1;
  int unknown = 0;
  for (const json& x : arr) {
    const bool ok = x.is_number_integer() && (x.get<std::int64_t>() >= 1 || x.get<std::int64_t>() == -1);
    if (!ok || (x.get<std::int64_t>() == -1 && ++unknown > 1)) {
      s.fail("expected a shape: a list of sizes >= 1 with at most one -1, got " + v->dump(), key);
    }
    if (x.get<std::int64_t>() > 0 && __builtin_mul_overflow(product, x.get<std::int64_t>(), &product)) {
      s.fail("the sizes' product overflows 64 bits: " + v->dump(), key);
    }
    out.push_back(x.get<std::int64_t>());
  }
  return out;
}

template <typename T>
std::vector<T> numbers(const Section& s, const char* key, bool required) {
  const json* v = s.find(key);
  if (!v) {
    if (required) s.require(key);
    return {};
  }
  std::vector<T> out;
  const json arr = v->is_array() ? *v : json::array({*v});
  for (const json& x : arr) {
    if (!x.is_number()) s.fail("expected a number or a list of numbers, got " + v->dump(), key);
    out.push_back(x.get<T>());
  }
  return out;
}

std::optional<std::uint64_t> seed(const Section& s) {
  if (!s.find("seed")) return std::nullopt;
  return static_cast<std::uint64_t>(s.integer("seed", 0, 0));
}

SourceSpec read_source(const Section& s) {
  SourceSpec src;
  src.where = s.path();
  src.format = s.string("format");
  const std::string& f = src.format;
  if (f == "idx") {
    s.check_keys({"format", "images", "labels"});
    src.paths = {resolve(s, "images"), resolve(s, "labels")};
  } else if (f == "npy") {
    s.check_keys({"format", "x", "y", "sample_weight"});
    src.paths = {resolve(s, "x"), resolve(s, "y")};
    if (s.find("sample_weight")) src.paths.push_back(resolve(s, "sample_weight"));
  } else if (f == "npz") {
    s.check_keys({"format", "path", "x", "y", "sample_weight"});
    src.paths = {resolve(s, "path")};
    src.names = {s.string_or("x", "x"), s.string_or("y", "y")};
    if (s.find("sample_weight")) src.names.push_back(s.string("sample_weight"));
  } else if (f == "csv") {
    s.check_keys({"format", "path", "label", "features"});
    src.paths = {resolve(s, "path")};
    src.label = s.string("label");
    if (const json* v = s.find("features")) {
      if (!v->is_array()) s.fail("expected a list of column names, got " + v->dump(), "features");
      for (const json& c : *v) {
        if (!c.is_string()) s.fail("expected a column name, got " + c.dump(), "features");
        src.names.push_back(c.get<std::string>());
      }
    }
  } else if (f == "tfrecord") {
    s.check_keys({"format", "files", "compression", "features", "label"});
    const json& files = s.require("files");
    const json arr = files.is_array() ? files : json::array({files});
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string()) s.fail("expected a path or glob pattern, got " + arr[i].dump(), "files");
      json one = {{"p", arr[i]}};
      src.paths.push_back(resolve(Section(s.file(), s.key_path("files"), one), "p"));
    }
    src.compression = s.string_or("compression", "");
    if (src.compression != "" && src.compression != "GZIP" && src.compression != "ZLIB") {
      s.fail("expected \"\", \"GZIP\" or \"ZLIB\", got \"" + src.compression + "\"", "compression");
    }
    const Section feats = s.section("features");
    for (const auto& [name, value] : s.require("features").items()) {
      const Section fs(s.file(), feats.key_path(name.c_str()), value);
      fs.check_keys({"dtype", "shape", "default"});
      data::FixedLenFeature feature;
      feature.name = name;
      feature.dtype = dtype(fs, "dtype");
      feature.shape = Shape(shape_list(fs, "shape", false));
      if (fs.find("default")) feature.default_value = fs.number("default", 0);
      src.features.push_back(feature);
    }
    src.label = s.string("label");
    auto is_label = [&](const data::FixedLenFeature& x) { return x.name == src.label; };
    auto it = std::find_if(src.features.begin(), src.features.end(), is_label);
    if (it == src.features.end()) s.fail("label \"" + src.label + "\" is not one of the features", "label");
    std::rotate(it, it + 1, src.features.end());  // the label goes last
  } else if (f == "image_folder") {
    s.check_keys({"format", "directory", "channels"});
    src.paths = {resolve(s, "directory")};
    src.channels = static_cast<int>(s.integer("channels", 0, 0, 4));
  } else {
    s.fail("unknown source format \"" + f + "\"", "format", "formats: idx, npy, npz, csv, tfrecord, image_folder");
  }
  return src;
}

void read_map(const Section& s, StageSpec& st) {
  st.fn = s.string("map");
  const std::string& fn = st.fn;
  const auto common = {"map", "num_parallel_calls", "deterministic", "component"};
  auto keys = [&](std::initializer_list<std::string_view> extra) {
    std::vector<std::string_view> all(common.begin(), common.end());
    all.insert(all.end(), extra.begin(), extra.end());
    // check_keys takes an initializer_list; do the same check by hand for the union.
    for (const auto& [key, value] : s.items()) {
      if (std::find(all.begin(), all.end(), key) == all.end()) {
        std::string known;
        for (std::string_view k : all) known += (known.empty() ? "" : ", ") + std::string(k);
        s.fail("unknown key for map \"" + fn + "\"", key, "known keys here: " + known);
      }
    }
  };
  st.parallel = parallelism(s, "num_parallel_calls", 0);
  st.deterministic = s.boolean("deterministic", true);
  st.component = static_cast<int>(s.integer("component", fn == "one_hot" ? 1 : 0, 0, 0x7fffffff));
  if (fn == "normalize") {
    keys({"scale", "mean", "stddev"});
    st.scale = static_cast<float>(s.number("scale", 1.0));
    st.mean = numbers<float>(s, "mean", false);
    st.stddev = numbers<float>(s, "stddev", false);
    if (st.mean.empty()) st.mean = {0.0f};
    if (st.stddev.empty()) st.stddev = {1.0f};
  } else if (fn == "cast" || fn == "convert_image_dtype") {
    keys({"dtype"});
    st.dtype = dtype(s, "dtype");
  } else if (fn == "reshape") {
    keys({"shape"});
    st.shape = shape_list(s, "shape", true);
  } else if (fn == "resize" || fn == "random_crop") {
    keys({"height", "width", "method", "seed"});
    st.height = s.integer("height", 0, 1);
    st.width = s.integer("width", 0, 1);
    if (!s.find("height") || !s.find("width")) s.fail("needs \"height\" and \"width\"");
    // tf.image.resize takes an int32 size; a product past 2^31 pixels per image is a typo,
    // and past 2^64 bytes it wrapped the output's size.
    if (st.height > kMaxImageSide || st.width > kMaxImageSide || st.height * st.width > kMaxImagePixels) {
      s.fail("a " + std::to_string(st.height) + " x " + std::to_string(st.width) + " image is more than " +
             std::to_string(kMaxImagePixels) + " pixels");
    }
    const std::string method = s.string_or("method", "bilinear");
    if (method != "bilinear" && method != "nearest") s.fail("expected \"bilinear\" or \"nearest\"", "method");
    st.method = method == "nearest" ? data::ResizeMethod::nearest : data::ResizeMethod::bilinear;
    st.seed = seed(s);
  } else if (fn == "random_flip_left_right") {
    keys({"seed"});
    st.seed = seed(s);
  } else if (fn == "random_brightness") {
    keys({"max_delta", "seed"});
    st.upper = static_cast<float>(s.number("max_delta", 0.1));
    st.seed = seed(s);
  } else if (fn == "random_contrast") {
    keys({"lower", "upper", "seed"});
    st.lower = static_cast<float>(s.number("lower", 0.8));
    st.upper = static_cast<float>(s.number("upper", 1.2));
    st.seed = seed(s);
  } else if (fn == "one_hot") {
    keys({"depth"});
    st.depth = s.integer("depth", 0, 1);
    if (!s.find("depth")) s.require("depth");
    // Every label becomes depth floats: 1e9 made each one 4 GB. No classifier has 2^24 classes.
    if (st.depth > kMaxOneHotDepth) s.fail("expected a depth of at most " + std::to_string(kMaxOneHotDepth) + ", got " + std::to_string(st.depth), "depth");
  } else {
    s.fail("unknown map function \"" + fn + "\"", "map", "map functions: " + list(kMaps, std::size(kMaps)));
  }
}

StageSpec read_stage(const Section& s) {
  StageSpec st;
  st.where = s.path();
  for (const char* op : kOps) {
    if (s.find(op)) {
      if (!st.op.empty()) s.fail("one transformation per entry, got both \"" + st.op + "\" and \"" + op + "\"");
      st.op = op;
    }
  }
  if (st.op.empty()) {
    s.fail("expected one transformation key", "", "transformations: " + list(kOps, std::size(kOps)));
  }
  const std::string& op = st.op;
  // The op's own value: a number for sizes and counts, a name for map, a file for cache.
  const json& v = s.require(op.c_str());
  auto value_count = [&](std::int64_t min, bool autotune) -> std::int64_t {
    if (autotune && v.is_string() && v.get<std::string>() == "AUTOTUNE") return data::kAutotune;
    if (!v.is_number_integer() || v.get<std::int64_t>() < min) {
      s.fail(std::string("expected ") + (autotune ? "\"AUTOTUNE\" or " : "") + "an integer >= " +
                 std::to_string(min) + ", got " + v.dump(),
             op);
    }
    return v.get<std::int64_t>();
  };
  if (op == "map") {
    read_map(s, st);
  } else if (op == "shuffle") {
    s.check_keys({"shuffle", "seed", "reshuffle_each_iteration"});
    st.count = value_count(1, false);
    st.seed = seed(s);
    st.reshuffle = s.boolean("reshuffle_each_iteration", true);
  } else if (op == "batch") {
    s.check_keys({"batch", "drop_remainder"});
    // "batch": null or true takes fit's batch size.
    st.count = v.is_boolean() && v.get<bool>() ? 0 : value_count(1, false);
    st.drop_remainder = s.boolean("drop_remainder", false);
  } else if (op == "cache") {
    s.check_keys({"cache"});
    if (!v.is_string()) s.fail("expected \"\" (in memory) or a file name, got " + v.dump(), op);
    if (!v.get<std::string>().empty()) st.filename = resolve(s, "cache");
  } else if (op == "prefetch") {
    s.check_keys({"prefetch"});
    const std::int64_t buffers = value_count(1, true);
    if (buffers > 0x7fffffff) s.fail("expected at most 2147483647 buffers, got " + v.dump(), op);  // never truncated to an int
    st.parallel = static_cast<int>(buffers);
  } else if (op == "shard") {
    s.check_keys({"shard", "index"});
    st.count = value_count(1, false);
    st.index = s.integer("index", 0, 0);
    if (st.index >= st.count) s.fail("index must be below the number of shards", "index");
  } else if (op == "ignore_errors" || op == "unbatch") {
    s.check_keys({op});
    if (!v.is_boolean() || !v.get<bool>()) s.fail("expected true, got " + v.dump(), op);
  } else {  // repeat, take, skip
    s.check_keys({op});
    st.count = value_count(-1, false);
  }
  return st;
}

std::vector<std::string> expand_globs(const std::vector<std::string>& patterns, const std::string& where) {
  std::vector<std::string> files;
  for (const std::string& p : patterns) {
    if (p.find_first_of("*?[") == std::string::npos) {
      files.push_back(p);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(p.c_str(), 0, nullptr, &g);
    std::vector<std::string> found(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
    globfree(&g);
    if (found.empty()) throw DataError(p, -1, "no file matches the pattern (" + where + ".files)");
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

data::Dataset open_source(const SourceSpec& src) {
  const std::string& f = src.format;
  if (f == "idx") return data::idx_dataset(src.paths[0], src.paths[1]);
  if (f == "npy") {
    std::vector<data::Dataset> parts;  // x, y and, when given, the sample weights
    for (const std::string& p : src.paths) parts.push_back(data::npy_dataset(p));
    return data::Dataset::zip(parts);
  }
  if (f == "npz") return data::npz_dataset(src.paths[0], src.names);
  if (f == "csv") {
    io::CsvOptions o;
    o.column_dtypes[src.label] = DType::i64;
    io::CsvTable t = io::read_csv(src.paths[0], o);
    std::vector<std::string> feats = src.names;
    if (feats.empty()) {
      for (const std::string& n : t.names) {
        if (n != src.label) feats.push_back(n);
      }
    }
    auto column = [&](const std::string& name) -> const Tensor& {
      auto it = std::find(t.names.begin(), t.names.end(), name);
      if (it == t.names.end()) throw DataError(src.paths[0], 0, "no column \"" + name + "\" in the header");
      return t.columns[static_cast<std::size_t>(it - t.names.begin())];
    };
    Tensor x = Tensor::zeros(Shape{t.rows, static_cast<std::int64_t>(feats.size())}, DType::f32);
    for (std::size_t c = 0; c < feats.size(); ++c) {
      Tensor col = data::cast(column(feats[c]), DType::f32);
      for (std::int64_t r = 0; r < t.rows; ++r) {
        x.data<float>()[r * static_cast<std::int64_t>(feats.size()) + static_cast<std::int64_t>(c)] = col.data<float>()[r];
      }
    }
    return data::Dataset::from_tensor_slices({x, column(src.label)});
  }
  if (f == "tfrecord") {
    const io::Compression c = src.compression == "GZIP"   ? io::Compression::gzip
                              : src.compression == "ZLIB" ? io::Compression::zlib
                                                          : io::Compression::automatic;
    return data::tfrecord_example_dataset(expand_globs(src.paths, src.where), src.features, c);
  }
  data::ImageFolderOptions o;
  o.channels = src.channels;
  data::Dataset images = data::image_folder_dataset(src.paths[0], o).dataset;
  return images;
}

// The map function of a map stage, on one element.
data::Dataset::MapFn map_fn(const StageSpec& st, std::uint64_t fit_seed) {
  const std::uint64_t base = st.seed.value_or(fit_seed);
  auto on = [st](auto f) {
    return [st, f](data::Element e) {
      if (static_cast<std::size_t>(st.component) >= e.size()) {
        throw InvalidArgument(st.where + ": component " + std::to_string(st.component) + " does not exist; elements have " +
                              std::to_string(e.size()));
      }
      e[static_cast<std::size_t>(st.component)] = f(e[static_cast<std::size_t>(st.component)], e);
      return e;
    };
  };
  const std::string& fn = st.fn;
  if (fn == "normalize") {
    return on([st](const Tensor& t, const data::Element&) {
      Tensor x = data::rescale(t, st.scale);
      if (st.mean == std::vector<float>{0.0f} && st.stddev == std::vector<float>{1.0f}) return x;
      return data::normalize(x, st.mean, st.stddev);
    });
  }
  if (fn == "cast") return on([st](const Tensor& t, const data::Element&) { return data::cast(t, st.dtype); });
  if (fn == "convert_image_dtype") {
    return on([st](const Tensor& t, const data::Element&) { return data::convert_image_dtype(t, st.dtype); });
  }
  if (fn == "reshape") {
    return on([st](const Tensor& t, const data::Element&) {
      Shape s(st.shape);
      NNFIT_CHECK(s.numel() == t.numel(), InvalidArgument, st.where, ": cannot reshape ", t.shape().to_string(),
                  " to ", s.to_string());
      return t.reshape(s);
    });
  }
  if (fn == "resize") {
    return on([st](const Tensor& t, const data::Element&) { return data::resize(t, st.height, st.width, st.method); });
  }
  if (fn == "one_hot") return on([st](const Tensor& t, const data::Element&) { return data::one_hot(t, st.depth); });
  // Random maps: seeded per element from (seed, the element's position in the pass), which
  // the pipeline builder supplies as a trailing i64 component (enumerate, then dropped).
  auto element = [base](const data::Element& e) { return data::element_seed(base, static_cast<std::uint64_t>(e.back().data<std::int64_t>()[0])); };
  if (fn == "random_crop") {
    return on([st, element](const Tensor& t, const data::Element& e) { return data::random_crop(t, st.height, st.width, element(e)); });
  }
  if (fn == "random_flip_left_right") {
    return on([element](const Tensor& t, const data::Element& e) { return data::random_flip_left_right(t, element(e)); });
  }
  if (fn == "random_brightness") {
    return on([st, element](const Tensor& t, const data::Element& e) { return data::random_brightness(t, st.upper, element(e)); });
  }
  return on([st, element](const Tensor& t, const data::Element& e) { return data::random_contrast(t, st.lower, st.upper, element(e)); });
}

// What a map stage makes of the element spec.
data::ElementSpec map_spec(const StageSpec& st, data::ElementSpec spec) {
  NNFIT_CHECK(static_cast<std::size_t>(st.component) < spec.size(), InvalidArgument, "component ", st.component,
              " does not exist; elements have ", spec.size(), " component(s)");
  data::ComponentSpec& c = spec[static_cast<std::size_t>(st.component)];
  const std::string& fn = st.fn;
  auto dims = c.shape.dims();
  if (fn == "normalize" || fn == "random_brightness" || fn == "random_contrast") c.dtype = DType::f32;
  if (fn == "cast" || fn == "convert_image_dtype") c.dtype = st.dtype;
  if (fn == "reshape") c.shape = Shape(st.shape);
  if (fn == "resize" || fn == "random_crop") {
    NNFIT_CHECK(dims.size() == 3, InvalidArgument, fn, " needs [height, width, channels] images, got ",
                c.shape.to_string());
    c.shape = Shape{st.height, st.width, dims[2]};
    if (fn == "resize") c.dtype = DType::f32;
  }
  if (fn == "one_hot") {
    dims.push_back(st.depth);
    c.shape = Shape(dims);
    c.dtype = DType::f32;
  }
  return spec;
}

bool is_random(const StageSpec& st) { return st.op == "map" && st.fn.rfind("random_", 0) == 0; }

}  // namespace

std::int64_t PipelineSpec::batch_size(std::int64_t fallback) const {
  for (const StageSpec& st : stages) {
    if (st.op == "batch") return st.count > 0 ? st.count : fallback;
  }
  return fallback;
}

bool PipelineSpec::has_batch() const {
  return std::any_of(stages.begin(), stages.end(), [](const StageSpec& st) { return st.op == "batch"; });
}

PipelineSpec read_pipeline(const Section& s) {
  s.check_keys({"source", "pipeline"});
  PipelineSpec spec;
  spec.source = read_source(s.section("source"));
  if (const json* stages = s.find("pipeline")) {
    if (!stages->is_array()) s.fail("expected a list of transformations, got " + stages->dump(), "pipeline");
    for (std::size_t i = 0; i < stages->size(); ++i) {
      spec.stages.push_back(
          read_stage(Section(s.file(), s.key_path("pipeline") + "[" + std::to_string(i) + "]", (*stages)[i])));
    }
  }
  return spec;
}

data::Dataset build_pipeline(const PipelineSpec& spec, std::int64_t batch_size, std::uint64_t seed,
                             PipelineProbe* probe) {
  return apply_stages(open_source(spec.source), spec, batch_size, seed, probe);
}

data::Dataset build_pipeline_json(const std::string& json_text, const std::string& where,
                                  const std::vector<Tensor>& tensors, std::uint64_t seed) {
  if (const std::int64_t at = json_too_deep_at(json_text); at >= 0) {  // Note [JSON nesting limit]
    throw InvalidArgument(where + ": pipeline JSON nested more than " + std::to_string(kMaxJsonDepth) +
                          " levels deep at byte " + std::to_string(at));
  }
  json obj;
  try {
    obj = json::parse(json_text);
  } catch (const json::exception& e) {
    throw InvalidArgument(where + ": invalid pipeline JSON: " + e.what());
  }
  const Section s(where, "", obj);
  s.check_keys({"source", "pipeline"});
  PipelineSpec spec;
  const Section src = s.section("source");
  if (src.string("format") == "tensors") {
    src.check_keys({"format"});
    NNFIT_CHECK(!tensors.empty(), InvalidArgument, where, ": a \"tensors\" source needs the tensors");
    spec.source.format = "tensors";
  } else {
    NNFIT_CHECK(tensors.empty(), InvalidArgument, where, ": tensors given for a file source");
    spec.source = read_source(src);
  }
  if (const json* stages = s.find("pipeline")) {
    if (!stages->is_array()) s.fail("expected a list of transformations, got " + stages->dump(), "pipeline");
    for (std::size_t i = 0; i < stages->size(); ++i) {
      spec.stages.push_back(read_stage(Section(where, "pipeline[" + std::to_string(i) + "]", (*stages)[i])));
    }
  }
  NNFIT_CHECK(spec.has_batch(), InvalidArgument, where,
              ": the dataset yields single elements, not batches; call .batch(batch_size) before passing it to fit");
  data::Dataset source =
      spec.source.format == "tensors" ? data::Dataset::from_tensor_slices(tensors) : open_source(spec.source);
  return apply_stages(std::move(source), spec, 0, seed, nullptr);
}

data::Dataset apply_stages(data::Dataset ds, const PipelineSpec& spec, std::int64_t batch_size, std::uint64_t seed,
                           PipelineProbe* probe) {
  auto measured = [&](data::Dataset d, std::string name) {
    if (!probe) return d;
    probe->names.push_back(std::move(name));
    probe->stats.push_back(std::make_shared<data::StageStats>());
    return d.measure(probe->stats.back());
  };
  ds = measured(std::move(ds), "source: " + spec.source.format);
  std::vector<StageSpec> stages = spec.stages;
  if (!spec.has_batch()) {
    StageSpec b;
    b.op = "batch";
    b.where = "(batch added after the pipeline)";
    stages.push_back(b);
  }
  for (const StageSpec& st : stages) {
    const std::string& op = st.op;
    std::string name = op;
    try {
      if (op == "map") {
        name = "map(" + st.fn + ")";
        data::MapOptions mo{st.parallel, st.deterministic, name};
        const data::ElementSpec out = map_spec(st, ds.element_spec());
        if (is_random(st)) {
          // enumerate puts the index first; move it last for the map, then drop it.
          data::ElementSpec with_index = ds.element_spec();
          with_index.push_back(data::ComponentSpec{DType::i64, Shape{}});
          ds = ds.enumerate().map(
              [](data::Element e) {
                std::rotate(e.begin(), e.begin() + 1, e.end());
                return e;
              },
              {}, with_index);
          data::Dataset::MapFn f = map_fn(st, seed);
          ds = ds.map(
              [f](data::Element e) {
                e = f(std::move(e));
                e.pop_back();
                return e;
              },
              mo, out);
        } else {
          ds = ds.map(map_fn(st, seed), mo, out);
        }
      } else if (op == "shuffle") {
        ds = ds.shuffle(st.count, data::ShuffleOptions{st.seed.value_or(seed), st.reshuffle});
      } else if (op == "batch") {
        ds = ds.batch(st.count > 0 ? st.count : batch_size, st.drop_remainder);
      } else if (op == "unbatch") {
        ds = ds.unbatch();
      } else if (op == "cache") {
        ds = ds.cache(st.filename);
      } else if (op == "prefetch") {
        ds = ds.prefetch(st.parallel);
        name = st.parallel == data::kAutotune ? "prefetch(AUTOTUNE)" : "prefetch(" + std::to_string(st.parallel) + ")";
      } else if (op == "repeat") {
        ds = ds.repeat(st.count);
      } else if (op == "take") {
        ds = ds.take(st.count);
      } else if (op == "skip") {
        ds = ds.skip(st.count);
      } else if (op == "shard") {
        ds = ds.shard(st.count, st.index);
      } else if (op == "ignore_errors") {
        ds = ds.ignore_errors();
      }
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(st.where + " (" + name + "): " + e.what(), e.hint());
    }
    ds = measured(ds, name);
  }
  return ds;
}

}  // namespace nnfit::config
