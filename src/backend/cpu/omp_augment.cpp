// OpenMP kernels of the augmentation ops: the reference's per-sample bodies
// (backend/common/augment_kernel.h) with the samples split over threads. A sample's draws
// are keyed by its index and it touches only its own image, so the result is the
// reference's, bit for bit. Each thread keeps its scratch (random_contrast's channel
// means) in its own workspace slot.
#include <omp.h>

#include <algorithm>

#include "backend/common/augment_kernel.h"
#include "backend/cpu/omp_kernels.h"

namespace nnfit {

namespace {

class OmpAugment final : public Kernel {
 public:
  explicit OmpAugment(AugmentParams p)
      : p_(std::move(p)), scratch_(augment_scratch_doubles(p_)), threads_(std::max(1, omp_get_max_threads())) {}
  std::size_t workspace_bytes() const override {
    return static_cast<std::size_t>(scratch_ * threads_) * sizeof(double);
  }
  void run(const KernelArgs& args) override {
    const std::uint64_t key = augment_step_key(args, p_.seed);
    const AffineParams& g = p_.image;
    const std::int64_t samples = g.n;
    auto* scratch = static_cast<double*>(args.workspace);
    const std::int64_t per_thread = scratch_;
#pragma omp parallel num_threads(threads_) if (samples > 1 && g.n * g.h * g.w * g.c >= kOmpMinParallelElements)
    {
      double* mine = per_thread > 0 ? scratch + per_thread * omp_get_thread_num() : nullptr;
#pragma omp for schedule(static)
      for (std::int64_t n = 0; n < samples; ++n) augment_sample(p_, args, key, n, mine);
    }
  }

 private:
  AugmentParams p_;
  std::int64_t scratch_;
  int threads_;
};

}  // namespace

std::unique_ptr<Kernel> make_omp_augment(const KernelDesc& desc, std::string* why_not) {
  AugmentParams p;
  if (!check_augment(desc, &p, why_not)) return nullptr;
  return std::make_unique<OmpAugment>(std::move(p));
}

}  // namespace nnfit
