// The JSON config readers' shared tools: a Section is one object of a config file, read
// key by key so every error names the file and the key path ("data.train.pipeline[2].
// buffer_size"); `${VAR}` expansion and path resolution relative to the config file.
// Included only by the .cpp files that read configs (nlohmann/json is heavy).
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/json_depth.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::config {

using json = nlohmann::json;

inline std::string read_text(const std::string& path, const char* what) {
  // A FIFO would block the open and a device never end: refused by name first.
  const io::FileKind kind = io::file_kind(path);
  if (kind != io::FileKind::regular && kind != io::FileKind::missing) {
    throw InvalidArgument(path + ": is " + io::file_kind_name(kind) + ", not a " + what + " file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InvalidArgument(path + ": cannot read " + what + ": " +
                          (kind != io::FileKind::missing ? "permission denied" : "no such file (or a name too long)"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline json parse_file(const std::string& path, const char* what) {
  if (io::file_kind(path) == io::FileKind::directory) throw InvalidArgument(path + ": is a directory, not a " + what + " file");
  const std::string text = read_text(path, what);
  // A model file where JSON was expected is named for what it is, not a JSON syntax error.
  if (text.compare(0, 4, "PK\x03\x04") == 0 || text.compare(0, 8, std::string("\x89HDF\r\n\x1a\n", 8)) == 0) {
    const bool zip = text[0] == 'P';
    throw InvalidArgument(path + ": is a Keras " + (zip ? ".keras model file (a zip archive)" : ".h5 model file (HDF5)") +
                              ", not a JSON " + what,
                          std::string("a saved model goes in the config's \"model\" (\"model\": \"") + path +
                              "\"), or run `nnfit predict " + path + "` / `nnfit evaluate " + path + "`");
  }
  if (const std::int64_t at = json_too_deep_at(text); at >= 0) {  // Note [JSON nesting limit]
    throw InvalidArgument(path + ": invalid JSON: nested more than " + std::to_string(kMaxJsonDepth) + " levels deep at byte " +
                          std::to_string(at));
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for "1e400"
    std::string msg = e.what();
    const std::string marker = "parse error at ";
    auto at = msg.find(marker);
    if (at != std::string::npos) msg = msg.substr(at + marker.size());
    else if ((at = msg.find("] ")) != std::string::npos) msg = msg.substr(at + 2);
    throw InvalidArgument(path + ": invalid JSON: " + msg);
  }
}

class Section {
 public:
  Section(const std::string& file, std::string path, const json& obj) : file_(file), path_(std::move(path)), obj_(obj) {
    if (!obj.is_object()) fail("expected a JSON object, got " + std::string(obj.type_name()));
  }

  [[noreturn]] void fail(const std::string& msg, const std::string& key = {}, std::string hint = {}) const {
    std::string at = path_.empty() ? key : (key.empty() ? path_ : path_ + "." + key);
    throw InvalidArgument(file_ + ": " + (at.empty() ? "" : at + ": ") + msg, std::move(hint));
  }

  void check_keys(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, value] : obj_.items()) {
      bool known = false;
      std::string list;
      for (std::string_view k : allowed) {
        known = known || k == key;
        list += (list.empty() ? "" : ", ") + std::string(k);
      }
      if (!known) fail("unknown key", key, "known keys here: " + list);
    }
  }

  const json* find(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  const json& require(const char* key) const {
    const json* v = find(key);
    if (!v) fail(std::string("missing required key \"") + key + "\"");
    return *v;
  }
  Section section(const char* key) const { return Section(file_, path_.empty() ? key : path_ + "." + key, require(key)); }

  // The typed getters take an absent key as its default, but a key given as null is a
  // value of the wrong type: `"epochs": null` must not silently train the default.
  const json* given(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  // `max`: a value kept in a narrower type (an int) is bounded here, never truncated.
  std::int64_t integer(const char* key, std::int64_t fallback, std::int64_t min,
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    const json* v = given(key);
    if (!v) return fallback;
    const bool too_big = v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    if (!v->is_number_integer() || too_big || v->get<std::int64_t>() < min || v->get<std::int64_t>() > max) {
      fail("expected an integer >= " + std::to_string(min) +
               (max < std::numeric_limits<std::int64_t>::max() ? " and <= " + std::to_string(max) : "") + ", got " +
               v->dump().substr(0, 40),
           key);
    }
    return v->get<std::int64_t>();
  }
  bool boolean(const char* key, bool fallback) const {
    const json* v = given(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail("expected true or false, got " + v->dump(), key);
    return v->get<bool>();
  }
  std::string string(const char* key) const {
    const json& v = require(key);
    if (!v.is_string()) fail("expected a string, got " + v.dump(), key);
    return v.get<std::string>();
  }
  double number(const char* key, double fallback) const {
    const json* v = given(key);
    if (!v) return fallback;
    if (!v->is_number()) fail("expected a number, got " + v->dump(), key);
    return v->get<double>();
  }
  std::string string_or(const char* key, std::string fallback) const {
    const json* v = given(key);
    if (v && !v->is_string()) fail("expected a string, got " + v->dump(), key);
    return v ? v->get<std::string>() : std::move(fallback);
  }
  const std::string& path() const { return path_; }
  auto items() const { return obj_.items(); }
  std::string key_path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& file() const { return file_; }

 private:
  const std::string& file_;
  std::string path_;
  const json& obj_;
};

// `${NAME}` expands to the env flag NAME (declared in core/env_flags) or its default.
inline std::string expand(const Section& s, const char* key, std::string text) {
  for (std::size_t at = text.find("${"); at != std::string::npos; at = text.find("${", at)) {
    std::size_t end = text.find('}', at);
    if (end == std::string::npos) s.fail("unterminated ${ in \"" + text + "\"", key);
    const std::string name = text.substr(at + 2, end - at - 2);
    std::optional<std::string> value;
    std::string known;
    for (const EnvFlag& f : env_flags()) {
      if (f.name == name) value = env_flag(name).value_or(std::string(f.default_value));
      known += (known.empty() ? "" : ", ") + std::string(f.name);
    }
    if (!value) s.fail("unknown variable ${" + name + "}", key, "variables: " + known);
    if (value->empty()) s.fail("${" + name + "} is not set", key);
    text.replace(at, end - at + 1, *value);
    at += value->size();
  }
  return text;
}

inline std::string resolve(const Section& s, const char* key) {
  std::filesystem::path p = expand(s, key, s.string(key));
  if (p.is_relative()) p = std::filesystem::path(s.file()).parent_path() / p;
  return p.lexically_normal().string();
}

}  // namespace nnfit::config
