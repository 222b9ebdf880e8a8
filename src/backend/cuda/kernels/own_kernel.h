// Private to the CUDA backend: what every own-kernel family shares: the Kernel that runs a
// launch lambda, the storage type <-> DType map, the check that a desc's floating tensors
// are all of the kernel's storage type, and registration at float32, bfloat16 and float16.
// Compiled by nvcc (DeviceLaunch, own_kernels.cu) and g++ (HostLaunch, tests/cuda_host).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "backend/common/random.h"
#include "backend/cuda/kernels/hd_dtype.h"
#include "backend/cuda/kernels/launch.h"
#include "backend/widened_kernel.h"
#include "nnfit/backend/kernel_registry.h"

namespace nnfit::cuda {

// Whether a kernel may be captured in a CUDA graph (Kernel::capturable): `no` for a
// kernel whose run() reads per-step values from the StepContext's fields or copies from
// host memory (Note [Step values in device memory]); no own kernel does today.
enum class Capture { yes, no };

// A kernel whose run() is `f(args)`, with a fixed workspace size.
template <class F>
class LaunchKernel final : public Kernel {
 public:
  LaunchKernel(std::size_t workspace_bytes, F f, Capture capture)
      : workspace_bytes_(workspace_bytes), f_(std::move(f)), capture_(capture) {}
  std::size_t workspace_bytes() const override { return workspace_bytes_; }
  void run(const KernelArgs& args) override { f_(args); }
  bool capturable() const override { return capture_ == Capture::yes; }

 private:
  std::size_t workspace_bytes_;
  F f_;
  Capture capture_;
};

template <class F>
std::unique_ptr<Kernel> launch_kernel(F f, std::size_t workspace_bytes = 0, Capture capture = Capture::yes) {
  return std::make_unique<LaunchKernel<F>>(workspace_bytes, std::move(f), capture);
}

// Note [Step values in device memory]: a CUDA graph replays the launches it captured with
// the arguments they had then, so a kernel it replays cannot take the step, learning rate,
// seed or row offset by value. Such kernels read them from the StepScalars in device
// memory the model rewrites before every step (StepContext::device_step): a one-index
// functor derives what the update needs (Adam's bias-corrected rate, the dropout key) into
// the kernel's workspace, and the per-element functor reads it there. Without a device copy
// (the cuda-host tests, a run outside a model) this run's values are uploaded into
// `slot`, sizeof(StepScalars) bytes of the workspace (kStepSlot), and read the same way.
inline constexpr std::size_t kStepSlot = 64;
template <class Launch>
const StepScalars* step_scalars(const KernelArgs& a, void* slot) {
  if (a.ctx && a.ctx->device_step) return a.ctx->device_step;
  const StepScalars s = a.ctx ? StepScalars::of(*a.ctx) : StepScalars{};
  Launch::upload(slot, &s, sizeof s, a.ctx);
  return static_cast<const StepScalars*>(slot);
}

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, Bf16>) return DType::bf16;
  else if constexpr (std::is_same_v<T, F16>) return DType::f16;
  else return DType::f32;
}

// Whether every floating tensor of `desc` is of T's dtype (the float32 checks then run on
// widened(desc), whose shapes are the same); false with the reason otherwise.
template <class T>
bool floats_are(const KernelDesc& desc, std::string* why_not) {
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      if (is_floating(t.dtype) && t.dtype != dtype_of<T>()) {
        if (why_not) {
          *why_not = "cuda:" + desc.op + " at " + std::string(dtype_name(dtype_of<T>())) + " got a " +
                     std::string(dtype_name(t.dtype)) + " tensor";
        }
        return false;
      }
    }
  }
  return true;
}

// The float32 form of desc for the shared float32 checks (check_*), which also validate
// shapes and attributes and throw InvalidArgument for a malformed desc.
inline KernelDesc as_f32(const KernelDesc& desc) { return widenable(desc) ? widened(desc) : desc; }

// Registers `op` at the three floating dtypes with one factory per storage type.
inline void add_float_kernels(KernelRegistry& r, const std::string& op, KernelFactory f32, KernelFactory bf16,
                              KernelFactory f16) {
  r.add(op, DeviceType::cuda, DType::f32, {"cuda:" + op, f32});
  r.add(op, DeviceType::cuda, DType::bf16, {"cuda:" + op, bf16});
  r.add(op, DeviceType::cuda, DType::f16, {"cuda:" + op, f16});
}

// Fills out[i] with zero at T's storage (float for a float32 workspace).
template <class T>
struct ZeroFn {
  void* out;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(out, i, 0.0f); }
};

// A float32 workspace stored at the kernel's dtype: sums and scans kept in float32 until
// their end (augment's adjoint, the recurrent scan).
template <class T>
struct StoreF32Fn {
  const float* from;
  void* to;
  NNFIT_HD void operator()(std::int64_t i) const { store<T>(to, i, from[i]); }
};

// Which workspace offset, 64-byte aligned, follows `bytes`.
inline std::size_t aligned_bytes(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

// Registration of each family (templates on the launch policy; own_kernels.cu instantiates
// them with DeviceLaunch, tests/cuda_host with HostLaunch).
template <class Launch>
void register_elementwise_kernels(KernelRegistry& r);
template <class Launch>
void register_training_kernels(KernelRegistry& r);
template <class Launch>
void register_optimizer_kernels(KernelRegistry& r);
template <class Launch>
void register_layout_kernels(KernelRegistry& r);

// This step's draw of a random node (Dropout, the noise layers) from the StepScalars (Note
// [Step values in device memory]), one index: the key of (run seed, node seed, step) and the index offset of the
// run's rows, as DropoutParams::index_offset computes it (`per_row` > 0: a noise shape
// drawn per row; 0: one per element; -1: a noise shape not per row, no offset).
struct DropoutDrawFn {
  const StepScalars* s;
  std::uint64_t node_seed;
  std::int64_t numel, first_dim, per_row;
  std::uint64_t* out;
  NNFIT_HD void operator()(std::int64_t) const {
    out[0] = dropout_key(s->seed, node_seed, static_cast<std::uint64_t>(s->step));
    if (per_row == 0) out[1] = random_index_offset(s->row_offset, s->rows, numel);
    else if (per_row < 0 || first_dim != s->rows) out[1] = 0;
    else out[1] = random_index_offset(s->row_offset, s->rows, s->rows * per_row);
  }
};

// Runs DropoutDrawFn into two words after a step slot and returns them; the slot is the
// workspace's start, or `at` (kRandomDrawWorkspace bytes of the workspace, 64-aligned).
template <class Launch>
const std::uint64_t* random_draw(const KernelArgs& a, std::uint64_t node_seed, std::int64_t numel, std::int64_t first_dim,
                                 std::int64_t per_row, void* at = nullptr) {
  char* ws = static_cast<char*>(at ? at : a.workspace);
  auto* draw = reinterpret_cast<std::uint64_t*>(ws + kStepSlot);
  Launch::run(DropoutDrawFn{step_scalars<Launch>(a, ws), node_seed, numel, first_dim, per_row, draw}, 1, a.ctx);
  return draw;
}
inline constexpr std::size_t kRandomDrawWorkspace = kStepSlot + 64;

}  // namespace nnfit::cuda
