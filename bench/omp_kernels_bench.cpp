// Reference vs OpenMP kernel time for the ops issue 15 gave OpenMP kernels, measured in
// one process: for each case the two kernels run alternately (ref, omp, ref, omp, ...) on
// the same inputs, so whatever else the shared machine does falls on both alike. Per
// round: the median time of --reps runs of each; reported: the median over rounds of each
// and of the per-round ratio ref/omp. Threads: OMP_NUM_THREADS (set it to 2).
//
// cmake --build build/release --target nnfit_omp_kernels_bench
// OMP_NUM_THREADS=2 build/release/nnfit_omp_kernels_bench [--rounds 7] [--reps 15]
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

struct Case {
  std::string name;
  KernelDesc desc;
  std::vector<Tensor> inputs;
  StepContext ctx;
};

Tensor uniform(const Shape& shape, std::uint64_t seed, float lo, float hi) {
  Tensor t = Tensor::zeros(shape, DType::f32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

KernelDesc desc_of(const std::string& op, Attrs attrs, const std::vector<Tensor>& inputs, std::vector<TensorDesc> outputs) {
  KernelDesc d{op, std::move(attrs), {}, std::move(outputs), "bench/" + op};
  for (const Tensor& t : inputs) d.inputs.push_back(t.desc());
  return d;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  StepContext ctx;
  ctx.learning_rate = 1e-3f;
  ctx.step = 10;
  ctx.seed = 7;
  {  // a 1M-element weight (a 1024×1024 Dense kernel)
    const Shape s{1024, 1024};
    std::vector<Tensor> in = {uniform(s, 1, -1, 1), uniform(s, 2, -1, 1), uniform(s, 3, -0.1f, 0.1f), uniform(s, 4, 0.0f, 0.01f)};
    const Attrs a{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}};
    out.push_back({"nadam_update [1024,1024]", desc_of("nadam_update", a, in, {}), in, ctx});
    std::vector<Tensor> ada = {in[0], in[1], in[3]};
    out.push_back({"adagrad_update [1024,1024]", desc_of("adagrad_update", {{"epsilon", 1e-7}}, ada, {}), ada, ctx});
  }
  {  // a Fashion-MNIST batch through RandomRotation
    Tensor x = uniform(Shape{128, 28, 28, 1}, 5, 0, 1);
    const Attrs a{{"kind", std::string("rotation")}, {"height_lower", -0.1}, {"height_upper", 0.1},
                  {"fill_mode", std::string("reflect")}, {"interpolation", std::string("bilinear")},
                  {"fill_value", 0.0}, {"seed", std::int64_t{3}}};
    out.push_back({"random_affine rotation [128,28,28,1]",
                   desc_of("random_affine", a, {x}, {x.desc(), TensorDesc{Shape{128, 8}, DType::f32}}), {x}, ctx});
  }
  {  // an Embedding(20000, 64)'s gradient for a [64, 100] batch of ids
    Tensor ids = Tensor::zeros(Shape{64, 100}, DType::i32);
    std::mt19937_64 rng(6);
    for (std::int64_t i = 0; i < ids.numel(); ++i) ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % 20000);
    Tensor dy = uniform(Shape{64, 100, 64}, 7, -1, 1);
    out.push_back({"gather_grad [20000,64] ids [64,100]",
                   desc_of("gather_grad", {{"rows", std::int64_t{20000}}}, {ids, dy}, {TensorDesc{Shape{20000, 64}}}),
                   {ids, dy}, ctx});
  }
  {  // a transformer's head split: [batch, seq, heads, depth] -> [batch, heads, seq, depth]
    Tensor x = uniform(Shape{32, 128, 8, 64}, 8, -1, 1);
    const std::vector<std::int64_t> perm{0, 2, 1, 3};
    out.push_back({"transpose [32,128,8,64] perm 0213",
                   desc_of("transpose", {{"perm", perm}}, {x}, {TensorDesc{Shape{32, 8, 128, 64}}}), {x}, ctx});
  }
  return out;
}

using bench::BoundKernel;

BoundKernel bind_kernel(const std::string& impl, const Case& c) { return bench::bind(impl, c.desc, c.inputs); }

using bench::median;

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
  std::printf("| op | ref µs | omp µs | ref/omp |\n|---|---:|---:|---:|\n");
  for (const Case& c : cases()) {
    BoundKernel ref = bind_kernel("ref:" + c.desc.op, c), omp = bind_kernel("omp:" + c.desc.op, c);
    for (int w = 0; w < 2; ++w) {  // warm-up: page in buffers, start the team
      ref.time_us(c.ctx);
      omp.time_us(c.ctx);
    }
    std::vector<double> ref_med, omp_med, ratio;
    for (int r = 0; r < rounds; ++r) {
      std::vector<double> a, b;
      for (int k = 0; k < reps; ++k) {
        a.push_back(ref.time_us(c.ctx));
        b.push_back(omp.time_us(c.ctx));
      }
      ref_med.push_back(median(a));
      omp_med.push_back(median(b));
      ratio.push_back(ref_med.back() / omp_med.back());
    }
    std::printf("| %s | %.0f | %.0f | %.2f× |\n", c.name.c_str(), median(ref_med), median(omp_med), median(ratio));
    std::fflush(stdout);
  }
  return 0;
}
