// model_to_onnx from the layer graph: weights land in ONNX's layouts (Dense as is, Conv2D's
// HWIO kernel as OIHW, LSTM's gates reordered), inputs and outputs are named as Keras's
// export names them, and what has no exact ONNX form is refused by layer and class with
// no file written. onnxruntime's view of the same files: tests/python/test_onnx_export.py.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/model/onnx_export.h"
#include "nnfit/nn/conv_layers.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/recurrent_layers.h"

namespace nnfit {
namespace {

namespace onnx = io::onnx;

const onnx::Initializer& initializer(const onnx::ModelFile& f, const std::string& name) {
  for (const onnx::Initializer& t : f.graph.initializers) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no initializer " << name;
  static const onnx::Initializer none;
  return none;
}

float at(const onnx::Initializer& t, std::size_t i) {
  float v;
  std::memcpy(&v, t.raw.data() + 4 * i, 4);
  return v;
}

std::vector<std::string> ops(const onnx::ModelFile& f) {
  std::vector<std::string> out;
  for (const onnx::Node& n : f.graph.nodes) out.push_back(n.op_type);
  return out;
}

std::unique_ptr<Sequential> built(std::unique_ptr<Sequential> m) {
  m->set_seed(1);
  m->build();
  return m;
}

TEST(OnnxExport, DenseWeightsAndKerasNames) {
  auto m = std::make_unique<Sequential>("mlp");
  m->set_input({"pixels", Shape{4}, DType::f32});
  m->add(std::make_unique<Dense>("hidden", DenseOptions{3, "relu"}));
  m->add(std::make_unique<Dense>("out", DenseOptions{2}));
  m = built(std::move(m));
  const onnx::ModelFile f = model_to_onnx(*m);
  EXPECT_EQ(f.ir_version, 8);
  EXPECT_EQ(f.opset, 17);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"MatMul", "Add", "Relu", "MatMul", "Add", "Identity"}));
  ASSERT_EQ(f.graph.inputs.size(), 1u);
  EXPECT_EQ(f.graph.inputs[0].name, "pixels");
  EXPECT_EQ(f.graph.inputs[0].shape[0].param, "batch");
  EXPECT_EQ(f.graph.inputs[0].shape[1].value, 4);
  EXPECT_EQ(f.graph.outputs[0].name, "Identity:0");
  // Dense's (in, out) kernel is MatMul's right operand as it is.
  const Tensor k = m->get_layer("hidden")->weights()[0].value;
  const onnx::Initializer& w = initializer(f, "hidden/kernel");
  EXPECT_EQ(w.dims, (std::vector<std::int64_t>{4, 3}));
  for (std::int64_t i = 0; i < k.numel(); ++i) EXPECT_EQ(at(w, static_cast<std::size_t>(i)), k.data<float>()[i]);
}

TEST(OnnxExport, ConvKernelsGoFromHwioToOihw) {
  auto m = std::make_unique<Sequential>("cnn");
  m->set_input_shape(Shape{5, 5, 2});
  Conv2DOptions o;
  o.filters = 3;
  o.kernel_size = {2, 3};
  m->add(std::make_unique<Conv2D>("conv", o));
  m = built(std::move(m));
  const onnx::ModelFile f = model_to_onnx(*m);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"Transpose", "Conv", "Transpose", "Identity"}));
  const Tensor k = m->get_layer("conv")->weights()[0].value;  // (kh, kw, in, out)
  const onnx::Initializer& w = initializer(f, "conv/kernel");
  ASSERT_EQ(w.dims, (std::vector<std::int64_t>{3, 2, 2, 3}));  // (out, in, kh, kw)
  for (int o2 = 0; o2 < 3; ++o2)
    for (int i = 0; i < 2; ++i)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) {
          EXPECT_EQ(at(w, static_cast<std::size_t>(((o2 * 2 + i) * 2 + y) * 3 + x)), k.data<float>()[((y * 3 + x) * 2 + i) * 3 + o2]);
        }
}

TEST(OnnxExport, LstmGatesAreReorderedForOnnx) {
  auto m = std::make_unique<Sequential>("rnn");
  m->set_input_shape(Shape{kUnknownDim, 3});
  RecurrentOptions o;
  o.units = 2;
  m->add(std::make_unique<LSTM>("lstm", o));
  m = built(std::move(m));
  const onnx::ModelFile f = model_to_onnx(*m);
  EXPECT_EQ(f.graph.inputs[0].shape[1].param, "dim_0_1");  // Keras's None length
  const Tensor k = m->get_layer("lstm")->weights()[0].value;  // (3, 4 * 2): i, f, c, o
  const onnx::Initializer& w = initializer(f, "lstm/W");  // (1, 4 * 2, 3): i, o, f, c
  ASSERT_EQ(w.dims, (std::vector<std::int64_t>{1, 8, 3}));
  const int keras_block[4] = {0, 3, 1, 2};
  for (int g = 0; g < 4; ++g)
    for (int u = 0; u < 2; ++u)
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(at(w, static_cast<std::size_t>((g * 2 + u) * 3 + i)), k.data<float>()[i * 8 + keras_block[g] * 2 + u]);
      }
}

class OnnxRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("nnfit_onnx_export_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The export's error message; the file must not exist afterwards.
  template <typename E>
  std::string refused(const Model& m, const OnnxExportOptions& o = {}) {
    const std::string path = (dir_ / "m.onnx").string();
    std::string what;
    try {
      export_onnx(m, path, o);
      ADD_FAILURE() << "exported";
    } catch (const E& e) {
      what = e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
    return what;
  }
  std::filesystem::path dir_;
};

TEST_F(OnnxRefusals, ALayerWithoutAnOnnxFormIsNamedWithItsClass) {
  auto m = std::make_unique<Sequential>("m");
  m->set_input_shape(Shape{4, 3});
  m->add(std::make_unique<Masking>("pad_mask", 0.0));
  m->add(std::make_unique<Dense>("dense", DenseOptions{2}));
  m = built(std::move(m));
  const std::string what = refused<Unsupported>(*m);
  EXPECT_NE(what.find("layer 'pad_mask' (Masking)"), std::string::npos) << what;
}

TEST_F(OnnxRefusals, AMaskReachingARecurrentLayer) {
  auto m = std::make_unique<Sequential>("m");
  m->set_input_shape(Shape{kUnknownDim});
  m->add(std::make_unique<Embedding>("embed", EmbeddingOptions{10, 4, "random_uniform", /*mask_zero=*/true}));
  RecurrentOptions o;
  o.units = 2;
  m->add(std::make_unique<LSTM>("lstm", o));
  m = built(std::move(m));
  const std::string what = refused<Unsupported>(*m);
  EXPECT_NE(what.find("layer 'lstm' (LSTM)"), std::string::npos) << what;
  EXPECT_NE(what.find("mask of 'embed'"), std::string::npos) << what;
}

TEST_F(OnnxRefusals, UnbuiltModelsBadSignaturesAndOpsets) {
  auto m = std::make_unique<Sequential>("m");
  m->set_input_shape(Shape{4});
  m->add(std::make_unique<Dense>("dense", DenseOptions{2}));
  EXPECT_NE(refused<InvalidArgument>(*m).find("not built"), std::string::npos);
  m = built(std::move(m));
  OnnxExportOptions o;
  o.opset = 13;
  EXPECT_NE(refused<InvalidArgument>(*m, o).find("opset 13"), std::string::npos);
  o = {};
  o.input_signature = {{"x", {-1, 5}}};
  EXPECT_NE(refused<InvalidArgument>(*m, o).find("dimension 1 is 5"), std::string::npos);
  o.input_signature = {{"x", {-1, 4}}, {"y", {-1, 4}}};
  EXPECT_NE(refused<InvalidArgument>(*m, o).find("2 entries"), std::string::npos);
  // A fixed batch and a new name are taken.
  o.input_signature = {{"features", {8, 4}}};
  const onnx::ModelFile f = model_to_onnx(*m, o);
  EXPECT_EQ(f.graph.inputs[0].name, "features");
  EXPECT_EQ(f.graph.inputs[0].shape[0].value, 8);
  EXPECT_EQ(f.graph.outputs[0].shape[0].value, 8);
}

}  // namespace
}  // namespace nnfit
