// Reference kernels of gather and gather_grad (graph/gather_op_defs.cpp). An id outside
// the table is bad input, not a bug: a DataError naming the node, the id and its position
// (TensorFlow raises the same; JAX would silently clamp).
#include <cstring>
#include <string>

#include "backend/ref/ref_train_kernels.h"
#include "nnfit/core/error.h"

namespace nnfit {

namespace {

std::int64_t id_at(const void* ids, DType dtype, std::int64_t i) {
  switch (dtype) {
    case DType::i32: return static_cast<const std::int32_t*>(ids)[i];
    case DType::i64: return static_cast<const std::int64_t*>(ids)[i];
    default: {
      const float v = static_cast<const float*>(ids)[i];
      // Keras casts float ids to int32 (truncation); a non-finite id is out of range.
      return v == v && v > -2147483648.0f && v < 2147483648.0f ? static_cast<std::int64_t>(v) : -1;
    }
  }
}

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
    for (std::int64_t i = 0; i < count_; ++i) {
      const std::int64_t id = id_at(ids, ids_dtype_, i);
      if (id < 0 || id >= rows_) {
        throw DataError(node_, -1,
                        "id " + std::to_string(id) + " at position " + std::to_string(i) + " of the batch is outside [0, " +
                            std::to_string(rows_) + ")",
                        "the Embedding's input_dim must exceed every id the data holds");
      }
    }
    const std::size_t row_bytes = static_cast<std::size_t>(width_) * sizeof(float);
    if (!grad_) {
      const auto* table = static_cast<const float*>(args.inputs[0]);
      auto* y = static_cast<float*>(args.outputs[0]);
      for (std::int64_t i = 0; i < count_; ++i) std::memcpy(y + i * width_, table + id_at(ids, ids_dtype_, i) * width_, row_bytes);
      return;
    }
    const auto* dy = static_cast<const float*>(args.inputs[1]);
    auto* dtable = static_cast<float*>(args.outputs[0]);
    std::memset(dtable, 0, static_cast<std::size_t>(rows_) * row_bytes);
    for (std::int64_t i = 0; i < count_; ++i) {
      float* row = dtable + id_at(ids, ids_dtype_, i) * width_;
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
