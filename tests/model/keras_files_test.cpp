// Keras model files: the real samples in ../shared/formats/samples/keras predict what
// Keras 3.15.1 predicts for them (fixtures/make_sample_predictions.py); .keras, .h5 and
// .weights.h5 written by nnfit read back to the same model, weights and optimizer state,
// so training continues exactly; bad files get one clear error naming file and weight.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "nnfit/core/error.h"
#include "nnfit/io/hdf5_file.h"
#include "nnfit/io/npy.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/saving.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/lr_schedule.h"
#include "nnfit/nn/merge_layers.h"
#include "nnfit/nn/nested_model.h"

namespace nnfit {
namespace {

namespace fs = std::filesystem;

const std::string kSamples = std::string(NNFIT_SOURCE_DIR) + "/../shared/formats/samples/keras/";
const std::string kFixtures = std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/";

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class KerasFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnfit_keras_files_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

void expect_near(const Tensor& a, const Tensor& b, double tol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  double worst = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
  }
  EXPECT_LE(worst, tol) << what;
}

TEST_F(KerasFiles, RealKerasFilesPredictWhatKerasPredicts) {
  if (!fs::exists(kSamples)) GTEST_SKIP() << "shared/formats samples not present";
  const Tensor x = io::read_npy(kFixtures + "mnist_cnn_input.npy");
  const std::pair<const char*, const char*> files[] = {
      {"moonflower_mnist_cnn_keras3.1.1.keras", "moonflower_mnist_cnn_keras3_pred.npy"},
      {"moonflower_mnist_cnn_keras3.1.1_legacy.h5", "moonflower_mnist_cnn_keras3_legacy_pred.npy"}};
  for (const auto& [file, expected] : files) {
    auto m = load_model(kSamples + file);
    EXPECT_EQ(m->class_name(), "Sequential") << file;
    EXPECT_TRUE(m->compiled()) << file << ": the file's compile config is used";
    EXPECT_EQ(m->compile_options().optimizer.name, "adam") << file;
    EXPECT_GT(m->iterations(), 0) << file << ": the optimizer's state comes with the weights";
    expect_near(m->predict(x, InferenceOptions{}), io::read_npy(kFixtures + expected), 1e-5, file);
  }
}

// Two inputs, a shared Dense, Add, a nested Sequential with BatchNormalization (frozen
// statistics among its variables) and two outputs: what the files must carry.
std::unique_ptr<Model> towers() {
  LayerGraph head;
  TensorRef h = head.add_input("head_input", Shape{3});
  h = head.call(head.add_layer(std::make_unique<Dense>("head_dense", DenseOptions{4, "relu"})), {h})[0];
  h = head.call(head.add_layer(std::make_unique<BatchNormalization>("head_bn", BatchNormalizationOptions{})), {h})[0];
  h = head.call(head.add_layer(std::make_unique<Dense>("out", DenseOptions{2, "softmax"})), {h})[0];
  head.set_outputs({h});
  LayerGraph g;
  TensorRef a = g.add_input("a", Shape{4});
  TensorRef b = g.add_input("b", Shape{4});
  Layer& shared = g.add_layer(std::make_unique<Dense>("shared", DenseOptions{3, "relu"}));
  TensorRef sum = g.call(g.add_layer(std::make_unique<Merge>("add", MergeOp::add)), {g.call(shared, {a})[0], g.call(shared, {b})[0]})[0];
  TensorRef cls = g.call(g.add_layer(std::make_unique<NestedModel>("head", "Sequential", std::move(head))), {sum})[0];
  TensorRef aux = g.call(g.add_layer(std::make_unique<Dense>("aux", DenseOptions{1})), {sum})[0];
  g.set_outputs({cls, aux});
  return std::make_unique<Model>("towers", std::move(g));
}

// Functional models with merges, a shared layer and a nested Sequential, saved by Keras 3.15
// (.keras, .weights.h5) and tf-keras 2.21 (.h5 with tf.keras's ":0" names), predict what
// Keras predicted for them (fixtures/make_functional_json.py).
TEST_F(KerasFiles, FunctionalFilesOfBothGenerationsPredictWhatKerasPredicts) {
  for (const char* model : {"towers", "merges"}) {
    for (const char* tag : {"keras3", "keras2"}) {
      const std::string base = kFixtures + model + "_" + tag;
      const std::string file = base + (std::string(tag) == "keras3" ? ".keras" : ".h5");
      SCOPED_TRACE(file);
      std::map<std::string, Tensor> io_arrays;
      for (auto& [k, v] : io::read_npz(base + "_io.npz")) io_arrays[k] = v;
      auto m = load_model(file);
      std::vector<Tensor> xs;
      for (std::size_t i = 0; i < m->num_inputs(); ++i) xs.push_back(io_arrays.at("x" + std::to_string(i)));
      const std::vector<Tensor> ys = m->predict(xs, InferenceOptions{});
      for (std::size_t i = 0; i < ys.size(); ++i) expect_near(ys[i], io_arrays.at("y" + std::to_string(i)), 1e-5, "output " + std::to_string(i));
      if (std::string(tag) == "keras3") {
        // The weights alone, into the architecture read from the JSON.
        auto w = model_from_keras_json(slurp(base + ".json"), base + ".json");
        w->build();
        load_weights(*w, base + ".weights.h5");
        const std::vector<Tensor> yw = w->predict(xs, InferenceOptions{});
        for (std::size_t i = 0; i < yw.size(); ++i) expect_near(yw[i], ys[i], 0.0, "weights-only output " + std::to_string(i));
      }
    }
  }
}

std::unique_ptr<Model> trained_towers() {
  auto m = towers();
  m->set_seed(3);
  CompileOptions c;
  c.optimizer.name = "adam";
  c.optimizer.learning_rate = std::make_shared<ConstantLearningRate>(0.01);
  c.losses = {Loss::from_name("sparse_categorical_crossentropy"), Loss::from_name("mse")};
  c.loss_weights = {1.0, 0.5};
  c.metrics = {"accuracy"};
  m->compile(c);
  return m;
}

struct Data {
  std::vector<Tensor> x, y;
};

Data towers_data(std::int64_t n) {
  Data d{{Tensor::zeros(Shape{n, 4}), Tensor::zeros(Shape{n, 4})}, {Tensor::zeros(Shape{n}, DType::i32), Tensor::zeros(Shape{n, 1})}};
  for (std::int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int j = 0; j < 4; ++j) {
      s += d.x[0].data<float>()[i * 4 + j] = static_cast<float>((i * 7 + j * 3) % 11) / 11.0f;
      s += d.x[1].data<float>()[i * 4 + j] = static_cast<float>((i * 5 + j) % 13) / 13.0f;
    }
    d.y[0].data<std::int32_t>()[i] = s > 4 ? 1 : 0;
    d.y[1].data<float>()[i] = s / 8;
  }
  return d;
}

TEST_F(KerasFiles, WhatNnfitSavesLoadsBackAndTrainingContinuesExactly) {
  const Data d = towers_data(96);
  FitOptions fo;
  fo.epochs = 2;
  fo.batch_size = 16;
  fo.seed = 4;
  for (const char* name : {"m.keras", "m.h5"}) {
    SCOPED_TRACE(name);
    auto a = trained_towers();
    a->fit(d.x, d.y, fo);
    save_model(*a, path(name));
    auto b = load_model(path(name));
    EXPECT_EQ(b->iterations(), a->iterations());
    EXPECT_EQ(b->output_names(), a->output_names());
    EXPECT_EQ(b->compile_options().loss_weights, (std::vector<double>{1.0, 0.5}));
    const auto pa = a->predict(d.x, InferenceOptions{});
    const auto pb = b->predict(d.x, InferenceOptions{});
    for (std::size_t i = 0; i < pa.size(); ++i) expect_near(pa[i], pb[i], 0.0, "output " + std::to_string(i));
    // The optimizer state came along: one more epoch on each ends in the same weights.
    FitOptions more = fo;
    more.initial_epoch = 2;
    more.epochs = 3;
    const History ha = a->fit(d.x, d.y, more), hb = b->fit(d.x, d.y, more);
    EXPECT_EQ(log_value(ha.epochs[0], "loss"), log_value(hb.epochs[0], "loss"));
    const auto wa = a->get_weights(), wb = b->get_weights();
    ASSERT_EQ(wa.size(), wb.size());
    for (std::size_t i = 0; i < wa.size(); ++i) expect_near(wa[i], wb[i], 0.0, "weight " + std::to_string(i));
  }
  // Weights only: into a fresh model of the same architecture.
  auto a = trained_towers();
  a->fit(d.x, d.y, fo);
  save_weights(*a, path("w.weights.h5"));
  save_weights(*a, path("legacy_w.h5"));
  for (const char* name : {"w.weights.h5", "legacy_w.h5"}) {
    auto c = towers();
    c->build();
    load_weights(*c, path(name));
    const auto pa = a->predict(d.x, InferenceOptions{});
    const auto pc = c->predict(d.x, InferenceOptions{});
    for (std::size_t i = 0; i < pa.size(); ++i) expect_near(pa[i], pc[i], 0.0, std::string(name));
  }
  EXPECT_THROW(save_model(*a, path("m.onnx")), InvalidArgument);
  EXPECT_EQ(sniff_model_file(path("m.keras")), ModelFileKind::keras_zip);
  EXPECT_EQ(sniff_model_file(path("m.h5")), ModelFileKind::hdf5);
  EXPECT_EQ(sniff_model_file(kFixtures + "towers_keras3.json"), ModelFileKind::json);
  EXPECT_EQ(sniff_model_file(dir_.string()), ModelFileKind::directory);
}

// A model Keras 3 saved after compile, before training (fixtures/make_unbuilt_optimizer_keras.py):
// its optimizer is unbuilt, the file holds only iterations and learning_rate. Loaded from
// .keras and .h5 it fits, its Adam slots built from their initial values as Keras builds
// them at the first step, to the weights Keras has after the same two steps; evaluate,
// which never reads the optimizer, gives Keras's loss.
TEST_F(KerasFiles, AnOptimizerSavedUnbuiltStartsAtTheFirstStepAsKeras) {
  std::map<std::string, Tensor> io_arrays;
  for (auto& [k, v] : io::read_npz(kFixtures + "unbuilt_adam_keras3_io.npz")) io_arrays[k] = v;
  const Tensor &x = io_arrays.at("x"), &y = io_arrays.at("y");
  for (const char* ext : {".keras", ".h5"}) {
    SCOPED_TRACE(ext);
    const std::string file = kFixtures + "unbuilt_adam_keras3" + ext;
    auto m = load_model(file);
    ASSERT_TRUE(m->compiled());
    EXPECT_EQ(m->compile_options().optimizer.name, "adam");
    EXPECT_EQ(m->iterations(), 0);
    const Logs logs = m->evaluate(x, y, 8);
    EXPECT_NEAR(log_value(logs, "loss"), *io_arrays.at("loss").data<float>(), 1e-5);
    FitOptions fo;
    fo.batch_size = 4;
    fo.shuffle = false;
    m->fit(x, y, fo);
    EXPECT_EQ(m->iterations(), *io_arrays.at("iterations").data<std::int64_t>());
    const std::vector<Tensor> w = m->get_weights();
    for (std::size_t i = 0; i < w.size(); ++i) {
      expect_near(w[i], io_arrays.at("fitted_" + std::to_string(i)), 1e-5, "weight " + std::to_string(i));
    }
    LoadOptions no_optimizer;
    no_optimizer.optimizer = false;
    auto e = load_model(file, no_optimizer);
    EXPECT_NEAR(log_value(e->evaluate(x, y, 8), "mae"), *io_arrays.at("mae").data<float>(), 1e-5);
  }
}

// Runs f and returns the error's text; fails the test if f does not throw nnfit::Error.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST_F(KerasFiles, BadFilesAreOneClearErrorNeverACrash) {
  auto a = trained_towers();
  save_model(*a, path("m.keras"));
  save_model(*a, path("m.h5"));
  const std::string keras = slurp(path("m.keras")), h5 = slurp(path("m.h5"));
  // Truncations at many offsets: every one is an Error, none a crash.
  for (const auto& [bytes, ext] : {std::pair{keras, ".keras"}, std::pair{h5, ".h5"}}) {
    for (std::size_t cut : {std::size_t{3}, std::size_t{10}, std::size_t{100}, bytes.size() / 3, bytes.size() / 2,
                            bytes.size() - 200, bytes.size() - 1}) {
      const std::string p = path(std::string("cut") + ext);
      std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
      EXPECT_THROW(load_model(p), Error) << ext << " cut at " << cut;
    }
  }
  EXPECT_NE(error_of([&] { load_model(dir_.string()); }).find("is a directory"), std::string::npos);
  EXPECT_NE(error_of([&] { load_model(path("nope.keras")); }).find("no such file"), std::string::npos);
  EXPECT_NE(error_of([&] { load_model(kFixtures + "towers_keras3.json"); }).find("is a JSON file"), std::string::npos);
  {  // an HDF5 file that is not a Keras model
    io::H5File f = io::H5File::create(path("other.h5"));
    f.create_group("data");
    f.close();
  }
  EXPECT_NE(error_of([&] { load_model(path("other.h5")); }).find("without a model_config"), std::string::npos);
  // Weights of another model: the layer and the shapes are named.
  auto other = model_from_keras_json(slurp(kFixtures + "merges_keras3.json"), "merges");
  other->build();
  const std::string msg = error_of([&] { load_weights(*other, path("m.keras")); });
  EXPECT_NE(msg.find("m.keras: model.weights.h5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(layer 'p')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the file was saved from a different model"), std::string::npos) << msg;
  save_weights(*a, path("w.weights.h5"));
  const std::string m2 = error_of([&] { load_weights(*other, path("w.weights.h5")); });
  EXPECT_NE(m2.find("w.weights.h5"), std::string::npos) << m2;
  // A weight of the wrong shape: the same model with a wider "aux".
  auto wide = model_from_keras_json(model_to_keras_json(*a), "wide");
  std::string json = model_to_keras_json(*a);
  json.replace(json.find(R"("units":1)"), 9, R"("units":2)");
  wide = model_from_keras_json(json, "wide");
  wide->build();
  const std::vector<Tensor> before = wide->get_weights();
  const std::string m3 = error_of([&] { load_weights(*wide, path("w.weights.h5")); });
  EXPECT_NE(m3.find("(layer 'aux')/0: the file holds (3, 1) float32 for aux/kernel, which is (3, 2) float32"),
            std::string::npos)
      << m3;
  const std::vector<Tensor> after = wide->get_weights();
  for (std::size_t i = 0; i < before.size(); ++i) expect_near(before[i], after[i], 0.0, "a failed load changes nothing");
}

// Fuzzing findings in Keras files are replayed with the other targets' (tests/fuzz).

}  // namespace
}  // namespace nnfit
