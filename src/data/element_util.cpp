// Shared element helpers (see element_util.h).
#include "data/element_util.h"

#include <sched.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "nnfit/core/env_flags.h"
#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"

namespace nnfit::data::detail {

Tensor stack(const std::vector<Tensor>& parts, const std::string& who, std::size_t component) {
  NNFIT_CHECK(!parts.empty(), InvalidArgument, who, ": nothing to stack");
  const Tensor& first = parts.front();
  std::vector<std::int64_t> dims{static_cast<std::int64_t>(parts.size())};
  dims.insert(dims.end(), first.shape().dims().begin(), first.shape().dims().end());
  Tensor out = Tensor::uninitialized(Shape(std::move(dims)), first.dtype());
  const std::size_t bytes = first.nbytes();
  auto* dst = static_cast<char*>(out.raw());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = parts[i];
    NNFIT_CHECK(p.shape() == first.shape() && p.dtype() == first.dtype(), InvalidArgument, who,
                ": component ", component, " is ", dtype_name(first.dtype()), " ",
                first.shape().to_string(), " in the first element of the batch but ",
                dtype_name(p.dtype()), " ", p.shape().to_string(), " in element ", i,
                "; use padded_batch for elements of varying shape");
    if (bytes) std::memcpy(dst + i * bytes, p.raw(), bytes);
  }
  return out;
}

Tensor row(const Tensor& t, std::int64_t i) {
  std::vector<std::int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
  return t.slice_rows(i, i + 1).reshape(Shape(std::move(dims)));
}

Tensor scalar_i64(std::int64_t value) {
  Tensor t = Tensor::zeros(Shape{}, DType::i64);
  *t.data<std::int64_t>() = value;
  return t;
}

void fill(const Tensor& t, double value) {
  const auto n = static_cast<std::size_t>(t.numel());
  switch (t.dtype()) {
    case DType::f32: std::fill_n(t.data<float>(), n, static_cast<float>(value)); break;
    case DType::f16: std::fill_n(t.data<std::uint16_t>(), n, float_to_f16(static_cast<float>(value))); break;
    case DType::bf16: std::fill_n(t.data<std::uint16_t>(), n, float_to_bf16(static_cast<float>(value))); break;
    case DType::i32: std::fill_n(t.data<std::int32_t>(), n, static_cast<std::int32_t>(value)); break;
    case DType::i64: std::fill_n(t.data<std::int64_t>(), n, static_cast<std::int64_t>(value)); break;
    case DType::u8: std::fill_n(t.data<std::uint8_t>(), n, static_cast<std::uint8_t>(value)); break;
    case DType::boolean: std::fill_n(t.data<std::uint8_t>(), n, value != 0 ? 1 : 0); break;
  }
}

std::uint64_t bounded(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                              std::numeric_limits<std::uint64_t>::max() % bound;
  std::uint64_t r;
  do {
    r = rng();
  } while (r >= limit);
  return r % bound;
}

// Note [Pipeline thread policy]. Pipeline threads run under SCHED_BATCH: the kernel then
// never lets them preempt a running thread when they wake up, only at a scheduler tick
// or on a free core. With as many compute threads as cores (nnfit's default), a prefetch
// thread woken to refill its buffer otherwise took the core of the training thread that
// had just woken it, inside its next() call, for the whole refill (2-6 ms every 30 or so
// steps): the MLP example on 2 threads waited for input 5.3% of its training time
// (median of 6 runs; 2.1-8.2%), against 0.8% (0.6-1.1%) under SCHED_BATCH, at the same
// throughput. The pipeline still gets its fair share of the CPU; what it takes from the
// compute threads now shows as slower steps, not as waiting (bench/RESULTS.md, "Input
// wait during training"). NNFIT_PIPELINE_SCHED=normal keeps the default policy.
void start_pipeline_thread(const std::string& name) {
  trace::set_thread_name(name);
  const std::optional<std::string> policy = env_flag("NNFIT_PIPELINE_SCHED");
  if (policy && *policy == "normal") return;
  if (policy && *policy != "batch") {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr, "nnfit: NNFIT_PIPELINE_SCHED=%s is neither 'batch' nor 'normal'; using batch\n",
                   policy->c_str());
    });
  }
  sched_param param{};
  sched_setscheduler(0, SCHED_BATCH, &param);  // best effort: the thread runs either way
}

int autotune_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ElementSpec unbatched(const ElementSpec& spec, const std::string& who) {
  ElementSpec out;
  for (std::size_t c = 0; c < spec.size(); ++c) {
    NNFIT_CHECK(spec[c].shape.rank() >= 1, InvalidArgument, who, ": component ", c,
                " is a scalar; it needs a first dimension to slice");
    std::vector<std::int64_t> dims(spec[c].shape.dims().begin() + 1, spec[c].shape.dims().end());
    out.push_back({spec[c].dtype, Shape(std::move(dims))});
  }
  return out;
}

ElementSpec batched(const ElementSpec& spec, std::int64_t dim) {
  ElementSpec out;
  for (const ComponentSpec& c : spec) {
    std::vector<std::int64_t> dims{dim};
    dims.insert(dims.end(), c.shape.dims().begin(), c.shape.dims().end());
    out.push_back({c.dtype, Shape(std::move(dims))});
  }
  return out;
}

ElementSpec merge(const ElementSpec& a, const ElementSpec& b, const std::string& who) {
  NNFIT_CHECK(a.size() == b.size(), InvalidArgument, who, ": element specs differ: ",
              to_string(a), " vs ", to_string(b));
  ElementSpec out = a;
  for (std::size_t c = 0; c < a.size(); ++c) {
    NNFIT_CHECK(a[c].dtype == b[c].dtype && a[c].shape.rank() == b[c].shape.rank(),
                InvalidArgument, who, ": element specs differ in component ", c, ": ",
                to_string(a), " vs ", to_string(b));
    for (int d = 0; d < a[c].shape.rank(); ++d) {
      if (a[c].shape[d] != b[c].shape[d]) out[c].shape[d] = -1;
    }
  }
  return out;
}

ElementSpec spec_of(const Element& element) {
  ElementSpec spec;
  for (const Tensor& t : element) spec.push_back({t.dtype(), t.shape()});
  return spec;
}

}  // namespace nnfit::data::detail
