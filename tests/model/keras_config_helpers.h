// Helpers of the Keras config tests (keras_config_test.cpp, keras_layer_config_test.cpp):
// model JSON in Keras 3's form, layer entries, and error expectations.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/model/keras_config.h"

namespace nnfit::keras_test {

// A Keras-3-style model: Input(shape) then the given layer entries.
inline std::string keras3_model(const std::string& batch_shape, const std::string& layers) {
  return R"({"module": "keras", "class_name": "Sequential", "config": {"name": "m", "trainable": true, "dtype": "float32", "layers": [)"
         R"({"module": "keras.layers", "class_name": "InputLayer", "config": {"batch_shape": )" +
         batch_shape + R"(, "dtype": "float32", "sparse": false, "name": "input_layer"}, "registered_name": null}, )" +
         layers + "]}}";
}

inline std::string layer(const std::string& cls, const std::string& config) {
  return R"({"module": "keras.layers", "class_name": ")" + cls + R"(", "config": )" + config +
         R"(, "registered_name": null})";
}

inline std::vector<std::string> classes(const Sequential& m) {
  std::vector<std::string> out;
  for (const auto& l : m.layers()) out.push_back(l->class_name());
  return out;
}

// Runs f, expects exception E, returns "what\nhint".
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return std::string(e.what()) + "\n" + e.hint();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

// Each case's JSON must fail to read (any nnfit Error) with `expect` in the message.
struct ErrorCase {
  std::string json, expect;
};

inline void expect_config_errors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    std::string msg;
    try {
      sequential_from_keras_json(c.json, "bad.json");
      ADD_FAILURE() << "accepted: " << c.expect;
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.expect << " not in: " << msg;
  }
}

}  // namespace nnfit::keras_test
