// The executor: binds pointers once, then runs kernels in schedule order, each inside a
// trace range named after its node (category "kernel"); with timing on it also adds each
// kernel's time to its step and to its phase (forward, backward, update).
#include <chrono>
#include <mutex>
#include <unordered_set>

#include "nnfit/core/error.h"
#include "nnfit/core/trace.h"
#include "nnfit/graph/program.h"

namespace nnfit {

namespace {

// Note [Kernel range names]: TraceRange records a name pointer, not a copy, and the
// pointer must stay valid until the session's events are exported, which may happen after
// the Program that ran the kernel is gone (a model destroyed before trace::collect()). So
// node names are interned once, at bind time, into a table that lives as long as the
// process (like the trace collector itself; never destroyed, so threads may trace during
// exit). It holds each distinct name once: a few KiB for a model, and a process that
// builds many models with distinct layer names grows it by their names only.
const char* intern_trace_name(const std::string& name) {
  static std::mutex* mu = new std::mutex;
  static auto* names = new std::unordered_set<std::string>;  // node-based: c_str() is stable
  std::lock_guard<std::mutex> lock(*mu);
  return names->insert(name).first->c_str();
}

bool is_backward_name(const std::string& name) { return name.find("/grad_") != std::string::npos; }

// Note [Step phases]: a training graph is built in three appends: the layers and the loss
// (forward), autodiff's backward nodes, then the optimizer's updates; fusion rewrites
// nodes in place (a fused node keeps the index of its chain's last node), so node ids
// keep that order whatever the schedule does. Every gradient rule names its nodes
// "<forward node>/grad_<input>" and autodiff's sums "<value>/grad_sum" (grad_name() in
// core_op_defs.cpp, autodiff.cpp), so the first and last node whose name has "/grad_" bound
// the backward range: nodes before it are forward, nodes after it are updates. A graph
// with no such node (inference) is all forward. Forward ops that update state (batch
// norm's moving averages) are created with the layer, hence counted as forward.
std::vector<StepPhase> classify_phases(const Graph& graph, const std::vector<PlannedStep>& steps) {
  int first = -1, last = -1;
  for (int n = 0; n < graph.num_nodes(); ++n) {
    if (graph.node(n).removed || !is_backward_name(graph.node(n).name)) continue;
    if (first < 0) first = n;
    last = n;
  }
  std::vector<StepPhase> phases;
  phases.reserve(steps.size());
  for (const PlannedStep& s : steps) {
    phases.push_back(first < 0 || s.node < first ? StepPhase::forward
                     : s.node <= last            ? StepPhase::backward
                                                 : StepPhase::update);
  }
  return phases;
}

}  // namespace

void Program::set_timing(bool on, std::function<void()> wait) {
  timing_ = on;
  timing_wait_ = on ? std::move(wait) : nullptr;
  step_seconds_.assign(steps_.size(), 0.0);
  phase_ns_ = {};
}

std::array<std::int64_t, kNumStepPhases> Program::take_phase_ns() {
  std::array<std::int64_t, kNumStepPhases> out = phase_ns_;
  phase_ns_ = {};
  return out;
}

StepPhase Program::phase(std::size_t step) const {
  if (phases_.size() == steps_.size()) return phases_[step];
  return classify_phases(graph_, steps_).at(step);
}

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
  if (phases_.size() != steps_.size()) phases_ = classify_phases(graph_, steps_);
  if (trace_names_.size() != steps_.size()) {
    trace_names_.clear();
    for (const PlannedStep& s : steps_) trace_names_.push_back(intern_trace_name(graph_.node(s.node).name));
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

void Program::run(const StepContext& ctx) { run(ctx, {}); }

void Program::run(const StepContext& ctx, const std::function<void(std::size_t step)>& after_step) {
  NNFIT_CHECK(in_begin_.size() == steps_.size(), InvalidArgument, "Program::run before bind()");
  using Clock = std::chrono::steady_clock;
  if (timing_ && timing_wait_) timing_wait_();  // what came before is no kernel's of this run
  Clock::time_point t = timing_ ? Clock::now() : Clock::time_point{};
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    PlannedStep& s = steps_[i];
    KernelArgs args{in_ptrs_.data() + in_begin_[i], out_ptrs_.data() + out_begin_[i],
                    s.workspace_bytes ? static_cast<char*>(arena_) + s.workspace_offset : nullptr, &ctx};
    {
      TraceRange range(trace_names_[i], "kernel", static_cast<std::int64_t>(i));
      s.kernel->run(args);
    }
    if (timing_) {
      if (timing_wait_) timing_wait_();
      const Clock::time_point t1 = Clock::now();
      const std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t).count();
      step_seconds_[i] += static_cast<double>(ns) * 1e-9;
      phase_ns_[static_cast<std::size_t>(phases_[i])] += ns;
      t = t1;
    }
    if (after_step) {
      after_step(i);
      if (timing_) t = Clock::now();  // the callback's time is no kernel's
    }
  }
}

bool Program::capturable() const {
  for (const PlannedStep& s : steps_) {
    if (!s.kernel->capturable()) return false;
  }
  return true;
}

int Program::producer_step(int value) const {
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    for (int v : steps_[i].outputs) {
      if (v == value) return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace nnfit
