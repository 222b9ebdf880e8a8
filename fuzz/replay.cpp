// nnfit_fuzz_replay TARGET FILE...: runs fuzz target TARGET (fuzz_targets.h) on each file and
// prints what it said: "ok" or the nnfit::Error's message. For triage of a finding and for
// writing the .error file that pins its message (tests/fuzz/regressions).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_targets.h"

int main(int argc, char** argv) {
  const nnfit::fuzz::Target* target = argc > 1 ? nnfit::fuzz::find_target(argv[1]) : nullptr;
  if (target == nullptr) {
    std::fprintf(stderr, "usage: nnfit_fuzz_replay TARGET FILE...   TARGET:");
    for (const auto& t : nnfit::fuzz::targets()) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    const std::string error = target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    std::printf("%s: %s\n", argv[i], error.empty() ? "ok" : error.c_str());
  }
  return 0;
}
