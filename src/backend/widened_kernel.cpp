// The widening adapter (widened_kernel.h).
#include "backend/widened_kernel.h"

#include "backend/common/low_precision.h"

#include <cstdint>
#include <vector>

namespace nnfit {

namespace {

constexpr std::size_t kAlign = 64;
std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
class WidenedKernel final : public Kernel {
 public:
  WidenedKernel(const KernelDesc& desc, std::unique_ptr<Kernel> inner)
      : inputs_(desc.inputs), outputs_(desc.outputs), inner_(std::move(inner)) {
    offset_ = aligned(inner_->workspace_bytes());
    std::size_t at = offset_;
    const auto place = [&](const std::vector<TensorDesc>& descs, std::vector<std::size_t>& where) {
      for (const TensorDesc& d : descs) {
        where.push_back(at);
        if (is_low_precision(d.dtype)) at += aligned(static_cast<std::size_t>(d.shape.numel()) * sizeof(float));
      }
    };
    place(inputs_, in_at_);
    place(outputs_, out_at_);
    bytes_ = at;
  }
  std::size_t workspace_bytes() const override { return bytes_; }
  void run(const KernelArgs& args) override {
    char* ws = static_cast<char*>(args.workspace);
    std::vector<const void*> in(inputs_.size());
    std::vector<void*> out(outputs_.size());
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      in[i] = args.inputs[i];
      if (!is_low_precision(inputs_[i].dtype)) continue;
      auto* f = reinterpret_cast<float*>(ws + in_at_[i]);
      low_precision::to_f32(inputs_[i].dtype, args.inputs[i], f, inputs_[i].shape.numel());
      in[i] = f;
    }
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      out[i] = is_low_precision(outputs_[i].dtype) ? ws + out_at_[i] : args.outputs[i];
    }
    KernelArgs inner{in.data(), out.data(), inner_->workspace_bytes() ? ws : nullptr, args.ctx};
    inner_->run(inner);
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      if (!is_low_precision(outputs_[i].dtype)) continue;
      low_precision::from_f32(outputs_[i].dtype, static_cast<const float*>(out[i]), args.outputs[i], outputs_[i].shape.numel());
    }
  }

 private:
  std::vector<TensorDesc> inputs_, outputs_;
  std::unique_ptr<Kernel> inner_;
  std::vector<std::size_t> in_at_, out_at_;
  std::size_t offset_ = 0, bytes_ = 0;
};

bool any_low_precision(const std::vector<TensorDesc>& descs) {
  for (const TensorDesc& d : descs) {
    if (is_low_precision(d.dtype)) return true;
  }
  return false;
}

}  // namespace

bool widenable(const KernelDesc& desc) {
  const std::string& op = desc.op;
  const bool in_place = (op.size() > 7 && op.compare(op.size() - 7, 7, "_update") == 0) || op == "decay_weights" ||
                        op == "apply_constraint";
  return !in_place && op != "cast" && (any_low_precision(desc.inputs) || any_low_precision(desc.outputs));
}

KernelDesc widened(const KernelDesc& desc) {
  KernelDesc out = desc;
  for (TensorDesc& d : out.inputs) {
    if (is_low_precision(d.dtype)) d.dtype = DType::f32;
  }
  for (TensorDesc& d : out.outputs) {
    if (is_low_precision(d.dtype)) d.dtype = DType::f32;
  }
  return out;
}

std::unique_ptr<Kernel> make_widened_kernel(const KernelDesc& desc, std::unique_ptr<Kernel> inner) {
  return std::make_unique<WidenedKernel>(desc, std::move(inner));
}

}  // namespace nnfit
