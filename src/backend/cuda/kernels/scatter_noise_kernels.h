// Private to the CUDA backend: own kernels of noise and gather_grad (Note [Kernel/launcher
// split]) at float32, bfloat16 and float16.
//   noise (GaussianNoise, GaussianDropout, AlphaDropout, Keras's formulas as
//   ref_train_dropout.cpp): one index per element, its draw noise_normal /
//   dropout_uniform_keyed of (run seed, node seed, step, element) from
//   backend/common/random.h, the very functions the CPU kernels call, so the device draws
//   the reference's numbers.
//   gather_grad (Embedding's gradient, a scatter-add of dy's rows into the table's): with
//   no atomics and no order between indices, the ids are sorted first. Each id position k
//   gets the key min(id, V)·N + k (an id outside the table sorts after every valid one and
//   is dropped: the forward gather already wrote NaN for it), padded to a power of two
//   and sorted by a bitonic network (one pass per (k, j) stage; index i owns the pair
//   (i, i^j)); then one index per (sorted position, column) that starts a run of one id
//   adds the run's dy rows in position order, as the reference does. Table rows no id
//   names are zero.
#pragma once
#include <math.h>

#include "backend/common/random.h"
#include "backend/cuda/kernels/own_kernel.h"
#include "nnfit/core/error.h"

namespace nnfit::cuda {

enum class NoiseKind { gaussian_add, uniform_add, truncated_normal_add, gaussian_mul, alpha_dropout, gamma_add };

template <class T>
struct NoiseFn {
  const void* x;
  void* y;
  void* factor;  // null for gaussian_add
  // random_draw's: the key, and (data-parallel) the first global row's index (Note [Random
  // draws by global row]).
  const std::uint64_t* draw;
  NoiseKind kind;
  double sigma, rate, a, b, alpha_p;
  double gamma_alpha;  // gamma_add's alpha (the op's rate attribute)
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::uint64_t key = draw[0];
    const auto idx = draw[1] + static_cast<std::uint64_t>(i);
    const double v = load<T>(x, i);
    if (kind == NoiseKind::gaussian_add) {
      store<T>(y, i, static_cast<float>(v + sigma * noise_normal(key, idx)));
    } else if (kind == NoiseKind::uniform_add) {
      store<T>(y, i, static_cast<float>(v + sigma * noise_uniform_half_open(key, idx)));
    } else if (kind == NoiseKind::truncated_normal_add) {
      store<T>(y, i, static_cast<float>(v + sigma * noise_truncated_normal(key, idx)));
    } else if (kind == NoiseKind::gamma_add) {
      store<T>(y, i, static_cast<float>(v + sigma * noise_gamma(key, idx, gamma_alpha)));
    } else if (kind == NoiseKind::gaussian_mul) {
      const double f = 1.0 + sigma * noise_normal(key, idx);
      store<T>(y, i, static_cast<float>(v * f));
      store<T>(factor, i, static_cast<float>(f));
    } else {
      const bool keep = dropout_uniform_keyed(key, idx) >= rate;
      store<T>(y, i, static_cast<float>(a * (keep ? v : alpha_p) + b));
      store<T>(factor, i, keep ? static_cast<float>(a) : 0.0f);
    }
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_noise(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  const std::string& kind_name = desc.attrs.s("kind");
  NoiseKind kind = NoiseKind::gaussian_add;
  if (kind_name == "gaussian_mul") kind = NoiseKind::gaussian_mul;
  else if (kind_name == "alpha_dropout") kind = NoiseKind::alpha_dropout;
  else if (kind_name == "uniform_add") kind = NoiseKind::uniform_add;
  else if (kind_name == "truncated_normal_add") kind = NoiseKind::truncated_normal_add;
  else if (kind_name == "gamma_add") kind = NoiseKind::gamma_add;
  else NNFIT_CHECK(kind_name == "gaussian_add", InvalidArgument, "noise: kind must be gaussian_add, uniform_add, "
                   "truncated_normal_add, gamma_add, gaussian_mul or alpha_dropout, got '", kind_name, "'");
  const bool additive = kind == NoiseKind::gaussian_add || kind == NoiseKind::uniform_add ||
                        kind == NoiseKind::truncated_normal_add || kind == NoiseKind::gamma_add;
  NNFIT_CHECK(desc.inputs.size() == 1 && desc.outputs.size() == (additive ? 1u : 2u), InvalidArgument,
              "noise at node '", desc.node_name, "': expected x, and y (with the factor unless additive)");
  const double value = desc.attrs.f("value");
  const auto seed = static_cast<std::uint64_t>(desc.attrs.i("seed"));
  const std::int64_t n = desc.inputs[0].shape.numel();
  const double alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946;
  const double a_coef = std::pow((1.0 - value) * (1.0 + value * alpha_p * alpha_p), -0.5), b_coef = -a_coef * alpha_p * value;
  const double sigma = kind == NoiseKind::gaussian_mul ? std::sqrt(value / (1.0 - value)) : value;
  const double gamma_alpha = desc.attrs.f_or("rate", 0.0);
  return launch_kernel(
      [=](const KernelArgs& args) {
        if (n == 0) return;
        const std::uint64_t* draw = random_draw<Launch>(args, seed, n, 0, 0);
        void* factor = additive ? nullptr : args.outputs[1];
        Launch::run(NoiseFn<T>{args.inputs[0], args.outputs[0], factor, draw, kind, sigma, value, a_coef, b_coef, alpha_p,
                                    gamma_alpha},
                    n, args.ctx);
      },
      kRandomDrawWorkspace);
}

// ---- gather_grad ----

struct ScatterKeysFn {  // key[k] = min(id, V)·N + k; the padding sorts last
  const void* ids;
  bool ids64;
  std::int64_t* keys;
  std::int64_t count, rows;
  NNFIT_HD void operator()(std::int64_t k) const {
    std::int64_t id = rows;
    if (k < count) {
      id = ids64 ? static_cast<const std::int64_t*>(ids)[k] : static_cast<const std::int32_t*>(ids)[k];
      if (id < 0 || id > rows) id = rows;
    }
    keys[k] = id * count + k;
  }
};

// One compare-exchange stage of the bitonic network over `size` keys (a power of two).
struct BitonicStageFn {
  std::int64_t* keys;
  std::int64_t block, stride;  // k and j of the network
  NNFIT_HD void operator()(std::int64_t i) const {
    const std::int64_t l = i ^ stride;
    if (l <= i) return;
    const bool ascending = (i & block) == 0;
    const std::int64_t a = keys[i], b = keys[l];
    if ((a > b) == ascending) {
      keys[i] = b;
      keys[l] = a;
    }
  }
};

template <class T>
struct ScatterRunFn {  // dtable[id, j] = Σ dy[k, j] over the run of id, in position order
  const std::int64_t* keys;
  const void* dy;
  void* dtable;
  std::int64_t count, rows, width;
  NNFIT_HD void operator()(std::int64_t e) const {
    const std::int64_t s = e / width, j = e % width, id = keys[s] / count;
    if (id >= rows || (s > 0 && keys[s - 1] / count == id)) return;
    float sum = 0.0f;
    for (std::int64_t t = s; t < count && keys[t] / count == id; ++t) sum += load<T>(dy, (keys[t] % count) * width + j);
    store<T>(dtable, id * width + j, sum);
  }
};

template <class Launch, class T>
std::unique_ptr<Kernel> make_gather_grad(const KernelDesc& desc, std::string* why_not) {
  if (!floats_are<T>(desc, why_not)) return nullptr;
  NNFIT_CHECK(desc.inputs.size() == 2 && desc.outputs.size() == 1 && desc.outputs[0].shape.rank() == 2, InvalidArgument,
              "gather_grad at node '", desc.node_name, "': expected ids, dy and a [V, D] table gradient");
  const DType ids_dtype = desc.inputs[0].dtype;
  if (ids_dtype != DType::i32 && ids_dtype != DType::i64) {
    if (why_not) *why_not = "cuda:gather_grad takes int32 or int64 ids";
    return nullptr;
  }
  const std::int64_t count = desc.inputs[0].shape.numel(), rows = desc.outputs[0].shape[0], width = desc.outputs[0].shape[1];
  NNFIT_CHECK(desc.inputs[1].shape.numel() == count * width, InvalidArgument, "gather_grad at node '", desc.node_name, "': dy ",
              desc.inputs[1].shape.to_string(), " is not one row of ", width, " per id");
  NNFIT_CHECK(count < (std::int64_t{1} << 31) && rows < (std::int64_t{1} << 31), Unsupported,
              "cuda:gather_grad takes fewer than 2^31 ids and table rows");
  std::int64_t size = 1;
  while (size < count) size *= 2;
  const bool ids64 = ids_dtype == DType::i64;
  return launch_kernel(
      [=](const KernelArgs& a) {
        if (rows * width) Launch::run(ZeroFn<T>{a.outputs[0]}, rows * width, a.ctx);
        if (count == 0 || width == 0) return;
        auto* keys = static_cast<std::int64_t*>(a.workspace);
        Launch::run(ScatterKeysFn{a.inputs[0], ids64, keys, count, rows}, size, a.ctx);
        for (std::int64_t block = 2; block <= size; block *= 2) {
          for (std::int64_t stride = block / 2; stride > 0; stride /= 2) Launch::run(BitonicStageFn{keys, block, stride}, size, a.ctx);
        }
        Launch::run(ScatterRunFn<T>{keys, a.inputs[1], a.outputs[0], count, rows, width}, count * width, a.ctx);
      },
      aligned_bytes(static_cast<std::size_t>(size) * sizeof(std::int64_t)));
}

// gather_grad is looked up by its first input, the ids; the storage type follows dy.
template <class Launch>
std::unique_ptr<Kernel> make_gather_grad_any(const KernelDesc& desc, std::string* why_not) {
  NNFIT_CHECK(desc.inputs.size() == 2, InvalidArgument, "gather_grad at node '", desc.node_name, "': expected ids and dy");
  switch (desc.inputs[1].dtype) {
    case DType::f32: return make_gather_grad<Launch, float>(desc, why_not);
    case DType::bf16: return make_gather_grad<Launch, Bf16>(desc, why_not);
    case DType::f16: return make_gather_grad<Launch, F16>(desc, why_not);
    default:
      if (why_not) *why_not = "cuda:gather_grad takes a float32, bfloat16 or float16 dy";
      return nullptr;
  }
}

template <class Launch>
void register_scatter_noise_kernels(KernelRegistry& r) {
  add_float_kernels(r, "noise", make_noise<Launch, float>, make_noise<Launch, Bf16>, make_noise<Launch, F16>);
  for (DType ids : {DType::i32, DType::i64}) r.add("gather_grad", DeviceType::cuda, ids, {"cuda:gather_grad", make_gather_grad_any<Launch>});
}

}  // namespace nnfit::cuda
