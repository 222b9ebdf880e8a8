// Functional configs as Keras writes them (fixtures/*.json, made by
// fixtures/make_functional_json.py with Keras 3.15 and tf-keras 2.21): both generations
// read to the same graph (shared layer, nested Sequential, merges, two outputs, dict inputs
// and outputs), and
// every malformed connection is an error naming the layer and the reference.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/nested_model.h"

namespace nnfit {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream f(std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/" + name);
  EXPECT_TRUE(f.good()) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The graph as text: each call "layer(inputs...)" in node order, then the outputs.
std::string connectivity(const Model& m) {
  const LayerGraph& g = m.graph();
  auto name = [&](const TensorRef& r) {
    const LayerNode& n = g.nodes()[static_cast<std::size_t>(r.node)];
    return (n.layer ? n.layer->name() + "#" + std::to_string(n.call_index) : g.inputs()[static_cast<std::size_t>(n.input_index)].name) +
           ":" + std::to_string(r.index);
  };
  std::string out;
  for (const LayerNode& n : g.nodes()) {
    if (!n.layer) continue;
    out += n.layer->name() + "(";
    for (const TensorRef& r : n.inputs) out += name(r) + " ";
    out += ") ";
  }
  out += "-> ";
  for (const TensorRef& r : g.outputs()) out += name(r) + " ";
  return out;
}

std::string error_of(const std::string& json) {
  try {
    model_from_keras_json(json, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(KerasFunctional, BothGenerationsReadToTheSameGraph) {
  for (const char* file : {"towers_keras3.json", "towers_keras2.json"}) {
    SCOPED_TRACE(file);
    auto m = model_from_keras_json(fixture(file), file);
    EXPECT_EQ(m->class_name(), "Functional");
    EXPECT_EQ(m->name(), "towers");
    EXPECT_EQ(m->input_shapes(), (std::vector<Shape>{Shape{4}, Shape{4}}));
    EXPECT_EQ(m->output_names(), (std::vector<std::string>{"out", "aux"}));
    EXPECT_EQ(m->output_shapes(), (std::vector<Shape>{Shape{2}, Shape{1}}));
    EXPECT_EQ(connectivity(*m),
              "shared(a:0 ) shared(b:0 ) add(shared#0:0 shared#1:0 ) head(add#0:0 ) concat(add#0:0 head#0:0 ) "
              "out(concat#0:0 ) aux(add#0:0 ) -> out#0:0 aux#0:0 ");
    // Keras's count: shared 15, head 8, out 12, aux 4.
    CompileOptions c;
    c.loss = Loss::from_name("mse");
    m->compile(c);
    EXPECT_EQ(m->count_params(), 39);
    auto* head = dynamic_cast<const NestedModel*>(m->get_layer("head"));
    ASSERT_NE(head, nullptr);
    EXPECT_EQ(head->class_name(), "Sequential");
    EXPECT_EQ(head->graph().layers()[0]->name(), "head_dense");
  }
}

TEST(KerasFunctional, EveryMergeLayerReads) {
  for (const char* file : {"merges_keras3.json", "merges_keras2.json"}) {
    SCOPED_TRACE(file);
    auto m = model_from_keras_json(fixture(file), file);
    std::vector<std::string> classes;
    for (const auto& l : m->layers()) classes.push_back(l->class_name());
    EXPECT_EQ(classes, (std::vector<std::string>{"Dense", "Dense", "Subtract", "Multiply", "Average", "Maximum",
                                                 "Minimum", "Dot", "Concatenate", "Dense"}));
    // Five merges of (4,) and Dot's (1,) concatenated: 21 features into y.
    EXPECT_EQ(m->output_shapes(), (std::vector<Shape>{Shape{1}}));
    EXPECT_EQ(m->get_layer("dot")->compute_output_shapes({Shape{4}, Shape{4}}), (std::vector<Shape>{Shape{1}}));
  }
}

TEST(KerasFunctional, ConnectionErrorsNameTheLayerAndTheReference) {
  using nlohmann::json;
  const json good = json::parse(fixture("towers_keras3.json"));
  auto layer = [](json& j, std::size_t i) -> json& { return j["config"]["layers"][i]; };
  auto expect = [](const json& j, const std::string& needle) {
    const std::string m = error_of(j.dump());
    EXPECT_NE(m.find(needle), std::string::npos) << m;
  };
  json j = good;  // a call that reads a tensor no layer makes
  layer(j, 3)["inbound_nodes"][0]["args"][0][1]["config"]["keras_history"][1] = 7;
  expect(j, "layers[3] (add).inbound_nodes[0]: reads tensor [\"shared\", 7, 0], which no layer of the model makes");
  j = good;  // an output nothing makes
  j["config"]["output_layers"][0][0] = "nope";
  expect(j, "output [\"nope\", 0, 0] is not made by any layer");
  j = good;  // a keyword argument nnfit cannot honour
  layer(j, 4)["inbound_nodes"][0]["kwargs"]["mask"] = 1;
  expect(j, "(head).inbound_nodes[0].kwargs: call argument \"mask\" = 1 is not supported");
  j = good;  // a call argument that is not a tensor
  layer(j, 6)["inbound_nodes"][0]["args"][0] = 3.5;
  expect(j, "(out).inbound_nodes[0].args[0]: a call argument that is not a tensor (3.5) is not supported");
  j = good;  // an unknown layer class
  layer(j, 5)["class_name"] = "Concatenat";
  expect(j, "layers[5] (concat): unknown layer class \"Concatenat\"");
  j = good;  // two layers with one name
  layer(j, 7)["name"] = "out";
  layer(j, 7)["config"]["name"] = "out";
  expect(j, "two layers are named \"out\"");
  j = good;  // an input layer missing from input_layers
  j["config"]["input_layers"].erase(0);
  expect(j, "(a): an InputLayer that is not in input_layers");
  j = good;  // input_layers naming a layer that is not an input
  j["config"]["input_layers"][0][0] = "shared";
  expect(j, "(shared): listed in input_layers but is a Dense");
  j = good;  // merge inputs of shapes that do not broadcast
  layer(j, 3)["inbound_nodes"][0]["args"][0][1]["config"]["keras_history"] = {"a", 0, 0};
  expect(j, "(add): Add cannot combine inputs of shapes (3,) and (4,)");
  json k2 = json::parse(fixture("towers_keras2.json"));  // Keras 2's list form with a bad reference
  k2["config"]["layers"][3]["inbound_nodes"][0][0] = {"shared", 0};
  expect(k2, "expected a tensor reference [\"layer\", node_index, tensor_index]");
  k2 = json::parse(fixture("towers_keras2.json"));
  k2["config"]["layers"][3]["inbound_nodes"][0][1][3] = {{"training", "yes"}};
  expect(k2, "(add).inbound_nodes[0][1][3]: call argument \"training\" = \"yes\" is not supported");
  // A recorded training flag is Keras's own bookkeeping (the model's mode overrides it).
  k2["config"]["layers"][3]["inbound_nodes"][0][1][3] = {{"training", false}};
  EXPECT_NO_THROW(model_from_keras_json(k2.dump(), "m.json"));
}

TEST(KerasFunctional, WhatNnfitWritesReadsBackToTheSameModel) {
  for (const char* file : {"towers_keras3.json", "towers_keras2.json", "merges_keras3.json", "merges_keras2.json"}) {
    SCOPED_TRACE(file);
    auto m = model_from_keras_json(fixture(file), file);
    const std::string written = model_to_keras_json(*m);
    auto back = model_from_keras_json(written, "written.json");
    EXPECT_EQ(connectivity(*back), connectivity(*m));
    EXPECT_EQ(back->summary(), m->summary());
    EXPECT_EQ(model_to_keras_json(*back), written) << "writing is a fixed point";
    // tf.keras's form reads back to the same graph too (nested models' node offsets included).
    auto k2 = model_from_keras_json(model_to_keras_json(*m, KerasFormat::keras2), "written2.json");
    EXPECT_EQ(connectivity(*k2), connectivity(*m));
    if (const char* dir = std::getenv("NNFIT_DUMP_KERAS_JSON")) {
      std::ofstream(std::string(dir) + "/" + file) << written;
      std::ofstream(std::string(dir) + "/k2_" + file) << model_to_keras_json(*m, KerasFormat::keras2);
    }
  }
  auto seq = model_from_keras_json(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
                                   R"({"class_name": "InputLayer", "config": {"name": "in", "batch_input_shape": [null, 8, 8, 1]}},)"
                                   R"({"class_name": "Conv2D", "config": {"name": "c", "filters": 2, "kernel_size": [3, 3]}},)"
                                   R"({"class_name": "BatchNormalization", "config": {"name": "bn", "center": false}},)"
                                   R"({"class_name": "MaxPooling2D", "config": {"name": "p"}},)"
                                   R"({"class_name": "Flatten", "config": {"name": "f"}},)"
                                   R"({"class_name": "Dropout", "config": {"name": "d", "rate": 0.25}},)"
                                   R"({"class_name": "Dense", "config": {"name": "o", "units": 3, "activation": "softmax"}}]}})",
                                   "seq.json");
  const std::string written = model_to_keras_json(*seq);
  EXPECT_EQ(model_to_keras_json(*model_from_keras_json(written, "w.json")), written);
  EXPECT_NE(written.find(R"("class_name":"Sequential")"), std::string::npos) << written;
}

// Keras's dict inputs and outputs: read in sorted-key order (as Keras flattens a dict), the
// keys name the outputs (losses, metrics, logs), written back as dicts; a bad reference is
// named by its key.
TEST(KerasFunctional, DictInputsAndOutputsAreTakenBySortedKey) {
  using nlohmann::json;
  const std::string text = fixture("dict_structures_keras3.json");
  auto m = model_from_keras_json(text, "dict.json");
  EXPECT_EQ(connectivity(*m), "cat(p:0 q:0 ) d2(cat#0:0 ) d1(cat#0:0 ) -> d2#0:0 d1#0:0 ");
  EXPECT_EQ(m->graph().inputs()[0].name, "p");
  EXPECT_EQ(m->graph().input_keys(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(m->output_names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m->output_shapes()[0], (Shape{2}));
  const json written = json::parse(model_to_keras_json(*m));
  EXPECT_EQ(written["config"]["output_layers"], json::parse(R"({"a": ["d2", 0, 0], "b": ["d1", 0, 0]})"));
  EXPECT_EQ(written["config"]["input_layers"], json::parse(R"({"p": ["p", 0, 0], "q": ["q", 0, 0]})"));
  EXPECT_EQ(connectivity(*model_from_keras_json(written.dump(), "w.json")), connectivity(*m));
  json bad = json::parse(text);
  bad["config"]["output_layers"]["b"] = {"d1", 3, 0};
  EXPECT_NE(error_of(bad.dump()).find("output [\"d1\", 3, 0] is not made by any layer"), std::string::npos);
  bad = json::parse(text);
  bad["config"]["output_layers"]["a"] = "d2";
  EXPECT_NE(error_of(bad.dump()).find("output_layers.a: expected a tensor reference"), std::string::npos)
      << error_of(bad.dump());
}

}  // namespace
}  // namespace nnfit
