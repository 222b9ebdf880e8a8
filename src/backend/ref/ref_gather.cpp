// Reference kernels of gather and gather_grad (graph/gather_op_defs.cpp): one row copy per
// id, and the scatter-add of dy's rows in id order. Ids are read and checked by
// backend/common/gather_ids.h, shared with the OpenMP kernels.
#include <cstring>
#include <string>

#include "backend/common/gather_ids.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

// Every id in order, by the row functions the OpenMP kernel shares (gather_ids.h).
class RefGather final : public Kernel {
 public:
  explicit RefGather(const KernelDesc& d) : g_(d) {}

  void run(const KernelArgs& args) override {
    const void* ids = g_.checked_ids(args);
    if (!g_.grad) {
      const auto* table = static_cast<const float*>(args.inputs[0]);
      auto* y = static_cast<float*>(args.outputs[0]);
      for (std::int64_t i = 0; i < g_.count; ++i) gather_row(g_, table, ids, i, y);
      return;
    }
    const auto* dy = static_cast<const float*>(args.inputs[1]);
    auto* dtable = static_cast<float*>(args.outputs[0]);
    std::memset(dtable, 0, static_cast<std::size_t>(g_.rows * g_.width) * sizeof(float));
    for (std::int64_t i = 0; i < g_.count; ++i) scatter_add_row(g_, ids, i, dy, dtable, 0, g_.width);
  }

 private:
  GatherGeometry g_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_gather(const KernelDesc& desc, std::string* /*why_not*/) {
  return std::make_unique<RefGather>(desc);
}

}  // namespace nnfit
