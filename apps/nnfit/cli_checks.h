// Option checks with messages a user can read. CLI11's PositiveNumber and NonNegativeNumber
// are ranges to DBL_MAX and say so in full ("Value -3 not in range 0.000000 to 1797693...
// (309 digits).000000"); these say what is wrong ("must be positive, got -3"). Included
// only by the .cpp files that declare options (CLI11 is heavy).
#pragma once
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <string>

namespace nnfit::cli {

namespace detail {
// The option's text as a number; false when it is not one.
inline bool as_number(const std::string& text, double& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}
}  // namespace detail

inline const CLI::Validator kPositive(
    [](std::string& text) -> std::string {
      double v = 0;
      if (!detail::as_number(text, v)) return "expected a number, got " + text;
      return v > 0 ? std::string() : "must be positive, got " + text;
    },
    "POSITIVE");

inline const CLI::Validator kNonNegative(
    [](std::string& text) -> std::string {
      double v = 0;
      if (!detail::as_number(text, v)) return "expected a number, got " + text;
      return v >= 0 ? std::string() : "must be 0 or more, got " + text;
    },
    "NONNEGATIVE");

// CLI11 converts an integer past int64 to int64's maximum (`--epochs 100000000000000000000`
// trained forever); this check sees the text first and refuses it.
inline const CLI::Validator kFitsInt64(
    [](std::string& text) {
      long long v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      return ec == std::errc::result_out_of_range ? "more than a 64-bit integer holds: " + text : std::string();
    },
    "INT64");

// `--dtype-policy ""` is a mistake (an unset shell variable), not "the default": said so.
inline const CLI::Validator kNotEmpty(
    [](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); }, "TEXT");

}  // namespace nnfit::cli
