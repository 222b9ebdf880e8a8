// Patterns over text the doctor reads from disk: POSIX extended regular expressions run by
// the C library's regexec, not std::regex. libstdc++'s std::regex executor recurses once per
// character a repeat matches, so one long line in a damaged version file or METADATA
// overflowed the stack (the doctor_root fuzz target found it in dpkg's status file and again
// in a probe's bracket repeat). glibc's matcher keeps its state on the heap and needs no
// stack in proportion to the text. Patterns are ERE: [0-9] and [[:space:]] for \d and \s, no
// lazy repeats, leftmost-longest.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit::doctor {

// Decimal digits a pattern matched as an int; a value past INT_MAX (a damaged file's
// 40-digit "version") is INT_MAX instead of std::stoi's exception.
int matched_int(std::string_view digits);

// One match: group 0 is the whole match; a group that took no part is "" and !matched(i).
class PatternMatch {
 public:
  const std::string& operator[](std::size_t i) const { return groups_.at(i); }
  bool matched(std::size_t i) const { return i < taken_.size() && taken_[i]; }
  std::size_t begin() const { return begin_; }  // offsets of group 0 in the searched text
  std::size_t end() const { return end_; }

 private:
  friend class Pattern;
  std::vector<std::string> groups_;
  std::vector<bool> taken_;
  std::size_t begin_ = 0, end_ = 0;
};

class Pattern {
 public:
  // A pattern that does not compile is a bug in nnfit: std::logic_error naming it.
  explicit Pattern(const std::string& ere);
  ~Pattern();
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // The first match starting at or after `from` ('^' still means the start of `text`).
  std::optional<PatternMatch> search(std::string_view text, std::size_t from = 0) const;
  // A match of the whole of `text`.
  std::optional<PatternMatch> match(std::string_view text) const;
  // Every non-overlapping match, left to right.
  std::vector<PatternMatch> find_all(std::string_view text) const;

  // `literal` with every ERE metacharacter escaped, to splice into a pattern.
  static std::string escape(std::string_view literal);

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace nnfit::doctor
