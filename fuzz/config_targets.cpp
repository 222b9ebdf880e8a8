// Fuzz targets for Keras model files and the JSON configs: the Keras model config
// (Sequential and Functional, as `nnfit train` builds a config's "model"), and the
// `nnfit train` config with its pipeline section, read as the CLI reads it.
#include <memory>
#include <string_view>

#include "fuzz_input.h"
#include "fuzz_targets.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/saving.h"
#include "nnfit/config/train_config.h"

namespace nnfit::fuzz {

// load_model, then load_weights into the model it gave: a .keras zip, a legacy .h5, or a
// .weights.h5 (findings: tests/model/fixtures/fuzz_regressions/keras_file).
std::string fuzz_keras_file(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string path = write_file("input.keras", {reinterpret_cast<const char*>(data), size});
    std::unique_ptr<Model> m = load_model(path, LoadOptions{});
    load_weights(*m, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string fuzz_keras_json(const std::uint8_t* data, std::size_t size) {
  try {
    (void)model_from_keras_json(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// read_train_config (every section, the pipelines included), then what `nnfit train`
// builds from it before touching data: the model and the callbacks.
std::string fuzz_train_config(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string path = write_file("config.json", {reinterpret_cast<const char*>(data), size});
    const config::TrainConfig cfg = config::read_train_config(path);
    if (!cfg.model_json.empty()) (void)model_from_keras_json(cfg.model_json, cfg.model_where);
    if (!cfg.callbacks_json.empty()) (void)callbacks_from_keras_json(cfg.callbacks_json, path + ": fit.callbacks");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nnfit::fuzz
