// Note [JSON nesting limit]: nlohmann::json parses nesting of any depth without recursion,
// but dumping a value (as every error message that shows one does), comparing or walking
// it recurses once per level: "[" * 100000 overflowed the stack. Every reader of JSON from
// outside (configs, Keras model configs, profile inputs) first checks the nesting with this
// scan and refuses text deeper than kMaxJsonDepth, naming the offset. Keras writes configs
// some 20 levels deep (a model nested in a model adds about 6); Python's json module stops
// near 1000.
#pragma once
#include <cstdint>
#include <string_view>

namespace nnfit {

constexpr int kMaxJsonDepth = 512;

// The byte offset of the first '[' or '{' that opens level max_depth + 1 of `text` (outside
// strings), or -1 when the text nests no deeper. Does not otherwise validate the JSON.
std::int64_t json_too_deep_at(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace nnfit
