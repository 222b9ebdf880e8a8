// steps.jsonl: writing (buffered, flushed per epoch) and a strict reader with line-level
// errors. The reader is hand-written for the one shape a line may have (a flat object of
// integer values), so the profile module needs no JSON library.
#include "nnfit/profile/step_log.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "nnfit/core/error.h"

namespace nnfit::profile {

namespace {

constexpr std::array<const char*, 9> kKeys = {"step",         "input_wait_us", "h2d_us",
                                              "forward_us",   "backward_us",   "allreduce_us",
                                              "update_us",    "callbacks_us",  "memory_in_use_bytes"};

// Every value is at most 2^60 (36,000 years in microseconds, an exbibyte): a step's seven
// parts then sum without overflow (StepRecord::total_us), and so do the report's totals.
constexpr std::int64_t kMaxValue = std::int64_t{1} << 60;

std::int64_t* field(StepRecord& r, std::size_t i) {
  std::int64_t* f[] = {&r.step,         &r.input_wait_us, &r.h2d_us,     &r.forward_us,         &r.backward_us,
                       &r.allreduce_us, &r.update_us,     &r.callbacks_us, &r.memory_in_use_bytes};
  return f[i];
}

// Parses one line; returns an error message ("" on success).
std::string parse_line(std::string_view s, StepRecord& out) {
  std::size_t p = 0;
  auto ws = [&] {
    while (p < s.size() && (s[p] == ' ' || s[p] == '\t' || s[p] == '\r')) ++p;
  };
  auto at = [&](const std::string& what) { return what + " at column " + std::to_string(p + 1); };
  ws();
  if (p >= s.size() || s[p] != '{') return at("expected '{'");
  ++p;
  std::array<bool, kKeys.size()> seen{};
  for (bool first = true;; first = false) {
    ws();
    if (p >= s.size()) return at("the line ends inside the object (truncated?)");
    if (s[p] == '}' && first) return "an empty object; expected the keys " + std::string(kKeys[0]) + ", ...";
    if (s[p] != '"') return at("expected a quoted key");
    const std::size_t close = s.find('"', p + 1);
    if (close == std::string_view::npos) return at("the line ends inside a key (truncated?)");
    const std::string key(s.substr(p + 1, close - p - 1));
    p = close + 1;
    std::size_t k = 0;
    while (k < kKeys.size() && key != kKeys[k]) ++k;
    if (k == kKeys.size()) return "unknown key \"" + key + "\"";
    if (seen[k]) return "key \"" + key + "\" appears twice";
    seen[k] = true;
    ws();
    if (p >= s.size()) return at("the line ends after key \"" + key + "\" (truncated?)");
    if (s[p] != ':') return at("expected ':' after \"" + key + "\"");
    ++p;
    ws();
    const std::size_t start = p;
    std::int64_t v = 0;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (v > kMaxValue / 10 || (v = v * 10 + (s[p++] - '0')) > kMaxValue) {
        return "the value of \"" + key + "\" is too large (more than 2^60)";
      }
    }
    if (p == start) {
      return p >= s.size() ? at("the line ends before the value of \"" + key + "\" (truncated?)")
                           : at("the value of \"" + key + "\" is not a non-negative integer");
    }
    *field(out, k) = v;
    ws();
    if (p >= s.size()) return at("the line ends inside the object (truncated?)");
    if (s[p] == ',') {
      ++p;
      continue;
    }
    if (s[p] != '}') return at("expected ',' or '}' after the value of \"" + key + "\"");
    ++p;
    break;
  }
  ws();
  if (p != s.size()) return at("unexpected text after the object");
  for (std::size_t k = 0; k < kKeys.size(); ++k) {
    if (!seen[k]) return "missing key \"" + std::string(kKeys[k]) + "\"";
  }
  return {};
}

}  // namespace

std::string step_json(const StepRecord& r) {
  std::string out = "{";
  StepRecord copy = r;
  for (std::size_t k = 0; k < kKeys.size(); ++k) {
    if (k) out += ',';
    out += '"';
    out += kKeys[k];
    out += "\":";
    out += std::to_string(*field(copy, k));
  }
  out += '}';
  return out;
}

std::vector<StepRecord> read_step_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw DataError(path, -1, std::string("cannot open the step log: ") + std::strerror(errno),
                    "give the --logdir of a training run (it writes steps.jsonl)");
  }
  std::vector<StepRecord> out;
  std::string line;
  std::int64_t offset = 0, number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::int64_t line_offset = offset;
    offset += static_cast<std::int64_t>(line.size()) + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    StepRecord r;
    const std::string err = parse_line(line, r);
    if (!err.empty()) {
      throw DataError(path, line_offset, "line " + std::to_string(number) + ": " + err,
                      "each line must be one JSON object with the keys of docs/cli.md (steps.jsonl)");
    }
    out.push_back(r);
  }
  return out;
}

StepLogWriter::StepLogWriter(const std::string& path, bool append) : path_(path) {
  file_ = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (!file_) throw DataError(path, -1, std::string("cannot open the step log for writing: ") + std::strerror(errno));
}

StepLogWriter::~StepLogWriter() {
  try {
    flush();
  } catch (...) {
  }
  if (file_) std::fclose(file_);
}

void StepLogWriter::add(const StepRecord& record) {
  buffer_ += step_json(record);
  buffer_ += '\n';
}

void StepLogWriter::flush() {
  if (!file_ || buffer_.empty()) return;
  const std::size_t n = std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
  buffer_.clear();
  if (n == 0 || std::fflush(file_) != 0) throw DataError(path_, -1, std::string("write failed: ") + std::strerror(errno));
}

StepRange parse_step_range(std::string_view text) {
  auto fail = [&](const std::string& why) -> StepRange {
    throw InvalidArgument("profile steps \"" + std::string(text) + "\": " + why +
                              "; expected FIRST-LAST (global step numbers from 1, inclusive), e.g. 10-20",
                          "");
  };
  auto number = [&](std::string_view s) -> std::int64_t {
    if (s.empty() || s.size() > 15 || s.find_first_not_of("0123456789") != std::string_view::npos) {
      fail("\"" + std::string(s) + "\" is not a step number");
    }
    std::int64_t v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    if (v < 1) fail("steps count from 1");
    return v;
  };
  const std::size_t dash = text.find('-');
  StepRange r;
  if (dash == std::string_view::npos) {
    r.first = r.last = number(text);
  } else {
    r.first = number(text.substr(0, dash));
    r.last = number(text.substr(dash + 1));
  }
  if (r.first > r.last) fail("the first step is after the last");
  return r;
}

}  // namespace nnfit::profile
