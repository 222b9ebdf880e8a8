// cuda-sim's kernels (sim_device.h): the own CUDA kernels' host-run bodies and the
// reference kernels standing in for cuBLASLt and cuDNN, each wrapped so that it runs with
// the simulated memory open and only on pointers into it.
//
// Note [Sim kernel trampolines]: a registry entry's factory is a plain function pointer
// (KernelFactory), so it cannot carry which kernel of which registry it wraps. Rather than
// widen KernelImpl to a std::function for one test facility, the sim registry's entries
// use trampolines: sim_factory<I> serves the I-th implementation of its (op, dtype) key,
// and a table built with the registry (same key, same order) says where that one comes
// from. The desc a factory receives gives the key, its position in the list gives I.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_host/cuda_host_harness.h"
#include "cuda_host/sim_device.h"
#include "nnfit/core/error.h"

namespace nnfit::testing {
namespace {

// Where a sim entry's kernel comes from: implementation `impl` of `registry` on `device`.
struct Source {
  const KernelRegistry* registry = nullptr;
  DeviceType device = DeviceType::cpu;
  std::string impl;
};

using Key = std::tuple<std::string, DType>;

struct SimKernels {
  std::map<Key, std::vector<Source>> sources;  // per key, in the registry's order
  KernelRegistry registry;
};

const SimKernels& sim_kernels();

// Runs `inner` with the simulated memory open, after checking its pointers.
class SimKernel final : public Kernel {
 public:
  SimKernel(const KernelDesc& desc, std::string impl, std::unique_ptr<Kernel> inner)
      : desc_(desc), impl_(std::move(impl)), inner_(std::move(inner)) {}
  std::size_t workspace_bytes() const override { return inner_->workspace_bytes(); }
  // The own kernels say for themselves; the stand-ins are what cuBLASLt and cuDNN are.
  bool capturable() const override { return impl_.rfind("cuda:", 0) != 0 || inner_->capturable(); }
  void run(const KernelArgs& args) override {
    for (std::size_t i = 0; i < desc_.inputs.size(); ++i) check("input", i, args.inputs[i], desc_.inputs[i].bytes());
    for (std::size_t i = 0; i < desc_.outputs.size(); ++i) check("output", i, args.outputs[i], desc_.outputs[i].bytes());
    check("workspace", 0, args.workspace, inner_->workspace_bytes());
    if (args.ctx && args.ctx->stream) {
      // On a simulated queue (Note [Lazy simulated queues]): runs when the queue gets there,
      // with the pointers and step values of this call (as a launch copies its arguments).
      std::vector<const void*> ins(args.inputs, args.inputs + desc_.inputs.size());
      std::vector<void*> outs(args.outputs, args.outputs + desc_.outputs.size());
      Kernel* inner = inner_.get();
      const bool queued = enqueue_on_cuda_sim_stream(
          args.ctx->stream, [inner, ins = std::move(ins), outs = std::move(outs), ws = args.workspace, ctx = *args.ctx] {
            const KernelArgs a{ins.data(), outs.data(), ws, &ctx};
            const CudaSimOpen open;
            inner->run(a);
          });
      NNFIT_CHECK(queued, BackendError, "cuda-sim: kernel ", impl_, " of node '", desc_.node_name,
                  "' was given a stream that is not a simulated queue");
      return;
    }
    const CudaSimOpen open;
    inner_->run(args);
  }

 private:
  void check(const char* what, std::size_t i, const void* ptr, std::size_t bytes) const {
    NNFIT_CHECK(bytes == 0 || in_cuda_sim_memory(ptr, bytes), BackendError, "cuda-sim: kernel ", impl_, " of node '",
                desc_.node_name, "' (", desc_.op, ") was given ", what, " ", i, " at ", ptr, " (", bytes,
                " bytes), which is not simulated device memory: host memory given to a device kernel");
  }

  KernelDesc desc_;
  std::string impl_;
  std::unique_ptr<Kernel> inner_;
};

template <std::size_t I>
std::unique_ptr<Kernel> sim_factory(const KernelDesc& desc, std::string* why_not) {
  const SimKernels& sim = sim_kernels();
  const auto it = sim.sources.find({desc.op, kernel_key_dtype(desc)});
  NNFIT_CHECK(it != sim.sources.end() && I < it->second.size(), BackendError,
              "cuda-sim: no source for implementation ", I, " of ", desc.op, " (Note [Sim kernel trampolines])");
  const Source& src = it->second[I];
  std::unique_ptr<Kernel> inner = src.registry->create(src.impl, desc, src.device, why_not);
  if (!inner) return nullptr;
  return std::make_unique<SimKernel>(desc, src.impl, std::move(inner));
}

constexpr KernelFactory kTrampolines[] = {&sim_factory<0>, &sim_factory<1>, &sim_factory<2>, &sim_factory<3>,
                                          &sim_factory<4>, &sim_factory<5>, &sim_factory<6>, &sim_factory<7>};

void add(SimKernels& sim, const std::string& op, DType dtype, const std::string& name, Source src) {
  std::vector<Source>& list = sim.sources[{op, dtype}];
  NNFIT_CHECK(list.size() < std::size(kTrampolines), BackendError, "cuda-sim: ", op, " has more than ",
              std::size(kTrampolines), " implementations at one dtype; add trampolines (Note [Sim kernel trampolines])");
  sim.registry.add(op, DeviceType::cuda, dtype, {name, kTrampolines[list.size()]});
  list.push_back(std::move(src));
}

const SimKernels& sim_kernels() {
  static const SimKernels kSim = [] {
    SimKernels sim;
    // As register_cuda_kernels orders them: the vendor kernels first, then the own ones.
    for (const std::string& op : cuda_sim_vendor_ops()) {
      for (DType d : {DType::f32, DType::bf16, DType::f16}) {
        const std::string impl = (d == DType::f32 ? "ref:" : "widen:ref:") + op;
        add(sim, op, d, "cuda-sim:" + impl, {&kernel_registry(), DeviceType::cpu, impl});
      }
    }
    for (const RegisteredKernel& e : cuda_host_registry().entries()) {
      add(sim, e.op, e.dtype, e.impl, {&cuda_host_registry(), e.device, e.impl});
    }
    return sim;
  }();
  return kSim;
}

}  // namespace

const std::vector<std::string>& cuda_sim_vendor_ops() {
  // cublaslt_matmul.cpp's register_cublaslt_kernels and cudnn_conv.cpp's
  // register_cudnn_kernels (CudaSim.VendorOpsAreTheRealRegistrys checks against them where
  // the CUDA plugin loads).
  static const std::vector<std::string> kOps = {
      "matmul", "fused_matmul", "batch_matmul",
      "conv2d", "fused_conv2d", "conv2d_backprop_input", "conv2d_backprop_filter",
      "conv3d", "fused_conv3d", "conv3d_backprop_input", "conv3d_backprop_filter"};
  return kOps;
}

const KernelRegistry& cuda_sim_registry() { return sim_kernels().registry; }

}  // namespace nnfit::testing
