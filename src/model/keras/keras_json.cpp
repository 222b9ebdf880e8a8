// The JSON reading helpers of src/model/keras/keras_json.h: typed getters whose errors name
// the config path, key checks against what Keras writes, and JSON parsing with line/column.
#include "model/keras/keras_json.h"


#include <algorithm>
#include <cctype>
#include <cmath>

#include "nnfit/core/json_depth.h"

namespace nnfit::keras_json {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string join(Keys keys) {
  std::string out;
  for (std::string_view k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

json parse(const Reader& r, const std::string& text) {
  if (const std::int64_t at = json_too_deep_at(text); at >= 0) {  // Note [JSON nesting limit]
    r.invalid("", "invalid JSON: nested more than " + std::to_string(kMaxJsonDepth) + " levels deep at byte " + std::to_string(at));
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // what(): "[json.exception.parse_error.101] parse error at line 3, column 5: ...", or
    // out_of_range.406 for a number past a double ("1e400"), which has no position.
    std::string msg = e.what();
    const std::string marker = "parse error at ";
    auto at = msg.find(marker);
    if (at != std::string::npos) msg = msg.substr(at + marker.size());
    else if ((at = msg.find("] ")) != std::string::npos) msg = msg.substr(at + 2);
    r.invalid("", "invalid JSON: " + msg);
  }
}

std::string show(const json& v) {
  // Whole, as the file has it; only a value too long to be a Keras setting (a damaged or
  // hostile file) is cut, and says how long it was.
  std::string s = v.dump();
  constexpr std::size_t kLimit = 4000;
  if (s.size() <= kLimit) return s;
  return s.substr(0, kLimit) + "... (" + std::to_string(s.size()) + " characters)";
}

void expect_object(const Reader& r, const std::string& path, const json& v) {
  if (!v.is_object()) r.invalid(path, "expected a JSON object, got " + std::string(v.type_name()) + " " + show(v));
}

void check_keys(const Reader& r, const std::string& path, const json& obj, Keys allowed, Keys more) {
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();  // a named variable: clang 14 cannot capture a structured binding
    auto in = [&](Keys ks) { return std::find(ks.begin(), ks.end(), key) != ks.end(); };
    if (!in(allowed) && !in(more)) {
      std::string known = join(allowed);
      if (more.size() > 0) known += ", " + join(more);
      r.invalid(path, "unknown key \"" + key + "\"", "keys Keras writes here: " + known);
    }
  }
}

const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}
// Present and not null.
const json* value(const json& obj, const char* key) {
  const json* v = find(obj, key);
  return v && !v->is_null() ? v : nullptr;
}

std::int64_t get_int(const Reader& r, const std::string& path, const json& obj, const char* key,
                     std::optional<std::int64_t> fallback) {
  const json* v = value(obj, key);
  if (!v) {
    if (fallback) return *fallback;
    r.invalid(path, std::string("missing required key \"") + key + "\"");
  }
  if (v->is_number_integer()) return v->get<std::int64_t>();
  if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()) {
    return static_cast<std::int64_t>(v->get<double>());
  }
  r.invalid(path, std::string("\"") + key + "\" must be an integer, got " + show(*v));
}

double get_number(const Reader& r, const std::string& path, const json& obj, const char* key, double fallback) {
  const json* v = value(obj, key);
  if (!v) return fallback;
  if (!v->is_number()) r.invalid(path, std::string("\"") + key + "\" must be a number, got " + show(*v));
  return v->get<double>();
}

bool get_bool(const Reader& r, const std::string& path, const json& obj, const char* key, bool fallback) {
  const json* v = value(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) r.invalid(path, std::string("\"") + key + "\" must be true or false, got " + show(*v));
  return v->get<bool>();
}

std::string get_string(const Reader& r, const std::string& path, const json& obj, const char* key,
                       std::optional<std::string> fallback) {
  const json* v = value(obj, key);
  if (!v) {
    if (fallback) return *fallback;
    r.invalid(path, std::string("missing required key \"") + key + "\"");
  }
  if (!v->is_string()) r.invalid(path, std::string("\"") + key + "\" must be a string, got " + show(*v));
  return v->get<std::string>();
}

// Keras's int-or-tuple arguments (kernel_size, strides, pool_size).
std::vector<std::int64_t> get_tuple(const Reader& r, const std::string& path, const json& obj, const char* key,
                                    std::size_t n, std::vector<std::int64_t> fallback) {
  const json* v = value(obj, key);
  if (!v) return fallback;
  const std::string expected = n == 1 ? "a positive integer or a list of one" :
                                        "a positive integer or a list of " + std::to_string(n);
  auto positive = [&](const json& e) {
    if (!e.is_number_integer() || e.get<std::int64_t>() <= 0) {
      r.invalid(path, std::string("\"") + key + "\" must be " + expected + ", got " + show(*v));
    }
    return e.get<std::int64_t>();
  };
  if (v->is_number()) return std::vector<std::int64_t>(n, positive(*v));
  if (!v->is_array() || v->size() != n) r.invalid(path, std::string("\"") + key + "\" must be " + expected + ", got " + show(*v));
  std::vector<std::int64_t> out;
  for (const json& e : *v) out.push_back(positive(e));
  return out;
}

std::vector<std::int64_t> get_pair(const Reader& r, const std::string& path, const json& obj, const char* key,
                                   std::vector<std::int64_t> fallback) {
  return get_tuple(r, path, obj, key, 2, std::move(fallback));
}

// Keys whose only supported value is null (regularizers, constraints, ...).
void require_null(const Reader& r, const std::string& path, const json& obj, Keys keys) {
  for (std::string_view k : keys) {
    const json* v = value(obj, std::string(k).c_str());
    if (v) r.unsupported(path, "\"" + std::string(k) + "\" = " + show(*v) + " is not supported (only null)");
  }
}

// Keys whose value must equal Keras's default for nnfit to compute the same thing.
void require_value(const Reader& r, const std::string& path, const json& obj, const char* key, const json& expected) {
  const json* v = value(obj, key);
  if (v && *v != expected) {
    r.unsupported(path, std::string("\"") + key + "\" = " + show(*v) + " is not supported (only " + expected.dump() + ")");
  }
}

// "GlorotUniform" -> "glorot_uniform".
std::string snake_case(const std::string& camel) {
  std::string out;
  for (std::size_t i = 0; i < camel.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(camel[i]);
    if (std::isupper(c) && i > 0) out += '_';
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

std::string keras_snake_case(const std::string& name) {
  // Keras's naming.to_snake_case, rule by rule, as one pass each over the name (not
  // std::regex, whose executor recurses per character: a class name of a million letters in
  // a hostile file overflowed the stack).
  auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  // re.sub(r"\W+", "", name): word characters stay.
  std::string s;
  for (char c : name) {
    // Bytes of UTF-8 sequences stay too: Python keeps non-ASCII letters (\w is Unicode there).
    if (upper(c) || lower(c) || (c >= '0' && c <= '9') || c == '_' || static_cast<unsigned char>(c) >= 0x80) s += c;
  }
  // re.sub("(.)([A-Z][a-z]+)", r"\1_\2", s): a character, then a capitalized word.
  std::string t;
  for (std::size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && upper(s[i + 1]) && lower(s[i + 2])) {
      std::size_t j = i + 3;
      while (j < s.size() && lower(s[j])) ++j;
      t += s[i];
      t += '_';
      t.append(s, i + 1, j - i - 1);
      i = j;
    } else {
      t += s[i++];
    }
  }
  // re.sub("([a-z])([A-Z])", r"\1_\2", t), then lower().
  std::string out;
  for (std::size_t i = 0; i < t.size();) {
    if (i + 1 < t.size() && lower(t[i]) && upper(t[i + 1])) {
      out += t[i];
      out += '_';
      out += t[i + 1];
      i += 2;
    } else {
      out += t[i++];
    }
  }
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace nnfit::keras_json
