// Reference kernels of the augmentation ops (graph/augment_op_defs.cpp): every sample in
// order through augment_sample (backend/common/augment_kernel.h, shared with the OpenMP
// kernels). Each random op draws its per-sample settings from the (run seed, node seed,
// step) key, so a step repeats exactly and the next step draws anew, and writes them out
// for its gradient op.
#include <vector>

#include "backend/common/augment_kernel.h"
#include "backend/ref/ref_train_kernels.h"

namespace nnfit {

namespace {

class RefAugment final : public Kernel {
 public:
  explicit RefAugment(AugmentParams p)
      : p_(std::move(p)), scratch_(static_cast<std::size_t>(augment_scratch_doubles(p_))) {}
  void run(const KernelArgs& args) override {
    const std::uint64_t key = augment_step_key(args, p_.seed);
    for (std::int64_t n = 0; n < p_.image.n; ++n) augment_sample(p_, args, key, n, scratch_.data());
  }

 private:
  AugmentParams p_;
  std::vector<double> scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_ref_augment(const KernelDesc& desc, std::string* why_not) {
  AugmentParams p;
  if (!check_augment(desc, &p, why_not)) return nullptr;
  return std::make_unique<RefAugment>(std::move(p));
}

}  // namespace nnfit
