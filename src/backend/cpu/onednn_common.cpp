// The oneDNN engine, stream, error translation and argument binding shared by every
// onednn_*.cpp kernel. Arguments go to dnnl_primitive_execute as a pre-built C array
// because the C++ execute() builds a std::vector on every call.
#include "backend/cpu/onednn_common.h"

#include <cmath>

#include "nnfit/core/error.h"

namespace nnfit::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine kEngine(dnnl::engine::kind::cpu, 0);
  return kEngine;
}

const dnnl::stream& cpu_stream() {
  static const dnnl::stream kStream(cpu_engine());
  return kStream;
}

memory::desc f32_md(const memory::dims& dims, Tag tag) {
  return memory::desc(dims, memory::data_type::f32, tag);
}

memory::desc tensor_md(const memory::dims& dims, Tag tag, memory::data_type dt) { return memory::desc(dims, dt, tag); }

bool uniform_float_type(const KernelDesc& desc, memory::data_type* out, std::string* why_not) {
  std::optional<DType> seen;
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      if (!is_floating(t.dtype)) continue;
      if (seen && *seen != t.dtype) {
        if (why_not) *why_not = "mixed floating types (" + std::string(dtype_name(*seen)) + ", " +
                                std::string(dtype_name(t.dtype)) + ")";
        return false;
      }
      seen = t.dtype;
    }
  }
  const DType d = seen.value_or(DType::f32);
  *out = d == DType::bf16 ? memory::data_type::bf16 : d == DType::f16 ? memory::data_type::f16 : memory::data_type::f32;
  return true;
}

bool input_output_float_types(const KernelDesc& desc, memory::data_type* in, memory::data_type* out,
                              std::string* why_not) {
  KernelDesc inputs = desc, outputs = desc;
  inputs.outputs.clear();
  outputs.inputs.clear();
  if (!uniform_float_type(inputs, in, why_not) || !uniform_float_type(outputs, out, why_not)) return false;
  if (*out != *in && *out != memory::data_type::f32) {
    if (why_not) *why_not = "outputs of another floating type than the inputs' or float32";
    return false;
  }
  return true;
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void PrimitiveCall::refuse_slow_low_precision(const dnnl::primitive_desc_base& pd) {
  bool low = false;
  for (int arg : {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}) {
    const memory::desc md = pd.query_md(dnnl::query::exec_arg_md, arg);
    low = low || md.data_type() == memory::data_type::bf16 || md.data_type() == memory::data_type::f16;
  }
  const std::string impl = pd.impl_info_str();
  if (low && impl.rfind("ref", 0) == 0) {
    // dnnl::error keeps the message pointer, not a copy.
    static thread_local std::string message;
    message = "only oneDNN's reference implementation (" + impl + ") runs this in bf16/f16 on this CPU";
    throw dnnl::error(dnnl_unimplemented, message.c_str());
  }
}

int PrimitiveCall::add(int dnnl_arg, const memory::desc& md) {
  memories_.emplace_back(md, cpu_engine(), static_cast<void*>(nullptr));
  args_.push_back({dnnl_arg, memories_.back().get()});
  return static_cast<int>(memories_.size()) - 1;
}

void PrimitiveCall::bind(int slot, const void* data) const {
  // oneDNN takes a non-const handle for inputs too; it does not write to them.
  memories_[static_cast<std::size_t>(slot)].set_data_handle(const_cast<void*>(data));
}

void PrimitiveCall::execute(void* workspace, const std::string& node) {
  if (scratchpad_slot_ >= 0) {
    NNFIT_CHECK(workspace != nullptr, InvalidArgument, node, ": oneDNN kernel needs ",
                scratchpad_bytes(), " workspace bytes but got none");
    bind(scratchpad_slot_, workspace);
  }
  dnnl_status_t status = dnnl_primitive_execute(primitive_.get(), cpu_stream().get(),
                                                static_cast<int>(args_.size()), args_.data());
  if (status == dnnl_success) status = dnnl_stream_wait(cpu_stream().get());
  NNFIT_CHECK(status == dnnl_success, BackendError, node, ": oneDNN primitive failed with status ",
              static_cast<int>(status));
}

std::optional<EltwiseAlgorithm> eltwise_algorithm(const ActivationArgs& args, bool backward) {
  using A = dnnl::algorithm;
  const auto alpha = static_cast<float>(args.alpha);
  switch (args.kind) {
    case ActivationKind::linear: return EltwiseAlgorithm{A::eltwise_linear, 1.0f, 0.0f};
    case ActivationKind::relu: return EltwiseAlgorithm{backward ? A::eltwise_relu_use_dst_for_bwd : A::eltwise_relu};
    case ActivationKind::sigmoid:
      return EltwiseAlgorithm{backward ? A::eltwise_logistic_use_dst_for_bwd : A::eltwise_logistic};
    case ActivationKind::tanh: return EltwiseAlgorithm{backward ? A::eltwise_tanh_use_dst_for_bwd : A::eltwise_tanh};
    case ActivationKind::gelu: return EltwiseAlgorithm{A::eltwise_gelu_erf};
    case ActivationKind::gelu_tanh: return EltwiseAlgorithm{A::eltwise_gelu_tanh};
    case ActivationKind::elu: return EltwiseAlgorithm{A::eltwise_elu, alpha, 0.0f};
    case ActivationKind::exponential: return EltwiseAlgorithm{A::eltwise_exp};
    case ActivationKind::leaky_relu: return EltwiseAlgorithm{A::eltwise_relu, alpha, 0.0f};
    case ActivationKind::relu6: return EltwiseAlgorithm{A::eltwise_clip_v2, 0.0f, 6.0f};
    case ActivationKind::silu: return EltwiseAlgorithm{A::eltwise_swish, 1.0f, 0.0f};
    case ActivationKind::mish: return EltwiseAlgorithm{A::eltwise_mish};
    case ActivationKind::hard_silu: return EltwiseAlgorithm{A::eltwise_hardswish};
    case ActivationKind::softplus: return EltwiseAlgorithm{A::eltwise_soft_relu};
    // oneDNN 2.6 has no selu, softsign or hard_sigmoid (either Keras's): the reference
    // kernel runs them.
    // Keras's ReLU layer: a leaky relu without a cap or threshold, a clip with only a cap.
    case ActivationKind::relu_keras:
      if (args.threshold != 0.0) return std::nullopt;
      if (!std::isfinite(args.max_value)) return EltwiseAlgorithm{A::eltwise_relu, alpha, 0.0f};
      if (args.alpha == 0.0) return EltwiseAlgorithm{A::eltwise_clip_v2, 0.0f, static_cast<float>(args.max_value)};
      return std::nullopt;
    case ActivationKind::selu:
    case ActivationKind::softsign:
    case ActivationKind::hard_sigmoid:
    case ActivationKind::hard_sigmoid_keras2: return std::nullopt;
  }
  return std::nullopt;
}

void append_activation(dnnl::post_ops& ops, ActivationKind kind) {
  if (kind == ActivationKind::linear) return;
  const std::optional<EltwiseAlgorithm> a = eltwise_algorithm(default_activation_args(kind), false);
  NNFIT_CHECK(a, InvalidArgument, "internal: activation without a oneDNN post-op reached fusion");
  ops.append_eltwise(1.0f, a->algorithm, a->alpha, a->beta);
}

// Note [oneDNN's 32-bit dimensions]. oneDNN 2.x takes dimensions as 64-bit dnnl_dim_t
// but its CPU implementations size their blockings in int: a batch of 2^32 became 0 and
// was divided by (SIGFPE inside primitive-descriptor creation, from `fit.batch_size`,
// `--batch-size` or `nnfit plan --batch-sizes 4294967296`), and 2^31 wrapped negative. So
// every oneDNN kernel declines a desc with a dimension past INT32_MAX, with this reason;
// the reference kernels take it in 64 bits, and the planner's arena then says whether
// the memory exists (it does not, at such sizes: a clean out-of-memory error).
std::string dimension_limit_reason(const KernelDesc& desc) {
  constexpr std::int64_t kMax = 0x7fffffff;
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      for (const std::int64_t d : t.shape.dims()) {
        if (d > kMax) {
          return "a dimension of " + std::to_string(d) + " in " + t.shape.to_string() +
                 " is past oneDNN's 32-bit limit (2^31 - 1)";
        }
      }
    }
  }
  return {};
}

std::unique_ptr<Kernel> decline_on_dnnl_error(const KernelDesc& desc, std::string* why_not,
                                              const std::function<std::unique_ptr<Kernel>()>& build) {
  if (std::string r = dimension_limit_reason(desc); !r.empty()) {
    if (why_not) *why_not = std::move(r);
    return nullptr;
  }
  try {
    return build();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) {
      if (why_not) *why_not = std::string("oneDNN has no implementation: ") + e.what();
      return nullptr;
    }
    throw BackendError(desc.op + " at node '" + desc.node_name + "': oneDNN failed: " + e.what());
  }
}

std::string empty_tensor_reason(const KernelDesc& desc) {
  for (const auto* list : {&desc.inputs, &desc.outputs}) {
    for (const TensorDesc& t : *list) {
      if (t.shape.numel() == 0) return "empty tensor " + t.shape.to_string();
    }
  }
  return {};
}

memory::dims nchw_dims(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return {n, c, h, w};
}

memory::dims strides_of(const Window2d& g) { return {g.sh, g.sw}; }
memory::dims padding_l_of(const Window2d& g) { return {g.pad_top, g.pad_left}; }
memory::dims padding_r_of(const Window2d& g) { return {g.pad_bottom, g.pad_right}; }

}  // namespace nnfit::onednn
