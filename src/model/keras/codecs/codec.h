// Private to src/model: the Keras codecs of the layers, one file per family (core,
// activations, conv, pooling, reshaping, normalization, merge, recurrent), as the op catalogue is
// split. A family lists each Keras class it reads with its reader, and has one writer
// that turns a layer of the family back into Keras 3's (or Keras 2's) config keys. Adding a layer touches its
// family's file only: keras_config.cpp dispatches reading over every family's classes,
// keras_writer.cpp writing over every family's writer.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/keras/keras_json.h"
#include "nnfit/nn/layer.h"
#include "nnfit/nn/operation.h"

namespace nnfit::keras_json {

using ojson = nlohmann::ordered_json;
using LayerPtr = std::unique_ptr<Layer>;

// A layer from its config object; `path` is where messages point and `in` the shape of
// the layer's first input (a reader checks axes against it). throws: InvalidArgument for
// a bad value, Unsupported for a value nnfit does not implement.
using LayerReader = LayerPtr (*)(const Reader& r, const std::string& path, const json& cfg, const std::string& name,
                                 const Shape& in);

struct LayerCodec {
  const char* class_name;  // as Keras 3 writes it
  LayerReader read;
};

// What generation a model is written for: Keras 3 (.keras) or Keras 2 (tf.keras's .h5:
// dtypes as strings, batch_input_shape, Functional nodes as [[["layer", node, tensor, {}]]]),
// and the policy of the model being written, for its layers without their own.
struct Writer {
  bool keras2 = false;
  std::string model_policy = "float32";
};

// Adds the config keys of `l` past the common ones (name, trainable, dtype) to `config`
// and returns true when `l` is of the family; false otherwise. throws: Unsupported when
// the layer cannot be said in the writer's Keras generation.
using LayerWriter = bool (*)(const Writer& w, const Layer& l, ojson& config);

struct LayerFamily {
  std::vector<LayerCodec> classes;
  LayerWriter write;
};

const LayerFamily& core_layers();           // Dense, Flatten, Reshape, Dropout, Embedding, Masking
const LayerFamily& activation_layers();     // Activation, ReLU, LeakyReLU, ELU, PReLU, Softmax
const LayerFamily& conv_layers();           // Conv1D/2D/3D, Depthwise-, Separable- and transposed convolutions
const LayerFamily& pooling_layers();        // local and global pooling
const LayerFamily& reshaping_layers();      // padding, cropping, upsampling, Permute, RepeatVector
const LayerFamily& normalization_layers();  // Batch-, Layer-, Group- and UnitNormalization
const LayerFamily& merge_layers();          // Add, ..., Concatenate, Dot
const LayerFamily& recurrent_layers();      // SimpleRNN, LSTM, GRU, Bidirectional
const LayerFamily& preprocessing_layers();  // Rescaling, Normalization, Resizing, CenterCrop
const LayerFamily& augmentation_layers();    // RandomFlip, RandomTranslation/Rotation/Zoom/Shear, RandomContrast
const LayerFamily& image_augmentation_layers();  // RandomBrightness, RandomInvert, Solarization, ... (ImageAugmentation)
const LayerFamily& attention_layers();      // EinsumDense, MultiHeadAttention, Attention, AdditiveAttention
const LayerFamily& color_augmentation_layers();  // RandomHue, RandomSaturation, RandomColorJitter, RandomGaussianBlur
// Every family, in the order errors list the supported classes.
const std::vector<const LayerFamily*>& layer_families();

// Keras 3's operations in Functional configs (operations.cpp; Note [Keras operations]):
// whether an entry's module is keras.src.ops.*; an operation's call arguments, with each
// tensor argument's JSON appended to `tensors` in argument order; the operation from its
// config; and the two written back (the entry's object and one call's args and kwargs).
bool is_operation_module(const json& entry);
std::vector<OperationArg> read_operation_args(const Reader& r, const std::string& path, const json& args,
                                              std::vector<json>& tensors);
LayerPtr read_operation(const Reader& r, const std::string& path, const std::string& cls, const std::string& module,
                        const json& cfg, const std::string& name);
ojson write_operation_object(const Operation& op);
ojson write_operation_call(const Operation& op, const std::vector<ojson>& tensors);

// Reading helpers the families share (codec.cpp).

// Keys every layer config may carry (Keras 2 and 3). batch_input_shape is Keras 2's
// input shape on the first layer.
extern const Keys kCommon;
// An initializer as a string or a Keras object; only argument-free ones (seed aside).
std::string get_initializer(const Reader& r, const std::string& path, const json& obj, const char* key,
                            const std::string& fallback);
// The "activation" key: a built-in activation's name (Keras 2's hard_sigmoid renamed).
std::string get_activation(const Reader& r, const std::string& path, const json& obj, std::string fallback);
// The same for another key ("recurrent_activation").
std::string get_activation(const Reader& r, const std::string& path, const json& obj, const char* key,
                           std::string fallback);
// throws Unsupported unless the object's "dtype" (if any) is float32.
// A layer's or model's "dtype": Keras's dtype policy, as a name or a policy object; none
// when the key is absent or null. throws as DTypePolicy::from_name, with the key path.
std::optional<DTypePolicy> read_dtype_policy(const Reader& r, const std::string& path, const json& obj);
// The "dtype" is a valid policy (a model's own, which its layers' override).
void check_dtype(const Reader& r, const std::string& path, const json& obj);
// throws Unsupported unless "data_format" (if any) is channels_last.
void check_data_format(const Reader& r, const std::string& path, const json& obj);
// data_format for layers that take either: true for channels_first.
bool get_channels_first(const Reader& r, const std::string& path, const json& obj);
// Keras's axis: -1, the last axis counted with the batch axis, or (Keras 2 BN) a list of one.
bool is_last_axis(const json& axis, const Shape& in);

// Every "<prefix>_regularizer", "<prefix>_constraint" and "activity_regularizer" key of a
// layer's config (the family's reader has checked the keys), set on `layer`
// (regularizers.cpp). throws: InvalidArgument for a bad value, Unsupported for a class
// nnfit does not have.
void read_weight_options(const Reader& r, const std::string& path, const json& cfg, Layer& layer);

// Writing helpers.

// The layer's regularizers and constraints over the null keys the family's writer wrote;
// throws Unsupported when the writer has no such key.
void write_weight_options(const Layer& l, ojson& config);

// "glorot_uniform" -> {"class_name": "GlorotUniform", ...}.
ojson write_initializer(const std::string& name);
// An activation's name in the writer's generation (hard_sigmoid differs between them).
std::string write_activation(const Writer& w, const Layer& l, const std::string& name);
const char* write_data_format(bool channels_first);
// A wrapped layer's whole entry ({"module", "class_name", "config", ...}), for wrappers
// such as Bidirectional (keras_writer.cpp).
ojson write_layer_object(const Writer& w, const Layer& l);

}  // namespace nnfit::keras_json
