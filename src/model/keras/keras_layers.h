// Private to src/model: the Keras layer readers (keras_config.cpp) as the model readers
// (keras_model_config.cpp) call them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/keras/keras_json.h"
#include "nnfit/nn/layer.h"

namespace nnfit::keras_json {

// The layer of Keras class `cls` (canonical name) from its config object; `in` holds the
// shapes of its first call's inputs (a reader checks axes against them). custom: the
// entry's registered_name names a user class. throws: InvalidArgument / Unsupported
// prefixed with `path`.
std::unique_ptr<Layer> read_layer(const Reader& r, const std::string& path, const std::string& cls, const json& cfg,
                                  const std::string& name, bool custom, const std::vector<Shape>& in);
// Keras's aliases resolved: "Convolution2D" -> "Conv2D", ...
std::string canonical_layer_class(const std::string& cls);
// An InputLayer's config -> its shape without the batch axis.
Shape read_input_layer(const Reader& r, const std::string& path, const json& cfg);
// An InputLayer's dtype: float32, or an integer type (int8/16/32 and uint16 as int32,
// int64 and uint32 as int64, uint8). Integer inputs (token ids) reach the model as
// float32 values, exact below 2^24, which Embedding truncates as Keras casts them.
DType read_input_dtype(const Reader& r, const std::string& path, const json& cfg);
// A Keras batch shape [null, d1, ...] -> Shape{d1, ...}.
Shape read_batch_shape(const Reader& r, const std::string& path, const json& v, const char* key);
// throws Unsupported unless the object's "dtype" (if any) is float32.
void check_float32(const Reader& r, const std::string& path, const json& obj);

}  // namespace nnfit::keras_json
