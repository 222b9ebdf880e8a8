// load_model / save_model / save_weights / load_weights: the containers (.keras zip,
// legacy .h5, .weights.h5) and the compile configs around the variable layouts of
// keras_weights.cpp. A compile config brings the optimizer (with its state), the losses
// per output, loss weights and metrics, in Keras 3's compile_config form or the legacy
// training_config form.
#include "nnfit/model/saving.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/keras/keras_json.h"
#include "model/keras/keras_weights.h"
#include "nnfit/core/error.h"
#include "nnfit/io/atomic_file.h"
#include "nnfit/io/hdf5_file.h"
#include "nnfit/io/regular_file.h"
#include "nnfit/io/zip_archive.h"
#include "nnfit/model/keras_config.h"

namespace nnfit {

namespace {

using ojson = nlohmann::ordered_json;
using keras_json::json;

constexpr const char* kKerasVersion = "3.15.1";  // the Keras generation whose layout nnfit writes
// The most config.json nnfit inflates (Note [Zip member sizes]): a Keras config is about
// 1 KiB per layer, so this is tens of thousands of layers; a larger one is refused unread.
constexpr std::uint64_t kMaxConfigJsonBytes = 64ull << 20;

// Note [Weights bounded by their superblock]. model.weights.h5 may be any size (a model's
// weights), so no cap fits it, and a deflated member passes deflate's ratio check at 1 GiB
// from 1 MiB of spaces (the hostile sweep's bomb inflated to a 3 GB peak and loaded). The
// HDF5 file inside says where it ends, though (its superblock's end-of-file address), and
// HDF5 never reads past that: a member declaring more than that end plus 1 MiB holds bytes
// nothing reads, and is refused from its first 64 KiB, before the rest is inflated. A
// member shorter than its end is truncated, which opening it reports. A superblock can lie
// about its end too, so a compressed member is also held to a ratio weights can have:
// float weights deflate to about 90% of their size and zeros (unused optimizer slots) to
// 1/1000, so past 64 MiB a member may declare at most 64 times its compressed bytes (Keras
// and nnfit write it Stored, 1:1). A file under 10 MB then inflates to under 640 MB.
std::string read_weights_member(const io::ZipReader& zip, const std::string& path) {
  const std::string name = "model.weights.h5";
  const std::uint64_t declared = zip.size(name);
  const std::optional<std::uint64_t> end = io::hdf5_end_of_file(zip.read_prefix(name, 1 << 16));
  if (!end) throw DataError(path + ": " + name, 0, "not an HDF5 file (no HDF5 superblock in its first 64 KiB)");
  if (declared > *end + (1u << 20)) {
    throw DataError(path, -1,
                    name + " declares " + std::to_string(declared) + " bytes, but the HDF5 file in it ends at byte " +
                        std::to_string(*end) + " (its superblock's end-of-file address)",
                    "the archive is damaged or crafted (a zip bomb); nnfit does not inflate it");
  }
  for (const io::ZipMember& m : zip.members()) {
    if (m.name == name && declared > (64u << 20) && declared > 64 * m.compressed_size) {
      throw DataError(path, -1,
                      name + " declares " + std::to_string(declared) + " bytes from " +
                          std::to_string(m.compressed_size) + " compressed, more than 64:1, which weights do not reach",
                      "the archive is damaged or crafted (a zip bomb); nnfit does not inflate it (save the model "
                      "again: Keras stores the weights uncompressed)");
    }
  }
  return zip.read(name);
}

// ---- compile configs -------------------------------------------------------------

ojson losses_json(const Model& m) {
  const CompileOptions& c = m.compile_options();
  if (c.losses.empty()) return ojson::parse(loss_to_keras_json(c.loss));
  ojson out = ojson::array();
  for (const Loss& l : c.losses) out.push_back(ojson::parse(loss_to_keras_json(l)));
  return out;
}

// Keras's metrics or weighted_metrics entry: null, a list, or one list per output.
ojson metrics_json(const Model& m, bool weighted) {
  const CompileOptions& c = m.compile_options();
  const auto list = [](const std::vector<MetricSpec>& metrics) {
    ojson one = ojson::array();
    for (const MetricSpec& s : metrics) one.push_back(ojson::parse(metric_to_keras_json(s)));
    return one;
  };
  const auto& shared = weighted ? c.weighted_metrics : c.metrics;
  const auto& per = weighted ? c.output_weighted_metrics : c.output_metrics;
  if (shared.empty() && per.empty()) return nullptr;
  if (m.num_outputs() == 1 && per.empty()) return list(shared);
  ojson out = ojson::array();
  for (std::size_t i = 0; i < m.num_outputs(); ++i) out.push_back(list(c.metrics_for(i, weighted)));
  return out;
}

ojson loss_weights_json(const Model& m) {
  const CompileOptions& c = m.compile_options();
  return c.loss_weights.empty() ? ojson(nullptr) : ojson(c.loss_weights);
}

// Keras 3's compile_config (config.json).
ojson compile_config(const Model& m) {
  return {{"optimizer", ojson::parse(optimizer_to_keras_json(m.compile_options().optimizer))},
          {"loss", losses_json(m)},
          {"loss_weights", loss_weights_json(m)},
          {"metrics", metrics_json(m, false)},
          {"weighted_metrics", metrics_json(m, true)},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", false}};
}

// The legacy .h5's training_config. tf.keras builds its legacy optimizers from an .h5 and
// Keras 3 its current ones; each refuses keys only the other knows, so the optimizer
// config keeps the keys both take (a weight_decay that is set stays: tf.keras 2.11+ reads it).
ojson training_config(const Model& m) {
  ojson optimizer = ojson::parse(optimizer_to_keras_json(m.compile_options().optimizer));
  for (const char* key : {"use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
                          "gradient_accumulation_steps"}) {
    optimizer["config"].erase(key);
  }
  if (optimizer["config"]["weight_decay"].is_null()) optimizer["config"].erase("weight_decay");
  return {{"loss", losses_json(m)},
          {"metrics", metrics_json(m, false)},
          {"weighted_metrics", metrics_json(m, true)},
          {"loss_weights", loss_weights_json(m)},
          {"optimizer_config", optimizer}};
}

// A metric entry: a name, or a Keras metric object (its config's name, else its class).
void collect_metrics(const keras_json::Reader& r, const std::string& path, const json& v, std::vector<MetricSpec>& out) {
  if (v.is_null()) return;
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) collect_metrics(r, path + "[" + std::to_string(i) + "]", v[i], out);
  } else if (v.is_string() || (v.is_object() && keras_json::find(v, "class_name"))) {
    out.push_back(metric_from_keras_json(v.dump(), r.prefix(path).substr(0, r.prefix(path).size() - 2)));
  } else {
    r.unsupported(path, "metrics given as " + keras_json::show(v) + " are not supported");
  }
}

// Per-output values given as a single value, a list in output order or a dict by output name.
std::vector<json> per_output(const keras_json::Reader& r, const std::string& path, const json& v, const Model& m,
                             bool single_is_shared) {
  const std::vector<std::string> names = m.output_names();
  if (v.is_object() && !keras_json::find(v, "class_name")) {
    std::vector<json> out;
    for (const std::string& n : names) {
      if (!keras_json::find(v, n.c_str())) r.invalid(path, "has no entry for output \"" + n + "\"");
      out.push_back(v[n]);
    }
    return out;
  }
  if (v.is_array() && !single_is_shared) {
    if (v.size() != names.size()) {
      r.invalid(path, "has " + std::to_string(v.size()) + " entries for " + std::to_string(names.size()) + " outputs");
    }
    return std::vector<json>(v.begin(), v.end());
  }
  return std::vector<json>(names.size(), v);
}

// Keras's metrics or weighted_metrics of a compile config: one list for every output (nnfit
// applies the same metrics to each), or the same list per output.
void read_metrics(const keras_json::Reader& r, const std::string& key, const json& mt, const Model& m,
                  std::vector<MetricSpec>& shared, std::vector<std::vector<MetricSpec>>& per_output_lists) {
  // Keras's per-output forms: a dict by output name, or a list with one entry per output (a
  // metric, a list of them, or null); nested lists say so at any length.
  const bool nested = mt.is_array() && !mt.empty() && mt[0].is_array();
  const bool one_per_output = mt.is_array() && mt.size() == m.num_outputs();
  const bool by_name = mt.is_object() && !keras_json::find(mt, "class_name");
  if (m.num_outputs() > 1 && (nested || one_per_output || by_name)) {
    std::vector<std::vector<MetricSpec>> per;
    const std::vector<std::string> names = m.output_names();
    if (by_name) {  // Keras's dict: an output it does not name has no metrics
      for (const auto& [k, v] : mt.items()) {
        if (std::find(names.begin(), names.end(), k) == names.end()) {
          r.invalid(key, "names \"" + k + "\", which is not an output of the model");
        }
      }
      for (const std::string& n : names) {
        per.emplace_back();
        if (const json* v = keras_json::find(mt, n.c_str())) collect_metrics(r, key + "." + n, *v, per.back());
      }
    } else {
      for (const json& v : per_output(r, key, mt, m, false)) {
        per.emplace_back();
        collect_metrics(r, key, v, per.back());
      }
    }
    // The same list for every output (what nnfit and Keras's flat list write) is the shared form.
    if (std::all_of(per.begin(), per.end(), [&](const auto& p) { return p == per[0]; })) {
      shared = per.empty() ? std::vector<MetricSpec>{} : per[0];
    } else {
      per_output_lists = std::move(per);
    }
  } else {
    collect_metrics(r, key, mt, shared);
  }
}

CompileOptions read_compile(const json& cfg, const Model& m, const std::string& where, const char* optimizer_key) {
  const keras_json::Reader r{where};
  keras_json::expect_object(r, "", cfg);
  CompileOptions co;
  const json* o = optimizer_key ? keras_json::value(cfg, optimizer_key) : nullptr;
  if (o) co.optimizer = optimizer_from_keras_json(o->dump(), where + ": " + optimizer_key);
  const json* loss = keras_json::value(cfg, "loss");
  if (!loss) r.invalid("loss", "the compile config has no loss", "compile the model in the nnfit config instead");
  const bool listed = loss->is_array() || (loss->is_object() && !keras_json::find(*loss, "class_name"));
  const std::vector<json> losses = per_output(r, "loss", *loss, m, !listed);
  for (std::size_t i = 0; i < losses.size(); ++i) {
    co.losses.push_back(loss_from_keras_json(losses[i].dump(), where + ": loss"));
  }
  if (co.losses.size() == 1) {
    co.loss = co.losses[0];
    co.losses.clear();
  } else {
    co.loss = co.losses[0];
  }
  if (const json* w = keras_json::value(cfg, "loss_weights")) {
    for (const json& v : per_output(r, "loss_weights", *w, m, !w->is_array() && !w->is_object())) {
      if (!v.is_number()) r.invalid("loss_weights", "expected numbers, got " + keras_json::show(*w));
      co.loss_weights.push_back(v.get<double>());
    }
    if (m.num_outputs() == 1) co.loss_weights.clear();  // Keras ignores a single output's weight
  }
  for (const char* key : {"metrics", "weighted_metrics"}) {
    if (const json* mt = keras_json::value(cfg, key)) {
      const bool weighted = key == std::string("weighted_metrics");
      read_metrics(r, key, *mt, m, weighted ? co.weighted_metrics : co.metrics,
                   weighted ? co.output_weighted_metrics : co.output_metrics);
    }
  }
  return co;
}

// ---- containers --------------------------------------------------------------------

std::string date_saved() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d@%H:%M:%S", &tm);
  return buf;
}

void save_keras_zip(const Model& m, const std::string& path) {
  ojson config = ojson::parse(model_to_keras_json(m));
  config["compile_config"] = m.compiled() ? compile_config(m) : ojson(nullptr);
  const ojson metadata = {{"keras_version", kKerasVersion}, {"date_saved", date_saved()}, {"writer", "nnfit " NNFIT_MODEL_VERSION}};
  io::H5File weights = io::H5File::create_in_memory(path + ": model.weights.h5");
  keras_files::write_keras3_weights(weights, m);
  io::write_zip(path, {{"metadata.json", metadata.dump()}, {"config.json", config.dump()},
                       {"model.weights.h5", weights.image()}});
}

void save_legacy_h5(const Model& m, const std::string& path) {
  io::write_file_atomically(path, [&](const std::string& tmp) {
    io::H5File f = io::H5File::create(tmp);
    f.set_string_attr("/", "keras_version", "2.15.0");
    f.set_string_attr("/", "backend", "tensorflow");
    f.set_string_attr("/", "model_config", model_to_keras_json(m, KerasFormat::keras2));
    if (m.compiled()) f.set_string_attr("/", "training_config", training_config(m).dump());
    keras_files::write_legacy_weights(f, "model_weights", m);
    keras_files::write_legacy_optimizer(f, m);
    f.close();
  });
}

// A model loaded from a file takes every variable from it, so its layers may not ask for
// more values than the file's datasets hold (twice that, and 1M more, for nnfit's own
// bookkeeping): a config with 10^6 units where the file holds a (784, 128) kernel is
// refused before gigabytes are allocated (Note [Weights larger than the machine]).
void limit_weights_to(Model& m, const io::H5File& file) {
  const std::uint64_t values = file.dataset_values();
  m.limit_weight_elements(values > (std::uint64_t{1} << 61) ? 0 : 2 * values + (std::uint64_t{1} << 20),
                          file.name() + " (whose datasets hold " + std::to_string(values) + " values)");
}

void compile_or_build(Model& m, const json* cfg, const std::string& where, const char* optimizer_key,
                      const LoadOptions& options) {
  if (options.compile && cfg && cfg->is_object() && !cfg->empty()) {
    m.compile(read_compile(*cfg, m, where, options.optimizer ? optimizer_key : nullptr));
  } else {
    m.build();
  }
}

std::unique_ptr<Model> load_keras_zip(const std::string& path, const LoadOptions& options) {
  io::ZipReader zip(path);
  if (!zip.has("config.json")) {
    throw DataError(path, -1, "no config.json in the archive; not a Keras .keras file");
  }
  if (zip.has("model.weights.npz")) {
    throw Unsupported(path + ": the weights are stored as model.weights.npz; nnfit reads model.weights.h5",
                      "save the model from Keras with the default weights format");
  }
  if (!zip.has("model.weights.h5")) throw DataError(path, -1, "no model.weights.h5 in the archive");
  const std::string config = zip.read("config.json", kMaxConfigJsonBytes);
  std::unique_ptr<Model> m = model_from_keras_json(config, path + ": config.json");
  if (options.configure) options.configure(*m);
  const json root = json::parse(config);
  // The weights file is checked (Note [HDF5 files stay inside themselves]) and bounds the
  // layers before any weight is allocated.
  const io::H5File weights = io::H5File::open_image(read_weights_member(zip, path), path + ": model.weights.h5");
  limit_weights_to(*m, weights);
  compile_or_build(*m, keras_json::value(root, "compile_config"), path + ": config.json: compile_config", "optimizer",
                   options);
  keras_files::read_keras3_weights(weights, *m, path + ": model.weights.h5", options.optimizer);
  return m;
}

std::unique_ptr<Model> load_legacy_h5(const std::string& path, const LoadOptions& options) {
  const io::H5File f = io::H5File::open(path);
  const std::optional<std::string> config = f.string_attr("/", "model_config");
  if (!config) {
    if (f.is_group("layers") || f.string_list_attr("/", "layer_names")) {
      throw DataError(path, -1, "holds weights only, no model config",
                      "build the model (its JSON config) and load these weights into it (load_weights)");
    }
    throw DataError(path, -1, "an HDF5 file without a model_config attribute; not a Keras model file");
  }
  std::unique_ptr<Model> m =
      model_from_keras_json(*config, path + ": model_config", f.string_attr("/", "keras_version").value_or(""));
  if (options.configure) options.configure(*m);
  std::optional<json> tc;
  if (const auto t = f.string_attr("/", "training_config")) {
    try {
      tc = json::parse(*t);
    } catch (const json::exception& e) {
      throw DataError(path, -1, std::string("training_config is not valid JSON: ") + e.what());
    }
  }
  limit_weights_to(*m, f);
  compile_or_build(*m, tc ? &*tc : nullptr, path + ": training_config", "optimizer_config", options);
  if (!f.is_group("model_weights")) throw DataError(path, -1, "no model_weights group; not a Keras model file");
  keras_files::read_legacy_weights(f, "model_weights", *m, path);
  if (options.optimizer) keras_files::read_legacy_optimizer(f, *m, path);
  return m;
}

}  // namespace

ModelFileKind sniff_model_file(const std::string& path) {
  const io::FileKind kind = io::file_kind(path);
  if (kind == io::FileKind::directory) return ModelFileKind::directory;
  if (kind == io::FileKind::missing) return ModelFileKind::missing;
  if (kind != io::FileKind::regular) return ModelFileKind::special;
  std::ifstream f(path, std::ios::binary);
  if (!f) return ModelFileKind::missing;
  char head[8] = {};
  f.read(head, sizeof head);
  const std::streamsize n = f.gcount();
  if (n >= 4 && std::string(head, 4) == std::string("PK\x03\x04", 4)) return ModelFileKind::keras_zip;
  if (n >= 8 && std::string(head, 8) == std::string("\x89HDF\r\n\x1a\n", 8)) return ModelFileKind::hdf5;
  for (std::streamsize i = 0; i < n; ++i) {
    if (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t') continue;
    return head[i] == '{' ? ModelFileKind::json : ModelFileKind::unknown;
  }
  return ModelFileKind::unknown;
}

// Note [Load errors name the file]. A layer's build, an initializer or a memory check deep
// in a model names the layer and the key ("layer 'dense' (Dense): a weight of shape
// (2147483647, 3) needs 24572 MiB, ...") but not the file the model came from; the hostile
// sweep counted such lines as unclear. An error from loading a file that does not name it
// gets "<path>: " in front, keeping its type, hint and allocator figures.
template <typename Load>
std::unique_ptr<Model> naming_the_file(const std::string& path, Load&& load) {
  const auto names = [&](const Error& e) { return std::string(e.what()).find(path) != std::string::npos; };
  try {
    return load();
  } catch (const DataError& e) {
    if (names(e)) throw;
    throw DataError(path, -1, e.what(), e.hint());
  } catch (const OutOfMemory& e) {
    if (names(e)) throw;
    throw OutOfMemory(path + ": " + e.what(), e.hint(), e.shared_details());
  } catch (const InvalidArgument& e) {
    if (names(e)) throw;
    throw InvalidArgument(path + ": " + e.what(), e.hint());
  } catch (const Unsupported& e) {
    if (names(e)) throw;
    throw Unsupported(path + ": " + e.what(), e.hint());
  } catch (const BackendError& e) {
    if (names(e)) throw;
    throw BackendError(path + ": " + e.what(), e.hint());
  }
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& options) {
  switch (sniff_model_file(path)) {
    case ModelFileKind::keras_zip: return naming_the_file(path, [&] { return load_keras_zip(path, options); });
    case ModelFileKind::hdf5: return naming_the_file(path, [&] { return load_legacy_h5(path, options); });
    case ModelFileKind::directory:
      throw DataError(path, -1, "is a directory", "give a .keras or .h5 file (a TensorFlow SavedModel folder is not supported)");
    case ModelFileKind::missing: throw DataError(path, -1, "no such file");
    case ModelFileKind::special: io::require_regular_file(path, "a model file"); break;
    case ModelFileKind::json:
      throw DataError(path, 0, "is a JSON file, not a saved model", "a model's JSON config goes in the nnfit config's \"model\"");
    case ModelFileKind::unknown: break;
  }
  throw DataError(path, 0, "neither a .keras (zip) nor an .h5 (HDF5) file", "give a model saved by Keras or nnfit");
}

void save_model(const Model& model, const std::string& path) {
  NNFIT_CHECK(model.built(), InvalidArgument, "model '", model.name(), "' is not built; compile it before saving");
  if (path.ends_with(".weights.h5")) return save_weights(model, path);
  if (path.ends_with(".keras")) return save_keras_zip(model, path);
  if (path.ends_with(".h5") || path.ends_with(".hdf5")) return save_legacy_h5(model, path);
  throw InvalidArgument("cannot tell the format of \"" + path + "\" from its extension",
                        "use .keras (Keras 3), .h5 (legacy HDF5) or .weights.h5 (weights only)");
}

void save_weights(const Model& model, const std::string& path) {
  NNFIT_CHECK(model.built(), InvalidArgument, "model '", model.name(), "' is not built; compile it before saving");
  NNFIT_CHECK(path.ends_with(".h5"), InvalidArgument, "weights files end in .weights.h5 (or .h5 for the legacy ",
              "layout), got \"", path, "\"");
  io::write_file_atomically(path, [&](const std::string& tmp) {
    io::H5File f = io::H5File::create(tmp);
    if (path.ends_with(".weights.h5")) {
      keras_files::write_keras3_weights(f, model);
    } else {
      keras_files::write_legacy_weights(f, "", model);
    }
    f.close();
  });
}

void load_weights(Model& model, const std::string& path) {
  model.build();
  const ModelFileKind kind = sniff_model_file(path);
  if (kind == ModelFileKind::keras_zip) {
    io::ZipReader zip(path);
    const io::H5File w = io::H5File::open_image(read_weights_member(zip, path), path + ": model.weights.h5");
    keras_files::read_keras3_weights(w, model, path + ": model.weights.h5", true);
    return;
  }
  if (kind != ModelFileKind::hdf5) return (void)load_model(path);  // names what the file is
  const io::H5File f = io::H5File::open(path);
  if (f.is_group("layers")) {
    keras_files::read_keras3_weights(f, model, path, true);
  } else if (f.is_group("model_weights")) {
    keras_files::read_legacy_weights(f, "model_weights", model, path);
    keras_files::read_legacy_optimizer(f, model, path);
  } else {
    keras_files::read_legacy_weights(f, "", model, path);
  }
}

}  // namespace nnfit
