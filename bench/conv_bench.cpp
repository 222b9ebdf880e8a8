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
//
// --forward: instead, the first layer's forward and its pool at the convnet's shapes, joined
// (omp:fused_conv2d_max_pool_argmax) against the pair it replaces (oneDNN's fused_conv2d,
// then omp:max_pool2d_argmax), at float32 and bfloat16.
// --backward: the same layer's filter and bias gradients, joined
// (omp:fused_conv2d_max_pool_argmax_grad) against the pair it replaces (the registry's
// max_pool2d_argmax_grad_bias, then its conv2d_backprop_filter), dw and db float32.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "backend/common/nn_op_geometry.h"
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

// Microseconds of `joined` and of `apart` (each a callable timing one run), alternating:
// per round the median of `reps` runs of each, then the median over rounds; two untimed
// runs of each first.
template <typename Joined, typename Apart>
std::pair<double, double> joined_and_apart(int rounds, int reps, Joined joined, Apart apart) {
  for (int i = 0; i < 2; ++i) (void)(joined() + apart());
  std::vector<double> joined_med, apart_med;
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> tj, ta;
    for (int k = 0; k < reps; ++k) {
      tj.push_back(joined());
      ta.push_back(apart());
    }
    joined_med.push_back(bench::median(tj));
    apart_med.push_back(bench::median(ta));
  }
  return {bench::median(joined_med), bench::median(apart_med)};
}

// The first layer's forward and pool, joined and apart, alternating as above.
int forward_bench(int rounds, int reps) {
  std::printf("| dtype | joined µs | oneDNN conv + omp pool µs | apart / joined |\n|---|---:|---:|---:|\n");
  for (DType dtype : {DType::f32, DType::bf16}) {
    const Shape xs{128, 28, 28, 1}, ws{3, 3, 1, 32}, bs{32}, ys{128, 26, 26, 32}, ps{128, 13, 13, 32};
    const Tensor x = uniform(xs, dtype, 1), w = uniform(ws, dtype, 2), b = uniform(bs, dtype, 3);
    Attrs conv{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}, {"dilations", Ints{1, 1}},
               {"activation", std::string("relu")}};
    Attrs joined = conv;
    joined.set("pool_size", Ints{2, 2});
    joined.set("pool_strides", Ints{2, 2});
    joined.set("pool_padding", std::string("valid"));
    const Attrs pool{{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"padding", std::string("valid")}};
    const KernelDesc jd{"fused_conv2d_max_pool_argmax", joined, {x.desc(), w.desc(), b.desc()},
                        {TensorDesc{ps, dtype}, TensorDesc{ps, DType::u8}}, "bench/joined"};
    const KernelDesc cd{"fused_conv2d", conv, {x.desc(), w.desc(), b.desc()}, {TensorDesc{ys, dtype}}, "bench/conv"};
    const KernelDesc pd{"max_pool2d_argmax", pool, {TensorDesc{ys, dtype}}, {TensorDesc{ps, dtype}, TensorDesc{ps, DType::u8}},
                        "bench/pool"};
    bench::BoundKernel j = bench::bind("omp:" + jd.op, jd, {x, w, b});
    bench::BoundKernel c = bench::bind("onednn:" + cd.op, cd, {x, w, b});
    bench::BoundKernel p = bench::bind("omp:" + pd.op, pd, {Tensor::zeros(ys, dtype)});
    p.in_ptrs[0] = c.out_ptrs[0];  // the pool reads the convolution's output
    const auto [uj, ua] = joined_and_apart(rounds, reps, [&] { return j.time_us(); },
                                           [&] { return c.time_us() + p.time_us(); });
    std::printf("| %s | %.0f | %.0f | %.2f |\n", dtype == DType::f32 ? "float32" : "bfloat16", uj, ua, ua / uj);
    std::fflush(stdout);
  }
  return 0;
}

// The first layer's filter and bias gradients from the pool's dy and argmax, joined and
// apart, alternating as above.
int backward_bench(int rounds, int reps) {
  std::printf("| dtype | joined µs | pool grad + filter grad µs | apart / joined | apart's kernels |\n|---|---:|---:|---:|---|\n");
  for (DType dtype : {DType::f32, DType::bf16}) {
    const Shape xs{128, 28, 28, 1}, ys{128, 26, 26, 32}, ps{128, 13, 13, 32};
    const Tensor x = uniform(xs, dtype, 1), dy = uniform(ps, dtype, 2);
    Tensor argmax = Tensor::zeros(ps, DType::u8);
    std::mt19937_64 rng(3);
    for (std::int64_t i = 0; i < argmax.numel(); ++i) {
      static_cast<std::uint8_t*>(argmax.raw())[i] = static_cast<std::uint8_t>(rng() % 4 | (rng() % 4 == 0 ? 0x80 : 0));
    }
    Attrs a{{"strides", Ints{1, 1}}, {"padding", std::string("valid")}, {"dilations", Ints{1, 1}},
            {"filter_shape", Ints{3, 3, 1, 32}}, {"pool_size", Ints{2, 2}}, {"pool_strides", Ints{2, 2}},
            {"pool_padding", std::string("valid")}, {"relu", std::int64_t{1}}, {"input_shape", ys.dims()}};
    const KernelDesc jd{"fused_conv2d_max_pool_argmax_grad", a, {x.desc(), dy.desc(), argmax.desc()},
                        {TensorDesc{Shape{3, 3, 1, 32}, DType::f32}, TensorDesc{Shape{32}, DType::f32}}, "bench/joined"};
    const ConvPoolGradDescs parts = split_conv_pool_grad(jd);
    const std::string pool_impl = kernel_registry().select(parts.pool, DeviceType::cpu).impl_name;
    const std::string filter_impl = kernel_registry().select(parts.filter, DeviceType::cpu).impl_name;
    bench::BoundKernel j = bench::bind("omp:" + jd.op, jd, {x, dy, argmax});
    bench::BoundKernel p = bench::bind(pool_impl, parts.pool, {dy, argmax});
    bench::BoundKernel f = bench::bind(filter_impl, parts.filter, {x, Tensor::zeros(ys, dtype)});
    f.in_ptrs[1] = p.out_ptrs[0];  // the filter gradient reads the pool gradient's dy1
    const auto [uj, ua] = joined_and_apart(rounds, reps, [&] { return j.time_us(); },
                                           [&] { return p.time_us() + f.time_us(); });
    std::printf("| %s | %.0f | %.0f | %.2f | %s, %s |\n", dtype == DType::f32 ? "float32" : "bfloat16", uj, ua, ua / uj,
                pool_impl.c_str(), filter_impl.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace nnfit

int main(int argc, char** argv) {
  using namespace nnfit;
  int rounds = 7, reps = 15, only = -1;
  bool forward = false, backward = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--forward")) forward = true;
    else if (!std::strcmp(argv[i], "--backward")) backward = true;
    else if (has_value && !std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--shape")) only = std::atoi(argv[++i]);
  }
  std::printf("threads %d, %d rounds of %d runs each (median per round, then over rounds)\n\n", omp_get_max_threads(),
              rounds, reps);
  if (forward) return forward_bench(rounds, reps);
  if (backward) return backward_bench(rounds, reps);
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
