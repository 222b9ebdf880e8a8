// cuda-host cases of the optimizer family (optimizer_kernels.h): every update at float32
// (variables and slots stay float32 under every policy), param and slots compared after
// the run; the slot-update rules bit for bit, since the CUDA kernel calls the reference's
// own per-element function.
#include <cmath>

#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

KernelDesc update_desc(const std::string& op, Attrs attrs, const std::vector<Tensor>& in) {
  KernelDesc d{op, std::move(attrs), {}, {}, "test/" + op};
  for (const Tensor& t : in) d.inputs.push_back(t.desc());
  return d;
}

const std::vector<Shape> kShapes = {Shape{1}, Shape{7}, Shape{3, 5, 11}, Shape{20011}};

StepContext step_ctx(std::int64_t step) {
  StepContext ctx;
  ctx.learning_rate = 0.01f;
  ctx.step = step;
  return ctx;
}

void check_fused(const std::string& op) {
  std::uint64_t seed = 500;
  for (const Shape& s : kShapes) {
    const StepContext ctx = step_ctx(4);
    const Tensor p = random_tensor(s, seed++), g = random_tensor(s, seed++), slot = random_tensor(s, seed++);
    const Tensor sq = random_tensor(s, seed++, 0.0f, 1.0f), big = random_tensor(s, seed++, 0.1f, 1.0f);
    const Tensor average = random_tensor(s, seed++, -0.1f, 0.1f);
    const auto check = [&](const Attrs& a, const std::vector<Tensor>& in) {
      expect_cuda_host_matches_reference(update_desc(op, a, in), in, DType::f32, 1e-6f, 1e-5f, ctx);
    };
    if (op == "sgd_update") check({}, {p, g});
    if (op == "sgd_momentum_update") {
      for (std::int64_t nesterov : {0, 1}) check({{"momentum", 0.9}, {"nesterov", nesterov}}, {p, g, slot});
    }
    if (op == "adam_update") {
      for (double wd : {0.0, 0.004}) check({{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", wd}}, {p, g, slot, sq});
      check({{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}, {"weight_decay", 0.004}, {"amsgrad", std::int64_t{1}}},
            {p, g, slot, sq, random_tensor(s, seed++, 0.0f, 1.0f)});
    }
    if (op == "rmsprop_update") {
      check({{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}}, {p, g, sq});
      check({{"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-7}}, {p, g, sq, slot});
      check({{"rho", 0.9}, {"momentum", 0.0}, {"epsilon", 1e-7}, {"centered", std::int64_t{1}}}, {p, g, big, average});
      check({{"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-7}, {"centered", std::int64_t{1}}}, {p, g, big, slot, average});
    }
  }
}

void check_slot_rule(const std::string& op, const Attrs& attrs, int slots) {
  std::uint64_t seed = 100;
  for (const Shape& s : kShapes) {
    // Step 1200: past the 900 steps after which Nadam's product is a power of β1 (Note
    // [Nadam's schedule without state]).
    for (std::int64_t step : {0, 4, 1200}) {
      std::vector<Tensor> in = {random_tensor(s, seed++), random_tensor(s, seed++)};
      for (int k = 0; k < slots; ++k) in.push_back(random_tensor(s, seed++, 0.05f, 1.0f));
      // Bit for bit: the same function, with no FMA contraction on either side.
      expect_cuda_host_matches_reference(update_desc(op, attrs, in), in, DType::f32, 0.0f, 0.0f, step_ctx(step));
    }
  }
}

KernelDesc clip_desc(const std::string& op, Attrs attrs, const std::vector<Tensor>& in, TensorDesc out) {
  KernelDesc d = update_desc(op, std::move(attrs), in);
  d.outputs.push_back(std::move(out));
  return d;
}

// The OpenMP test's cases: both branches of each clip; norms over several tensors, one of
// them several chunks long.
void check_clip(const std::string& op) {
  std::uint64_t seed = 300;
  for (const Shape& s : kShapes) {
    const Tensor g = random_tensor(s, seed++, -3.0f, 3.0f);
    if (op == "clip_by_value") {
      expect_cuda_host_matches_reference(clip_desc(op, {{"clipvalue", 0.5}}, {g}, g.desc()), {g}, DType::f32, 0.0f, 0.0f);
    }
    for (double clipnorm : {0.1, 1e6}) {
      if (op == "clip_by_norm") {
        expect_cuda_host_matches_reference(clip_desc(op, {{"clipnorm", clipnorm}}, {g}, g.desc()), {g}, DType::f32, 0.0f, 1e-6f);
      }
      const std::vector<Tensor> gs = {g, random_tensor(Shape{3}, seed++), random_tensor(Shape{40000}, seed++)};
      if (op == "global_norm_scale") {
        expect_cuda_host_matches_reference(clip_desc(op, {{"clipnorm", clipnorm}}, gs, {Shape{}, DType::f32}), gs, DType::f32, 0.0f,
                                           1e-6f);
      }
    }
  }
}

// Loss scaling's unscale: scales that make 1/scale exact and not (3), a gradient with no
// bad element, and one NaN at its first, a middle (another chunk: Shape{20011} has 5)
// and its last element, so each index's flag and their OR are checked. (The OR over
// infinities is in the reference's own test: an infinity compares unequal to itself
// within a tolerance.)
void check_unscale_gradient() {
  std::uint64_t seed = 400;
  for (const Shape& s : kShapes) {
    for (float scale : {1.0f, 32768.0f, 0.5f, 3.0f}) {
      const Tensor sc = Tensor::zeros(Shape{}, DType::f32);
      *sc.data<float>() = scale;
      const Tensor g = random_tensor(s, seed++, -3e4f, 3e4f);
      std::vector<std::int64_t> bad_at = {-1, 0, s.numel() / 2, s.numel() - 1};
      for (std::int64_t at : bad_at) {
        Tensor gi = g.clone();
        if (at >= 0) gi.data<float>()[at] = std::nanf("");
        KernelDesc d = clip_desc("unscale_gradient", {}, {gi, sc}, g.desc());
        d.outputs.push_back({Shape{}, DType::f32});
        expect_cuda_host_matches_reference(d, {gi, sc}, DType::f32, 0.0f, 0.0f);
      }
    }
  }
}

// A micro-batch's accumulation (Note [Micro-batches on the device]): into a sum that holds
// earlier micro-batches' products, by weights and divisors that make weight/divisor exact
// and not; a NaN in the gradient at a first, middle and last element sets the flag, and
// the sum after the run (the mutated input) is compared too.
void check_accumulate_gradient() {
  std::uint64_t seed = 450;
  for (const Shape& s : kShapes) {
    for (const auto& [weight, divisor] : std::vector<std::pair<double, float>>{{32, 256}, {7, 98304}, {3, 10}}) {
      const Tensor d = Tensor::zeros(Shape{}, DType::f32);
      *d.data<float>() = divisor;
      const Tensor g = random_tensor(s, seed++, -3e4f, 3e4f);
      const Tensor sum = random_tensor(s, seed++, -2.0f, 2.0f);
      for (std::int64_t at : std::vector<std::int64_t>{-1, 0, s.numel() / 2, s.numel() - 1}) {
        Tensor gi = g.clone();
        if (at >= 0) gi.data<float>()[at] = std::nanf("");
        KernelDesc k = clip_desc("accumulate_gradient", {{"weight", weight}}, {gi, d, sum}, {Shape{}, DType::f32});
        expect_cuda_host_matches_reference(k, {gi, d, sum}, DType::f32, 0.0f, 0.0f);
      }
    }
  }
}

}  // namespace

std::vector<OpCase> optimizer_cases() {
  std::vector<OpCase> cases;
  for (const char* op : {"sgd_update", "sgd_momentum_update", "adam_update", "rmsprop_update"}) {
    cases.push_back({op, [op] { check_fused(op); }});
  }
  const Attrs adam_like{{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}};
  const struct {
    const char* op;
    Attrs attrs;
    int slots;
  } kRules[] = {
      {"adagrad_update", {{"epsilon", 1e-7}}, 1},
      {"adamax_update", adam_like, 2},
      {"lion_update", {{"beta_1", 0.9}, {"beta_2", 0.99}}, 1},
      {"adadelta_update", {{"rho", 0.95}, {"epsilon", 1e-7}}, 2},
      {"nadam_update", adam_like, 2},
      {"ftrl_update", {{"learning_rate_power", -0.5}, {"l1", 0.01}, {"l2", 0.02}, {"l2_shrinkage", 0.03}, {"beta", 0.1}}, 2},      {"lamb_update", adam_like, 2},
      {"schedule_free_update",
       {{"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-8}, {"warmup_steps", std::int64_t{3}}},
       2},
  };
  for (const auto& r : kRules) {
    cases.push_back({r.op, [r] { check_slot_rule(r.op, r.attrs, r.slots); }});
  }
  cases.push_back({"adafactor_update", [] {
                     // The OpenMP test's shapes: factored (two RMS chunks, a batch of three) and not.
                     const Attrs attrs{{"beta_2_decay", -0.8}, {"epsilon_1", 1e-30}, {"epsilon_2", 1e-3},
                                       {"clip_threshold", 1.0}};
                     std::uint64_t seed = 150;
                     for (const Shape& s : {Shape{1}, Shape{7}, Shape{20011}, Shape{70, 90}, Shape{3, 5, 11}}) {
                       std::vector<std::int64_t> r(s.dims().begin(), s.dims().end() - (s.rank() >= 2 ? 1 : s.rank()));
                       std::vector<std::int64_t> c;
                       if (s.rank() >= 2) {
                         c.assign(s.dims().begin(), s.dims().end() - 2);
                         c.push_back(s.dims().back());
                       }
                       for (std::int64_t step : {0, 4}) {
                         const std::vector<Tensor> in{random_tensor(s, seed++), random_tensor(s, seed++),
                                                      random_tensor(Shape(r), seed++, 0.05f, 1.0f),
                                                      random_tensor(Shape(c), seed++, 0.05f, 1.0f),
                                                      random_tensor(s, seed++, 0.05f, 1.0f)};
                         expect_cuda_host_matches_reference(update_desc("adafactor_update", attrs, in), in, DType::f32,
                                                            0.0f, 0.0f, step_ctx(step));
                       }
                     }
                   }});
  cases.push_back({"ema_update", [] {
                     std::uint64_t seed = 200;
                     for (const Shape& s : kShapes) {
                       for (std::int64_t step : {0, 3, 4}) {  // 4: overwrite_frequency 5 overwrites; 0: momentum 0
                         const std::vector<Tensor> in{random_tensor(s, seed++), random_tensor(s, seed++)};
                         const Attrs ema{{"momentum", 0.99}, {"overwrite_frequency", std::int64_t{5}}};
                         expect_cuda_host_matches_reference(update_desc("ema_update", ema, in), in, DType::f32, 0.0f, 0.0f,
                                                            step_ctx(step));
                       }
                     }
                   }});
  cases.push_back({"decay_weights", [] {
                     std::uint64_t seed = 300;
                     for (const Shape& s : kShapes) {
                       const std::vector<Tensor> in{random_tensor(s, seed++)};
                       expect_cuda_host_matches_reference(update_desc("decay_weights", {{"weight_decay", 0.004}}, in), in,
                                                          DType::f32, 0.0f, 0.0f, step_ctx(2));
                     }
                   }});
  for (const char* op : {"clip_by_value", "clip_by_norm", "global_norm_scale"}) cases.push_back({op, [op] { check_clip(op); }});
  cases.push_back({"unscale_gradient", check_unscale_gradient});
  cases.push_back({"accumulate_gradient", check_accumulate_gradient});
  cases.push_back({"moving_average_update", [] {
                     for (std::int64_t channels : {1, 7, 20001}) {
                       const std::vector<Tensor> in{random_tensor(Shape{channels}, 700), random_tensor(Shape{channels}, 701)};
                       expect_cuda_host_matches_reference(update_desc("moving_average_update", {{"momentum", 0.99}}, in), in,
                                                          DType::f32, 0.0f, 0.0f);
                     }
                   }});
  return cases;
}

}  // namespace nnfit::testing
