// Keras codecs of the preprocessing layers that run inside a model: Rescaling.
#include "model/keras_codecs/codec.h"

#include "nnfit/nn/layers.h"

namespace nnfit::keras_json {
namespace {

// Rescaling's scale and offset: numbers (Keras also takes one per channel: Unsupported).
double number_of(const Reader& r, const std::string& p, const json& c, const char* key, double fallback) {
  const json* v = value(c, key);
  if (!v) return fallback;
  if (!v->is_number()) {
    r.unsupported(p, std::string("\"") + key + "\" = " + show(*v) + " is not supported (only a single number)");
  }
  return v->get<double>();
}

LayerPtr read_rescaling(const Reader& r, const std::string& p, const json& c, const std::string& name, const Shape&) {
  check_keys(r, p, c, kCommon, {"scale", "offset"});
  if (!value(c, "scale")) r.invalid(p, "missing required key \"scale\"");
  return std::make_unique<Rescaling>(name, number_of(r, p, c, "scale", 1.0), number_of(r, p, c, "offset", 0.0));
}

bool write_preprocessing(const Writer&, const Layer& l, ojson& c) {
  if (auto* rs = dynamic_cast<const Rescaling*>(&l)) {
    c.update({{"scale", rs->scale()}, {"offset", rs->offset()}});
    return true;
  }
  return false;
}

}  // namespace

const LayerFamily& preprocessing_layers() {
  static const LayerFamily family{{{"Rescaling", read_rescaling}}, write_preprocessing};
  return family;
}

}  // namespace nnfit::keras_json
