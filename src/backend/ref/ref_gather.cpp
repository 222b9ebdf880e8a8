// Reference kernels of gather and gather_grad (graph/gather_op_defs.cpp): one row copy per
// id, and the scatter-add of dy's rows in id order. Ids are read and checked by
// backend/common/gather_ids.h, shared with the OpenMP kernels.
#include <cstring>
#include <string>

#include "backend/common/gather_ids.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

class RefGather final : public Kernel {
 public:
  RefGather(const KernelDesc& d)
      : grad_(d.op == "gather_grad"), node_(d.node_name) {
    const TensorDesc& ids = d.inputs.at(grad_ ? 0 : 1);
    ids_dtype_ = ids.dtype;
    count_ = ids.shape.numel();
    const Shape& table = grad_ ? d.outputs.at(0).shape : d.inputs.at(0).shape;
    rows_ = table[0];
    width_ = table[1];
  }

  void run(const KernelArgs& args) override {
    const void* ids = args.inputs[grad_ ? 0 : 1];
    check_gather_ids(node_, ids, ids_dtype_, count_, rows_);
    const std::size_t row_bytes = static_cast<std::size_t>(width_) * sizeof(float);
    if (!grad_) {
      const auto* table = static_cast<const float*>(args.inputs[0]);
      auto* y = static_cast<float*>(args.outputs[0]);
      for (std::int64_t i = 0; i < count_; ++i) {
        std::memcpy(y + i * width_, table + gather_id_at(ids, ids_dtype_, i) * width_, row_bytes);
      }
      return;
    }
    const auto* dy = static_cast<const float*>(args.inputs[1]);
    auto* dtable = static_cast<float*>(args.outputs[0]);
    std::memset(dtable, 0, static_cast<std::size_t>(rows_) * row_bytes);
    for (std::int64_t i = 0; i < count_; ++i) {
      float* row = dtable + gather_id_at(ids, ids_dtype_, i) * width_;
      for (std::int64_t j = 0; j < width_; ++j) row[j] += dy[i * width_ + j];
    }
  }

 private:
  bool grad_;
  std::string node_;
  DType ids_dtype_ = DType::f32;
  std::int64_t count_ = 0, rows_ = 0, width_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_gather(const KernelDesc& desc, std::string* /*why_not*/) {
  return std::make_unique<RefGather>(desc);
}

}  // namespace nnfit
