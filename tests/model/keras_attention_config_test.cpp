// The attention family as Keras 3 writes it (fixtures/attention_keras3.json, made by
// fixtures/make_functional_json.py): MultiHeadAttention's call arguments (key=,
// attention_mask=, use_causal_mask=) and the mask Keras records as a NotEqual operation
// passed as mask= are read into the graph and written back as Keras wrote them; every
// malformed or unsupported EinsumDense and MultiHeadAttention config is one clear error.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"
#include "nnfit/nn/attention_layers.h"
#include "nnfit/nn/layers.h"

namespace nnfit {
namespace {

using json = nlohmann::json;

json fixture(const std::string& name = "attention_keras3.json") {
  std::ifstream f(std::string(NNFIT_SOURCE_DIR) + "/tests/model/fixtures/" + name);
  EXPECT_TRUE(f.good());
  return json::parse(f);
}

json& layer(json& model, const std::string& name) {
  for (json& l : model["config"]["layers"]) {
    if (l["name"] == name) return l;
  }
  throw std::runtime_error("no layer " + name);
}

std::string error_of(const json& model) {
  try {
    model_from_keras_json(model.dump(), "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Each call as "layer(inputs | mask)", in node order.
std::string calls(const Model& m) {
  const LayerGraph& g = m.graph();
  auto name = [&](const TensorRef& r) {
    const LayerNode& n = g.nodes()[static_cast<std::size_t>(r.node)];
    return n.layer ? n.layer->name() : g.inputs()[static_cast<std::size_t>(n.input_index)].name;
  };
  std::string out;
  for (const LayerNode& n : g.nodes()) {
    if (!n.layer) continue;
    out += n.layer->name() + "(";
    for (const TensorRef& r : n.inputs) out += name(r) + " ";
    for (const TensorRef& mask : n.masks) out += "| " + (mask.node >= 0 ? name(mask) : "-");
    out += ") ";
  }
  return out;
}

TEST(KerasAttention, CallArgumentsAndRecordedMasksRead) {
  auto m = model_from_keras_json(fixture().dump(), "attention_keras3.json");
  EXPECT_EQ(calls(*m),
            "cross(q v v m ) emb(ids ) not_equal(ids ) self(cross cross ) text(emb emb ) bahdanau(emb emb ) "
            "convert_to_tensor(not_equal ) proj(self ) pool(text | not_equal) luong(self cross ) "
            "pool2(bahdanau | convert_to_tensor) ");
  const auto& luong = dynamic_cast<const Attention&>(*m->graph().find_layer("luong")).options();
  EXPECT_TRUE(luong.use_scale && luong.score_mode == "concat" && luong.use_causal_mask && !luong.additive);
  const auto& bahdanau = dynamic_cast<const Attention&>(*m->graph().find_layer("bahdanau")).options();
  EXPECT_TRUE(bahdanau.additive && bahdanau.use_scale && !bahdanau.use_causal_mask);
  const auto& cross = dynamic_cast<const MultiHeadAttention&>(*m->graph().find_layer("cross")).options();
  EXPECT_TRUE(cross.has_key && cross.has_attention_mask && !cross.use_causal_mask);
  const auto& self = dynamic_cast<const MultiHeadAttention&>(*m->graph().find_layer("self")).options();
  EXPECT_TRUE(!self.has_key && !self.has_attention_mask && self.use_causal_mask);
  EXPECT_EQ(m->graph().inputs()[2].dtype, DType::boolean);
  const auto& not_equal = dynamic_cast<const LogicalOp&>(*m->graph().find_layer("not_equal"));
  EXPECT_EQ(not_equal.class_name(), "NotEqual");
  EXPECT_EQ(not_equal.value(), 0.0);
  EXPECT_EQ(m->output_shapes()[0], (Shape{5, 3}));
  EXPECT_EQ(m->output_shapes()[1], (Shape{8}));
  EXPECT_EQ(m->output_shapes()[2], (Shape{5, 8}));

  // Written as Keras writes them: query and value positional, key and the mask by keyword.
  const json written = json::parse(model_to_keras_json(*m));
  const json& node = layer(const_cast<json&>(written), "cross")["inbound_nodes"][0];
  EXPECT_EQ(node["args"].size(), 2u);
  EXPECT_EQ(node["kwargs"]["key"]["config"]["keras_history"], json({"v", 0, 0}));
  EXPECT_EQ(node["kwargs"]["attention_mask"]["config"]["keras_history"], json({"m", 0, 0}));
  EXPECT_EQ(layer(const_cast<json&>(written), "self")["inbound_nodes"][0]["kwargs"]["use_causal_mask"], true);
  EXPECT_EQ(layer(const_cast<json&>(written), "not_equal")["inbound_nodes"][0]["args"][1], 0);
  EXPECT_EQ(layer(const_cast<json&>(written), "pool")["inbound_nodes"][0]["kwargs"]["mask"]["config"]["keras_history"],
            json({"not_equal", 0, 0}));
  const json& luong_node = layer(const_cast<json&>(written), "luong")["inbound_nodes"][0];
  EXPECT_EQ(luong_node["args"][0].size(), 2u) << "Attention takes its inputs as one list";
  EXPECT_EQ(luong_node["kwargs"]["use_causal_mask"], true);
  auto back = model_from_keras_json(written.dump(), "written.json");
  EXPECT_EQ(calls(*back), calls(*m));
  EXPECT_EQ(json::parse(model_to_keras_json(*back)), written) << "writing is a fixed point";

  // return_attention_scores=True: a second output, the weights [heads, T, S], written back.
  json scored = fixture();
  layer(scored, "text")["inbound_nodes"][0]["kwargs"]["return_attention_scores"] = true;
  auto with_scores = model_from_keras_json(scored.dump(), "scores.json");
  const auto& text = dynamic_cast<const MultiHeadAttention&>(*with_scores->graph().find_layer("text"));
  EXPECT_TRUE(text.options().return_attention_scores);
  EXPECT_EQ(text.num_outputs(), 2);
  const json scored_back = json::parse(model_to_keras_json(*with_scores));
  EXPECT_EQ(layer(const_cast<json&>(scored_back), "text")["inbound_nodes"][0]["kwargs"]["return_attention_scores"], true);

  // Keras 3 records mha(query, value, key) with the key as a third argument: the same call.
  json positional = fixture();
  json& cross_node = layer(positional, "cross")["inbound_nodes"][0];
  cross_node["args"].push_back(cross_node["kwargs"]["key"]);
  cross_node["kwargs"].erase("key");
  auto by_position = model_from_keras_json(positional.dump(), "positional.json");
  EXPECT_EQ(calls(*by_position), calls(*m));
  EXPECT_TRUE(dynamic_cast<const MultiHeadAttention&>(*by_position->graph().find_layer("cross")).options().has_key);
  EXPECT_EQ(back->count_params(), m->count_params());
  EXPECT_THROW(model_to_keras_json(*m, KerasFormat::keras2), Unsupported);
}

TEST(KerasAttention, EinsumDenseErrorsNameTheLayerAndTheEquation) {
  const auto with = [](const std::string& equation, const json& output_shape, const json& bias_axes) {
    json m = fixture();
    json& c = layer(m, "proj")["config"];
    c["equation"] = equation;
    c["output_shape"] = output_shape;
    c["bias_axes"] = bias_axes;
    return error_of(m);
  };
  EXPECT_NE(with("abc*cd->abd", {nullptr, 3}, "d").find("(proj)"), std::string::npos);
  EXPECT_NE(with("abc*cd->abd", {nullptr, 3}, "d").find("expected \"input,kernel->output\""), std::string::npos);
  EXPECT_NE(with("abc,cd->abd", {3}, "d").find("output_shape has 1 entries where the output term needs 2"),
            std::string::npos);
  EXPECT_NE(with("abc,cd->abe", {nullptr, 3}, "e").find("output label 'e' is in neither the input nor the kernel"),
            std::string::npos);
  EXPECT_NE(with("abc,cd->abd", {nullptr, nullptr}, "d").find("output_shape leaves 'd' unknown"), std::string::npos);
  EXPECT_NE(with("abc,bcd->abd", {nullptr, 3}, "d").find("a batched einsum"), std::string::npos);
  EXPECT_NE(with("abcd,ce->abe", {nullptr, 3}, "e").find("the input term has 4 axes, the input has 3"),
            std::string::npos);
  EXPECT_NE(with("abc,cde->abde", {nullptr, 2, 3}, "d").find("bias on the trailing output labels only"),
            std::string::npos);
  EXPECT_NE(with("abc,cd->abd", {nullptr, 3}, "x").find("bias axis 'x' is not an output label"), std::string::npos);
  EXPECT_NE(with("...c,cd->abd", {nullptr, 3}, "d").find("\"...\" must start both the input and the output"),
            std::string::npos);
}

TEST(KerasAttention, MultiHeadAttentionErrorsAreSaidOnceAndInFull) {
  json m = fixture();
  layer(m, "cross")["config"]["attention_axes"] = {2};
  layer(m, "text")["config"]["flash_attention"] = true;
  std::string e = error_of(m);
  EXPECT_NE(e.find("(cross): \"attention_axes\" = [2] is not supported (attention over the steps axis, [1])"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("(text): \"flash_attention\" = true is not supported"), std::string::npos) << e;

  m = fixture();
  layer(m, "text")["inbound_nodes"][0]["kwargs"]["query_mask"] = layer(m, "text")["inbound_nodes"][0]["args"][0];
  e = error_of(m);
  EXPECT_NE(e.find("call argument query_mask is not supported"), std::string::npos) << e;

  m = fixture();  // a second call with other arguments than the first
  json node = layer(m, "self")["inbound_nodes"][0];
  node["kwargs"]["use_causal_mask"] = false;
  layer(m, "self")["inbound_nodes"].push_back(node);
  e = error_of(m);
  EXPECT_NE(e.find("inbound_nodes[1]: the layer is called with other arguments than in its first call"),
            std::string::npos)
      << e;

  m = fixture();  // the attention mask does not fit the query and value lengths
  m["config"]["layers"][2]["config"]["batch_shape"] = {nullptr, 5, 7};
  e = error_of(m);
  EXPECT_NE(e.find("(cross): attention_mask (5, 7) must be (query steps, value steps) = (5, 6)"), std::string::npos)
      << e;

  m = fixture();
  layer(m, "cross")["config"]["num_heads"] = 0;
  EXPECT_NE(error_of(m).find("\"num_heads\" and \"key_dim\" must be positive"), std::string::npos);
  m = fixture();
  layer(m, "cross")["config"]["dropout"] = 1.5;
  EXPECT_NE(error_of(m).find("\"dropout\" must be in [0, 1), got 1.5"), std::string::npos);
  m = fixture();
  layer(m, "cross")["config"]["flash_attention"] = true;
  EXPECT_NE(error_of(m).find("\"flash_attention\" = true is not supported"), std::string::npos);
  m = fixture();  // a layer that takes no call arguments
  layer(m, "proj")["inbound_nodes"][0]["kwargs"]["use_causal_mask"] = true;
  EXPECT_NE(error_of(m).find("proj (EinsumDense): call arguments use_causal_mask=True are not taken"),
            std::string::npos);
  m = fixture();
  layer(m, "luong")["config"]["score_mode"] = "general";
  EXPECT_NE(error_of(m).find("\"score_mode\" must be \"dot\" or \"concat\", got \"general\""), std::string::npos);
  m = fixture();  // Attention on a mask list that does not match its inputs
  layer(m, "bahdanau")["inbound_nodes"][0]["kwargs"]["mask"] = json::array({nullptr});
  EXPECT_NE(error_of(m).find("a mask= argument with 1 entries for 2 inputs is not supported"), std::string::npos);
  m = fixture();  // not_equal without its number
  layer(m, "not_equal")["inbound_nodes"][0]["args"].erase(1);
  EXPECT_NE(error_of(m).find("not_equal is supported as not_equal(tensor, number)"), std::string::npos);
}

// Recurrent layers started from states: Keras 3's initial_state=[h, c] (a list) and
// initial_state=h (one tensor) become the layer's extra inputs and are written back in the
// same forms, with Keras's shapes_dict build config.
TEST(KerasAttention, RecurrentInitialStatesReadAndRoundTrip) {
  const json keras = fixture("recurrent_states_keras3.json");
  auto m = model_from_keras_json(keras.dump(), "recurrent_states_keras3.json");
  EXPECT_EQ(calls(*m), "enc(src ) dec(tgt enc enc ) gru(tgt s0 ) ");
  EXPECT_EQ(m->graph().nodes()[4].inputs[2].index, 2) << "dec reads enc's c (its third output)";
  const json written = json::parse(model_to_keras_json(*m));
  json& w = const_cast<json&>(written);
  EXPECT_EQ(layer(w, "dec")["inbound_nodes"][0]["kwargs"]["initial_state"].size(), 2u);
  EXPECT_TRUE(layer(w, "gru")["inbound_nodes"][0]["kwargs"]["initial_state"].is_object()) << "one state, one tensor";
  EXPECT_EQ(layer(w, "dec")["build_config"], layer(const_cast<json&>(keras), "dec")["build_config"]);
  EXPECT_EQ(layer(w, "gru")["build_config"], layer(const_cast<json&>(keras), "gru")["build_config"]);
  EXPECT_EQ(calls(*model_from_keras_json(written.dump(), "w.json")), calls(*m));

  json bad = keras;  // a state of the wrong size
  m.reset();
  for (json& l : bad["config"]["layers"]) {
    if (l["name"] == "s0") l["config"]["batch_shape"] = {nullptr, 3};
  }
  EXPECT_NE(error_of(bad).find("(gru): initial state 0 is (3,); it must be (4,), the layer's units"),
            std::string::npos)
      << error_of(bad);
  bad = keras;  // an LSTM given one state
  layer(bad, "dec")["inbound_nodes"][0]["kwargs"]["initial_state"].erase(1);
  EXPECT_NE(error_of(bad).find("dec (LSTM): call arguments other than initial_state=[h, c] are not supported"),
            std::string::npos)
      << error_of(bad);
}

}  // namespace
}  // namespace nnfit
