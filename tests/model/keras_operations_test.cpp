// Keras 3's operations in Functional configs (Note [Keras operations]): a model that real
// Keras built with keras.ops (fixtures/operations_keras3.json, made by
// fixtures/make_operations_json.py with Keras 3.15) reads, predicts what Keras predicted
// on the same input, and is written back with the same operation nodes; operations nnfit
// cannot run in a model are refused naming the operation.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/model/model.h"

namespace nnfit {
namespace {

using json = nlohmann::json;

json fixture() {
  std::ifstream f(std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/operations_keras3.json");
  EXPECT_TRUE(f.good());
  return json::parse(f);
}

Tensor tensor_of(const json& v) {
  std::vector<std::int64_t> dims;
  for (const json* p = &v; p->is_array(); p = &(*p)[0]) dims.push_back(static_cast<std::int64_t>(p->size()));
  Tensor t = Tensor::zeros(Shape(dims));
  std::vector<float> flat;
  std::function<void(const json&)> walk = [&](const json& x) {
    if (x.is_array()) {
      for (const json& y : x) walk(y);
    } else {
      flat.push_back(x.get<float>());
    }
  };
  walk(v);
  std::copy(flat.begin(), flat.end(), t.data<float>());
  return t;
}

TEST(KerasOperations, AModelKerasBuiltWithOpsPredictsWhatKerasPredicted) {
  const json doc = fixture();
  auto m = model_from_keras_json(doc["model"].dump(), "operations_keras3.json");
  m->build();
  std::vector<Tensor> x;
  for (const json& v : doc["inputs"]) x.push_back(tensor_of(v));
  const std::vector<Tensor> y = m->predict(x, InferenceOptions{});
  ASSERT_EQ(y.size(), doc["outputs"].size());
  for (std::size_t o = 0; o < y.size(); ++o) {
    const Tensor want = tensor_of(doc["outputs"][o]);
    ASSERT_EQ(y[o].shape(), want.shape()) << "output " << o;
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      const float a = y[o].data<float>()[i], b = want.data<float>()[i];
      EXPECT_NEAR(a, b, 1e-5f + 1e-5f * std::fabs(b)) << "output " << o << " element " << i;
    }
  }
  EXPECT_EQ(m->count_params(), 0);  // Keras counts no variable for an operation
}

TEST(KerasOperations, AreWrittenBackAsKerasWroteThem) {
  const json doc = fixture();
  auto m = model_from_keras_json(doc["model"].dump(), "operations_keras3.json");
  const json written = json::parse(model_to_keras_json(*m));
  std::map<std::string, json> ours;
  for (const json& l : written["config"]["layers"]) ours[l["name"]] = l;
  int operations = 0;
  for (const json& l : doc["model"]["config"]["layers"]) {
    if (l["module"].get<std::string>().rfind("keras.src.ops.", 0) != 0) continue;
    ++operations;
    SCOPED_TRACE(l["name"].get<std::string>());
    ASSERT_TRUE(ours.count(l["name"]));
    const json& o = ours[l["name"]];
    EXPECT_EQ(o["module"], l["module"]);
    EXPECT_EQ(o["class_name"], l["class_name"]);
    EXPECT_EQ(o["config"], l["config"]);
    EXPECT_EQ(o["registered_name"], l["registered_name"]);
    // The arguments: the same tensors (by history), numbers, keys and keyword arguments.
    const json& a = l["inbound_nodes"][0], &b = o["inbound_nodes"][0];
    ASSERT_EQ(a["args"].size(), b["args"].size());
    for (std::size_t k = 0; k < a["args"].size(); ++k) {
      const json& ka = a["args"][k], &kb = b["args"][k];
      if (ka.is_object() && ka.value("class_name", "") == "__keras_tensor__") {
        EXPECT_EQ(kb["config"]["keras_history"], ka["config"]["keras_history"]);
        EXPECT_EQ(kb["config"]["shape"], ka["config"]["shape"]);
      } else if (ka.is_array() && !ka.empty() && ka[0].is_object() && ka[0].value("class_name", "") == "__keras_tensor__") {
        ASSERT_EQ(kb.size(), ka.size());
        for (std::size_t i = 0; i < ka.size(); ++i) EXPECT_EQ(kb[i]["config"]["keras_history"], ka[i]["config"]["keras_history"]);
      } else {
        EXPECT_EQ(kb, ka) << "argument " << k;
      }
    }
    EXPECT_EQ(b["kwargs"], a["kwargs"]);
  }
  EXPECT_GE(operations, 25);
}

std::string model_error(const std::string& op_entry, const std::string& out = "op") {
  const std::string json_text =
      R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "m", "layers": [)"
      R"({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": [null, 5, 4], "dtype": "float32", "name": "x"}, "registered_name": null, "name": "x", "inbound_nodes": []}, )" +
      op_entry + R"(], "input_layers": ["x", 0, 0], "output_layers": [")" + out + R"(", 0, 0]}, "registered_name": "Functional"})";
  try {
    model_from_keras_json(json_text, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << op_entry;
  return "";
}

std::string op(const std::string& cls, const std::string& config, const std::string& args) {
  return R"({"module": "keras.src.ops.numpy", "class_name": ")" + cls + R"(", "config": {"name": "op")" +
         (config.empty() ? "" : ", " + config) + R"(}, "registered_name": ")" + cls +
         R"(", "name": "op", "inbound_nodes": [{"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 5, 4], "dtype": "float32", "keras_history": ["x", 0, 0]}})" +
         args + R"(], "kwargs": {}}]})";
}

TEST(KerasOperations, WhatAModelCannotRunIsRefusedNamingTheOperation) {
  // Reducing or indexing the batch axis: a model's tensors stay batched.
  EXPECT_NE(model_error(op("Mean", R"("axis": null, "keepdims": false)", "")).find("op (Mean): its output"), std::string::npos);
  EXPECT_NE(model_error(op("GetItem", "", ", 0")).find("does not keep the batch axis"), std::string::npos);
  // Argument forms nnfit does not implement, and bad arguments, name the operation.
  EXPECT_NE(model_error(op("GetItem", "", R"(, [{"class_name": "__slice__", "config": {"start": null, "stop": null, "step": 2}}])"))
                .find("a step other than 1"),
            std::string::npos);
  EXPECT_NE(model_error(op("Transpose", R"("axes": [0, 1, 1])", "")).find("op (Transpose): \"axes\" must be a permutation"),
            std::string::npos);
  EXPECT_NE(model_error(op("Reshape", R"("newshape": [-1, 7])", "")).find("cannot reshape"), std::string::npos);
  EXPECT_NE(model_error(op("Fft2", "", "")).find("Keras's operation keras.src.ops.numpy.Fft2 is not supported"),
            std::string::npos);
  EXPECT_NE(model_error(op("Add", "", R"(, {"class_name": "__tensor__", "config": {"value": [[1, 2], [3]], "dtype": "float32"}})"))
                .find("a constant's rows differ in length"),
            std::string::npos);
}

}  // namespace
}  // namespace nnfit
