// The table of fuzz targets (fuzz_targets.h): scripts/fuzz.sh, the replay test and
// docs/fuzzing.md all follow it.
#include "fuzz_targets.h"

namespace nnfit::fuzz {

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"idx", fuzz_idx, "io::read_idx (raw and gzip)"},
      {"npy", fuzz_npy, "io::read_npy"},
      {"npz", fuzz_npz, "io::read_npz"},
      {"csv", fuzz_csv, "io::infer_csv_schema, then io::read_csv with its types"},
      {"tfrecord", fuzz_tfrecord, "io::TfRecordReader (sniffed raw/GZIP, then ZLIB) + io::parse_example per record"},
      {"example", fuzz_example, "io::parse_example, then a serialize/parse round trip"},
      {"image", fuzz_image, "io::decode_image (JPEG, PNG; as stored and as RGB)"},
      {"keras_json", fuzz_keras_json, "model_from_keras_json (Sequential and Functional)"},
      {"train_config", fuzz_train_config,
       "config::read_train_config (pipelines included), then model_from_keras_json and callbacks_from_keras_json"},
      {"tfevents", fuzz_tfevents, "profile::read_event_file"},
      {"profile", fuzz_profile, "`nnfit profile LOGDIR --html` on steps.jsonl, ops.json, pipeline.json, train/ events"},
      {"doctor_root", fuzz_doctor_root, "doctor::probe on a fake --root, then run_rules, format_text, format_json"},
      {"keras_file", fuzz_keras_file, "load_model + load_weights (.keras, .h5, .weights.h5)"},
  };
  return all;
}

const Target* find_target(const std::string& name) {
  for (const Target& t : targets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace nnfit::fuzz
