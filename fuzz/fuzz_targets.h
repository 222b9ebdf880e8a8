// nnfit's fuzz targets as plain functions, so the libFuzzer binaries (fuzz_main.cpp) and
// the regression replay (tests/fuzz) run the same code on the same bytes. Each target feeds
// the input to one reader of outside input the way nnfit uses it (from memory, or from a
// temp file for readers that take a path) and returns the nnfit::Error's message ("" when
// the input was accepted). Anything else (another exception, a crash, a sanitizer report,
// a hang) is a finding: the targets catch nnfit::Error and nothing else.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nnfit::fuzz {

using TargetFn = std::string (*)(const std::uint8_t* data, std::size_t size);

struct Target {
  const char* name;  // scripts/fuzz.sh TARGET; binary nnfit_<name>_fuzzer
  TargetFn run;
  const char* entry;  // what it calls, for docs/fuzzing.md and reports
};

// Every target, in the order scripts/fuzz.sh all runs them.
const std::vector<Target>& targets();
const Target* find_target(const std::string& name);

// Readers of files (io_targets.cpp).
std::string fuzz_idx(const std::uint8_t* data, std::size_t size);
std::string fuzz_npy(const std::uint8_t* data, std::size_t size);
std::string fuzz_npz(const std::uint8_t* data, std::size_t size);
std::string fuzz_csv(const std::uint8_t* data, std::size_t size);
std::string fuzz_tfrecord(const std::uint8_t* data, std::size_t size);
std::string fuzz_example(const std::uint8_t* data, std::size_t size);
std::string fuzz_image(const std::uint8_t* data, std::size_t size);
// Keras files and JSON configs (config_targets.cpp).
std::string fuzz_keras_file(const std::uint8_t* data, std::size_t size);
std::string fuzz_keras_json(const std::uint8_t* data, std::size_t size);
std::string fuzz_train_config(const std::uint8_t* data, std::size_t size);
// Profiling and logs (profile_targets.cpp).
std::string fuzz_tfevents(const std::uint8_t* data, std::size_t size);
std::string fuzz_profile(const std::uint8_t* data, std::size_t size);
// The files `nnfit doctor --root` reads (doctor_target.cpp).
std::string fuzz_doctor_root(const std::uint8_t* data, std::size_t size);

}  // namespace nnfit::fuzz
