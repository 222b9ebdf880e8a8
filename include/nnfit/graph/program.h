// Planner and executor. plan() compiles a Graph into a Program: a topological schedule,
// one kernel per node chosen from the registry (vendor primitives built now), liveness
// of every intermediate, and an offset for each in one arena, whose size is the exact
// peak of the step's transient memory. Program::run executes the schedule with pointers
// resolved at bind time, so a step allocates no tensor memory.
//
// Note [One arena per program]: inputs, intermediates and kernel workspaces share one
// arena; variables (weights, gradients' destinations, optimizer slots) are bound tensors
// outside it. Programs of one model may share one arena buffer (they never run at once).
//
// Thread safety: a Program runs on one thread at a time.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/backend/kernel.h"
#include "nnfit/core/device.h"
#include "nnfit/graph/graph.h"

namespace nnfit {

struct ArenaSlot {
  int value = -1;            // value id, or -1 for a kernel workspace
  int step = -1;             // for workspaces: the step that uses it
  std::size_t offset = 0;
  std::size_t bytes = 0;
  int first_step = 0;        // live range, inclusive (-1: before the first step)
  int last_step = 0;
};

struct PlannedStep {
  int node = -1;
  std::string impl;          // the kernel implementation chosen
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs, outputs;
  std::size_t workspace_offset = 0, workspace_bytes = 0;
};

// The part of a training step a planned step belongs to (Note [Step phases] in
// program.cpp): the forward pass and the loss, the backward pass, the optimizer update.
enum class StepPhase : std::uint8_t { forward = 0, backward = 1, update = 2 };
inline constexpr std::size_t kNumStepPhases = 3;

class KernelRegistry;  // nnfit/backend/kernel_registry.h

struct PlanOptions {
  DeviceType device = DeviceType::cpu;
  // Values that must stay readable after run() (loss, predictions); they live to the end.
  std::vector<int> keep;
  std::size_t alignment = 64;
  // Where the kernels come from: null for kernel_registry() (Backend::kernels()).
  const KernelRegistry* registry = nullptr;
};

class Program {
 public:
  Program() = default;
  Program(Program&&) = default;
  Program& operator=(Program&&) = default;

  // Bytes of arena this program needs.
  std::size_t arena_bytes() const { return arena_bytes_; }
  // Points every step at `arena` (arena_bytes() bytes, 64-byte aligned). Must be called
  // before run() and again if the arena moves.
  void bind(void* arena);
  // The arena bind() last pointed the steps at (null before).
  void* arena() const { return arena_; }
  // requires: bind() was called.
  void run(const StepContext& ctx);
  // The same, calling after_step(i) as soon as steps()[i] has run: data-parallel training
  // starts a gradient bucket's all-reduce there while the backward pass goes on.
  void run(const StepContext& ctx, const std::function<void(std::size_t step)>& after_step);
  // The index into steps() of the step that writes `value`, or -1 (an input or variable).
  int producer_step(int value) const;
  // Whether every step's kernel may be captured in a CUDA graph (Kernel::capturable).
  bool capturable() const;

  // Where a graph value lives after bind(): arena offset or the variable's buffer.
  void* data(int value) const;
  // Makes run() read input `value` from `data` instead of its arena slot (so a batch the
  // input pipeline prepared is used where it lies, without a copy); values planned onto
  // the input's slot (reshape aliases) follow. nullptr goes back to the slot, which
  // data(value) always names. requires: bind() (bind() resets to the slot); data holds
  // the input's bytes and stays unchanged while run() executes. throws: InvalidArgument
  // if value is not an input with an arena slot.
  void set_input(int value, const void* data);
  const std::vector<PlannedStep>& steps() const { return steps_; }
  // Per-step wall-time accumulation, off by default. When on, run() reads the clock once
  // per kernel (a kernel's end is the next one's start) and adds each kernel's time to
  // step_seconds() and to its phase's phase_ns(). Turning it on zeroes both. `wait`
  // (given on a device whose kernels run asynchronously) is called after each kernel,
  // before the clock is read, so each kernel's time is its run's, not its launch's: a
  // timed step pays one synchronization per kernel.
  void set_timing(bool on, std::function<void()> wait = {});
  bool timing() const { return timing_; }
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  // Nanoseconds spent in each StepPhase's kernels (timing on) since set_timing(true) or
  // the last take_phase_ns(), which returns them and starts again from zero.
  std::array<std::int64_t, kNumStepPhases> take_phase_ns();
  // The phase of steps()[step] (Note [Step phases]).
  StepPhase phase(std::size_t step) const;
  const std::vector<ArenaSlot>& slots() const { return slots_; }
  const Graph& graph() const { return graph_; }

 private:
  friend Program plan(Graph graph, const PlanOptions& options);

  Graph graph_;
  std::vector<PlannedStep> steps_;
  std::vector<ArenaSlot> slots_;
  std::vector<long long> value_offset_;   // -1: not in the arena
  std::size_t arena_bytes_ = 0;
  void* arena_ = nullptr;
  // Flattened per-step pointer tables, built by bind().
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
  std::vector<std::size_t> in_begin_, out_begin_;
  bool timing_ = false;
  std::function<void()> timing_wait_;
  std::vector<double> step_seconds_;
  std::array<std::int64_t, kNumStepPhases> phase_ns_{};
  // Per step, built by bind(): the phase, and the node's name for its trace range
  // (interned: static lifetime, as TraceRange requires; Note [Kernel range names]).
  std::vector<StepPhase> phases_;
  std::vector<const char*> trace_names_;
};

// Compiles `graph` (taken by value: the program keeps it). Throws Unsupported when an op
// has no kernel, naming the node.
Program plan(Graph graph, const PlanOptions& options);

}  // namespace nnfit
