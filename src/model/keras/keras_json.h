// Private to src/model: the JSON reading helpers shared by the Keras readers
// (keras_config.cpp for models, keras_training_config.cpp for optimizers and losses).
// nlohmann/json is included here and only by those files.
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnfit/core/error.h"

namespace nnfit::keras_json {

using json = nlohmann::json;
using Keys = std::initializer_list<std::string_view>;

// Where messages point: "<where>: <path>: <message>".
struct Reader {
  std::string where;
  // The config was written by Keras 1 or 2 (its keras_version, or a legacy .h5's root
  // attribute): names whose meaning changed in Keras 3 read as Keras 2 meant them.
  bool keras2 = false;

  std::string prefix(const std::string& path) const {
    return path.empty() ? where + ": " : where + ": " + path + ": ";
  }
  [[noreturn]] void invalid(const std::string& path, const std::string& msg, std::string hint = {}) const {
    throw InvalidArgument(prefix(path) + msg, std::move(hint));
  }
  [[noreturn]] void unsupported(const std::string& path, const std::string& msg, std::string hint = {}) const {
    throw Unsupported(prefix(path) + msg, std::move(hint));
  }
};

std::string lower(std::string s);
std::string join(Keys keys);
json parse(const Reader& r, const std::string& text);
std::string show(const json& v);
void expect_object(const Reader& r, const std::string& path, const json& v);
// An error naming the key and the keys Keras writes there, for any key outside `allowed`
// and `more`.
void check_keys(const Reader& r, const std::string& path, const json& obj, Keys allowed, Keys more = {});
const json* find(const json& obj, const char* key);
const json* value(const json& obj, const char* key);
std::int64_t get_int(const Reader& r, const std::string& path, const json& obj, const char* key,
                     std::optional<std::int64_t> fallback);
double get_number(const Reader& r, const std::string& path, const json& obj, const char* key, double fallback);
bool get_bool(const Reader& r, const std::string& path, const json& obj, const char* key, bool fallback);
std::string get_string(const Reader& r, const std::string& path, const json& obj, const char* key,
                       std::optional<std::string> fallback);
// Keras's normalize_tuple: an integer (repeated n times) or a list of n positive integers.
std::vector<std::int64_t> get_tuple(const Reader& r, const std::string& path, const json& obj, const char* key,
                                    std::size_t n, std::vector<std::int64_t> fallback);
std::vector<std::int64_t> get_pair(const Reader& r, const std::string& path, const json& obj, const char* key,
                                   std::vector<std::int64_t> fallback);
void require_null(const Reader& r, const std::string& path, const json& obj, Keys keys);
void require_value(const Reader& r, const std::string& path, const json& obj, const char* key, const json& expected);
std::string snake_case(const std::string& camel);
// Keras's naming.to_snake_case ("ReLU" -> "re_lu", "Conv2D" -> "conv2d"): the names of the
// groups a .keras file stores layers under.
std::string keras_snake_case(const std::string& name);

// Rethrows an nn error with the layer's path, dropping the nn message's own "<name>: ".
// A reader's own error already names the file and key path, and passes unchanged (the
// location is said once).
template <typename F>
auto with_path(const Reader& r, const std::string& path, const std::string& name, F&& f) {
  auto strip = [&](const std::string& m) {
    return m.rfind(name + ": ", 0) == 0 ? m.substr(name.size() + 2) : m;
  };
  auto located = [&](const std::string& m) { return m.rfind(r.where + ": ", 0) == 0; };
  try {
    return f();
  } catch (const Unsupported& e) {
    if (located(e.what())) throw;
    throw Unsupported(r.prefix(path) + strip(e.what()), e.hint());
  } catch (const InvalidArgument& e) {
    if (located(e.what())) throw;
    throw InvalidArgument(r.prefix(path) + strip(e.what()), e.hint());
  }
}

}  // namespace nnfit::keras_json
