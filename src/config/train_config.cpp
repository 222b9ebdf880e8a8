// Reads the `nnfit train` config. Every section nnfit defines is checked key by key; the
// embedded Keras objects (model, optimizer, loss) are handed to the Keras readers of
// model/keras_config.h, which check them against what Keras writes.
#include "nnfit/config/train_config.h"

#include "nnfit/config/section.h"
#include "nnfit/backend/device_placement.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/saving.h"

namespace nnfit::config {

namespace {

// fit.memory: {"limit": SIZE (string or integer bytes), "preallocate": FRACTION (number
// or string such as "50%")}.
MemorySettings read_memory(const Section& s) {
  s.check_keys({"limit", "preallocate"});
  MemorySettings m;
  const std::string where = s.file() + ": ";
  if (const json* v = s.find("limit")) {
    if (v->is_number_integer()) {
      if (v->get<std::int64_t>() < 1) s.fail("expected a size of at least 1 byte, got " + v->dump(), "limit");
      m.limit_bytes = v->get<std::int64_t>();
    } else if (v->is_string()) {
      m.limit_bytes = parse_size_bytes(v->get<std::string>(), where + s.key_path("limit"));
    } else {
      s.fail("expected a size such as \"4GiB\" or a number of bytes, got " + v->dump(), "limit");
    }
  }
  if (const json* v = s.find("preallocate")) {
    if (v->is_number()) {
      m.preallocate_fraction = parse_fraction(v->dump(), where + s.key_path("preallocate"));
    } else if (v->is_string()) {
      m.preallocate_fraction = parse_fraction(v->get<std::string>(), where + s.key_path("preallocate"));
    } else {
      s.fail("expected a fraction such as 0.5 or \"50%\", got " + v->dump(), "preallocate");
    }
  }
  return m;
}

DataSpec read_data(const Section& s) {
  DataSpec d;
  if (s.find("source") || s.find("pipeline")) {
    d.pipeline = read_pipeline(s);
  } else {
    s.check_keys({"images", "labels"});
    d.files = DataFiles{resolve(s, "images"), resolve(s, "labels")};
  }
  return d;
}

}  // namespace

TrainConfig read_train_config(const std::string& path) {
  const json root = parse_file(path, "config");
  TrainConfig cfg;
  cfg.path = path;
  const Section top(path, "", root);
  top.check_keys({"model", "data", "compile", "fit"});

  // model: the Keras object itself, the path of a file holding model.to_json(), or the
  // path of a saved model (.keras, .h5), recognized by its first bytes.
  const json& model = top.require("model");
  if (model.is_string()) {
    cfg.model_where = resolve(top, "model");
    const ModelFileKind kind = sniff_model_file(cfg.model_where);
    if (kind == ModelFileKind::keras_zip || kind == ModelFileKind::hdf5) {
      cfg.model_file = cfg.model_where;
    } else {
      cfg.model_json = read_text(cfg.model_where, "model JSON");
    }
  } else {
    cfg.model_where = path;
    cfg.model_json = model.dump();
  }

  const Section data = top.section("data");
  data.check_keys({"train", "validation"});
  cfg.train = read_data(data.section("train"));
  if (data.find("validation")) cfg.validation = read_data(data.section("validation"));

  if (top.find("compile") || cfg.model_file.empty()) {
    const Section compile = top.section("compile");
    compile.check_keys({"optimizer", "loss", "metrics", "weighted_metrics", "loss_weights", "dtype_policy"});
    CompileOptions co;
    if (const json* p = compile.find("dtype_policy")) {
      if (!p->is_string()) compile.fail("expected a Keras dtype policy name such as \"mixed_bfloat16\", got " + p->dump(), "dtype_policy");
      try {
        co.dtype_policy = DTypePolicy::from_name(p->get<std::string>());
      } catch (const Error& e) {
        compile.fail(e.what(), "dtype_policy");
      }
    }
    // Keras's compile() defaults to RMSprop.
    const json* optimizer = compile.find("optimizer");
    co.optimizer = optimizer_from_keras_json(optimizer ? optimizer->dump() : "\"rmsprop\"",
                                             path + ": " + compile.key_path("optimizer"));
    const json& loss = compile.require("loss");
    if (loss.is_array()) {  // one per output, in output order
      for (const json& l : loss) co.losses.push_back(loss_from_keras_json(l.dump(), path + ": " + compile.key_path("loss")));
      if (co.losses.empty()) compile.fail("expected at least one loss", "loss");
      co.loss = co.losses[0];
    } else {
      co.loss = loss_from_keras_json(loss.dump(), path + ": " + compile.key_path("loss"));
    }
    if (const json* weights = compile.find("loss_weights")) {
      if (!weights->is_array()) compile.fail("expected a list of numbers, one per output, got " + weights->dump(), "loss_weights");
      for (const json& w : *weights) {
        if (!w.is_number()) compile.fail("expected a number, got " + w.dump(), "loss_weights");
        co.loss_weights.push_back(w.get<double>());
      }
    }
    for (const char* key : {"metrics", "weighted_metrics"}) {
      const json* metrics = compile.find(key);
      if (!metrics) continue;
      if (!metrics->is_array()) {
        compile.fail("expected a list of metric names or Keras metric objects (or one such list per output), got " +
                         metrics->dump(),
                     key);
      }
      const bool weighted = key == std::string("weighted_metrics");
      // A list of metrics for every output, or (Keras's per-output form) a list of lists.
      const auto read_list = [&](const json& list, const std::string& at, std::vector<MetricSpec>& out) {
        for (std::size_t i = 0; i < list.size(); ++i) {
          const json& m = list[i];
          if (!m.is_string() && !m.is_object()) {
            compile.fail("expected a metric name or object, got " + m.dump() + " at " + at + "[" + std::to_string(i) + "]",
                         key);
          }
          out.push_back(metric_from_keras_json(m.dump(), path + ": " + at + "[" + std::to_string(i) + "]"));
        }
      };
      if (!metrics->empty() && (*metrics)[0].is_array()) {
        auto& per = weighted ? co.output_weighted_metrics : co.output_metrics;
        for (std::size_t o = 0; o < metrics->size(); ++o) {
          if (!(*metrics)[o].is_array()) compile.fail("expected one list per output, got " + (*metrics)[o].dump(), key);
          per.emplace_back();
          read_list((*metrics)[o], compile.key_path(key) + "[" + std::to_string(o) + "]", per.back());
        }
      } else {
        read_list(*metrics, compile.key_path(key), weighted ? co.weighted_metrics : co.metrics);
      }
    }
    cfg.compile = std::move(co);
  }

  if (top.find("fit")) {
    const Section fit = top.section("fit");
    fit.check_keys({"epochs", "steps_per_epoch", "batch_size", "shuffle", "seed", "memory", "on_oom", "callbacks",
                    "class_weight", "deterministic", "device", "validation_freq", "validation_steps",
                    "validation_batch_size"});
    if (const json* vf = fit.given("validation_freq"); vf && vf->is_array()) {
      // Keras's list form: the epochs (from 1) after which to validate.
      for (const json& e : *vf) {
        if (!e.is_number_integer() || e.get<std::int64_t>() < 1) {
          fit.fail("expected epoch numbers >= 1 (Keras counts epochs from 1), got " + e.dump(), "validation_freq");
        }
        cfg.validation_epochs.push_back(e.get<std::int64_t>());
      }
      if (cfg.validation_epochs.empty()) {
        fit.fail("an empty list never validates; drop data.validation instead", "validation_freq");
      }
    } else {
      cfg.validation_freq = fit.integer("validation_freq", 1, 1);
    }
    cfg.validation_steps = fit.integer("validation_steps", 0, 1);
    cfg.validation_batch_size = fit.integer("validation_batch_size", 0, 1);
    if (const json* cw = fit.find("class_weight")) {
      // Keras's dict of class id -> weight; JSON keys are strings ("0").
      if (!cw->is_object()) fit.fail("expected an object of class id -> weight, got " + cw->dump(), "class_weight");
      for (const auto& [key, w] : cw->items()) {
        std::size_t used = 0;
        long long cls = -1;
        try {
          cls = std::stoll(key, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != key.size() || cls < 0) {
          fit.fail("\"" + key + "\" is not a class id (a non-negative integer)", "class_weight");
        }
        if (!w.is_number() || w.get<double>() < 0) {
          fit.fail("class " + key + "'s weight must be a non-negative number, got " + w.dump(), "class_weight");
        }
        cfg.class_weight[cls] = w.get<double>();
      }
    }
    if (const json* cbs = fit.find("callbacks")) {
      if (!cbs->is_array()) fit.fail("expected a list of Keras callbacks ({\"class_name\", \"config\"}), got " + cbs->dump(), "callbacks");
      cfg.callbacks_json = cbs->dump();
    }
    cfg.epochs = fit.integer("epochs", cfg.epochs, 1);
    cfg.steps_per_epoch = fit.integer("steps_per_epoch", cfg.steps_per_epoch, 1);
    cfg.batch_size = fit.integer("batch_size", cfg.batch_size, 1);
    cfg.shuffle = fit.boolean("shuffle", cfg.shuffle);
    cfg.deterministic = fit.boolean("deterministic", cfg.deterministic);
    cfg.seed = static_cast<std::uint64_t>(fit.integer("seed", 0, 0));
    if (fit.find("memory")) cfg.memory = read_memory(fit.section("memory"));
    cfg.device = fit.string_or("device", "");
    if (fit.find("device") && cfg.device.empty()) {
      fit.fail("is empty; give \"cpu\", \"cuda:N\" or \"auto\", or leave the key out", "device");
    }
    parse_device_request(cfg.device, path + ": " + fit.key_path("device"));  // a typo fails before any data is read
    cfg.on_oom = fit.string_or("on_oom", "fail");
    if (cfg.on_oom != "fail" && cfg.on_oom != "reduce_batch") {
      fit.fail("expected \"fail\" or \"reduce_batch\", got \"" + cfg.on_oom + "\"", "on_oom");
    }
  }
  return cfg;
}

}  // namespace nnfit::config
