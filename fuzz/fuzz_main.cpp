// The libFuzzer entry of one target: fuzz/CMakeLists.txt builds this file once per target
// with NNFIT_FUZZ_TARGET naming its function (fuzz_targets.h). Any exception that is not
// an nnfit::Error escapes and libFuzzer reports it as a crash, which it is for a user.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)nnfit::fuzz::NNFIT_FUZZ_TARGET(data, size);
  return 0;
}
