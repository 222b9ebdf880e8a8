// The CPU backend: a BFC allocator over host memory, memcpy copies, OpenMP thread count.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>

#include "nnfit/backend/backend.h"
#include "nnfit/core/error.h"
#include "nnfit/memory/bfc_allocator.h"

namespace nnfit {

namespace {


class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const MemoryPolicy& policy) : allocator_(make_host_sub_allocator(), policy) {}
  std::string name() const override {
    const dnnl_version_t* v = dnnl_version();
    return "cpu (oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + ", OpenMP)";
  }
  Device device() const override { return Device{}; }
  Allocator& allocator() override { return allocator_; }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind) override {
    std::memcpy(dst, src, bytes);
  }
  void synchronize() override {}
  void set_num_threads(int threads) override {
    // OpenMP makes every thread it is asked for: 100,000 exhausted the process's thread
    // and mapping limits and crashed inside libgomp, and 4,096 on 2 cores took minutes a
    // step. Four per core (at least 64) leaves room for oversubscribing on purpose.
    const int cores = omp_get_num_procs(), most = std::max(64, 4 * cores);
    NNFIT_CHECK(threads <= most, InvalidArgument, threads, " compute threads: at most ", most, " are taken here (",
                cores, " cores this process may use; more threads than cores only wait)");
    if (threads > 0) omp_set_num_threads(threads);
  }
  int num_threads() const override { return omp_get_max_threads(); }

 private:
  BfcAllocator allocator_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const MemoryPolicy& policy) {
  return std::make_unique<CpuBackend>(policy);
}

}  // namespace nnfit
