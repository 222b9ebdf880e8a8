// The Keras codecs of the sequence layers (src/model/keras/codecs/recurrent.cpp and core.cpp's
// Embedding): SimpleRNN, LSTM, GRU and Embedding as Keras 3.15 and tf.keras 2 write them give Keras's shapes,
// parameter counts and weight layout, round-trip through the writer, and what nnfit does
// not run is refused with the layer's path, the location said once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/keras_config_helpers.h"
#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/loss.h"

namespace nnfit {
namespace {

using namespace keras_test;

// GRU as Keras 3.15 saves it (shared_object_id on the initializers, Orthogonal's gain).
const char* kKeras3Gru =
    R"({"name": "gru", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null, "shared_object_id": 1397}, "return_sequences": true, "return_state": false, "go_backwards": true, "stateful": false, "unroll": false, "zero_output_for_mask": false, "units": 3, "activation": "tanh", "recurrent_activation": "sigmoid", "use_bias": true, "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null, "input_axes": null, "output_axes": null}, "registered_name": null, "shared_object_id": 1398}, "recurrent_initializer": {"module": "keras.initializers", "class_name": "Orthogonal", "config": {"seed": null, "gain": 1.0}, "registered_name": null, "shared_object_id": 1399}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null, "shared_object_id": 1400}, "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null, "dropout": 0.0, "recurrent_dropout": 0.0, "reset_after": true, "seed": null})";

// LSTM as tf.keras 2 saves it (time_major, implementation; hard_sigmoid is Keras 2's).
const char* kKeras2Lstm =
    R"({"name": "lstm", "trainable": true, "dtype": "float32", "return_sequences": false, "return_state": false, "go_backwards": false, "stateful": false, "unroll": false, "time_major": false, "units": 4, "activation": "tanh", "recurrent_activation": "hard_sigmoid", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "recurrent_initializer": {"class_name": "Orthogonal", "config": {"gain": 1.0, "seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "unit_forget_bias": true, "kernel_regularizer": null, "recurrent_regularizer": null, "bias_regularizer": null, "activity_regularizer": null, "kernel_constraint": null, "recurrent_constraint": null, "bias_constraint": null, "dropout": 0.0, "recurrent_dropout": 0.0, "implementation": 2})";

TEST(KerasConfig, RecurrentLayersReadAndRoundTrip) {
  const std::string json = keras3_model(
      "[null, 7, 5]", layer("GRU", kKeras3Gru) + ", " +
                          layer("SimpleRNN", R"({"name": "rnn", "units": 6, "activation": "relu", "return_sequences": true})") +
                          ", " + layer("LSTM", R"({"name": "lstm", "units": 4, "unit_forget_bias": false})"));
  auto m = sequential_from_keras_json(json, "rnn.json");
  m->build();
  EXPECT_EQ(classes(*m), (std::vector<std::string>{"GRU", "SimpleRNN", "LSTM"}));
  const std::vector<Shape> shapes = {Shape{7, 3}, Shape{7, 6}, Shape{4}};
  // GRU with reset_after: 3 gates of (features + units) x units, and two biases of 3 units.
  const std::vector<std::int64_t> params = {3 * 3 * (5 + 3) + 2 * 9, 6 * (3 + 6) + 6, 4 * 4 * (6 + 4) + 16};
  Shape s{7, 5};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    s = m->layers()[i]->output_shape(s);
    EXPECT_EQ(s, shapes[i]) << m->layers()[i]->name();
    EXPECT_EQ(m->layers()[i]->count_params(), params[i]) << m->layers()[i]->name();
  }
  // Keras's weight order and tf.keras's names; the GRU's bias holds both rows.
  const auto& gru = m->layers()[0]->weights();
  ASSERT_EQ(gru.size(), 3u);
  EXPECT_EQ(gru[0].name, "gru/gru_cell/kernel");
  EXPECT_EQ(gru[1].name, "gru/gru_cell/recurrent_kernel");
  EXPECT_EQ(gru[2].value.shape(), (Shape{2, 9}));
  // LSTM without unit_forget_bias starts every bias at zero.
  const Tensor& bias = m->layers()[2]->weights()[2].value;
  for (std::int64_t j = 0; j < bias.numel(); ++j) EXPECT_EQ(bias.data<float>()[j], 0.0f);

  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  const auto& g = dynamic_cast<const Recurrent&>(*again->layers()[0]).options();
  EXPECT_TRUE(g.reset_after);
  EXPECT_TRUE(g.go_backwards);
  EXPECT_TRUE(g.return_sequences);
  EXPECT_EQ(g.recurrent_initializer, "orthogonal");
  EXPECT_EQ(dynamic_cast<const Recurrent&>(*again->layers()[1]).options().activation, "relu");
  EXPECT_FALSE(dynamic_cast<const Recurrent&>(*again->layers()[2]).options().unit_forget_bias);
}

TEST(KerasConfig, Keras2LstmReadsKeras2HardSigmoid) {
  const std::string json = R"({"class_name": "Sequential", "keras_version": "2.15.0", "config": {"name": "s", "layers": [)" +
                           layer("InputLayer", R"({"batch_input_shape": [null, 6, 3], "dtype": "float32", "name": "x"})") +
                           ", " + layer("LSTM", kKeras2Lstm) + "]}}";
  auto m = sequential_from_keras_json(json, "lstm2.json");
  m->build();
  const auto& o = dynamic_cast<const LSTM&>(*m->layers()[0]).options();
  EXPECT_EQ(o.recurrent_activation, "hard_sigmoid_keras2");
  EXPECT_EQ(m->layers()[0]->count_params(), 4 * 4 * (3 + 4) + 16);
  // unit_forget_bias: the forget gate's bias starts at one, the others at zero.
  const Tensor& bias = m->layers()[0]->weights()[2].value;
  for (std::int64_t j = 0; j < 16; ++j) EXPECT_EQ(bias.data<float>()[j], j >= 4 && j < 8 ? 1.0f : 0.0f) << j;
}

TEST(KerasConfig, OrthogonalInitializerIsOrthonormal) {
  const std::string json = keras3_model("[null, 3, 2]", layer("SimpleRNN", R"({"name": "rnn", "units": 5})"));
  auto m = sequential_from_keras_json(json, "rnn.json");
  m->build();
  const Tensor& u = m->layers()[0]->weights()[1].value;  // (5, 5)
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      double dot = 0.0;
      for (int k = 0; k < 5; ++k) dot += double(u.data<float>()[a * 5 + k]) * u.data<float>()[b * 5 + k];
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << a << "," << b;
    }
  }
}

// Embedding on int32 ids (Keras 3), and tf.keras's form with input_length; the input's
// dtype is kept for writing back.
TEST(KerasConfig, EmbeddingReadsBothGenerationsAndKeepsTheInputDtype) {
  const std::string json =
      R"({"module": "keras", "class_name": "Sequential", "config": {"name": "m", "layers": [)" +
      layer("InputLayer", R"({"batch_shape": [null, 6], "dtype": "int32", "sparse": false, "name": "ids"})") + ", " +
      layer("Embedding", R"({"name": "emb", "input_dim": 50, "output_dim": 8, "embeddings_initializer": {"module": "keras.initializers", "class_name": "RandomUniform", "config": {"seed": null, "minval": -0.05, "maxval": 0.05}, "registered_name": null}, "embeddings_regularizer": null, "activity_regularizer": null, "embeddings_constraint": null, "mask_zero": false, "quantization_config": null})") +
      ", " + layer("GRU", R"({"name": "gru", "units": 3})") + "]}}";
  auto m = sequential_from_keras_json(json, "emb.json");
  m->build();
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{6}), (Shape{6, 8}));
  EXPECT_EQ(m->layers()[0]->count_params(), 50 * 8);
  EXPECT_EQ(m->graph().inputs()[0].dtype, DType::i32);
  const std::string written = model_to_keras_json(*m);
  EXPECT_NE(written.find(R"("dtype":"int32")"), std::string::npos) << written;
  EXPECT_EQ(sequential_from_keras_json(written, "again.json")->graph().inputs()[0].dtype, DType::i32);

  const std::string k2 = R"({"class_name": "Sequential", "keras_version": "2.15.0", "config": {"name": "s", "layers": [)" +
                         layer("Embedding", R"({"name": "emb", "trainable": true, "dtype": "float32", "batch_input_shape": [null, 5], "input_dim": 10, "output_dim": 3, "embeddings_initializer": {"class_name": "RandomUniform", "config": {"minval": -0.05, "maxval": 0.05, "seed": null}}, "embeddings_regularizer": null, "activity_regularizer": null, "embeddings_constraint": null, "mask_zero": false, "input_length": 5})") +
                         "]}}";
  auto m2 = sequential_from_keras_json(k2, "emb2.json");
  m2->build();
  EXPECT_EQ(m2->layers()[0]->output_shape(Shape{5}), (Shape{5, 3}));
  for (std::int64_t i = 0; i < 30; ++i) EXPECT_LE(std::fabs(m2->layers()[0]->weights()[0].value.data<float>()[i]), 0.05f);
}

// Keras's short initializer names, as nnfit.keras writes a default it was not given:
// Embedding's "uniform" is RandomUniform(-0.05, 0.05), "normal" RandomNormal(0, 0.05).
TEST(KerasConfig, InitializerShortNamesAreKerasAliases) {
  for (const char* name : {"uniform", "normal"}) {
    auto m = sequential_from_keras_json(
        keras3_model("[null, 6]", layer("Embedding", R"({"name": "e", "input_dim": 40, "output_dim": 25, "embeddings_initializer": ")" +
                                                         std::string(name) + "\"}")),
        "alias.json");
    m->build();
    const Tensor& w = m->layers()[0]->weights()[0].value;
    float lo = 0.0f, hi = 0.0f;
    for (std::int64_t i = 0; i < w.numel(); ++i) {
      lo = std::min(lo, w.data<float>()[i]);
      hi = std::max(hi, w.data<float>()[i]);
    }
    if (std::string(name) == "uniform") {
      EXPECT_GE(lo, -0.05f);
      EXPECT_LE(hi, 0.05f);
      EXPECT_LT(lo, -0.04f);  // 1000 draws fill the range
      EXPECT_GT(hi, 0.04f);
    } else {
      EXPECT_LT(lo, -0.1f);  // a normal of stddev 0.05 has tails past two of them
      EXPECT_GT(hi, 0.1f);
    }
  }
}

// Bidirectional as Keras 3 writes it (both layers) and as tf.keras does (the forward one
// only, the backward one its mirror); merge modes; Keras's sublayer names.
TEST(KerasConfig, BidirectionalReadsBothFormsAndRoundTrips) {
  const std::string lstm = R"({"class_name": "LSTM", "config": {"name": "lstm", "units": 3, "return_sequences": true}})";
  const std::string json = keras3_model(
      "[null, 7, 5]",
      layer("Bidirectional", R"({"name": "bi", "merge_mode": "concat", "layer": )" + lstm + "}") + ", " +
          layer("Bidirectional", R"({"name": "bi2", "merge_mode": "sum", "layer": {"class_name": "GRU", "config": {"name": "forward_gru", "units": 2}}, "backward_layer": {"class_name": "GRU", "config": {"name": "backward_gru", "units": 2, "go_backwards": true, "activation": "relu"}}})"));
  auto m = sequential_from_keras_json(json, "bi.json");
  m->build();
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{7, 5}), (Shape{7, 6}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{7, 6}), (Shape{2}));
  EXPECT_EQ(m->layers()[0]->count_params(), 2 * (4 * 3 * (5 + 3) + 12));
  const auto& bi = dynamic_cast<const Bidirectional&>(*m->layers()[0]);
  EXPECT_EQ(bi.forward_layer().name(), "forward_lstm");
  EXPECT_EQ(bi.backward_layer().name(), "backward_lstm");
  EXPECT_TRUE(bi.backward_layer().options().go_backwards);
  EXPECT_EQ(dynamic_cast<const Bidirectional&>(*m->layers()[1]).backward_layer().options().activation, "relu");

  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  const auto& bi2 = dynamic_cast<const Bidirectional&>(*again->layers()[1]);
  EXPECT_EQ(bi2.merge_mode(), "sum");
  EXPECT_EQ(bi2.forward_layer().name(), "forward_gru");
  EXPECT_EQ(bi2.backward_layer().options().activation, "relu");

  // merge_mode null: both sequences as two outputs (a Functional model's), then the states.
  RecurrentOptions o;
  o.units = 3;
  o.return_sequences = o.return_state = true;
  RecurrentOptions back = o;
  back.go_backwards = true;
  Bidirectional none("b", std::make_unique<LSTM>("forward_l", o), std::make_unique<LSTM>("backward_l", back), "");
  EXPECT_EQ(none.num_outputs(), 6);
  EXPECT_EQ(none.compute_output_shapes({Shape{7, 5}}),
            (std::vector<Shape>{Shape{7, 3}, Shape{7, 3}, Shape{3}, Shape{3}, Shape{3}, Shape{3}}));
  expect_config_errors({{keras3_model("[null, 7, 5]", layer("Bidirectional", R"({"name": "b", "merge_mode": null, "layer": )" + lstm + "}")),
                         "a Sequential model's layers have one output each"}});
}

TEST(KerasConfig, TimeDistributedReadsItsLayerAndRoundTrips) {
  const std::string json = keras3_model(
      "[null, 4, 6, 6, 2]",
      layer("TimeDistributed", R"({"name": "td", "layer": {"module": "keras.layers", "class_name": "Conv2D", "config": {"name": "conv", "filters": 3, "kernel_size": 3, "kernel_regularizer": "l2"}, "registered_name": null, "build_config": {"input_shape": [null, 6, 6, 2]}}})") +
          ", " + layer("TimeDistributed", R"({"name": "td2", "layer": {"class_name": "Flatten", "config": {"name": "flat"}}})"));
  auto m = sequential_from_keras_json(json, "td.json");
  m->build();
  EXPECT_EQ(m->layers()[0]->output_shape(Shape{4, 6, 6, 2}), (Shape{4, 4, 4, 3}));
  EXPECT_EQ(m->layers()[1]->output_shape(Shape{4, 4, 4, 3}), (Shape{4, 48}));
  EXPECT_EQ(m->layers()[0]->count_params(), 3 * 3 * 2 * 3 + 3);
  // Keras 3 files keep the inner layer's variables in the wrapper's "layer" group.
  const std::vector<WeightGroup> groups = m->layers()[0]->saved_weight_groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].path, "layer");
  EXPECT_EQ(groups[1].weights.size(), 2u);
  EXPECT_EQ(groups[1].weights[0]->regularizer.kind, "L2");
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "written.json");
  const auto& td = dynamic_cast<const TimeDistributed&>(*again->layers()[0]);
  EXPECT_EQ(td.layer().class_name(), "Conv2D");
  EXPECT_EQ(td.layer().name(), "conv");
  EXPECT_EQ(td.layer().weight_regularizers().at("kernel").kind, "L2");
  expect_config_errors({
      {keras3_model("[null, 4, 3]", layer("TimeDistributed", R"({"name": "td"})")),
       "layers[1] (td): missing required key \"layer\""},
      {keras3_model("[null, 4]", layer("TimeDistributed", R"({"name": "td", "layer": {"class_name": "Dense", "config": {"name": "d", "units": 2}}})")),
       "TimeDistributed needs inputs of shape (steps, ...) with at least one axis past the steps, got (4,)"},
      {keras3_model("[null, 4, 3]", layer("TimeDistributed", R"({"name": "td", "layer": {"class_name": "Dense", "config": {"name": "d", "units": 0}}})")),
       "(td).layer: \"units\" must be positive, got 0"},
      {keras3_model("[null, 4, 3]", layer("TimeDistributed", R"({"name": "td", "layer": {"class_name": "Dense", "config": {"name": "d", "units": 2}}, "units": 3})")),
       "(td): unknown key \"units\""},
  });
}

// Masks: mask_zero and Masking read and write back; a layer whose Keras counterpart would
// use a mask nnfit does not implement is refused when the model is planned, naming it, and
// so is a mask reaching a trained output (Keras would weight the loss by it).
TEST(KerasConfig, MasksAreReadAndWhatNnfitCannotHonourIsRefused) {
  auto model = [](const std::string& layers) {
    return R"({"module": "keras", "class_name": "Sequential", "config": {"name": "m", "layers": [)" +
           layer("InputLayer", R"({"batch_shape": [null, 6, 3], "dtype": "float32", "name": "x"})") + ", " + layers +
           "]}}";
  };
  const std::string masking = layer("Masking", R"({"name": "mask", "mask_value": -1.0})");
  auto m = sequential_from_keras_json(model(masking + ", " + layer("LSTM", R"({"name": "l", "units": 2})")), "m.json");
  EXPECT_EQ(dynamic_cast<const Masking&>(*m->layers()[0]).mask_value(), -1.0);
  auto again = sequential_from_keras_json(model_to_keras_json(*m), "again.json");
  EXPECT_EQ(dynamic_cast<const Masking&>(*again->layers()[0]).mask_value(), -1.0);
  CompileOptions c;
  c.loss = Loss::from_name("mse");
  m->compile(c);
  EXPECT_EQ(m->predict(Tensor::zeros(Shape{2, 6, 3}), 2).shape(), (Shape{2, 2}));

  auto refused = [&](const std::string& layers, const std::string& want) {
    auto bad = sequential_from_keras_json(model(layers), "bad.json");
    bad->compile(c);
    const std::string e = error_of<Unsupported>([&] { bad->predict(Tensor::zeros(Shape{2, 6, 3}), 2); });
    EXPECT_NE(e.find(want), std::string::npos) << e;
  };
  refused(masking + ", " + layer("BatchNormalization", R"({"name": "bn"})") + ", " + layer("LSTM", R"({"name": "l", "units": 2})"),
          "bn: its input carries a mask (from Embedding(mask_zero=True) or Masking), with which Keras's "
          "BatchNormalization computes its batch moments over the present steps only; that is not supported yet");
  refused(masking + ", " + layer("Softmax", R"({"name": "sm"})") + ", " + layer("GRU", R"({"name": "g", "units": 2})"),
          "sm: its input carries a mask");
  refused(masking + ", " + layer("LSTM", R"({"name": "l", "units": 2, "return_sequences": true})"),
          "output 'l' carries a mask");
}

TEST(KerasConfigErrors, RecurrentLayers) {
  auto rnn = [](const std::string& cls, const std::string& config) {
    return keras3_model("[null, 6, 3]", layer(cls, config));
  };
  expect_config_errors({
      {rnn("LSTM", R"({"name": "l", "units": 4, "stateful": true})"), "layers[1] (l): \"stateful\""},
      {rnn("LSTM", R"({"name": "l", "units": 4, "recurrent_dropout": -0.2})"),
       "layers[1] (l): \"recurrent_dropout\" must be in [0, 1), got -0.2"},
      {rnn("GRU", R"({"name": "g", "units": 4, "recurrent_dropout": 1.5})"),
       "layers[1] (g): \"recurrent_dropout\" must be in [0, 1), got 1.5"},
      {rnn("GRU", R"({"name": "g", "units": 0})"), "layers[1] (g): \"units\" must be positive, got 0"},
      {rnn("SimpleRNN", R"({"name": "r", "units": 2, "recurrent_activation": "sigmoid"})"),
       "layers[1] (r): SimpleRNN has no \"recurrent_activation\""},
      {rnn("LSTM", R"({"name": "l", "units": 2, "activation": "softmax"})"),
       "layers[1] (l): activation 'softmax' is not supported in a recurrent cell"},
      {rnn("LSTM", R"({"name": "l", "units": 2, "recurrent_constraint": {"class_name": "MinMaxNorm", "config": {"min_value": 2, "max_value": 1}}})"),
       "(l).recurrent_constraint.config: needs 0 <= min_value <= max_value"},
      {rnn("LSTM", R"({"name": "l", "units": 2, "kernel_regularizer": {"class_name": "OrthogonalRegularizer", "config": {"mode": "diagonal"}}})"),
       "\"mode\" must be \"rows\" or \"columns\", got \"diagonal\""},
      {rnn("GRU", R"({"name": "g", "units": 2, "time_major": true})"), "\"time_major\""},
      {keras3_model("[null, 6]", layer("LSTM", R"({"name": "l", "units": 2})")),
       "layers[1] (l): LSTM expects (steps, features), got (6,)"},
      {keras3_model("[null, 6]", layer("Embedding", R"({"name": "e", "input_dim": 5, "output_dim": 2, "mask_zero": 1})")),
       "layers[1] (e): \"mask_zero\""},
      {keras3_model("[null, 6, 2]", layer("Masking", R"({"name": "m", "mask_value": "zero"})")), "layers[1] (m): \"mask_value\""},
      {keras3_model("[null, 6]", layer("Embedding", R"({"name": "e", "input_dim": 0, "output_dim": 2})")),
       "layers[1] (e): \"input_dim\" must be positive, got 0"},
      {keras3_model("[null, 6]", layer("Embedding", R"({"name": "e", "input_dim": 5})")), "\"output_dim\""},
      {keras3_model("[null, 6]", layer("Embedding", R"({"name": "e", "input_dim": 5, "output_dim": 2, "embeddings_initializer": {"class_name": "RandomUniform", "config": {"minval": -1.0, "maxval": 1.0}}})")),
       "initializer argument \"maxval\" = 1.0 is not supported"},
      {rnn("Bidirectional", R"({"name": "b", "merge_mode": "max", "layer": {"class_name": "LSTM", "config": {"units": 2}}})"),
       "layers[1] (b): \"merge_mode\" must be \"concat\", \"sum\", \"mul\", \"ave\" or null, got \"max\""},
      {rnn("Bidirectional", R"({"name": "b", "layer": {"class_name": "Dense", "config": {"units": 2}}})"),
       "layers[1] (b).layer: Bidirectional around a Dense is not supported"},
      {rnn("Bidirectional", R"({"name": "b", "layer": {"class_name": "LSTM", "config": {"units": 2}}, "backward_layer": {"class_name": "LSTM", "config": {"units": 2}}})"),
       "layers[1] (b): the forward layer must read forwards and the backward one backwards"},
      {rnn("Bidirectional", R"({"name": "b", "layer": {"class_name": "LSTM", "config": {"units": 2}}, "backward_layer": {"class_name": "GRU", "config": {"units": 2, "go_backwards": true}}})"),
       "layers[1] (b): the forward layer is a LSTM, the backward one a GRU"},
      {rnn("Bidirectional", R"({"name": "b", "layer": {"class_name": "LSTM", "config": {"units": 0}}})"),
       "layers[1] (b).layer: \"units\" must be positive, got 0"},
      {rnn("Bidirectional", R"({"name": "b"})"), "layers[1] (b): missing required key \"layer\""},
      {R"({"class_name": "Sequential", "config": {"name": "m", "layers": [)" +
           layer("InputLayer", R"({"batch_shape": [null, 6], "dtype": "string", "name": "x"})") + "]}}",
       "\"dtype\" = \"string\" is not supported for an input"},
  });
}

// A reader's error passes through the layer's wrapper unchanged: the file and the key path
// are said once.
TEST(KerasConfigErrors, TheLocationIsSaidOnce) {
  const std::string json = keras3_model(
      "[null, 6, 3]",
      layer("LSTM", R"({"name": "l", "units": 2, "kernel_initializer": {"class_name": "GlorotUniform", "config": {}, "extra": 1}})"));
  const std::string e = error_of<Error>([&] { sequential_from_keras_json(json, "once.json"); });
  EXPECT_NE(e.find("once.json: "), std::string::npos) << e;
  EXPECT_EQ(e.find("once.json", e.find("once.json") + 1), std::string::npos) << e;
  EXPECT_NE(e.find("kernel_initializer: unknown key \"extra\""), std::string::npos) << e;
}

}  // namespace
}  // namespace nnfit
