// The bfloat16 filter gradient over one input channel (omp_conv_filter_grad_bf16.cpp)
// against oneDNN's, and oneDNN's float32 one beside them, in one process: the kernels run
// alternately on the same inputs, so whatever else the shared machine does falls on all
// alike. dw is float32, as mixed precision plans it. Shapes: the Fashion-MNIST convnet's
// first layer, and two colour-image first layers the omp kernel declines (three input
// channels), where only oneDNN's run. Per round: the median of --reps runs of each kernel;
// reported: the median over rounds.
//
// cmake --build build/release --target nnfit_conv_bench
// OMP_NUM_THREADS=2 build/release/nnfit_conv_bench [--rounds 7] [--reps 15] [--shape I (0: Fashion-MNIST, 1, 2)]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "kernel_timing.h"

namespace nnfit {
namespace {

using Ints = std::vector<std::int64_t>;

struct ConvShape {
  const char* name;
  Shape x, w;  // NHWC, HWIO
  std::int64_t stride;
  const char* padding;
};

Tensor uniform(const Shape& s, DType dtype, std::uint64_t seed) {
  Tensor t = Tensor::zeros(s, DType::f32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  if (dtype == DType::f32) return t;
  Tensor low = Tensor::zeros(s, dtype);
  for (std::int64_t i = 0; i < t.numel(); ++i) static_cast<std::uint16_t*>(low.raw())[i] = float_to_bf16(t.data<float>()[i]);
  return low;
}

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, const std::string& padding) {
  return padding == "same" ? (in + s - 1) / s : (in - k) / s + 1;
}

}  // namespace
}  // namespace nnfit

int main(int argc, char** argv) {
  using namespace nnfit;
  int rounds = 7, reps = 15, only = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--shape")) only = std::atoi(argv[i + 1]);
  }
  std::printf("threads %d, %d rounds of %d runs each (median per round, then over rounds)\n\n", omp_get_max_threads(),
              rounds, reps);
  std::printf("| shape | omp bf16 µs | oneDNN bf16 µs | oneDNN f32 µs | oneDNN bf16 / omp bf16 |\n|---|---:|---:|---:|---:|\n");
  const std::vector<ConvShape> shapes = {
      {"Fashion-MNIST convnet, 28x28x1->32 3x3", Shape{128, 28, 28, 1}, Shape{3, 3, 1, 32}, 1, "valid"},
      {"CIFAR-style, 32x32x3->32 3x3 same", Shape{128, 32, 32, 3}, Shape{3, 3, 3, 32}, 1, "same"},
      {"ResNet stem, 224x224x3->64 7x7/2 same", Shape{8, 224, 224, 3}, Shape{7, 7, 3, 64}, 2, "same"},
  };
  for (std::size_t ci = 0; ci < shapes.size(); ++ci) {
    if (only >= 0 && static_cast<std::size_t>(only) != ci) continue;
    const ConvShape& c = shapes[ci];
    const Shape y{c.x[0], out_size(c.x[1], c.w[0], c.stride, c.padding), out_size(c.x[2], c.w[1], c.stride, c.padding),
                  c.w[3]};
    Attrs a{{"strides", Ints{c.stride, c.stride}}, {"padding", std::string(c.padding)}};
    a.set("filter_shape", c.w.dims());
    std::vector<bench::BoundKernel> kernels;
    std::vector<int> column;  // 0 omp bf16, 1 oneDNN bf16, 2 oneDNN f32
    for (DType dtype : {DType::bf16, DType::f32}) {
      const Tensor x = uniform(c.x, dtype, 1), dy = uniform(y, dtype, 4);
      const KernelDesc desc{"conv2d_backprop_filter", a, {x.desc(), dy.desc()}, {TensorDesc{c.w, DType::f32}}, "bench/dw"};
      std::string why;
      if (dtype == DType::bf16 && kernel_registry().create("omp:" + desc.op, desc, DeviceType::cpu, &why)) {
        kernels.push_back(bench::bind("omp:" + desc.op, desc, {x, dy}));
        column.push_back(0);
      }
      kernels.push_back(bench::bind("onednn:" + desc.op, desc, {x, dy}));
      column.push_back(dtype == DType::bf16 ? 1 : 2);
    }
    for (int i = 0; i < 2; ++i) {
      for (auto& k : kernels) k.time_us();
    }
    std::vector<std::vector<double>> med(kernels.size());
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::vector<double>> t(kernels.size());
      for (int k = 0; k < reps; ++k) {
        for (std::size_t j = 0; j < kernels.size(); ++j) t[j].push_back(kernels[j].time_us());
      }
      for (std::size_t j = 0; j < kernels.size(); ++j) med[j].push_back(bench::median(t[j]));
    }
    double us[3] = {0, 0, 0};
    for (std::size_t j = 0; j < kernels.size(); ++j) us[column[j]] = bench::median(med[j]);
    const auto cell = [](double v) { return v > 0 ? std::to_string(static_cast<long>(v + 0.5)) : std::string("declines"); };
    std::printf("| %s | %s | %.0f | %.0f | %s |\n", c.name, cell(us[0]).c_str(), us[1], us[2],
                us[0] > 0 ? (std::to_string(us[1] / us[0]).substr(0, 4)).c_str() : "—");
    std::fflush(stdout);
  }
  return 0;
}
