// The kernel contract. A kernel is created once, at plan time, for one op with fixed
// input/output shapes and attributes (a KernelDesc), so it can build its vendor primitives
// then; run() only binds pointers and computes, and never allocates.
//
// The op catalogue (names, inputs, outputs, attributes, semantics) is in
// docs/design/ops.md; the op table (src/graph/ops.yaml) names each op's shape and gradient rules.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/backend/attrs.h"
#include "nnfit/core/tensor.h"

namespace nnfit {

struct KernelDesc {
  std::string op;
  Attrs attrs;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  // For messages: the layer or node this kernel serves ("dense_1/matmul").
  std::string node_name;

  // "matmul at node 'dense_1/matmul'" (or the op alone): how kernel errors name their place.
  std::string where() const;
};

// Per-step values that are not tensors. Owned by the caller of Program::run.
struct StepContext {
  std::int64_t step = 0;        // optimizer iterations completed before this step (0-based)
  float learning_rate = 0.0f;   // this step's learning rate, from the schedule
  std::uint64_t seed = 0;       // base seed for random ops (dropout)
  // Data-parallel (Note [Random draws by global row]): this run computes `rows` rows that
  // begin at row `row_offset` of the global batch, and random ops draw the numbers one
  // process draws for those rows. 0 and 0 (one process): the rows are the batch.
  std::int64_t row_offset = 0;
  std::int64_t rows = 0;
  bool training = true;
  // The cudaStream_t a CUDA kernel is enqueued on (the model's compute stream); null: the
  // default stream. CPU kernels ignore it.
  void* stream = nullptr;
  // Device memory holding this step's StepScalars (below), written before each run by the
  // model on a device: a kernel a CUDA graph replays reads the per-step values there, not
  // from the fields above, which a captured launch would keep from the capture's step
  // (Note [Step values in device memory]). null: no such copy (the CPU, tests).
  const struct StepScalars* device_step = nullptr;
};

// The per-step values of a StepContext, as the model copies them to device memory.
struct StepScalars {
  std::int64_t step = 0;
  std::int64_t row_offset = 0;
  std::int64_t rows = 0;
  std::uint64_t seed = 0;
  float learning_rate = 0.0f;
  static StepScalars of(const StepContext& c) { return {c.step, c.row_offset, c.rows, c.seed, c.learning_rate}; }
};

struct KernelArgs {
  const void* const* inputs;  // one pointer per KernelDesc input
  void* const* outputs;       // one pointer per KernelDesc output
  void* workspace;            // workspace_bytes() bytes, 64-byte aligned, or null
  const StepContext* ctx;

  // Input or output i as an array of T (the kernel's desc fixes the dtype).
  template <class T = float>
  const T* in(std::size_t i) const { return static_cast<const T*>(inputs[i]); }
  template <class T = float>
  T* out(std::size_t i) const { return static_cast<T*>(outputs[i]); }
};

// Thread safety: run() is called from one thread at a time; it may use OpenMP inside.
class Kernel {
 public:
  virtual ~Kernel() = default;
  // Scratch memory run() needs; the planner gives it a slot live only during this kernel.
  virtual std::size_t workspace_bytes() const { return 0; }
  virtual void run(const KernelArgs& args) = 0;
  // Whether a CUDA graph may capture run() once and replay it at later steps: its launches
  // read nothing per-step from the StepContext's fields (only StepContext::device_step),
  // and it makes no copy from host memory and no host synchronization. Device kernels only.
  virtual bool capturable() const { return false; }
};

// A factory returns nullptr and sets *why_not when it declines the desc (an unsupported
// shape, attribute or layout); the registry reports these reasons.
using KernelFactory = std::unique_ptr<Kernel> (*)(const KernelDesc& desc, std::string* why_not);

}  // namespace nnfit
