// The JSON files of a log directory that the bottleneck analysis (bottleneck.h) reads besides steps.jsonl:
// ops.json (per-op kernel times) and pipeline.json (per-stage input pipeline times), read
// and checked key by key (Note [Checked profile inputs] in profile_inputs.cpp).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>

namespace nnfit::profile {

// The file's JSON. throws: DataError naming the file when it cannot be read or parsed.
nlohmann::ordered_json read_json(const std::filesystem::path& p);
// throw: DataError naming the file and the key whose value is missing or not what nnfit
// writes (docs/cli.md, "The log directory").
void check_ops_json(const std::filesystem::path& p, const nlohmann::ordered_json& doc);
void check_pipeline_json(const std::filesystem::path& p, const nlohmann::ordered_json& doc);

}  // namespace nnfit::profile
