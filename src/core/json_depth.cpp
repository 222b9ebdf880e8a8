// The nesting scan of Note [JSON nesting limit] (json_depth.h): one pass that skips
// strings (with their escapes) and counts brackets.
#include "nnfit/core/json_depth.h"

namespace nnfit {

std::int64_t json_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return static_cast<std::int64_t>(i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return -1;
}

}  // namespace nnfit
