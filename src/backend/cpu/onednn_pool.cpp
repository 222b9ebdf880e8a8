// oneDNN max_pool2d, avg_pool2d and avg_pool2d_grad on plain NHWC, and their 3-D forms
// (max_pool3d, avg_pool3d, avg_pool3d_grad) on plain NDHWC. Max pooling runs as
// forward_inference (no workspace: the max-pool gradients recompute the argmax instead,
// see cpu_max_pool2d_grad.cpp and cpu_max_pool3d_grad.cpp); average pooling excludes
// padding from the count, as TF does. Both ranks build one PoolSpec and share the kernel.
#include "backend/cpu/onednn_common.h"
#include "backend/cpu/onednn_kernels.h"

namespace nnfit {

namespace {

using namespace onednn;

// What a pooling primitive needs, from a 2-D or 3-D window.
struct PoolSpec {
  memory::desc x, y;
  memory::dims strides, kernel, padding_l, padding_r;
};

PoolSpec pool_spec(const Window2d& g, memory::data_type dt) {
  return {tensor_md(nchw_dims(g.n, g.c, g.h, g.w), Tag::nhwc, dt), tensor_md(nchw_dims(g.n, g.c, g.oh, g.ow), Tag::nhwc, dt),
          strides_of(g), {g.kh, g.kw}, padding_l_of(g), padding_r_of(g)};
}

PoolSpec pool_spec(const Window3d& g, memory::data_type dt) {
  return {tensor_md({g.n, g.c, g.in[0], g.in[1], g.in[2]}, Tag::ndhwc, dt),
          tensor_md({g.n, g.c, g.out[0], g.out[1], g.out[2]}, Tag::ndhwc, dt),
          {g.stride[0], g.stride[1], g.stride[2]},
          {g.k[0], g.k[1], g.k[2]},
          {g.pad_before[0], g.pad_before[1], g.pad_before[2]},
          {g.pad_after[0], g.pad_after[1], g.pad_after[2]}};
}

dnnl::pooling_forward::primitive_desc pool_forward_pd(const PoolSpec& md, dnnl::algorithm alg,
                                                      dnnl::prop_kind prop,
                                                      const dnnl::primitive_attr& attr) {
  dnnl::pooling_forward::desc d(prop, alg, md.x, md.y, md.strides, md.kernel, md.padding_l, md.padding_r);
  return dnnl::pooling_forward::primitive_desc(d, attr, cpu_engine());
}

// One pooling primitive with one input and one output (forward, or avg backward);
// run() from one thread at a time.
class OnednnPool final : public Kernel {
 public:
  OnednnPool(const KernelDesc& desc, const PoolSpec& md, dnnl::algorithm alg, bool backward)
      : node_(desc.node_name) {
    dnnl::primitive_attr attr = user_scratchpad_attr();
    if (!backward) {
      auto pd = pool_forward_pd(md, alg, dnnl::prop_kind::forward_inference, attr);
      call_.init<dnnl::pooling_forward>(pd);
      in_ = call_.add(DNNL_ARG_SRC, md.x);
      out_ = call_.add(DNNL_ARG_DST, md.y);
      return;
    }
    auto hint = pool_forward_pd(md, alg, dnnl::prop_kind::forward_training, dnnl::primitive_attr());
    dnnl::pooling_backward::desc d(alg, md.x, md.y, md.strides, md.kernel, md.padding_l, md.padding_r);
    dnnl::pooling_backward::primitive_desc pd(d, attr, cpu_engine(), hint);
    call_.init<dnnl::pooling_backward>(pd);
    in_ = call_.add(DNNL_ARG_DIFF_DST, md.y);
    out_ = call_.add(DNNL_ARG_DIFF_SRC, md.x);
  }

  std::size_t workspace_bytes() const override { return call_.scratchpad_bytes(); }

  void run(const KernelArgs& args) override {
    call_.bind(in_, args.inputs[0]);
    call_.bind(out_, args.outputs[0]);
    call_.execute(args.workspace, node_);
  }

 private:
  std::string node_;
  PrimitiveCall call_;
  int in_ = -1, out_ = -1;
};

// The kernel of a pooling desc of window `g` (checked by the caller).
template <typename Window>
std::unique_ptr<Kernel> make_pool(const KernelDesc& desc, std::string* why_not, bool backward, const Window& g) {
  memory::data_type dt;
  if (!uniform_float_type(desc, &dt, why_not)) return nullptr;
  const PoolSpec md = pool_spec(g, dt);
  if (std::string r = empty_tensor_reason(desc); !r.empty()) {
    if (why_not) *why_not = r;
    return nullptr;
  }
  const bool max = desc.op == "max_pool2d" || desc.op == "max_pool3d";
  dnnl::algorithm alg = max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  return decline_on_dnnl_error(desc, why_not, [&]() -> std::unique_ptr<Kernel> {
    return std::make_unique<OnednnPool>(desc, md, alg, backward);
  });
}

// A reason to decline a 2-D pooling desc that carries a dilation (oneDNN pools without).
bool declined(const KernelDesc& desc, std::string* why_not) {
  std::string r = window_unsupported_reason(desc);
  if (!r.empty() && why_not) *why_not = r;
  return !r.empty();
}

}  // namespace

std::unique_ptr<Kernel> make_onednn_pool2d(const KernelDesc& desc, std::string* why_not) {
  if (declined(desc, why_not)) return nullptr;
  return make_pool(desc, why_not, false, checked_window(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_avg_pool2d_grad(const KernelDesc& desc, std::string* why_not) {
  if (declined(desc, why_not)) return nullptr;
  return make_pool(desc, why_not, true, checked_window(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_pool3d(const KernelDesc& desc, std::string* why_not) {
  return make_pool(desc, why_not, false, checked_window3d(widened(desc)));
}

std::unique_ptr<Kernel> make_onednn_avg_pool3d_grad(const KernelDesc& desc, std::string* why_not) {
  return make_pool(desc, why_not, true, checked_window3d(widened(desc)));
}

}  // namespace nnfit
