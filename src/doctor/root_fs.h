// Read-only access to a filesystem tree rooted at a directory: the doctor's probes see
// "/usr/local/cuda" and this class maps it to ROOT/usr/local/cuda, resolving symlinks
// inside the root, so a fake root in a test behaves like a machine.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnfit/doctor/facts.h"

namespace nnfit::doctor {

class RootFs {
 public:
  explicit RootFs(std::string root, std::vector<ProbeProblem>* problems);

  // Host path for an in-root absolute path.
  std::string host(const std::string& path) const;
  bool exists(const std::string& path) const;
  bool is_dir(const std::string& path) const;
  // File text, or nullopt when absent; an existing file that cannot be read is recorded
  // as a problem.
  std::optional<std::string> read(const std::string& path, std::size_t max_bytes = 1 << 20) const;
  // Entry names (not paths), sorted; unreadable directories are recorded as problems.
  std::vector<std::string> list(const std::string& path) const;
  // Lexically normalized in-root path with symlinks resolved inside the root (depth-limited).
  std::string resolve(const std::string& path) const;
  void problem(const std::string& path, const std::string& what) const;
  const std::string& root() const { return root_; }

 private:
  std::string raw(const std::string& path) const;  // no symlink resolution

  std::string root_;
  std::vector<ProbeProblem>* problems_;
};

std::string join_path(const std::string& a, const std::string& b);
std::vector<std::string> split(const std::string& text, char sep);
std::string trim(const std::string& text);
bool starts_with(const std::string& text, const std::string& prefix);
bool ends_with(const std::string& text, const std::string& suffix);
// The value of the first `#define NAME VALUE` line whose VALUE (after an optional '"')
// starts with characters from `chars`: that run of them, or "" when none is found or the
// run is longer than max_chars (no version macro is; such a file is damaged).
std::string define_value(const std::string& text, const std::string& name, std::string_view chars,
                         std::size_t max_chars);

}  // namespace nnfit::doctor
