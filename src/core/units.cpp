// Sizes and fractions as people write them ("4GiB", "50%"), and bytes as people read them.
#include "nnfit/core/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "nnfit/core/error.h"

namespace nnfit {
namespace {

// A non-negative decimal number at the start of `text`; returns the characters used (0 if none).
std::size_t parse_number(std::string_view text, double& value) {
  std::size_t i = 0;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, digits = true;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, digits = true;
  }
  if (!digits) return 0;
  value = std::stod(std::string(text.substr(0, i)));
  return i;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::int64_t parse_size_bytes(std::string_view text, std::string_view where) {
  const std::string_view t = trim(text);
  auto bad = [&](const std::string& why) {
    return InvalidArgument(std::string(where) + ": invalid size \"" + std::string(text) + "\": " + why,
                           "write a size like 4GiB, 512MiB, 4GB (decimal) or plain bytes");
  };
  double value = 0;
  const std::size_t used = parse_number(t, value);
  if (used == 0) throw bad(t.empty() ? "it is empty" : "it does not start with a number");
  std::string unit(trim(t.substr(used)));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "kib" || unit == "ki") scale = 1024.0;
  else if (unit == "mib" || unit == "mi") scale = 1024.0 * 1024;
  else if (unit == "gib" || unit == "gi") scale = 1024.0 * 1024 * 1024;
  else if (unit == "tib" || unit == "ti") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "kb" || unit == "k") scale = 1e3;
  else if (unit == "mb" || unit == "m") scale = 1e6;
  else if (unit == "gb" || unit == "g") scale = 1e9;
  else if (unit == "tb" || unit == "t") scale = 1e12;
  else throw bad("unknown unit \"" + unit + "\" (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
  const double bytes = std::floor(value * scale);
  if (bytes < 1) throw bad("it must be at least 1 byte");
  if (bytes > 9.0e18) throw bad("it is too large");
  return static_cast<std::int64_t>(bytes);
}

double parse_fraction(std::string_view text, std::string_view where) {
  const std::string_view t = trim(text);
  auto bad = [&](const std::string& why) {
    return InvalidArgument(std::string(where) + ": invalid fraction \"" + std::string(text) + "\": " + why,
                           "write a fraction of total memory like 0.5 or 50%");
  };
  double value = 0;
  const std::size_t used = parse_number(t, value);
  if (used == 0) throw bad(t.empty() ? "it is empty" : "it does not start with a number");
  const std::string_view rest = trim(t.substr(used));
  if (rest == "%") value /= 100;
  else if (!rest.empty()) throw bad("unexpected \"" + std::string(rest) + "\"");
  if (!(value > 0 && value <= 1)) throw bad("it must be above 0 and at most 1 (100%)");
  return value;
}

std::string format_bytes(std::int64_t b) {
  char buf[64];
  if (b >= (1ll << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ll << 30));
  else if (b >= (1ll << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1ll << 20));
  else if (b >= (1ll << 10)) std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(b) / (1ll << 10));
  else std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(b));
  return buf;
}

}  // namespace nnfit
