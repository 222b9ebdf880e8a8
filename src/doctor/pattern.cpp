// Pattern: POSIX EREs through regcomp/regexec with REG_STARTEND, so text holding NUL bytes
// is searched whole and a search can start inside it (pattern.h says why not std::regex).
#include "pattern.h"

#include <regex.h>

#include <limits>
#include <stdexcept>

namespace nnfit::doctor {

struct Pattern::Compiled {
  regex_t re{};
  std::size_t groups = 0;
};

Pattern::Pattern(const std::string& ere) : compiled_(std::make_unique<Compiled>()) {
  if (int rc = regcomp(&compiled_->re, ere.c_str(), REG_EXTENDED); rc != 0) {
    char buf[256];
    regerror(rc, &compiled_->re, buf, sizeof buf);
    compiled_.reset();
    throw std::logic_error("doctor: pattern '" + ere + "' does not compile: " + buf);
  }
  compiled_->groups = compiled_->re.re_nsub + 1;
}

Pattern::~Pattern() {
  if (compiled_) regfree(&compiled_->re);
}

std::optional<PatternMatch> Pattern::search(std::string_view text, std::size_t from) const {
  if (from > text.size()) return std::nullopt;
  std::vector<regmatch_t> m(compiled_->groups);
  m[0].rm_so = static_cast<regoff_t>(from);
  m[0].rm_eo = static_cast<regoff_t>(text.size());
  // An empty view may have a null data(); regexec wants a pointer it can read zero bytes of.
  const char* data = text.empty() ? "" : text.data();
  if (regexec(&compiled_->re, data, m.size(), m.data(), REG_STARTEND) != 0) return std::nullopt;
  PatternMatch out;
  out.groups_.resize(m.size());
  out.taken_.resize(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i].rm_so < 0) continue;
    out.taken_[i] = true;
    out.groups_[i] = std::string(text.substr(static_cast<std::size_t>(m[i].rm_so),
                                             static_cast<std::size_t>(m[i].rm_eo - m[i].rm_so)));
  }
  out.begin_ = static_cast<std::size_t>(m[0].rm_so);
  out.end_ = static_cast<std::size_t>(m[0].rm_eo);
  return out;
}

std::optional<PatternMatch> Pattern::match(std::string_view text) const {
  auto m = search(text);
  if (m && m->begin() == 0 && m->end() == text.size()) return m;
  return std::nullopt;
}

std::vector<PatternMatch> Pattern::find_all(std::string_view text) const {
  std::vector<PatternMatch> out;
  std::size_t from = 0;
  while (auto m = search(text, from)) {
    from = m->end() > m->begin() ? m->end() : m->end() + 1;  // an empty match moves on by one
    out.push_back(std::move(*m));
  }
  return out;
}

int matched_int(std::string_view digits) {
  long long v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') break;
    v = v * 10 + (c - '0');
    if (v > std::numeric_limits<int>::max()) return std::numeric_limits<int>::max();
  }
  return static_cast<int>(v);
}

std::string Pattern::escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace nnfit::doctor
