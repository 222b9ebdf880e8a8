// oneDNN conv2d, fused_conv2d, conv2d_backprop_input and conv2d_backprop_filter, and their
// 3-D forms (conv3d, ...). Activations stay plain NHWC / NDHWC; the filter layout is left to
// oneDNN (format_tag::any) and the HWIO / DHWIO filter is reordered into (or, for the filter
// gradient, out of) a workspace buffer each run: with plain HWIO weights oneDNN falls back
// to gemm convolution, which is several times slower, worst with a fused activation. "same"
// padding may be asymmetric (padding_l != padding_r). Dilation is oneDNN's "dilates" (taps
// d - 1 apart counts d - 1 gaps); groups add a leading G to the filter (G, O/G, C/G, K...),
// described over nnfit's [K...,C/G,O] buffer by strides. Both ranks build one ConvSpec and
// share the kernel class.
#include <algorithm>

#include "backend/cpu/onednn_common.h"
#include "backend/cpu/onednn_kernels.h"

namespace nnfit {

namespace {

using namespace onednn;

enum class ConvPass { forward, backward_data, backward_weights };

// What a convolution primitive needs, from a 2-D or 3-D window: plain activations, the
// filter over nnfit's buffer and as `any`, the bias size, and the window vectors.
struct ConvSpec {
  memory::desc x, w, w_any, y;
  memory::dims strides, dilates, padding_l, padding_r;
  std::int64_t o = 0;  // output channels
};

// nnfit's filter [KH,KW,C/G,O] as oneDNN's (O, C, KH, KW), or with groups (G, O/G, C/G, KH, KW).
ConvSpec conv_spec(const Window2d& g, memory::data_type dt) {
  ConvSpec s;
  const std::int64_t gc = g.group_c(), go = g.group_o();
  const memory::dims w = g.groups == 1 ? memory::dims{g.o, g.c, g.kh, g.kw}
                                       : memory::dims{g.groups, go, gc, g.kh, g.kw};
  s.x = tensor_md(nchw_dims(g.n, g.c, g.h, g.w), Tag::nhwc, dt);
  s.w = g.groups == 1 ? tensor_md(w, Tag::hwio, dt)
                      : memory::desc(w, dt, memory::dims{go, 1, g.o, g.kw * gc * g.o, gc * g.o});
  s.w_any = tensor_md(w, Tag::any, dt);
  s.y = tensor_md(nchw_dims(g.n, g.o, g.oh, g.ow), Tag::nhwc, dt);
  s.strides = strides_of(g);
  s.dilates = {g.dh - 1, g.dw - 1};
  s.padding_l = padding_l_of(g);
  s.padding_r = padding_r_of(g);
  s.o = g.o;
  return s;
}

// nnfit's filter [KD,KH,KW,C/G,O] as oneDNN's (O, C, KD, KH, KW), or with groups
// (G, O/G, C/G, KD, KH, KW).
ConvSpec conv_spec(const Window3d& g, memory::data_type dt) {
  ConvSpec s;
  const std::int64_t gc = g.group_c(), go = g.group_o();
  const auto& k = g.k;
  const memory::dims w = g.groups == 1 ? memory::dims{g.o, g.c, k[0], k[1], k[2]}
                                       : memory::dims{g.groups, go, gc, k[0], k[1], k[2]};
  s.x = tensor_md({g.n, g.c, g.in[0], g.in[1], g.in[2]}, Tag::ndhwc, dt);
  s.w = g.groups == 1 ? tensor_md(w, Tag::dhwio, dt)
                      : memory::desc(w, dt,
                                     memory::dims{go, 1, g.o, k[1] * k[2] * gc * g.o, k[2] * gc * g.o, gc * g.o});
  s.w_any = tensor_md(w, Tag::any, dt);
  s.y = tensor_md({g.n, g.o, g.out[0], g.out[1], g.out[2]}, Tag::ndhwc, dt);
  s.strides = {g.stride[0], g.stride[1], g.stride[2]};
  s.dilates = {g.dilation[0] - 1, g.dilation[1] - 1, g.dilation[2] - 1};
  s.padding_l = {g.pad_before[0], g.pad_before[1], g.pad_before[2]};
  s.padding_r = {g.pad_after[0], g.pad_after[1], g.pad_after[2]};
  s.o = g.o;
  return s;
}

// `d` with data type t (its layout, plain or `any`, kept).
memory::desc retyped(const memory::desc& d, memory::data_type t) {
  if (d.data.format_kind == dnnl_format_kind_any) return memory::desc(d.dims(), t, Tag::any);
  const auto& blocking = d.data.format_desc.blocking;
  return memory::desc(d.dims(), t, memory::dims(blocking.strides, blocking.strides + d.data.ndims));
}

std::size_t align64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

dnnl::convolution_forward::primitive_desc forward_pd(const ConvSpec& md, const memory::desc& bias,
                                                     dnnl::prop_kind prop,
                                                     const dnnl::primitive_attr& attr) {
  dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_direct, md.x, md.w_any, bias, md.y,
                                    md.strides, md.dilates, md.padding_l, md.padding_r);
  return dnnl::convolution_forward::primitive_desc(d, attr, cpu_engine());
}

// Owns one convolution primitive of the given pass and, when oneDNN picks a non-HWIO filter
// layout, a filter reorder. Workspace: [filter buffer | scratchpad shared by both
// primitives, which run one after the other]. run() from one thread at a time.
class OnednnConv final : public Kernel {
 public:
  OnednnConv(const KernelDesc& desc, const ConvSpec& md, ConvPass pass, bool fused, ActivationKind act,
             memory::data_type dt)
      : node_(desc.node_name), fused_(fused) {
    dnnl::primitive_attr attr = user_scratchpad_attr();
    if (pass == ConvPass::forward) {
      memory::desc bias = fused ? tensor_md({md.o}, Tag::a, dt) : memory::desc();
      if (fused) {
        dnnl::post_ops ops;
        append_activation(ops, act);
        attr.set_post_ops(ops);
      }
      auto pd = forward_pd(md, bias, dnnl::prop_kind::forward_inference, attr);
      call_.init<dnnl::convolution_forward>(pd);
      in_[0] = call_.add(DNNL_ARG_SRC, md.x);
      in_[1] = call_.add(DNNL_ARG_WEIGHTS, pd.weights_desc());
      if (fused) in_[2] = call_.add(DNNL_ARG_BIAS, bias);
      out_ = call_.add(DNNL_ARG_DST, md.y);
      plan_filter_reorder(md.w, pd.weights_desc(), true);
      return;
    }
    // The forward hint in the inputs' type (a folded cast retypes only this pass's output).
    ConvSpec in_types = md;
    in_types.x = retyped(md.x, dt);
    in_types.w_any = retyped(md.w_any, dt);
    in_types.y = retyped(md.y, dt);
    auto hint = forward_pd(in_types, memory::desc(), dnnl::prop_kind::forward_training, dnnl::primitive_attr());
    if (pass == ConvPass::backward_data) {
      dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, md.x, md.w_any, md.y,
                                              md.strides, md.dilates, md.padding_l, md.padding_r);
      dnnl::convolution_backward_data::primitive_desc pd(d, attr, cpu_engine(), hint);
      call_.init<dnnl::convolution_backward_data>(pd);
      in_[0] = call_.add(DNNL_ARG_DIFF_DST, md.y);
      in_[1] = call_.add(DNNL_ARG_WEIGHTS, pd.weights_desc());
      out_ = call_.add(DNNL_ARG_DIFF_SRC, md.x);
      plan_filter_reorder(md.w, pd.weights_desc(), true);
    } else {
      dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, md.x, md.w_any, md.y,
                                                 md.strides, md.dilates, md.padding_l, md.padding_r);
      dnnl::convolution_backward_weights::primitive_desc pd(d, attr, cpu_engine(), hint);
      call_.init<dnnl::convolution_backward_weights>(pd);
      in_[0] = call_.add(DNNL_ARG_SRC, md.x);
      in_[1] = call_.add(DNNL_ARG_DIFF_DST, md.y);
      out_ = call_.add(DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc());
      plan_filter_reorder(md.w, pd.diff_weights_desc(), false);
    }
  }

  std::size_t workspace_bytes() const override {
    return filter_bytes_ + std::max(call_.scratchpad_bytes(), reorder_.scratchpad_bytes());
  }

  void run(const KernelArgs& args) override {
    char* filter = static_cast<char*>(args.workspace);
    char* scratch = filter_bytes_ ? filter + filter_bytes_ : filter;
    if (reorder_in_) {
      reorder_.bind(reorder_from_, args.inputs[1]);
      reorder_.bind(reorder_to_, filter);
      reorder_.execute(scratch, node_);
    }
    call_.bind(in_[0], args.inputs[0]);
    call_.bind(in_[1], reorder_in_ ? filter : args.inputs[1]);
    if (fused_) call_.bind(in_[2], args.inputs[2]);
    call_.bind(out_, reorder_out_ ? filter : args.outputs[0]);
    call_.execute(scratch, node_);
    if (reorder_out_) {
      reorder_.bind(reorder_from_, filter);
      reorder_.bind(reorder_to_, args.outputs[0]);
      reorder_.execute(scratch, node_);
    }
  }

 private:
  // Sets up the (D)HWIO <-> `inner` filter reorder when oneDNN chose another layout; `in` is
  // true when the filter is an input (forward, backward data), false for the filter grad.
  void plan_filter_reorder(const memory::desc& hwio, const memory::desc& inner, bool in) {
    if (inner == hwio) return;
    const memory::desc& from = in ? hwio : inner;
    const memory::desc& to = in ? inner : hwio;
    dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, user_scratchpad_attr());
    reorder_.init<dnnl::reorder>(pd);
    reorder_from_ = reorder_.add(DNNL_ARG_FROM, from);
    reorder_to_ = reorder_.add(DNNL_ARG_TO, to);
    filter_bytes_ = align64(inner.get_size());
    (in ? reorder_in_ : reorder_out_) = true;
  }

  std::string node_;
  bool fused_;
  PrimitiveCall call_;
  PrimitiveCall reorder_;
  bool reorder_in_ = false, reorder_out_ = false;
  std::size_t filter_bytes_ = 0;
  int in_[3] = {-1, -1, -1};
  int out_ = -1;
  int reorder_from_ = -1, reorder_to_ = -1;
};

// The kernel of a convolution desc of window `g` (checked by the caller).
template <typename Window>
std::unique_ptr<Kernel> make_conv(const KernelDesc& desc, std::string* why_not, ConvPass pass, const Window& g) {
  memory::data_type dt, out_dt;
  if (!input_output_float_types(desc, &dt, &out_dt, why_not)) return nullptr;
  ConvSpec md = conv_spec(g, dt);
  // A folded cast to float32 (fuse_output_casts): the pass's output written as float32.
  if (out_dt != dt) {
    if (pass == ConvPass::forward) md.y = retyped(md.y, out_dt);
    if (pass == ConvPass::backward_data) md.x = retyped(md.x, out_dt);
    if (pass == ConvPass::backward_weights) {
      md.w = retyped(md.w, out_dt);
      md.w_any = retyped(md.w_any, out_dt);
    }
  }
  const bool fused = desc.op == "fused_conv2d" || desc.op == "fused_conv3d";
  ActivationKind act = fused ? parse_activation_kind(desc, "activation") : ActivationKind::linear;
  if (std::string r = empty_tensor_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  return decline_on_dnnl_error(desc, why_not, [&]() -> std::unique_ptr<Kernel> {
    return std::make_unique<OnednnConv>(desc, md, pass, fused, act, dt);
  });
}

}  // namespace

std::unique_ptr<Kernel> make_onednn_conv2d(const KernelDesc& desc, std::string* why_not) {
  return make_conv(desc, why_not, ConvPass::forward, checked_window(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_conv2d_backprop_input(const KernelDesc& desc, std::string* why_not) {
  return make_conv(desc, why_not, ConvPass::backward_data, checked_window(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_conv2d_backprop_filter(const KernelDesc& desc, std::string* why_not) {
  return make_conv(desc, why_not, ConvPass::backward_weights, checked_window(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_conv3d(const KernelDesc& desc, std::string* why_not) {
  return make_conv(desc, why_not, ConvPass::forward, checked_window3d(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_conv3d_backprop_input(const KernelDesc& desc, std::string* why_not) {
  return make_conv(desc, why_not, ConvPass::backward_data, checked_window3d(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_conv3d_backprop_filter(const KernelDesc& desc, std::string* why_not) {
  return make_conv(desc, why_not, ConvPass::backward_weights, checked_window3d(widened(desc)));
}

}  // namespace nnfit
