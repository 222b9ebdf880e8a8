// Replays every stored fuzzing input: tests/fuzz/regressions/<target>/ holds the findings
// of scripts/fuzz.sh <target> (each kept after its fix) and hand-made hostile inputs, and
// each is fed to the same function the libFuzzer binary runs (fuzz_targets.h). An input
// must end in success or one nnfit::Error; a crash, a sanitizer report (this binary runs
// under ASan + UBSan in scripts/test.sh) or another exception fails. A file FILE.error
// beside an input holds text its error message must contain.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>

#include "fuzz_targets.h"

namespace nnfit::fuzz {
namespace {

namespace fs = std::filesystem;
const fs::path kRegressions = fs::path(NNFIT_SOURCE_DIR) / "tests/fuzz/regressions";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class FuzzRegressions : public ::testing::TestWithParam<Target> {};

}  // namespace
// gtest prints a failing parameter with this.
void PrintTo(const Target& target, std::ostream* os) { *os << target.name; }
namespace {

TEST_P(FuzzRegressions, EveryStoredInputEndsInSuccessOrAClearError) {
  const Target& target = GetParam();
  const fs::path dir = kRegressions / target.name;
  ASSERT_TRUE(fs::is_directory(dir)) << "every target keeps its findings in " << dir;
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path input = entry.path();
    if (input.extension() == ".error") continue;
    const std::string bytes = slurp(input);
    std::string error;
    try {
      error = target.run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << input << ": escaped as " << typeid(e).name() << ": " << e.what();
      continue;
    }
    fs::path expected = input;
    expected += ".error";
    if (fs::exists(expected)) {
      const std::string want = slurp(expected);
      EXPECT_NE(error.find(want), std::string::npos) << input << ": expected an error containing \"" << want
                                                     << "\", got \"" << error << "\"";
    }
    ++replayed;
  }
  EXPECT_GT(replayed, 0) << dir << " has no inputs";
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressions, ::testing::ValuesIn(targets()),
                         [](const ::testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nnfit::fuzz
