// The environment's memory settings and how the sources of a policy combine (sizes and
// fractions are parsed by core/units.h).
#include "nnfit/memory/memory_policy.h"

#include <string>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"

namespace nnfit {

MemoryPolicy resolve_memory_policy(const MemorySettings& first, const MemorySettings& second,
                                   const MemorySettings& third) {
  MemoryPolicy p;
  p.limit_bytes = first.limit_bytes.value_or(second.limit_bytes.value_or(third.limit_bytes.value_or(0)));
  p.preallocate_fraction = first.preallocate_fraction.value_or(
      second.preallocate_fraction.value_or(third.preallocate_fraction.value_or(0.0)));
  return p;
}

MemorySettings memory_settings_from_env() {
  MemorySettings s;
  if (auto v = env_flag("NNFIT_MEMORY_LIMIT"); v && !v->empty()) s.limit_bytes = parse_size_bytes(*v, "NNFIT_MEMORY_LIMIT");
  if (auto v = env_flag("NNFIT_MEMORY_PREALLOCATE"); v && !v->empty()) {
    s.preallocate_fraction = parse_fraction(*v, "NNFIT_MEMORY_PREALLOCATE");
  }
  if (auto v = env_flag("TF_FORCE_GPU_ALLOW_GROWTH"); v && !v->empty()) {
    // Growth is nnfit's default; TF's "false" (grab most of the device) is never done
    // implicitly, only through NNFIT_MEMORY_PREALLOCATE.
    if (*v != "true" && *v != "false") {
      throw InvalidArgument("TF_FORCE_GPU_ALLOW_GROWTH=" + *v + ": expected true or false",
                            "nnfit grows memory on demand by default; unset it or use NNFIT_MEMORY_PREALLOCATE");
    }
  }
  return s;
}

}  // namespace nnfit
