// What the fuzz targets share: a per-process scratch directory (removed at exit) where
// inputs become files for readers that take a path, the split of one input into several
// files, and stdout muted while a CLI command prints its report.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit::fuzz {

// The scratch directory, created on first use; one per process, so parallel fuzzers
// (-jobs) and test shards never share files.
const std::string& scratch_dir();
// Writes `bytes` to scratch_dir()/name (truncating) and returns the path.
std::string write_file(const std::string& name, std::string_view bytes);
// Empties scratch_dir()/name (a folder), creating it if needed, and returns its path.
std::string fresh_dir(const std::string& name);

// Note [Multi-file inputs]: targets that read several files (a log directory, a doctor
// root) take one input holding them in order, separated by kFileSeparator; missing parts
// mean missing files. Seeds are made by joining real files with it.
constexpr std::string_view kFileSeparator = "\n--nnfit-fuzz-file--\n";
std::vector<std::string_view> split_files(std::string_view input, std::size_t max_parts);

// Redirects stdout to /dev/null for its lifetime (reports the CLI prints cost time and
// bury the fuzzer's own output).
class MutedStdout {
 public:
  MutedStdout();
  ~MutedStdout();
  MutedStdout(const MutedStdout&) = delete;
  MutedStdout& operator=(const MutedStdout&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace nnfit::fuzz
