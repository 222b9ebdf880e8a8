// The built-in layers, with Keras's names, arguments and defaults. One class per file in
// src/nn/layers/.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nnfit/nn/conv_layers.h"
#include "nnfit/nn/augmentation_layers.h"
#include "nnfit/nn/image_augmentation_layers.h"
#include "nnfit/nn/image_preprocessing_layers.h"
#include "nnfit/nn/layer.h"
#include "nnfit/nn/normalization_layers.h"
#include "nnfit/nn/recurrent_layers.h"

namespace nnfit {

struct DenseOptions {
  std::int64_t units = 0;
  std::string activation = "linear";
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  std::string bias_initializer = "zeros";
};

class Dense final : public Layer {
 public:
  const DenseOptions& options() const { return options_; }
  Dense(std::string name, DenseOptions options);
  std::string class_name() const override { return "Dense"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  DenseOptions options_;
};

struct Pooling2DOptions {
  std::vector<std::int64_t> pool_size{2, 2};
  std::vector<std::int64_t> strides;  // empty: pool_size (Keras's default)
  std::string padding = "valid";
};

class MaxPooling2D final : public Layer {
 public:
  const Pooling2DOptions& options() const { return options_; }
  MaxPooling2D(std::string name, Pooling2DOptions options);
  std::string class_name() const override { return "MaxPooling2D"; }
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Pooling2DOptions options_;
};

class AveragePooling2D final : public Layer {
 public:
  const Pooling2DOptions& options() const { return options_; }
  AveragePooling2D(std::string name, Pooling2DOptions options);
  std::string class_name() const override { return "AveragePooling2D"; }
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Pooling2DOptions options_;
};

enum class PoolKind { max, average };

// MaxPooling1D / AveragePooling1D on (steps, channels): pool_size, strides (default: the
// pool size) and padding as Keras's; channels last. Runs the 2-D pooling ops on
// (1, steps, channels).
struct Pooling1DOptions {
  PoolKind kind = PoolKind::max;
  std::int64_t pool_size = 2;
  std::int64_t strides = 0;  // 0: pool_size
  std::string padding = "valid";
};

class Pooling1D final : public Layer {
 public:
  Pooling1D(std::string name, Pooling1DOptions options);
  const Pooling1DOptions& options() const { return options_; }
  std::string class_name() const override;  // MaxPooling1D or AveragePooling1D
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Pooling1DOptions options_;
};

// MaxPooling3D / AveragePooling3D on (depth, height, width, channels): pool_size, strides
// (default: the pool size) and padding as Keras's; channels last. The 3-D pooling ops.
struct Pooling3DOptions {
  PoolKind kind = PoolKind::max;
  std::vector<std::int64_t> pool_size{2, 2, 2};
  std::vector<std::int64_t> strides;  // empty: pool_size (Keras's default)
  std::string padding = "valid";
};

class Pooling3D final : public Layer {
 public:
  Pooling3D(std::string name, Pooling3DOptions options);
  const Pooling3DOptions& options() const { return options_; }
  std::string class_name() const override;  // MaxPooling3D or AveragePooling3D
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  Pooling3DOptions options_;
};

// GlobalAveragePooling1D/2D/3D and GlobalMaxPooling1D/2D/3D: the mean or maximum over
// the `rank` spatial axes, channels last or first, keepdims as Keras's.
struct GlobalPoolingOptions {
  PoolKind kind = PoolKind::average;
  int rank = 2;  // 1, 2 or 3 spatial axes
  bool channels_first = false;
  bool keepdims = false;
};

class GlobalPooling final : public Layer {
 public:
  GlobalPooling(std::string name, GlobalPoolingOptions options);
  const GlobalPoolingOptions& options() const { return options_; }
  std::string class_name() const override;  // e.g. GlobalAveragePooling2D
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  // GlobalAveragePooling1D averages the present steps (Keras); the others drop the mask.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;

 private:
  GlobalPoolingOptions options_;
};

// AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D: each of the `output_size`
// cells of a spatial axis pools its window of the input (PyTorch's windows, as Keras's
// backends compute them), whatever the input's size; channels last or first. Emitted as
// keras.ops.adaptive_average_pool / adaptive_max_pool are (operation_nn_emitters.cpp): the
// layer is that operation's call, so both run the same composition of engine ops.
struct AdaptivePoolingOptions {
  PoolKind kind = PoolKind::average;
  std::vector<std::int64_t> output_size;  // one entry per spatial axis (1 to 3)
  bool channels_first = false;
};

class AdaptivePooling final : public Layer {
 public:
  AdaptivePooling(std::string name, AdaptivePoolingOptions options);
  const AdaptivePoolingOptions& options() const { return options_; }
  std::string class_name() const override;  // e.g. AdaptiveAveragePooling2D
  // The windows are read from the graph's shapes: images of any size pool to output_size.
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  AdaptivePoolingOptions options_;
};

class Flatten final : public Layer {
 public:
  explicit Flatten(std::string name) : Layer(std::move(name)) {}
  std::string class_name() const override { return "Flatten"; }
  bool supports_unknown_dims() const override { return true; }  // (None) out, as Keras
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
};

class Reshape final : public Layer {
 public:
  // target_shape excludes the batch axis; one entry may be -1.
  Reshape(std::string name, std::vector<std::int64_t> target_shape);
  std::string class_name() const override { return "Reshape"; }
  const std::vector<std::int64_t>& target_shape() const { return target_; }
  // An input known per batch gives the -1 entry as None (Keras's compute_output_shape).
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  std::vector<std::int64_t> target_;
};

// Embedding: each integer id (any shape of them) becomes row `id` of the (input_dim,
// output_dim) table "embeddings"; an id outside [0, input_dim) is a DataError naming the
// id. Ids arrive as the model's input values (float32, truncated as Keras casts them).
struct EmbeddingOptions {
  std::int64_t input_dim = 0;
  std::int64_t output_dim = 0;
  std::string embeddings_initializer = "random_uniform";  // Keras: uniform(-0.05, 0.05)
  bool mask_zero = false;  // id 0 is padding: the output carries the mask ids != 0
};

class Embedding final : public Layer {
 public:
  Embedding(std::string name, EmbeddingOptions options);
  const EmbeddingOptions& options() const { return options_; }
  std::string class_name() const override { return "Embedding"; }
  bool supports_unknown_dims() const override { return true; }
  bool casts_inputs() const override { return false; }  // ids, never cast to a 16-bit float
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;

 private:
  EmbeddingOptions options_;
};

enum class LogicalOpKind { not_equal, logical_or, logical_and, convert_to_tensor };

// Keras's element-wise operations as a Functional graph records them: not_equal(x, value),
// logical_or(a, b), logical_and(a, b), with 0/1 float outputs (a nonzero input is true),
// and convert_to_tensor(x) (the identity). Keras 3 writes them where a mask travels as an
// explicit mask= argument: the mask of Embedding(mask_zero=True) is not_equal(ids, 0),
// merging masked inputs ORs them, Attention passes the query's on through
// convert_to_tensor.
class LogicalOp final : public Layer {
 public:
  LogicalOp(std::string name, LogicalOpKind kind, double value = 0.0);
  std::string class_name() const override;  // NotEqual, LogicalOr, LogicalAnd, ConvertToTensor
  LogicalOpKind kind() const { return kind_; }
  double value() const { return value_; }  // not_equal's
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  CallArguments call_arguments() const override;
  void set_call_arguments(const CallArguments& args) override;

 private:
  bool unary() const { return kind_ == LogicalOpKind::not_equal || kind_ == LogicalOpKind::convert_to_tensor; }

  LogicalOpKind kind_;
  double value_;
};

// Masking: steps whose features all equal mask_value are padding: the output is the input
// with those steps zeroed, carrying the mask (any feature != mask_value).
class Masking final : public Layer {
 public:
  Masking(std::string name, double mask_value);
  std::string class_name() const override { return "Masking"; }
  bool supports_unknown_dims() const override { return true; }
  double mask_value() const { return mask_value_; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;

 private:
  double mask_value_;
};

// ActivityRegularization: the identity, adding L1L2(l1, l2) of its output (divided by the
// batch size, as Keras 3 does) to the loss.
class ActivityRegularization final : public Layer {
 public:
  ActivityRegularization(std::string name, double l1, double l2);
  std::string class_name() const override { return "ActivityRegularization"; }
  bool supports_masking() const override { return true; }
  double l1() const { return activity_regularizer().l1; }
  double l2() const { return activity_regularizer().l2; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder&, int x) override { return x; }
};

// Keras's Identity: its input unchanged, its mask passed on.
class Identity final : public Layer {
 public:
  explicit Identity(std::string name) : Layer(std::move(name)) {}
  std::string class_name() const override { return "Identity"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder&, int x) override { return x; }
};

// Dropout in training: each element kept with probability 1 - rate and scaled by
// 1 / (1 - rate). noise_shape (Keras's, the batch axis included; -1 for Keras's None, the
// input's size) shares one decision along its axes of size 1. SpatialDropout1D/2D/3D is
// Dropout with the noise shape (batch, 1..., channels): whole feature maps dropped.
class Dropout : public Layer {
 public:
  Dropout(std::string name, double rate, std::int64_t seed = 0, std::vector<std::int64_t> noise_shape = {});
  std::string class_name() const override { return "Dropout"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  double rate() const { return rate_; }
  std::int64_t seed() const { return seed_; }
  const std::vector<std::int64_t>& noise_shape() const { return noise_shape_; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 protected:
  // The noise shape for an input of `batched` shape (the batch axis included).
  virtual std::vector<std::int64_t> noise_for(const Shape& batched) const;

 private:
  double rate_;
  std::int64_t seed_;
  std::vector<std::int64_t> noise_shape_;
};

class SpatialDropout final : public Dropout {
 public:
  SpatialDropout(std::string name, int rank, double rate, std::int64_t seed = 0, bool channels_first = false);
  std::string class_name() const override { return "SpatialDropout" + std::to_string(rank_) + "D"; }
  int rank() const { return rank_; }
  bool channels_first() const { return channels_first_; }
  Shape output_shape(const Shape& input_shape) const override;

 protected:
  std::vector<std::int64_t> noise_for(const Shape& batched) const override;

 private:
  int rank_;
  bool channels_first_;
};

enum class NoiseKind { gaussian_noise, gaussian_dropout, alpha_dropout };

// GaussianNoise (x + N(0, stddev)), GaussianDropout (x · N(1, rate / (1 − rate))) and
// AlphaDropout (SELU-preserving dropout): random in training only, the identity otherwise,
// as Keras's. `value` is the stddev or the rate.
class NoiseLayer final : public Layer {
 public:
  NoiseLayer(std::string name, NoiseKind kind, double value, std::int64_t seed = 0);
  std::string class_name() const override;
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  NoiseKind kind() const { return kind_; }
  double value() const { return value_; }
  std::int64_t seed() const { return seed_; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder& builder, int x) override;

 private:
  NoiseKind kind_;
  double value_;
  std::int64_t seed_;
};

// The dropout op with Keras's name-derived seeding (Dropout, SpatialDropout, the recurrent
// layers' input dropout): an op seed from the layer's name and seed attribute.
int emit_dropout(Graph& graph, int x, double rate, std::int64_t seed, const std::vector<std::int64_t>& noise,
                 const std::string& name);

// Rescaling: y = x * scale + offset (Keras's preprocessing layer, so uint8-range images
// feed the model unchanged). scale and offset are one number each, or Keras's list of one
// per channel (EfficientNet's ImageNet variant), broadcast along the last axis; the lists
// are constants of the layer, not Keras variables (no parameters, nothing in files).
class Rescaling final : public Layer {
 public:
  Rescaling(std::string name, double scale, double offset = 0.0);
  // requires: each list holds one number or one per channel of the input's last axis.
  Rescaling(std::string name, std::vector<double> scale, std::vector<double> offset);
  std::string class_name() const override { return "Rescaling"; }
  bool supports_unknown_dims() const override { return true; }
  const std::vector<double>& scale() const { return scale_; }
  const std::vector<double>& offset() const { return offset_; }
  Shape output_shape(const Shape& input_shape) const override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  int call(GraphBuilder& builder, int x) override;
  std::vector<Weight*> saved_weights() override { return {}; }

 private:
  bool per_channel() const { return scale_.size() > 1 || offset_.size() > 1; }

  std::vector<double> scale_, offset_;
};

class Activation final : public Layer {
 public:
  Activation(std::string name, std::string activation);
  std::string class_name() const override { return "Activation"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  const std::string& activation() const { return activation_; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder& builder, int x) override;

 private:
  std::string activation_;
};

// Keras's ReLU layer: max(x, 0) by default; with arguments,
//   y = (threshold != 0 ? x * (x > threshold) : relu(x)), clipped to [0, max_value] when
//   max_value is given, minus negative_slope * relu(threshold - x).
struct ReLUOptions {
  std::optional<double> max_value;
  double negative_slope = 0.0;
  double threshold = 0.0;
};

class ReLU final : public Layer {
 public:
  explicit ReLU(std::string name, ReLUOptions options = {});
  std::string class_name() const override { return "ReLU"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  const ReLUOptions& options() const { return options_; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder& builder, int x) override;

 private:
  ReLUOptions options_;
};

// x for x > 0, negative_slope * x otherwise (Keras 3's default slope is 0.3).
class LeakyReLU final : public Layer {
 public:
  explicit LeakyReLU(std::string name, double negative_slope = 0.3);
  std::string class_name() const override { return "LeakyReLU"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  double negative_slope() const { return negative_slope_; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder& builder, int x) override;

 private:
  double negative_slope_;
};

// x for x > 0, alpha * (exp(x) - 1) otherwise.
class ELU final : public Layer {
 public:
  explicit ELU(std::string name, double alpha = 1.0);
  std::string class_name() const override { return "ELU"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  double alpha() const { return alpha_; }
  Shape output_shape(const Shape& input_shape) const override { return input_shape; }
  int call(GraphBuilder& builder, int x) override;

 private:
  double alpha_;
};

struct PReLUOptions {
  std::string alpha_initializer = "zeros";
  // Axes (1-based, counting the batch axis as 0, as Keras's) along which alpha is shared.
  std::vector<std::int64_t> shared_axes;
};

// x for x > 0, alpha * x otherwise, with a learned alpha per position of the input (batch
// axis aside), shared along shared_axes: Keras's weight "alpha" of the input's shape with
// 1 on the shared axes.
class PReLU final : public Layer {
 public:
  PReLU(std::string name, PReLUOptions options);
  std::string class_name() const override { return "PReLU"; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  const PReLUOptions& options() const { return options_; }
  Shape output_shape(const Shape& input_shape) const override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  int call(GraphBuilder& builder, int x) override;

 private:
  PReLUOptions options_;
};

// Softmax over `axis` (counting the batch axis as 0; -1 is the last).
class Softmax final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // softmax in float32 under every policy
  explicit Softmax(std::string name, std::int64_t axis = -1) : Layer(std::move(name)), axis_(axis) {}
  std::string class_name() const override { return "Softmax"; }
  bool supports_unknown_dims() const override { return true; }
  // Keras uses a mask here (masked softmax); nnfit refuses one rather than ignore it.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  std::int64_t axis() const { return axis_; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  std::int64_t axis_;
};

}  // namespace nnfit
