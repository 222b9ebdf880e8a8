// Keras's dtype policies on a model: layers compute in float16 / bfloat16 (inputs and
// variables cast as they run), variables, gradients and the optimizer stay float32, and the
// loss and predictions are float32. Numbers: the same MLP trained under float32 and under
// each mixed policy learns the same task, and the low-precision runs differ from float32
// (they did round).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/model.h"
#include "nnfit/model/saving.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

std::unique_ptr<Sequential> mlp(const std::string& policy) {
  auto m = std::make_unique<Sequential>("mlp");
  m->set_seed(7);
  m->set_input_shape(Shape{16});
  m->add(std::make_unique<Dense>("dense", DenseOptions{64, "relu"}));
  m->add(std::make_unique<Dense>("dense_1", DenseOptions{4}));
  CompileOptions c;
  c.optimizer.name = "adam";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(0.01);
  c.loss = Loss::from_name("sparse_categorical_crossentropy", true);
  c.metrics = {"accuracy"};
  c.dtype_policy = DTypePolicy::from_name(policy);
  m->compile(c);
  return m;
}

// Four classes by the sign pattern of two sums: learnable by the MLP.
std::pair<Tensor, Tensor> data(std::int64_t n) {
  Tensor x = Tensor::zeros(Shape{n, 16}, DType::f32);
  Tensor y = Tensor::zeros(Shape{n}, DType::i32);
  std::mt19937 rng(11);
  std::normal_distribution<float> g;
  for (std::int64_t i = 0; i < n; ++i) {
    float a = 0, b = 0;
    for (int j = 0; j < 16; ++j) {
      const float v = x.data<float>()[i * 16 + j] = g(rng);
      (j < 8 ? a : b) += v;
    }
    y.data<std::int32_t>()[i] = (a > 0 ? 1 : 0) + (b > 0 ? 2 : 0);
  }
  return {x, y};
}

TEST(MixedPrecision, PolicyNamesAreKeras) {
  EXPECT_EQ(DTypePolicy::from_name("float32").compute, DType::f32);
  const DTypePolicy mb = DTypePolicy::from_name("mixed_bfloat16");
  EXPECT_EQ(mb.compute, DType::bf16);
  EXPECT_EQ(mb.variable, DType::f32);
  EXPECT_TRUE(mb.mixed());
  EXPECT_EQ(DTypePolicy::from_name("mixed_float16").compute, DType::f16);
  EXPECT_EQ(DTypePolicy::from_name("bfloat16").variable, DType::bf16);
  EXPECT_THROW(DTypePolicy::from_name("float64"), Unsupported);
  EXPECT_THROW(DTypePolicy::from_name("int8_from_float32"), Unsupported);
  try {
    DTypePolicy::from_name("mixed_bf16");
    ADD_FAILURE() << "accepted mixed_bf16";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("float32, mixed_bfloat16, mixed_float16, bfloat16 and float16"),
              std::string::npos)
        << e.what();
  }
}

TEST(MixedPrecision, MixedPoliciesTrainLikeFloat32WithFloat32Variables) {
  auto [x, y] = data(2048);
  FitOptions fo;
  fo.epochs = 4;
  fo.batch_size = 64;
  fo.seed = 3;
  auto f32 = mlp("float32");
  const History h32 = f32->fit(x, y, fo);
  const double acc32 = log_value(h32.epochs.back(), "accuracy");
  ASSERT_GT(acc32, 0.9);
  for (const char* name : {"mixed_bfloat16", "mixed_float16"}) {
    SCOPED_TRACE(name);
    auto m = mlp(name);
    EXPECT_EQ(m->dtype_policy().name, name);
    const History h = m->fit(x, y, fo);
    const double acc = log_value(h.epochs.back(), "accuracy");
    EXPECT_GT(acc, acc32 - 0.03) << "float32 " << acc32;
    // The first epoch's loss is close to float32's, but not equal: the layers rounded.
    const double l32 = log_value(h32.epochs[0], "loss"), l = log_value(h.epochs[0], "loss");
    EXPECT_NEAR(l, l32, 0.05 * l32);
    EXPECT_NE(l, l32);
    for (const Tensor& w : m->get_weights()) EXPECT_EQ(w.dtype(), DType::f32);
    const std::vector<Tensor> p = m->predict(std::vector<Tensor>{x}, InferenceOptions{});
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].dtype(), DType::f32);
    const std::vector<Tensor> p32 = f32->predict(std::vector<Tensor>{x}, InferenceOptions{});
    std::int64_t agree = 0;
    for (std::int64_t i = 0; i < x.shape()[0]; ++i) {
      const float* a = p[0].data<float>() + i * 4;
      const float* b = p32[0].data<float>() + i * 4;
      agree += std::max_element(a, a + 4) - a == std::max_element(b, b + 4) - b ? 1 : 0;
    }
    EXPECT_GT(static_cast<double>(agree) / static_cast<double>(x.shape()[0]), 0.9);
  }
}

// Keras's per-layer "dtype" in every spelling, written back; a model whose layers all say
// float32 takes a model-wide policy, one built under a policy keeps its float32 layers.
TEST(MixedPrecision, KerasLayerPoliciesReadAndWriteBack) {
  const auto model = [](const std::string& d0, const std::string& d1) {
    return R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
           R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 8], "name": "in"}},)"
           R"({"class_name": "Dense", "config": {"name": "d0", "units": 4, "dtype": )" + d0 + R"(}},)"
           R"({"class_name": "Dense", "config": {"name": "d1", "units": 2, "dtype": )" + d1 + R"(}}]}})";
  };
  const std::string keras3 = R"({"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"}, "registered_name": null})";
  const std::string keras2 = R"({"class_name": "Policy", "config": {"name": "mixed_float16"}})";
  auto a = model_from_keras_json(model(keras3, R"("float32")"), "a.json");
  ASSERT_TRUE(a->layers()[0]->dtype_policy());
  EXPECT_EQ(a->layers()[0]->dtype_policy()->name, "mixed_bfloat16");
  ASSERT_TRUE(a->layers()[1]->dtype_policy()) << "built under a policy: the float32 output layer stays float32";
  EXPECT_EQ(a->layers()[1]->dtype_policy()->name, "float32");
  const std::string back = model_to_keras_json(*a);
  EXPECT_NE(back.find(R"("name":"mixed_bfloat16")"), std::string::npos) << back;
  auto b = model_from_keras_json(model(keras2, R"("mixed_float16")"), "b.json");
  EXPECT_EQ(b->layers()[0]->dtype_policy()->compute, DType::f16);
  EXPECT_EQ(b->layers()[1]->dtype_policy()->compute, DType::f16);
  auto c = model_from_keras_json(model(R"("float32")", R"({"class_name": "DTypePolicy", "config": {"name": "float32"}})"), "c.json");
  EXPECT_FALSE(c->layers()[0]->dtype_policy()) << "all float32: the model's policy applies";
  EXPECT_FALSE(c->layers()[1]->dtype_policy());
  c->set_dtype_policy(DTypePolicy::from_name("mixed_bfloat16"));
  EXPECT_NE(model_to_keras_json(*c).find(R"("name":"mixed_bfloat16")"), std::string::npos);
  try {
    model_from_keras_json(model(R"("mixed_half")", R"("float32")"), "d.json");
    ADD_FAILURE() << "accepted mixed_half";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("d.json: model.config.layers[1] (d0): \"dtype\" = \"mixed_half\""),
              std::string::npos)
        << e.what();
  }
}

TEST(MixedPrecision, SummaryNamesEachLayersComputeDtype) {
  const std::string s = mlp("mixed_bfloat16")->summary();
  EXPECT_NE(s.find("dense (Dense, bfloat16)"), std::string::npos) << s;
  EXPECT_NE(s.find("Dtype policy: mixed_bfloat16"), std::string::npos) << s;
  const std::string f = mlp("float32")->summary();
  EXPECT_NE(f.find("dense (Dense)"), std::string::npos) << f;
  EXPECT_EQ(f.find("Dtype policy"), std::string::npos) << f;
}

TEST(MixedPrecision, PolicyIsSetBeforeCompile) {
  auto m = mlp("float32");
  EXPECT_THROW(m->set_dtype_policy(DTypePolicy::from_name("mixed_bfloat16")), InvalidArgument);
}

}  // namespace
}  // namespace nnfit

namespace nnfit {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Saved models of every layer family the fixtures hold (convolutions, pooling, merges,
// recurrent layers with states, attention), run under mixed_bfloat16: predictions within
// bfloat16's rounding of float32's, and a training step of finite loss.
TEST(MixedPrecision, SavedModelsRunUnderMixedBfloat16) {
  const std::string dir = std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/";
  for (const char* file : {"merges_keras3.json", "towers_keras3.json", "attention_keras3.json", "recurrent_states_keras3.json"}) {
    SCOPED_TRACE(file);
    const std::string text = slurp(dir + file);
    auto f32 = model_from_keras_json(text, file);
    auto bf16 = model_from_keras_json(text, file);
    f32->set_seed(2);
    bf16->set_seed(2);
    bf16->set_dtype_policy(DTypePolicy::from_name("mixed_bfloat16"));
    f32->build();
    bf16->build();
    std::vector<Tensor> x;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.0f, 3.0f);
    for (const InputSpec& in : f32->graph().inputs()) {
      std::vector<std::int64_t> dims{8};
      dims.insert(dims.end(), in.shape.dims().begin(), in.shape.dims().end());
      Tensor t = Tensor::zeros(Shape(dims), DType::f32);
      for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::floor(u(rng));  // ids or values
      x.push_back(t);
    }
    const std::vector<Tensor> a = f32->predict(x, InferenceOptions{}), b = bf16->predict(x, InferenceOptions{});
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      ASSERT_EQ(b[k].dtype(), DType::f32);
      double scale = 1e-3, worst = 0;
      for (std::int64_t i = 0; i < a[k].numel(); ++i) scale = std::max(scale, std::fabs(double(a[k].data<float>()[i])));
      for (std::int64_t i = 0; i < a[k].numel(); ++i) {
        worst = std::max(worst, std::fabs(double(a[k].data<float>()[i]) - b[k].data<float>()[i]) / scale);
      }
      EXPECT_LT(worst, 0.05) << "output " << k;
      EXPECT_GT(worst, 0.0) << "output " << k << ": bfloat16 should round somewhere";
    }
    CompileOptions c;
    c.optimizer.name = "sgd";
    c.loss = Loss::from_name("mse");
    bf16->compile(c);
    std::vector<Tensor> y;
    for (const Tensor& t : a) y.push_back(t);
    FitOptions fo;
    fo.batch_size = 8;
    const History h = bf16->fit(x, y, fo);
    EXPECT_TRUE(std::isfinite(log_value(h.epochs[0], "loss")));
  }
}

}  // namespace
}  // namespace nnfit

namespace nnfit {
namespace {

// Dense(4) then Rescaling(1e-6): the kernel's gradient passes through a factor of 1e-6.
// With targets near 1, dL/dprediction is about 2/128, so the dense output's gradient is
// about 1.6e-8: below float16's smallest subnormal half-way point (2^-25), it rounds to 0
// unless the loss is scaled (2^15 makes it 5e-4). `policy`: every layer's.
std::unique_ptr<Sequential> tiny_gradients(const std::string& policy, bool scaled, double lr) {
  auto m = std::make_unique<Sequential>("tiny");
  m->set_seed(4);
  m->set_input_shape(Shape{8});
  m->add(std::make_unique<Dense>("dense", DenseOptions{4}));
  m->add(std::make_unique<Rescaling>("rescale", 1e-6));
  for (const auto& l : m->layers()) l->set_dtype_policy(DTypePolicy::from_name(policy));
  CompileOptions c;
  c.optimizer.name = "sgd";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(lr);
  c.optimizer.loss_scale.enabled = scaled;  // the model's own policy is float32: not applied by itself
  c.loss = Loss::from_name("mse");
  m->compile(c);
  return m;
}

std::pair<Tensor, Tensor> regression(std::int64_t n, float target) {
  Tensor x = Tensor::zeros(Shape{n, 8}, DType::f32), y = Tensor::zeros(Shape{n, 4}, DType::f32);
  std::mt19937 rng(9);
  std::normal_distribution<float> g;
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = g(rng);
  for (std::int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = target;
  return {x, y};
}

// The kernel's change over a fit.
std::vector<float> kernel_change(Sequential& m, const Tensor& x, const Tensor& y, const FitOptions& fo) {
  const Tensor before = m.get_weights()[0].clone();
  m.fit(x, y, fo);
  const Tensor after = m.get_weights()[0];
  std::vector<float> d(static_cast<std::size_t>(before.numel()));
  for (std::int64_t i = 0; i < before.numel(); ++i) d[static_cast<std::size_t>(i)] = after.data<float>()[i] - before.data<float>()[i];
  return d;
}

TEST(LossScaling, Float16GradientsUnderflowWithoutScalingAndTrainWithIt) {
  auto [x, y] = regression(256, 1.0f);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 32;
  fo.shuffle = false;
  auto plain = tiny_gradients("mixed_float16", false, 1e4);
  for (float d : kernel_change(*plain, x, y, fo)) ASSERT_EQ(d, 0.0f) << "float16 gradients should underflow to 0";
  auto scaled = tiny_gradients("mixed_float16", true, 1e4);
  auto exact = tiny_gradients("float32", false, 1e4);
  const std::vector<float> ds = kernel_change(*scaled, x, y, fo), de = kernel_change(*exact, x, y, fo);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    num += (ds[i] - de[i]) * (ds[i] - de[i]);
    den += de[i] * de[i];
  }
  ASSERT_GT(den, 0.0);
  EXPECT_LT(std::sqrt(num / den), 0.05) << "scaled float16 training follows float32's";
  FitOptions one = fo;
  one.epochs = 1;
  const History h = scaled->fit(x, y, one);
  EXPECT_EQ(log_value(h.epochs.back(), "loss_scale"), 32768.0);
  EXPECT_EQ(log_value(h.epochs.back(), "skipped_steps"), 0.0);
  const History hp = plain->fit(x, y, one);
  EXPECT_EQ(log_value(hp.epochs.back(), "loss_scale", -1.0), -1.0) << "no loss scale is reported without one";
}

TEST(LossScaling, OverflowSkipsStepsAndBacksOffWithoutNaNInTheWeights) {
  // Targets of 1000, batches of 8 with 4 outputs: dL/dprediction is 2 * 1000 / 32 = 62.5,
  // times the scale beyond float16's 65504 until the scale is 1024 (five halvings); the
  // loss itself is float32 and finite.
  auto [x, y] = regression(64, 1000.0f);
  auto m = tiny_gradients("mixed_float16", true, 1.0);
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 8;
  fo.shuffle = false;
  const std::int64_t it0 = m->iterations();
  const History h = m->fit(x, y, fo);
  const double skipped = log_value(h.epochs[0], "skipped_steps");
  EXPECT_EQ(skipped, 5.0);
  EXPECT_EQ(log_value(h.epochs[0], "loss_scale"), 1024.0) << "halved once per skipped step";
  EXPECT_EQ(m->iterations() - it0, 8 - 5) << "a skipped step does not count";
  for (const Tensor& w : m->get_weights()) {
    for (std::int64_t i = 0; i < w.numel(); ++i) ASSERT_TRUE(std::isfinite(w.data<float>()[i]));
  }
}

TEST(LossScaling, FiniteStepsDoubleTheScaleAndAFixedScaleStays) {
  auto [x, y] = regression(64, 1.0f);
  FitOptions fo;
  fo.batch_size = 8;
  fo.shuffle = false;
  for (bool dynamic : {true, false}) {
    auto m = std::make_unique<Sequential>("grow");
    m->set_input_shape(Shape{8});
    m->add(std::make_unique<Dense>("dense", DenseOptions{4}));
    CompileOptions c;
    c.optimizer.name = "sgd";
    c.optimizer.loss_scale = {true, dynamic, 8.0, 2};
    c.loss = Loss::from_name("mse");
    c.dtype_policy = DTypePolicy::from_name("mixed_float16");
    m->compile(c);
    const History h = m->fit(x, y, fo);  // 8 finite steps: 4 doublings when dynamic
    EXPECT_EQ(log_value(h.epochs[0], "loss_scale"), dynamic ? 128.0 : 8.0);
  }
}

TEST(LossScaling, TheScaleIsSavedAndRestoredAsKerasWritesIt) {
  // After the overflow fit above the scale is 1024 with 3 finite steps since it last
  // changed; a .keras file keeps both (Keras's LossScaleOptimizer dynamic_scale and
  // step_counter), and loading it resumes there.
  auto [x, y] = regression(64, 1000.0f);
  auto m = tiny_gradients("mixed_float16", true, 1.0);
  FitOptions fo;
  fo.epochs = 1;
  fo.batch_size = 8;
  fo.shuffle = false;
  m->fit(x, y, fo);
  ASSERT_EQ(m->loss_scale(), 1024.0);
  ASSERT_EQ(m->loss_scale_good_steps(), 3);
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            ("nnfit_loss_scale_" + std::to_string(::getpid()) + ".keras")).string();
  save_model(*m, path);
  auto back = load_model(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(back->compile_options().optimizer.loss_scale.enabled);
  EXPECT_EQ(back->loss_scale(), 1024.0);
  EXPECT_EQ(back->loss_scale_good_steps(), 3);
  EXPECT_EQ(back->iterations(), m->iterations());
  // A file Keras 3 wrote (make_loss_scale_keras.py): dynamic_scale 8192, step_counter 2,
  // Adam's iterations 2.
  auto keras = load_model(std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/loss_scale_keras3.keras");
  EXPECT_TRUE(keras->compile_options().optimizer.loss_scale.enabled);
  EXPECT_EQ(keras->compile_options().optimizer.name, "adam");
  EXPECT_EQ(keras->loss_scale(), 8192.0);
  EXPECT_EQ(keras->loss_scale_good_steps(), 2);
  EXPECT_EQ(keras->iterations(), 2);
  EXPECT_THROW(m->set_loss_scale_state(0.0, 1), InvalidArgument);
  EXPECT_THROW(m->set_loss_scale_state(std::nan(""), 1), InvalidArgument);
}

TEST(LossScaling, MixedFloat16AppliesItAsKerasCompileDoes) {
  auto m = mlp("mixed_float16");
  EXPECT_TRUE(m->compile_options().optimizer.loss_scale.enabled);
  EXPECT_NE(optimizer_to_keras_json(m->compile_options().optimizer).find("\"LossScaleOptimizer\""), std::string::npos);
  const OptimizerOptions back = optimizer_from_keras_json(optimizer_to_keras_json(m->compile_options().optimizer), "o");
  EXPECT_TRUE(back.loss_scale.enabled);
  EXPECT_EQ(back.name, "adam");
  EXPECT_FALSE(mlp("mixed_bfloat16")->compile_options().optimizer.loss_scale.enabled);
  // Keras 3's LossScaleOptimizer config, and a bad one.
  const OptimizerOptions k = optimizer_from_keras_json(
      R"({"module": "keras.optimizers", "class_name": "LossScaleOptimizer", "config": {"name": "loss_scale_optimizer", "inner_optimizer": {"module": "keras.optimizers", "class_name": "SGD", "config": {"name": "SGD", "learning_rate": 0.1}, "registered_name": null}, "initial_scale": 1024.0, "dynamic_growth_steps": 100}, "registered_name": null})",
      "k.json");
  EXPECT_EQ(k.name, "sgd");
  EXPECT_EQ(k.loss_scale.initial_scale, 1024.0);
  EXPECT_EQ(k.loss_scale.growth_steps, 100);
  EXPECT_THROW(optimizer_from_keras_json(R"({"class_name": "LossScaleOptimizer", "config": {"inner_optimizer": "sgd", "initial_scale": -1}})", "k.json"),
               InvalidArgument);
}

}  // namespace
}  // namespace nnfit
