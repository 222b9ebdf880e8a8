// oneDNN activation, activation_grad, softmax, softmax_grad and masked_softmax. Eltwise
// tensors are viewed as 1-D, softmax ones as [rows, C] with the softmax on axis 1;
// masked_softmax writes the masked scores into its output and runs the softmax there. activation_grad uses the
// *_use_dst_for_bwd algorithms (t is y) for relu, sigmoid and tanh, t is x for the others;
// kinds oneDNN lacks (selu, softsign, hard_sigmoid) decline to the reference kernel.
#include <algorithm>

#include "backend/cpu/onednn_common.h"
#include "backend/cpu/onednn_kernels.h"

namespace nnfit {

namespace {

using namespace onednn;

// One primitive with inputs bound in order and one output; run() from one thread at a time.
class OnednnUnary final : public Kernel {
 public:
  explicit OnednnUnary(const KernelDesc& desc) : node_(desc.node_name) {}

  PrimitiveCall& call() { return call_; }
  void set_slots(std::vector<int> inputs, int output) {
    inputs_ = std::move(inputs);
    output_ = output;
  }

  std::size_t workspace_bytes() const override { return call_.scratchpad_bytes(); }

  void run(const KernelArgs& args) override {
    for (std::size_t i = 0; i < inputs_.size(); ++i) call_.bind(inputs_[i], args.inputs[i]);
    call_.bind(output_, args.outputs[0]);
    call_.execute(args.workspace, node_);
  }

 private:
  std::string node_;
  PrimitiveCall call_;
  std::vector<int> inputs_;
  int output_ = -1;
};

std::unique_ptr<Kernel> build(const KernelDesc& desc, std::string* why_not,
                              void (*init)(OnednnUnary&, const KernelDesc&, const Shape&)) {
  Shape shape = checked_elementwise(widened(desc));
  if (desc.op == "activation" || desc.op == "activation_grad") {
    if (!eltwise_algorithm(parse_activation_args(desc), false)) {
      if (why_not) *why_not = "oneDNN 2.6 has no algorithm for activation '" + desc.attrs.s("kind") + "' with these arguments";
      return nullptr;
    }
  }
  if (std::string r = empty_tensor_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  memory::data_type dt;
  if (!uniform_float_type(desc, &dt, why_not)) return nullptr;
  return decline_on_dnnl_error(desc, why_not, [&]() -> std::unique_ptr<Kernel> {
    auto k = std::make_unique<OnednnUnary>(desc);
    init(*k, desc, shape);
    return k;
  });
}

memory::data_type type_of(const KernelDesc& desc) {
  memory::data_type dt = memory::data_type::f32;
  uniform_float_type(desc, &dt, nullptr);  // build() checked it
  return dt;
}
memory::desc flat_md(const Shape& s, const KernelDesc& desc) { return tensor_md({s.numel()}, Tag::a, type_of(desc)); }
memory::desc rows_md(const Shape& s, const KernelDesc& desc) {
  std::int64_t c = s.dim(-1);
  return tensor_md({s.numel() / c, c}, Tag::ab, type_of(desc));
}
void init_activation(OnednnUnary& k, const KernelDesc& desc, const Shape& s) {
  const EltwiseAlgorithm a = *eltwise_algorithm(parse_activation_args(desc), false);
  memory::desc md = flat_md(s, desc);
  dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, a.algorithm, md, a.alpha, a.beta);
  dnnl::eltwise_forward::primitive_desc pd(d, user_scratchpad_attr(), cpu_engine());
  k.call().init<dnnl::eltwise_forward>(pd);
  int x = k.call().add(DNNL_ARG_SRC, md);
  k.set_slots({x}, k.call().add(DNNL_ARG_DST, md));
}

void init_activation_grad(OnednnUnary& k, const KernelDesc& desc, const Shape& s) {
  const ActivationArgs args = parse_activation_args(desc);
  const EltwiseAlgorithm a = *eltwise_algorithm(args, true);
  const bool t_is_y = activation_grad_reads_output(args.kind);
  memory::desc md = flat_md(s, desc);
  // The hint is created with the same algorithm, as oneDNN requires for *_use_dst_for_bwd.
  dnnl::eltwise_forward::primitive_desc hint(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, a.algorithm, md, a.alpha, a.beta), cpu_engine());
  dnnl::eltwise_backward::desc d(a.algorithm, md, md, a.alpha, a.beta);
  dnnl::eltwise_backward::primitive_desc pd(d, user_scratchpad_attr(), cpu_engine(), hint);
  k.call().init<dnnl::eltwise_backward>(pd);
  int t = k.call().add(t_is_y ? DNNL_ARG_DST : DNNL_ARG_SRC, md);
  int dy = k.call().add(DNNL_ARG_DIFF_DST, md);
  k.set_slots({t, dy}, k.call().add(DNNL_ARG_DIFF_SRC, md));
}

void init_softmax(OnednnUnary& k, const KernelDesc& desc, const Shape& s) {
  memory::desc md = rows_md(s, desc);
  dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
  dnnl::softmax_forward::primitive_desc pd(d, user_scratchpad_attr(), cpu_engine());
  k.call().init<dnnl::softmax_forward>(pd);
  int x = k.call().add(DNNL_ARG_SRC, md);
  k.set_slots({x}, k.call().add(DNNL_ARG_DST, md));
}

void init_softmax_grad(OnednnUnary& k, const KernelDesc& desc, const Shape& s) {
  memory::desc md = rows_md(s, desc);
  dnnl::softmax_forward::primitive_desc hint(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, md, 1), cpu_engine());
  dnnl::softmax_backward::desc d(md, md, 1);
  dnnl::softmax_backward::primitive_desc pd(d, user_scratchpad_attr(), cpu_engine(), hint);
  k.call().init<dnnl::softmax_backward>(pd);
  int y = k.call().add(DNNL_ARG_DST, md);
  int dy = k.call().add(DNNL_ARG_DIFF_DST, md);
  k.set_slots({y, dy}, k.call().add(DNNL_ARG_DIFF_SRC, md));
}

// masked_softmax: y = where(m, x, -1e9) (one pass, the heads of a sample sharing its mask
// rows), then oneDNN's softmax in place on y, then rows with no key left zeroed when asked.
class OnednnMaskedSoftmax final : public Kernel {
 public:
  OnednnMaskedSoftmax(const KernelDesc& desc, const Shape& x, std::int64_t heads)
      : node_(desc.node_name), g_(x[0]), t_(x[1]), s_(x[2]), heads_(heads),
        zero_rows_(desc.attrs.i_or("zero_masked_rows", 0) != 0) {
    memory::desc md = f32_md({g_ * t_, s_}, Tag::ab);
    dnnl::softmax_forward::primitive_desc pd(dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1),
                                             user_scratchpad_attr(), cpu_engine());
    call_.init<dnnl::softmax_forward>(pd);
    src_ = call_.add(DNNL_ARG_SRC, md);
    dst_ = call_.add(DNNL_ARG_DST, md);
  }

  std::size_t workspace_bytes() const override { return call_.scratchpad_bytes(); }

  void run(const KernelArgs& args) override {
    const auto* x = static_cast<const float*>(args.inputs[0]);
    const auto* m = static_cast<const float*>(args.inputs[1]);
    auto* y = static_cast<float*>(args.outputs[0]);
    const std::int64_t rows = g_ * t_, s = s_;
#pragma omp parallel for schedule(static) if (rows * s >= (1 << 14))
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* mr = m + mask_row(r) * s;
#pragma omp simd
      for (std::int64_t j = 0; j < s; ++j) y[r * s + j] = mr[j] != 0.0f ? x[r * s + j] : -1e9f;
    }
    call_.bind(src_, y);
    call_.bind(dst_, y);
    call_.execute(args.workspace, node_);
    if (!zero_rows_) return;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* mr = m + mask_row(r) * s;
      bool any = false;
      for (std::int64_t j = 0; j < s && !any; ++j) any = mr[j] != 0.0f;
      if (!any) std::fill(y + r * s, y + (r + 1) * s, 0.0f);
    }
  }

 private:
  // The mask row of score row r: sample (r / T) / heads, query r % T.
  std::int64_t mask_row(std::int64_t r) const { return (r / t_) / heads_ * t_ + r % t_; }

  std::string node_;
  std::int64_t g_, t_, s_, heads_;
  bool zero_rows_;
  PrimitiveCall call_;
  int src_ = -1, dst_ = -1;
};

}  // namespace

std::unique_ptr<Kernel> make_onednn_masked_softmax(const KernelDesc& desc, std::string* why_not) {
  if (desc.inputs.at(0).dtype != DType::f32) {
    if (why_not) *why_not = "its mask pass reads float32";
    return nullptr;
  }
  if (std::string r = empty_tensor_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const Shape& x = desc.inputs.at(0).shape;
  const std::int64_t heads = x[0] / desc.inputs.at(1).shape[0];
  return decline_on_dnnl_error(desc, why_not, [&]() -> std::unique_ptr<Kernel> {
    return std::make_unique<OnednnMaskedSoftmax>(desc, x, heads);
  });
}

std::unique_ptr<Kernel> make_onednn_activation(const KernelDesc& desc, std::string* why_not) {
  return build(desc, why_not, init_activation);
}

std::unique_ptr<Kernel> make_onednn_activation_grad(const KernelDesc& desc, std::string* why_not) {
  return build(desc, why_not, init_activation_grad);
}

std::unique_ptr<Kernel> make_onednn_softmax(const KernelDesc& desc, std::string* why_not) {
  return build(desc, why_not, init_softmax);
}

std::unique_ptr<Kernel> make_onednn_softmax_grad(const KernelDesc& desc, std::string* why_not) {
  return build(desc, why_not, init_softmax_grad);
}

}  // namespace nnfit
