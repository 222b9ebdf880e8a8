// oneDNN matmul, fused_matmul and batch_matmul. Transposed operands are described by
// format_tag::ba (acb with a batch axis) on the logical [M,K] / [K,N] dims (no copy);
// fused_matmul carries the bias in the primitive and the activation as an eltwise post-op.
#include "backend/cpu/onednn_common.h"
#include "backend/cpu/onednn_kernels.h"

namespace nnfit {

namespace {

using namespace onednn;

// Owns one matmul primitive; run() from one thread at a time.
class OnednnMatmul final : public Kernel {
 public:
  // batch > 0: batch_matmul's [batch, M, K]·[batch, K, N].
  // dt: the inputs' type; out_dt: the output's (dt, or f32 with a folded cast).
  OnednnMatmul(const KernelDesc& desc, const MatmulGeometry& g, bool fused, ActivationKind act, memory::data_type dt,
               memory::data_type out_dt, std::int64_t batch = 0)
      : node_(desc.node_name), fused_(fused) {
    const auto md = [batch](std::int64_t r, std::int64_t c, bool transposed, memory::data_type t) {
      if (batch == 0) return tensor_md({r, c}, transposed ? Tag::ba : Tag::ab, t);
      return tensor_md({batch, r, c}, transposed ? Tag::acb : Tag::abc, t);
    };
    memory::desc a = md(g.m, g.k, g.transpose_a, dt);
    memory::desc b = md(g.k, g.n, g.transpose_b, dt);
    memory::desc c = md(g.m, g.n, false, out_dt);
    memory::desc bias = fused ? tensor_md({1, g.n}, Tag::ab, dt) : memory::desc();
    dnnl::primitive_attr attr = user_scratchpad_attr();
    if (fused) {
      dnnl::post_ops ops;
      append_activation(ops, act);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, bias, c), attr, cpu_engine());
    call_.init<dnnl::matmul>(pd);
    a_ = call_.add(DNNL_ARG_SRC, a);
    b_ = call_.add(DNNL_ARG_WEIGHTS, b);
    if (fused) bias_ = call_.add(DNNL_ARG_BIAS, bias);
    c_ = call_.add(DNNL_ARG_DST, c);
  }

  std::size_t workspace_bytes() const override { return call_.scratchpad_bytes(); }

  void run(const KernelArgs& args) override {
    call_.bind(a_, args.inputs[0]);
    call_.bind(b_, args.inputs[1]);
    if (fused_) call_.bind(bias_, args.inputs[2]);
    call_.bind(c_, args.outputs[0]);
    call_.execute(args.workspace, node_);
  }

 private:
  std::string node_;
  bool fused_;
  PrimitiveCall call_;
  int a_ = -1, b_ = -1, bias_ = -1, c_ = -1;
};

}  // namespace

std::unique_ptr<Kernel> make_onednn_batch_matmul(const KernelDesc& desc, std::string* why_not) {
  if (std::string r = empty_tensor_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const Shape& a = desc.inputs.at(0).shape;
  const Shape& c = desc.outputs.at(0).shape;
  MatmulGeometry g;
  g.transpose_a = desc.attrs.i_or("transpose_a", 0) != 0;
  g.transpose_b = desc.attrs.i_or("transpose_b", 0) != 0;
  g.m = c[1];
  g.n = c[2];
  g.k = g.transpose_a ? a[1] : a[2];
  memory::data_type dt;
  if (!uniform_float_type(desc, &dt, why_not)) return nullptr;
  return decline_on_dnnl_error(desc, why_not, [&]() -> std::unique_ptr<Kernel> {
    return std::make_unique<OnednnMatmul>(desc, g, false, ActivationKind::linear, dt, dt, c[0]);
  });
}

std::unique_ptr<Kernel> make_onednn_matmul(const KernelDesc& desc, std::string* why_not) {
  MatmulGeometry g = checked_matmul(widened(desc));
  bool fused = desc.op == "fused_matmul";
  ActivationKind act = fused ? parse_activation_kind(desc, "activation") : ActivationKind::linear;
  if (std::string r = empty_tensor_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  memory::data_type dt, out_dt;
  if (!input_output_float_types(desc, &dt, &out_dt, why_not)) return nullptr;
  return decline_on_dnnl_error(desc, why_not, [&]() -> std::unique_ptr<Kernel> {
    return std::make_unique<OnednnMatmul>(desc, g, fused, act, dt, out_dt);
  });
}

}  // namespace nnfit
