// MemoryPolicy: how a device's allocator obtains memory (grow on demand by default,
// optionally preallocate a fraction of TOTAL memory, optionally a hard limit), and the
// parsing of the user-facing forms: SIZE (`4GiB`, `512MiB`, `4GB`, `1000000`) and
// FRACTION (`0.5`, `50%`). Config is parsed apart from the mechanism (c10's
// CUDAAllocatorConfig); the precedence of the sources is documented in docs/config.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nnfit/core/units.h"

namespace nnfit {

struct MemoryPolicy {
  // Hard limit on the bytes reserved from the device; 0 means no limit.
  std::int64_t limit_bytes = 0;
  // 0 grows on demand (the default); in (0, 1] reserves this fraction of the device's
  // TOTAL memory (not of the free memory, unlike TF) when the allocator is created.
  double preallocate_fraction = 0.0;

  bool operator==(const MemoryPolicy&) const = default;
};

// One source's settings (API, config, flags, environment); unset fields defer to the
// next source.
struct MemorySettings {
  std::optional<std::int64_t> limit_bytes;
  std::optional<double> preallocate_fraction;
};

// Field by field, the value from the first source that sets it.
MemoryPolicy resolve_memory_policy(const MemorySettings& first, const MemorySettings& second = {},
                                   const MemorySettings& third = {});

// NNFIT_MEMORY_LIMIT (SIZE), NNFIT_MEMORY_PREALLOCATE (FRACTION); TF_FORCE_GPU_ALLOW_GROWTH
// = true|false is accepted (growth is already the default; it never preallocates).
// throws: InvalidArgument naming the variable.
MemorySettings memory_settings_from_env();

// parse_size_bytes, parse_fraction and format_bytes: nnfit/core/units.h.

}  // namespace nnfit
