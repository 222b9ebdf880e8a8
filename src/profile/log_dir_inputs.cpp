// Reading ops.json and pipeline.json for the bottleneck analysis (log_dir_inputs.h).
#include "log_dir_inputs.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/core/json_depth.h"
#include "nnfit/io/regular_file.h"

namespace nnfit::profile {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

ordered_json read_json(const fs::path& p) {
  if (io::file_kind(p.string()) != io::FileKind::missing) io::require_regular_file(p.string(), "a JSON file");
  std::ifstream in(p, std::ios::binary);
  if (!in) throw DataError(p.string(), -1, "cannot open");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  if (const std::int64_t at = json_too_deep_at(text); at >= 0) {  // Note [JSON nesting limit]
    throw DataError(p.string(), at, "not valid JSON: nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  try {
    return ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(p.string(), -1, std::string("not valid JSON: ") + e.what(),
                    "it is rewritten at each epoch end; run the training again");
  }
}

// Note [Checked profile inputs]: ops.json and pipeline.json are checked key by key when
// read, so the analysis in profile.cpp can take every value as the type nnfit writes: a damaged
// or hand-edited file is one DataError naming the file and the key, never a JSON library
// exception from deep in the report.
namespace {

[[noreturn]] void bad_key(const fs::path& p, const std::string& key, const std::string& want, const ordered_json& got) {
  std::string shown = got.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  throw DataError(p.string(), -1, key + ": expected " + want + ", got " + shown,
                  "it is rewritten at each epoch end; run the training again");
}

void check_number(const fs::path& p, const ordered_json& obj, const std::string& where, const char* key, bool required) {
  if (!obj.contains(key)) {
    if (required) bad_key(p, where + key, "a number", nullptr);
    return;
  }
  const ordered_json& v = obj[key];
  if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>())) bad_key(p, where + key, "a number >= 0", v);
}

void check_string(const fs::path& p, const ordered_json& obj, const std::string& where, const char* key, bool required) {
  if (!obj.contains(key)) {
    if (required) bad_key(p, where + key, "a string", nullptr);
    return;
  }
  if (!obj[key].is_string()) bad_key(p, where + key, "a string", obj[key]);
}

}  // namespace

// ops.json: {"threads": N, "steps": N, "ops": [{"name", "op", "phase", "seconds", "flops"[, "bytes"]}, ...]}.
void check_ops_json(const fs::path& p, const ordered_json& doc) {
  if (!doc.is_object()) bad_key(p, "the file", "a JSON object", doc);
  for (const char* key : {"steps", "threads"}) {
    if (!doc.contains(key) || !doc[key].is_number_integer() || doc[key].get<std::int64_t>() < 0) {
      bad_key(p, key, "an integer >= 0", doc.contains(key) ? doc[key] : ordered_json(nullptr));
    }
  }
  // The thread count a training run can have: the ceilings are measured with it.
  if (doc["threads"].get<std::int64_t>() > 4096) bad_key(p, "threads", "at most 4096", doc["threads"]);
  if (!doc.contains("ops") || !doc["ops"].is_array()) bad_key(p, "ops", "a list", doc.contains("ops") ? doc["ops"] : ordered_json(nullptr));
  for (std::size_t i = 0; i < doc["ops"].size(); ++i) {
    const ordered_json& o = doc["ops"][i];
    const std::string where = "ops[" + std::to_string(i) + "].";
    if (!o.is_object()) bad_key(p, "ops[" + std::to_string(i) + "]", "an object", o);
    for (const char* key : {"name", "op", "phase"}) check_string(p, o, where, key, true);
    for (const char* key : {"seconds", "flops"}) check_number(p, o, where, key, true);
    check_number(p, o, where, "bytes", false);
  }
}

// pipeline.json: {"stages": [{"name", "elements", "next_seconds"}, ...], ...}; keys may be missing.
void check_pipeline_json(const fs::path& p, const ordered_json& doc) {
  if (!doc.is_object()) bad_key(p, "the file", "a JSON object", doc);
  if (!doc.contains("stages")) return;
  if (!doc["stages"].is_array()) bad_key(p, "stages", "a list", doc["stages"]);
  for (std::size_t i = 0; i < doc["stages"].size(); ++i) {
    const ordered_json& st = doc["stages"][i];
    const std::string where = "stages[" + std::to_string(i) + "].";
    if (!st.is_object()) bad_key(p, "stages[" + std::to_string(i) + "]", "an object", st);
    check_string(p, st, where, "name", false);
    check_number(p, st, where, "next_seconds", false);
    if (st.contains("elements") && (!st["elements"].is_number_integer() || st["elements"].get<std::int64_t>() < 0)) {
      bad_key(p, where + "elements", "an integer >= 0", st["elements"]);
    }
  }
}

}  // namespace nnfit::profile
