// libFuzzer target: nnfit's readers of Keras model files (.keras zip, legacy .h5 and
// .weights.h5, through load_model and load_weights) on arbitrary bytes. Every input must
// end in a loaded model or an nnfit::Error; a crash, hang or sanitizer report is a bug.
// Built by scripts/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/model/saving.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/nnfit_keras_fuzz_" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    nnfit::LoadOptions options;
    std::unique_ptr<nnfit::Model> m = nnfit::load_model(path, options);
    nnfit::load_weights(*m, path);
  } catch (const nnfit::Error&) {
  }
  return 0;
}
