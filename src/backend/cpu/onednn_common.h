// Private to the oneDNN kernels (onednn_*.cpp): the shared CPU engine and stream,
// translation of oneDNN errors, and PrimitiveCall, which holds a primitive with its
// argument memories pre-created so run() only swaps data pointers and never allocates
// (the Kernel contract in include/nnfit/backend/kernel.h).
#pragma once
#include <optional>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/common/nn_op_geometry.h"
#include "backend/widened_kernel.h"  // the geometry checks read float32 descs: see widened()
#include "nnfit/backend/kernel.h"

namespace nnfit::onednn {

using dnnl::memory;
using Tag = memory::format_tag;

// One CPU engine and stream for every kernel, created on first use. The stream is used
// from one thread at a time (Kernel::run's contract).
const dnnl::engine& cpu_engine();
const dnnl::stream& cpu_stream();

// An f32 memory descriptor with plain layout `tag`.
memory::desc f32_md(const memory::dims& dims, Tag tag);
// A memory descriptor of type `dt` with plain layout `tag`.
memory::desc tensor_md(const memory::dims& dims, Tag tag, memory::data_type dt);
// The one oneDNN type of every floating tensor of `desc` (f32, bf16 or f16: the mixed
// precision policies give an op's tensors one compute type); false, with *why_not, when
// they differ. Integer tensors are not looked at.
bool uniform_float_type(const KernelDesc& desc, memory::data_type* out, std::string* why_not);
// The inputs' one floating type in *in and the outputs' in *out, which may also be f32 where
// the inputs are bf16 / f16: a cast to float32 folded into the op (fuse_output_casts) has it
// write float32 itself, as oneDNN's matmul and convolutions can. False, with *why_not, else.
bool input_output_float_types(const KernelDesc& desc, memory::data_type* in, memory::data_type* out,
                              std::string* why_not);
// An attr with a user-managed scratchpad (bound to KernelArgs::workspace).
dnnl::primitive_attr user_scratchpad_attr();

// A primitive plus its arguments. Slots are added once (in a kernel constructor); run()
// calls bind() per slot and execute(). Not thread safe; one run() at a time.
class PrimitiveCall {
 public:
  // Creates the primitive from pd; records its scratchpad size.
  template <typename PrimitiveT, typename PdT>
  void init(const PdT& pd) {
    refuse_slow_low_precision(pd);
    primitive_ = PrimitiveT(pd);
    scratchpad_md_ = pd.scratchpad_desc();
    if (scratchpad_bytes() > 0) scratchpad_slot_ = add(DNNL_ARG_SCRATCHPAD, scratchpad_md_);
  }
  // A bf16 / f16 primitive that oneDNN can only run with its reference implementation (a
  // CPU without AVX-512) is slower than the widened f32 kernel: throws dnnl_unimplemented,
  // which the factory turns into a decline.
  static void refuse_slow_low_precision(const dnnl::primitive_desc_base& pd);
  // Adds argument `dnnl_arg` described by md; returns the slot for bind().
  int add(int dnnl_arg, const memory::desc& md);
  void bind(int slot, const void* data) const;
  std::size_t scratchpad_bytes() const { return scratchpad_md_.get_size(); }
  // Runs on the shared stream with `workspace` (scratchpad_bytes() bytes) as scratchpad,
  // then waits. Throws BackendError naming `node` on failure.
  void execute(void* workspace, const std::string& node);

 private:
  dnnl::primitive primitive_;
  memory::desc scratchpad_md_;
  int scratchpad_slot_ = -1;
  std::vector<memory> memories_;
  std::vector<dnnl_exec_arg_t> args_;
};

// Maps an activation to an eltwise algorithm. Forward: relu, logistic, tanh, gelu_erf.
// Backward: the *_use_dst_for_bwd variants for relu/sigmoid/tanh (their t input is y),
// gelu_erf for gelu (t is x). Linear maps to eltwise_linear with alpha 1.
// oneDNN's algorithm for an activation with its alpha and beta, or nullopt where oneDNN
// has none (the reference kernel runs it); backward picks *_use_dst_for_bwd for the kinds
// whose gradient reads the output.
struct EltwiseAlgorithm {
  dnnl::algorithm algorithm;
  float alpha = 0.0f, beta = 0.0f;
};
std::optional<EltwiseAlgorithm> eltwise_algorithm(const ActivationArgs& args, bool backward);
// Appends the activation as an eltwise post-op; linear appends nothing.
void append_activation(dnnl::post_ops& ops, ActivationKind kind);

// Builds a kernel with `build()` and turns oneDNN failures into the kernel contract: no
// implementation → nullptr with *why_not; any other oneDNN error → BackendError. A desc
// past oneDNN's 32-bit dimensions (dimension_limit_reason) is declined before oneDNN sees it.
std::unique_ptr<Kernel> decline_on_dnnl_error(const KernelDesc& desc, std::string* why_not,
                                              const std::function<std::unique_ptr<Kernel>()>& build);

// Note [oneDNN's 32-bit dimensions]: a reason to decline when a dimension of any input or
// output is past INT32_MAX; empty otherwise.
std::string dimension_limit_reason(const KernelDesc& desc);
// A reason to decline when any input or output has no elements; empty otherwise.
std::string empty_tensor_reason(const KernelDesc& desc);

// Shared dims for NHWC tensors and HWIO filters, in oneDNN's logical (NCHW, OIHW) order.
memory::dims nchw_dims(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w);
// Padding and stride vectors of a window op.
memory::dims strides_of(const Window2d& g);
memory::dims padding_l_of(const Window2d& g);
memory::dims padding_r_of(const Window2d& g);

}  // namespace nnfit::onednn
