// Functional models built in C++: a layer called twice shares its weights, a model with
// two inputs and two outputs predicts what the arithmetic says, trains with a loss per
// output weighted by loss_weights and logs them under Keras's names, and its summary has
// Keras's "Connected to" column.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <unistd.h>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/model/saving.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/lr_schedule.h"
#include "nnfit/nn/merge_layers.h"

namespace nnfit {
namespace {

// a, b (4,) -> shared Dense(3, relu) on each -> Add -> Dense(2) "head" and Dense(1) "aux".
std::unique_ptr<Model> two_tower(std::uint64_t seed = 7) {
  LayerGraph g;
  TensorRef a = g.add_input("a", Shape{4});
  TensorRef b = g.add_input("b", Shape{4});
  Layer& shared = g.add_layer(std::make_unique<Dense>("shared", DenseOptions{3, "relu"}));
  TensorRef sa = g.call(shared, {a})[0];
  TensorRef sb = g.call(shared, {b})[0];
  TensorRef sum = g.call(g.add_layer(std::make_unique<Merge>("add", MergeOp::add)), {sa, sb})[0];
  TensorRef head = g.call(g.add_layer(std::make_unique<Dense>("head", DenseOptions{2})), {sum})[0];
  TensorRef aux = g.call(g.add_layer(std::make_unique<Dense>("aux", DenseOptions{1})), {sum})[0];
  g.set_outputs({head, aux});
  auto m = std::make_unique<Model>("two_tower", std::move(g));
  m->set_seed(seed);
  return m;
}

CompileOptions two_losses(std::vector<double> weights = {}) {
  CompileOptions c;
  c.optimizer.name = "adam";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(0.01);
  c.losses = {Loss::from_name("sparse_categorical_crossentropy", true), Loss::from_name("mse")};
  c.loss_weights = std::move(weights);
  c.metrics = {"accuracy"};
  return c;
}

struct Data {
  Tensor a, b, y_class, y_sum;
};

// Targets the symmetric model can learn: the class says whether sum(a + b) > 4; aux
// regresses sum(a + b) / 8.
Data data(std::int64_t n) {
  Data d{Tensor::zeros(Shape{n, 4}), Tensor::zeros(Shape{n, 4}), Tensor::zeros(Shape{n}, DType::i32),
         Tensor::zeros(Shape{n, 1})};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    float sa = 0, sb = 0;
    for (int j = 0; j < 4; ++j) {
      sa += d.a.data<float>()[i * 4 + j] = u(rng);
      sb += d.b.data<float>()[i * 4 + j] = u(rng);
    }
    d.y_class.data<std::int32_t>()[i] = sa + sb > 4.0f ? 1 : 0;
    d.y_sum.data<float>()[i] = (sa + sb) / 8.0f;
  }
  return d;
}

double get(const Logs& logs, const std::string& key) { return log_value(logs, key, std::nan("")); }

TEST(Functional, ASharedLayerHasOneSetOfWeightsAndPredictsTheArithmetic) {
  auto m = two_tower();
  m->compile(two_losses());
  EXPECT_EQ(m->count_params(), (4 * 3 + 3) + (3 * 2 + 2) + (3 * 1 + 1));
  EXPECT_EQ(m->output_names(), (std::vector<std::string>{"head", "aux"}));
  Data d = data(5);
  InferenceOptions io;
  io.batch_size = 2;  // batches of 2, 2 and 1
  std::vector<Tensor> out = m->predict({d.a, d.b}, io);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].shape(), (Shape{5, 2}));
  ASSERT_EQ(out[1].shape(), (Shape{5, 1}));
  auto w = [&](const std::string& layer, int i) { return m->get_layer(layer)->weights()[static_cast<std::size_t>(i)].value.data<float>(); };
  for (std::int64_t r = 0; r < 5; ++r) {
    float h[3];
    for (int k = 0; k < 3; ++k) {
      float za = w("shared", 1)[k], zb = w("shared", 1)[k];
      for (int j = 0; j < 4; ++j) {
        za += d.a.data<float>()[r * 4 + j] * w("shared", 0)[j * 3 + k];
        zb += d.b.data<float>()[r * 4 + j] * w("shared", 0)[j * 3 + k];
      }
      h[k] = std::max(za, 0.0f) + std::max(zb, 0.0f);
    }
    for (int o = 0; o < 2; ++o) {
      float z = w("head", 1)[o];
      for (int k = 0; k < 3; ++k) z += h[k] * w("head", 0)[k * 2 + o];
      EXPECT_NEAR(out[0].data<float>()[r * 2 + o], z, 1e-5) << "row " << r;
    }
    float z = w("aux", 1)[0];
    for (int k = 0; k < 3; ++k) z += h[k] * w("aux", 0)[k];
    EXPECT_NEAR(out[1].data<float>()[r], z, 1e-5) << "row " << r;
  }
}

TEST(Functional, TheLossIsTheWeightedSumOfTheOutputsLossesUnderKerasNames) {
  Data d = data(64);
  auto plain = two_tower();
  plain->compile(two_losses());
  auto weighted = two_tower();
  weighted->compile(two_losses({0.5, 3.0}));
  InferenceOptions io;
  io.batch_size = 16;
  const Logs lp = plain->evaluate({d.a, d.b}, {d.y_class, d.y_sum}, io);
  const Logs lw = weighted->evaluate({d.a, d.b}, {d.y_class, d.y_sum}, io);
  // Same seed, same weights: the per-output losses agree, the totals follow the weights.
  EXPECT_NEAR(get(lp, "head_loss"), get(lw, "head_loss"), 1e-6);
  EXPECT_NEAR(get(lp, "aux_loss"), get(lw, "aux_loss"), 1e-6);
  EXPECT_NEAR(get(lp, "loss"), get(lp, "head_loss") + get(lp, "aux_loss"), 1e-5);
  EXPECT_NEAR(get(lw, "loss"), 0.5 * get(lw, "head_loss") + 3.0 * get(lw, "aux_loss"), 1e-5);
  EXPECT_FALSE(std::isnan(get(lp, "head_accuracy")));
  EXPECT_FALSE(std::isnan(get(lp, "aux_accuracy")));
  EXPECT_TRUE(std::isnan(get(lp, "accuracy"))) << "several outputs: metrics carry the output's name";
}

// Keras's per-output metrics: each output logs its own, "<output>_<metric>", the weighted
// ones after; they survive a .keras and an .h5 file.
TEST(Functional, PerOutputMetricsAreLoggedPerOutputAndSurviveKerasFiles) {
  Data d = data(40);
  auto m = two_tower();
  CompileOptions c = two_losses();
  c.metrics.clear();
  c.output_metrics = {{MetricSpec{"accuracy"}}, {MetricSpec{"mae"}}};
  c.output_weighted_metrics = {{}, {MetricSpec{"mse"}}};
  m->compile(c);
  InferenceOptions io;
  io.batch_size = 16;
  const Logs logs = m->evaluate({d.a, d.b}, {d.y_class, d.y_sum}, io);
  std::vector<std::string> keys;
  for (const auto& [k, v] : logs) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"head_accuracy", "aux_mae", "aux_mse", "head_loss", "aux_loss", "loss"}));
  const std::vector<Tensor> out = m->predict({d.a, d.b}, io);
  double mae = 0;
  for (std::int64_t r = 0; r < 40; ++r) mae += std::fabs(out[1].data<float>()[r] - d.y_sum.data<float>()[r]);
  EXPECT_NEAR(get(logs, "aux_mae"), mae / 40, 1e-6);
  EXPECT_NEAR(get(logs, "aux_mse"), get(logs, "aux_loss"), 1e-6);  // unweighted here: the mse loss itself

  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("nnfit_per_output_metrics_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"m.keras", "m.h5"}) {
    save_model(*m, (dir / name).string());
    const auto loaded = load_model((dir / name).string());
    EXPECT_EQ(loaded->compile_options().output_metrics, c.output_metrics) << name;
    EXPECT_EQ(loaded->compile_options().output_weighted_metrics, c.output_weighted_metrics) << name;
    EXPECT_EQ(loaded->evaluate({d.a, d.b}, {d.y_class, d.y_sum}, io), logs) << name;
  }
  std::filesystem::remove_all(dir);

  auto bad = two_tower();
  CompileOptions one = two_losses();
  one.metrics.clear();
  one.output_metrics = {{MetricSpec{"accuracy"}}};
  EXPECT_THROW(bad->compile(one), InvalidArgument);  // one list for two outputs
  CompileOptions both = two_losses();
  both.output_metrics = {{}, {MetricSpec{"mae"}}};
  EXPECT_THROW(bad->compile(both), InvalidArgument);  // a shared list and per-output lists
  CompileOptions misspelt = two_losses();
  misspelt.metrics.clear();
  misspelt.output_metrics = {{}, {MetricSpec{"maae"}}};
  try {
    bad->compile(misspelt);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("metrics[1][0]: unknown metric 'maae'"), std::string::npos) << e.what();
  }
}

TEST(Functional, TrainsBothOutputsFromTensorsAndFromADataset) {
  Data d = data(512);
  auto m = two_tower();
  m->compile(two_losses());
  FitOptions fo;
  fo.epochs = 15;
  fo.batch_size = 32;
  fo.seed = 1;
  const History h = m->fit({d.a, d.b}, {d.y_class, d.y_sum}, fo);
  ASSERT_EQ(h.epochs.size(), 15u);
  EXPECT_LT(get(h.epochs.back(), "aux_loss"), 0.5 * get(h.epochs.front(), "aux_loss"));
  // Chance is 0.5. Most initial weights reach 0.95, but about one in eight leaves a unit of
  // the 3-unit ReLU tower dead on this data and ends near 0.77 (measured over 8 seeds).
  EXPECT_GT(get(h.epochs.back(), "head_accuracy"), 0.7);

  // The same batches through a dataset of (a, b, y_class, y_sum) give the same training.
  auto m1 = two_tower();
  m1->compile(two_losses());
  auto m2 = two_tower();
  m2->compile(two_losses());
  fo.epochs = 2;
  fo.shuffle = false;
  const History ht = m1->fit({d.a, d.b}, {d.y_class, d.y_sum}, fo);
  const History hd = m2->fit(data::Dataset::from_tensor_slices({d.a, d.b, d.y_class, d.y_sum}).batch(32), fo);
  EXPECT_NEAR(get(ht.epochs[1], "loss"), get(hd.epochs[1], "loss"), 1e-6);
  EXPECT_NEAR(get(ht.epochs[1], "head_loss"), get(hd.epochs[1], "head_loss"), 1e-6);
}

TEST(Functional, SummaryHasTheConnectedToColumn) {
  auto m = two_tower();
  m->compile(two_losses());
  const std::string s = m->summary();
  EXPECT_NE(s.find("Connected to"), std::string::npos) << s;
  EXPECT_NE(s.find("a (InputLayer)"), std::string::npos) << s;
  EXPECT_NE(s.find("a[0][0]"), std::string::npos) << s;
  EXPECT_NE(s.find("b[0][0]"), std::string::npos) << s;
  EXPECT_NE(s.find("shared[0][0]"), std::string::npos) << s;
  EXPECT_NE(s.find("shared[1][0]"), std::string::npos) << s;
  EXPECT_NE(s.find("(None, 3)"), std::string::npos) << s;
  EXPECT_NE(s.find("Total params: 27"), std::string::npos) << s;
}

TEST(Functional, LossScalingAndMicroBatchesCarrySeveralInputsOutputsAndSampleWeights) {
  // The split step (gradients, then an update) that loss scaling and on_oom="reduce_batch"
  // run stages every input, target, prediction and the sample weights: a float32 run with
  // a fixed scale of 1024 (exact powers of two) and one on micro-batches of 8 follow the
  // plain run's weights, losses and per-output losses.
  Data d = data(64);
  Tensor w = Tensor::zeros(Shape{64});
  for (std::int64_t i = 0; i < 64; ++i) w.data<float>()[i] = 0.25f + static_cast<float>(i % 5) * 0.5f;
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 16;
  fo.shuffle = false;
  fo.sample_weight = w;
  auto probe = two_tower();
  probe->compile(two_losses({1.0, 0.5}));
  const std::int64_t between = (probe->plan_memory(8).peak_bytes + probe->plan_memory(16).peak_bytes) / 2;
  auto run = [&](int variant) {
    auto m = two_tower();
    if (variant == 2) {
      MemoryPolicy p;
      p.limit_bytes = between;
      m->set_memory_policy(p);
    }
    CompileOptions c = two_losses({1.0, 0.5});
    if (variant == 1) c.optimizer.loss_scale = {true, false, 1024.0, 2000};
    m->compile(c);
    FitOptions f = fo;
    if (variant == 2) f.on_oom = "reduce_batch";
    const History h = m->fit({d.a, d.b}, {d.y_class, d.y_sum}, f);
    if (variant == 2) EXPECT_FALSE(h.notes.empty()) << "the batch of 16 was split";
    return std::make_pair(h, m->get_weights());
  };
  const auto [plain, plain_w] = run(0);
  for (int variant : {1, 2}) {
    SCOPED_TRACE(variant == 1 ? "loss scaled" : "micro-batches");
    const auto [h, weights] = run(variant);
    ASSERT_EQ(h.epochs.size(), plain.epochs.size());
    for (std::size_t e = 0; e < h.epochs.size(); ++e) {
      for (const char* key : {"loss", "head_loss", "aux_loss"}) {
        EXPECT_NEAR(get(h.epochs[e], key), get(plain.epochs[e], key), 1e-5 * (1 + std::fabs(get(plain.epochs[e], key))))
            << key << " epoch " << e + 1;
      }
    }
    for (std::size_t k = 0; k < weights.size(); ++k) {
      for (std::int64_t i = 0; i < weights[k].numel(); ++i) {
        const float a = plain_w[k].data<float>()[i], b = weights[k].data<float>()[i];
        ASSERT_NEAR(a, b, 1e-5f * (1 + std::fabs(a))) << "weight " << k << " element " << i;
      }
    }
  }
}

TEST(FunctionalBadInput, CountsAndShapesThatDoNotFitAreNamed) {
  auto m = two_tower();
  m->compile(two_losses());
  Data d = data(8);
  FitOptions fo;
  auto expect_error = [](auto&& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([&] { m->fit({d.a}, {d.y_class, d.y_sum}, fo); }, "2 input(s) but 1");
  expect_error([&] { m->fit({d.a, d.b}, {d.y_class}, fo); }, "2 output(s) but 1");
  expect_error([&] { m->fit({d.a, Tensor::zeros(Shape{7, 4})}, {d.y_class, d.y_sum}, fo); }, "input 1 has 7 samples");
  expect_error([&] { m->predict(d.a, InferenceOptions{}); }, "one tensor per output");
  auto bad = two_tower();
  CompileOptions c = two_losses();
  c.losses.pop_back();
  expect_error([&] { bad->compile(c); }, "2 outputs but 1 losses");
  // Subtract takes two inputs; merges of shapes that do not broadcast are named.
  LayerGraph g;
  TensorRef a = g.add_input("a", Shape{4});
  TensorRef b = g.add_input("b", Shape{5});
  g.set_outputs(g.call(g.add_layer(std::make_unique<Merge>("add", MergeOp::add)), {a, b}));
  EXPECT_THROW(g.infer_shapes(), InvalidArgument);
  EXPECT_THROW(g.call(*g.find_layer("add"), {{9, 0}}), InvalidArgument);
  EXPECT_THROW(g.add_input("add", Shape{1}), InvalidArgument) << "names are unique across inputs and layers";
}

// Keras's Merge broadcasts axes of size 1 (squeeze-and-excite: (h, w, c) * (1, 1, c)); the
// gradient reaches both operands.
TEST(Functional, MergeLayersBroadcastSizeOneAxes) {
  LayerGraph g;
  TensorRef x = g.add_input("x", Shape{2, 2, 3});
  TensorRef s = g.add_input("s", Shape{1, 1, 3});
  const MergeOp ops[] = {MergeOp::multiply, MergeOp::add, MergeOp::subtract, MergeOp::maximum, MergeOp::average};
  std::vector<TensorRef> outs;
  for (MergeOp op : ops) {
    auto& l = g.add_layer(std::make_unique<Merge>("m" + std::to_string(outs.size()), op));
    outs.push_back(g.call(l, {x, s})[0]);
  }
  g.set_outputs(outs);
  Model m("broadcast", std::move(g));
  m.build();
  Tensor xv = Tensor::zeros(Shape{2, 2, 2, 3}), sv = Tensor::zeros(Shape{2, 1, 1, 3});
  for (std::int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = 0.1f * static_cast<float>(i) - 1.0f;
  for (std::int64_t i = 0; i < sv.numel(); ++i) sv.data<float>()[i] = 0.5f + 0.25f * static_cast<float>(i);
  const std::vector<Tensor> y = m.predict({xv, sv}, InferenceOptions{});
  ASSERT_EQ(y.size(), 5u);
  for (std::int64_t n = 0; n < 2; ++n) {
    for (std::int64_t p = 0; p < 4; ++p) {
      for (std::int64_t c = 0; c < 3; ++c) {
        const float a = xv.data<float>()[(n * 4 + p) * 3 + c], b = sv.data<float>()[n * 3 + c];
        const std::int64_t k = (n * 4 + p) * 3 + c;
        EXPECT_FLOAT_EQ(y[0].data<float>()[k], a * b);
        EXPECT_FLOAT_EQ(y[1].data<float>()[k], a + b);
        EXPECT_FLOAT_EQ(y[2].data<float>()[k], a - b);
        EXPECT_FLOAT_EQ(y[3].data<float>()[k], std::max(a, b));
        EXPECT_FLOAT_EQ(y[4].data<float>()[k], (a + b) / 2);
      }
    }
  }
}

// Keras's summary_utils: a chain-shaped Functional model has no Connected to column.
TEST(Functional, ChainSummaryHasNoConnectedTo) {
  LayerGraph g;
  TensorRef x = g.add_input("x", Shape{4});
  auto& d1 = g.add_layer(std::make_unique<Dense>("d1", DenseOptions{3}));
  auto& d2 = g.add_layer(std::make_unique<Dense>("d2", DenseOptions{2}));
  g.set_outputs(g.call(d2, g.call(d1, {x})));
  Model m("chain", std::move(g));
  const std::string s = m.summary();
  EXPECT_EQ(s.find("Connected to"), std::string::npos) << s;
  EXPECT_NE(s.find("x (InputLayer)"), std::string::npos) << s;
}

}  // namespace
}  // namespace nnfit
