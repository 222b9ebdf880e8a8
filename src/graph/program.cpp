// The executor: binds pointers once, then runs kernels in schedule order.
#include <chrono>

#include "nnfit/core/error.h"
#include "nnfit/graph/program.h"

namespace nnfit {

void* Program::data(int value) const {
  const Value& v = graph_.value(value);
  if (v.kind == ValueKind::variable) return v.bound.raw();
  long long off = value_offset_.at(static_cast<std::size_t>(value));
  NNFIT_CHECK(off >= 0, InvalidArgument, "value '", v.name, "' has no buffer in this program");
  NNFIT_CHECK(arena_ != nullptr || arena_bytes_ == 0, InvalidArgument, "program not bound to an arena");
  return static_cast<char*>(arena_) + off;
}

void Program::bind(void* arena) {
  arena_ = arena;
  in_ptrs_.clear();
  out_ptrs_.clear();
  in_begin_.clear();
  out_begin_.clear();
  for (const PlannedStep& s : steps_) {
    in_begin_.push_back(in_ptrs_.size());
    out_begin_.push_back(out_ptrs_.size());
    for (int v : s.inputs) in_ptrs_.push_back(data(v));
    for (int v : s.outputs) out_ptrs_.push_back(data(v));
  }
}

void Program::set_input(int value, const void* data) {
  NNFIT_CHECK(in_begin_.size() == steps_.size(), InvalidArgument, "Program::set_input before bind()");
  const Value& v = graph_.value(value);
  const long long base = value < static_cast<int>(value_offset_.size()) ? value_offset_[static_cast<std::size_t>(value)] : -1;
  NNFIT_CHECK(v.kind == ValueKind::input && base >= 0, InvalidArgument, "set_input: '", v.name,
              "' is not an input held in the arena");
  // Inputs live the whole step (the planner never reuses their slots), so whatever the
  // schedule reads or writes inside the slot is the input or a view of it.
  const long long end = base + static_cast<long long>(graph_.desc(value).bytes());
  const char* target = data ? static_cast<const char*>(data) : static_cast<const char*>(arena_) + base;
  auto place = [&](int w) -> const char* {
    const long long off = w >= 0 && w < static_cast<int>(value_offset_.size()) ? value_offset_[static_cast<std::size_t>(w)] : -1;
    if (graph_.value(w).kind == ValueKind::variable || off < base || off >= end) return nullptr;
    return target + (off - base);
  };
  std::size_t in = 0, out = 0;
  for (const PlannedStep& s : steps_) {
    for (int w : s.inputs) {
      if (const char* p = place(w)) in_ptrs_[in] = p;
      ++in;
    }
    for (int w : s.outputs) {
      if (const char* p = place(w)) out_ptrs_[out] = const_cast<char*>(p);
      ++out;
    }
  }
}

void Program::run(const StepContext& ctx) {
  NNFIT_CHECK(in_begin_.size() == steps_.size(), InvalidArgument, "Program::run before bind()");
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    PlannedStep& s = steps_[i];
    KernelArgs args{in_ptrs_.data() + in_begin_[i], out_ptrs_.data() + out_begin_[i],
                    s.workspace_bytes ? static_cast<char*>(arena_) + s.workspace_offset : nullptr, &ctx};
    if (!timing_) {
      s.kernel->run(args);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    s.kernel->run(args);
    step_seconds_[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

}  // namespace nnfit
