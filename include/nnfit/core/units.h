// Sizes and fractions as people write them in flags, configs and the environment, and
// byte counts as people read them. Used by the memory policy and the input pipeline's
// RAM budget alike.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace nnfit {

// `4GiB`, `512MiB`, `64KiB` (binary), `4GB`, `512MB`, `64KB` (decimal), `123B` or plain
// bytes `123`; fractional values (`1.5GiB`) are allowed. `where` names the source in
// errors ("--memory-limit", "fit.memory.limit"). throws: InvalidArgument.
std::int64_t parse_size_bytes(std::string_view text, std::string_view where);
// `0.5` or `50%`, in (0, 1]. throws: InvalidArgument.
double parse_fraction(std::string_view text, std::string_view where);

// "1.50 GiB", "12.00 MiB", "640 bytes".
std::string format_bytes(std::int64_t bytes);

}  // namespace nnfit
