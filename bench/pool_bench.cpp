// The max pool of a convnet's training step, both ways, in one process: the forward and
// gradient nnfit plans without the argmax (oneDNN's forward, then omp:max_pool2d_grad_bias
// recomputing the argmax from x) against the pair fuse_pool_argmax makes
// (omp:max_pool2d_argmax, then omp:max_pool2d_argmax_grad_bias reading its bytes), relu
// gradient folded in as in the Fashion-MNIST convnet. The two pairs run alternately on
// the same tensors, so whatever else the shared machine does falls on both alike. Per
// round: the median of --reps runs of each kernel; reported: the median over rounds.
//
// cmake --build build/release --target nnfit_pool_bench
// OMP_NUM_THREADS=2 build/release/nnfit_pool_bench [--rounds 7] [--reps 15]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "kernel_timing.h"
#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/tensor.h"

namespace nnfit {
namespace {

struct Bound {
  std::string impl;
  std::unique_ptr<Kernel> kernel;
  Tensor workspace;
  std::vector<const void*> in;
  std::vector<void*> out;
};

Bound bind(const std::string& impl, const KernelDesc& desc, const std::vector<Tensor*>& in,
           const std::vector<Tensor*>& out) {
  Bound b;
  b.impl = impl;
  std::string why;
  b.kernel = kernel_registry().create(impl, desc, DeviceType::cpu, &why);
  if (!b.kernel) {
    std::fprintf(stderr, "%s declined %s: %s\n", impl.c_str(), desc.op.c_str(), why.c_str());
    std::exit(1);
  }
  for (Tensor* t : in) b.in.push_back(t->raw());
  for (Tensor* t : out) b.out.push_back(t->raw());
  b.workspace = Tensor::zeros(Shape{static_cast<std::int64_t>(b.kernel->workspace_bytes()) + 1}, DType::u8);
  return b;
}

double time_us(Bound& b) {
  const StepContext ctx;
  return bench::time_us(*b.kernel, KernelArgs{b.in.data(), b.out.data(), b.workspace.raw(), &ctx});
}

using bench::median;

// x a relu output (about half zeros), at `dtype` (float32 or bfloat16).
Tensor relu_input(const Shape& s, DType dtype, std::uint64_t seed) {
  Tensor t = Tensor::zeros(s, DType::f32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::max(0.0f, dist(rng));
  if (dtype == DType::f32) return t;
  Tensor low = Tensor::zeros(s, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) {  // bfloat16: the float's top half (truncated)
    std::uint32_t bits;
    std::memcpy(&bits, t.data<float>() + i, 4);
    static_cast<std::uint16_t*>(low.raw())[i] = static_cast<std::uint16_t>(bits >> 16);
  }
  return low;
}

}  // namespace
}  // namespace nnfit

int main(int argc, char** argv) {
  using namespace nnfit;
  int rounds = 7, reps = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  std::printf("threads %d, %d rounds of %d runs each (median per round, then over rounds)\n\n", omp_get_max_threads(),
              rounds, reps);
  std::printf("| pool | dtype | kernel | µs |\n|---|---|---|---:|\n");
  using Ints = std::vector<std::int64_t>;
  const Attrs pool{{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("valid")}};
  for (const Shape& xs : {Shape{128, 26, 26, 32}, Shape{128, 11, 11, 64}}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      const Shape ys{xs[0], xs[1] / 2, xs[2] / 2, xs[3]}, bs{xs[3]};
      Tensor x = relu_input(xs, dtype, 1), dy = relu_input(ys, dtype, 2);
      Tensor y = Tensor::zeros(ys, dtype), at = Tensor::zeros(ys, DType::u8), dx = Tensor::zeros(xs, dtype),
             db = Tensor::zeros(bs, DType::f32);
      Attrs grad = pool;
      grad.set("relu", std::int64_t{1});
      Attrs argmax_grad = grad;
      argmax_grad.set("input_shape", xs.dims());
      const auto desc = [](const char* op, const Attrs& a, std::vector<TensorDesc> in, std::vector<TensorDesc> out) {
        return KernelDesc{op, a, std::move(in), std::move(out), std::string("bench/") + op};
      };
      std::vector<Bound> kernels;
      kernels.push_back(bind("onednn:max_pool2d", desc("max_pool2d", pool, {x.desc()}, {y.desc()}), {&x}, {&y}));
      kernels.push_back(bind("omp:max_pool2d_grad_bias",
                             desc("max_pool2d_grad_bias", grad, {x.desc(), y.desc(), dy.desc()}, {dx.desc(), db.desc()}),
                             {&x, &y, &dy}, {&dx, &db}));
      kernels.push_back(bind("omp:max_pool2d_argmax", desc("max_pool2d_argmax", pool, {x.desc()}, {y.desc(), at.desc()}),
                             {&x}, {&y, &at}));
      kernels.push_back(bind("omp:max_pool2d_argmax_grad_bias",
                             desc("max_pool2d_argmax_grad_bias", argmax_grad, {dy.desc(), at.desc()}, {dx.desc(), db.desc()}),
                             {&dy, &at}, {&dx, &db}));
      for (int w = 0; w < 2; ++w) {
        for (Bound& k : kernels) time_us(k);
      }
      std::vector<std::vector<double>> med(kernels.size());
      for (int r = 0; r < rounds; ++r) {
        std::vector<std::vector<double>> t(kernels.size());
        for (int k = 0; k < reps; ++k) {
          for (std::size_t j = 0; j < kernels.size(); ++j) t[j].push_back(time_us(kernels[j]));
        }
        for (std::size_t j = 0; j < kernels.size(); ++j) med[j].push_back(median(t[j]));
      }
      for (std::size_t j = 0; j < kernels.size(); ++j) {
        std::printf("| %s | %s | %s | %.0f |\n", xs.to_string().c_str(), std::string(dtype_name(dtype)).c_str(), kernels[j].impl.c_str(),
                    median(med[j]));
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
