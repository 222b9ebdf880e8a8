// cuda-host cases of the element-wise family (elementwise_kernels.h): every op at float32,
// bfloat16 and float16 against its reference kernel, on odd sizes and sizes past one
// block (256) and past several, so partial blocks and the grid-stride walk are exercised.
#include "cuda_host/cuda_host_harness.h"

namespace nnfit::testing {
namespace {

KernelDesc desc(const std::string& op, Attrs attrs, std::vector<Shape> ins, std::vector<Shape> outs) {
  return f32_desc(op, std::move(attrs), std::move(ins), std::move(outs));
}

const std::vector<Shape> kChannelShapes = {Shape{1, 1}, Shape{5, 3}, Shape{37, 129}, Shape{2, 3, 5, 7}, Shape{16, 9, 9, 33}};
const std::vector<Shape> kFlatShapes = {Shape{1}, Shape{7}, Shape{3, 5, 11}, Shape{20011}};

const char* const kActivations[] = {"linear", "relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "elu", "selu",
                                    "softplus", "softsign", "hard_sigmoid", "hard_sigmoid_keras2", "exponential",
                                    "leaky_relu", "relu6", "silu", "mish", "hard_silu"};

void check_activation(bool grad) {
  std::uint64_t seed = grad ? 40 : 30;
  const Shape s{3, 517};
  std::vector<Attrs> kinds;
  for (const char* k : kActivations) kinds.push_back({{"kind", std::string(k)}});
  kinds.push_back({{"kind", std::string("elu")}, {"alpha", 0.7}});
  kinds.push_back({{"kind", std::string("relu_keras")}, {"alpha", 0.1}, {"max_value", 4.0}, {"threshold", 0.5}});
  kinds.push_back({{"kind", std::string("relu_keras")}, {"alpha", 0.0}, {"max_value", 6.0}});
  for (const Attrs& a : kinds) {
    // Inputs across every branch (±3 of hard_sigmoid, 6 of relu6, 30 of softplus).
    const Tensor x = random_tensor(s, seed++, -8.0f, 8.0f);
    for (DType dt : float_dtypes()) {
      if (!grad) {
        expect_cuda_host_matches_reference(desc("activation", a, {s}, {s}), {x}, dt, 1e-5f, 2e-5f);
        continue;
      }
      const std::string kind = a.s("kind");
      // relu, sigmoid and tanh read y: feed an output in their range.
      const bool reads_y = kind == "relu" || kind == "sigmoid" || kind == "tanh";
      const Tensor t = reads_y ? random_tensor(s, seed++, kind == "relu" ? -1.0f : -0.99f, 0.99f) : x;
      const Tensor dy = random_tensor(s, seed++);
      expect_cuda_host_matches_reference(desc("activation_grad", a, {s, s}, {s}), {t, dy}, dt, 1e-5f, 2e-5f);
    }
  }
}

void check_binary(const std::string& op) {
  std::uint64_t seed = 60;
  for (const Shape& s : kFlatShapes) {
    Tensor a = random_tensor(s, seed++), b = random_tensor(s, seed++);
    for (std::int64_t i = 0; i < s.numel(); i += 3) b.data<float>()[i] = a.data<float>()[i];  // ties
    for (DType dt : float_dtypes()) {
      if (op == "minmax_grad") {
        const Tensor dy = random_tensor(s, seed++);
        for (const char* kind : {"maximum", "minimum"}) {
          expect_cuda_host_matches_reference(desc(op, {{"kind", std::string(kind)}}, {s, s, s}, {s, s}), {a, b, dy}, dt);
        }
      } else {
        expect_cuda_host_matches_reference(desc(op, {}, {s, s}, {s}), {a, b}, dt);
      }
    }
  }
}

}  // namespace

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> cases = {
      {"bias_add",
       [] {
         std::uint64_t seed = 1;
         for (const Shape& s : kChannelShapes) {
           const Tensor x = random_tensor(s, seed++), b = random_tensor(Shape{s.dim(-1)}, seed++);
           for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(desc("bias_add", {}, {s, Shape{s.dim(-1)}}, {s}), {x, b}, dt);
         }
       }},
      {"bias_add_grad",
       [] {
         std::uint64_t seed = 10;
         for (const Shape& s : kChannelShapes) {
           const Tensor dy = random_tensor(s, seed++);
           for (DType dt : float_dtypes()) {
             expect_cuda_host_matches_reference(desc("bias_add_grad", {}, {s}, {Shape{s.dim(-1)}}), {dy}, dt, 1e-4f, 1e-4f);
             // The mixed policies' bias gradient: dy in the low type, db float32 (a folded cast).
             if (dt != DType::f32) expect_cuda_host_folded_cast_matches_reference(desc("bias_add_grad", {}, {s}, {Shape{s.dim(-1)}}), {dy}, dt);
           }
         }
       }},
      {"add_n",
       [] {
         std::uint64_t seed = 20;
         for (const Shape& s : kFlatShapes) {
           for (int k : {1, 2, 5, 8, 9, 17}) {  // 9 and 17 take a second and third pass
             std::vector<Tensor> xs;
             std::vector<Shape> shapes;
             for (int i = 0; i < k; ++i) {
               xs.push_back(random_tensor(s, seed++));
               shapes.push_back(s);
             }
             for (DType dt : float_dtypes()) expect_cuda_host_matches_reference(desc("add_n", {}, shapes, {s}), xs, dt);
           }
         }
       }},
      {"activation", [] { check_activation(false); }},
      {"activation_grad", [] { check_activation(true); }},
      {"scale",
       [] {
         const Tensor x = random_tensor(Shape{1031}, 50);
         for (DType dt : float_dtypes()) {
           expect_cuda_host_matches_reference(desc("scale", {{"factor", 0.37}, {"offset", -1.5}}, {Shape{1031}}, {Shape{1031}}), {x}, dt);
         }
       }},
      {"cast",
       [] {
         // Bit for bit against core/dtype.cpp's conversions, both directions, special values too.
         std::vector<float> values{0.0f, -0.0f, 1.0f, 1.00390625f, 65504.0f, 65520.0f, 70000.0f, 1e-8f, 6e-8f, 3e38f,
                                   1e-40f, std::numeric_limits<float>::infinity(), std::nanf("")};
         for (int i = 0; i < 3000; ++i) values.push_back(std::ldexp(static_cast<float>(i % 977) / 977.0f + 1.0f, i % 60 - 30) * (i % 2 ? 1 : -1));
         const Shape s{static_cast<std::int64_t>(values.size())};
         const Tensor x = tensor_of(s, values);
         for (DType from : float_dtypes()) {
           for (DType to : float_dtypes()) {
             SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
             const KernelDesc d{"cast", Attrs{{"dtype", std::string(dtype_name(to))}}, {{s, from}}, {{s, to}}, "test/cast"};
             const Tensor in = to_dtype(x, from);
             const std::vector<Tensor> out = run_cuda(d, {in});
             ASSERT_FALSE(out.empty());
             const Tensor& got = out[0];
             const Tensor want = to_dtype(to_f32(in), to);
             EXPECT_EQ(0, std::memcmp(want.raw(), got.raw(), want.nbytes()));
           }
         }
       }},
      {"reshape",
       [] {
         const Tensor x = random_tensor(Shape{300, 7}, 70);
         expect_cuda_host_matches_reference(desc("reshape", {{"shape", std::vector<std::int64_t>{-1, 7, 100}}}, {Shape{300, 7}},
                                                 {Shape{3, 7, 100}}),
                                            {x}, DType::f32, 0.0f, 0.0f);
         const Tensor labels = random_labels(9, 4, 71);
         const KernelDesc d{"reshape", {}, {{Shape{9}, DType::i32}}, {{Shape{3, 3}, DType::i32}}, "test/reshape"};
         const std::vector<Tensor> out = run_cuda(d, {labels});
         ASSERT_FALSE(out.empty());
         const Tensor& got = out[0];
         EXPECT_EQ(0, std::memcmp(labels.raw(), got.raw(), labels.nbytes()));
       }},
  };
  for (const char* op : {"sub", "mul", "maximum", "minimum", "minmax_grad"}) {
    cases.push_back({op, [op] { check_binary(op); }});
  }
  return cases;
}

}  // namespace nnfit::testing
