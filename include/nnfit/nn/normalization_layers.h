// The normalization layers, with Keras's names, arguments and defaults: BatchNormalization,
// LayerNormalization, RMSNormalization, GroupNormalization, UnitNormalization and the
// Normalization preprocessing layer. Included by nnfit/nn/layers.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

// Keras's Normalization preprocessing layer: y = (x - mean) / max(sqrt(variance), 1e-7)
// (invert: x * max(sqrt(variance), 1e-7) + mean), with one mean and variance per position
// of the kept `axes` (Keras's axis, counting the batch axis; empty: one for everything).
// The statistics are either given (Keras's mean= and variance= arguments: constants in the
// config, one value or one per position) or adapted, i.e. variables mean, variance and
// count that a saved model's file fills.
struct NormalizationOptions {
  std::vector<std::int64_t> axes{-1};
  bool invert = false;
  std::vector<double> mean, variance;  // given: flat, 1 value or one per kept position; empty: adapted
  std::vector<std::int64_t> given_shape;  // the given values' nesting as written (empty: one number)
};

class Normalization final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // as Keras, under every policy
  Normalization(std::string name, NormalizationOptions options);
  std::string class_name() const override { return "Normalization"; }
  bool supports_masking() const override { return true; }
  const NormalizationOptions& options() const { return options_; }
  Shape output_shape(const Shape& input_shape) const override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  int call(GraphBuilder& builder, int x) override;
  // Keras's variables: mean, variance and count when adapted; none when given.
  std::vector<Weight*> saved_weights() override;

 private:
  // The kept axes for an input of `s` (without the batch axis), counting the batch axis,
  // sorted; InvalidArgument naming the layer for an axis out of range or the batch axis.
  std::vector<std::int64_t> kept_axes(const Shape& s) const;
  bool adapted() const { return options_.mean.empty(); }

  NormalizationOptions options_;
};

// UnitNormalization: x / sqrt(max(sum of x^2 along `axis`, 1e-12)), Keras's formula; the
// axis counts the batch axis (-1: the last).
class UnitNormalization final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // as Keras, under every policy
  UnitNormalization(std::string name, std::int64_t axis = -1);
  std::string class_name() const override { return "UnitNormalization"; }
  bool supports_unknown_dims() const override { return true; }
  std::int64_t axis() const { return axis_; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  std::int64_t axis_;
};

struct BatchNormalizationOptions {
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  std::int64_t axis = -1;  // Keras's: the features axis, counting the batch axis (-1: the last; 1 for channels first)
};

// Normalizes each feature of `axis` (Keras's axis; the last by default) over every other
// axis. Training graphs use batch statistics and update the moving ones; evaluation graphs
// use the moving statistics.
class BatchNormalization final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // as Keras, under every policy
  const BatchNormalizationOptions& options() const { return options_; }
  BatchNormalization(std::string name, BatchNormalizationOptions options);
  std::string class_name() const override { return "BatchNormalization"; }
  bool supports_unknown_dims() const override { return true; }
  // Keras uses a mask here (masked moments); nnfit refuses one rather than ignore it.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  // Keras's variables: gamma only with scale, beta only with center (nnfit keeps them as
  // constants otherwise), then the moving mean and variance.
  std::vector<Weight*> saved_weights() override;

 private:
  // The features axis for an input of `s` (without the batch axis), counting the batch axis.
  std::int64_t axis_for(const Shape& s) const;

  BatchNormalizationOptions options_;
};

struct LayerNormalizationOptions {
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
  bool rms_scaling = false;  // Keras's: x * rsqrt(var + epsilon) * gamma, not centred, no beta
  std::vector<std::int64_t> axes{-1};  // Keras's axis: one or several, counting the batch axis
};

// Normalizes each sample over `axes` (Keras's axis, the last by default; gamma and beta
// have those axes' shape): y = (x - mean) / sqrt(var + epsilon) * gamma + beta, with the
// population variance over those axes, in training and inference alike; with rms_scaling
// y = x / sqrt(var + epsilon) * gamma, as Keras 3 computes it.
class LayerNormalization final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // as Keras, under every policy
  LayerNormalization(std::string name, LayerNormalizationOptions options);
  std::string class_name() const override { return "LayerNormalization"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }  // Keras: passes the mask on
  const LayerNormalizationOptions& options() const { return options_; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  // Keras's variables: gamma with scale or rms_scaling, beta with center but not rms_scaling.
  std::vector<Weight*> saved_weights() override;

 private:
  bool has_gamma() const { return options_.scale || options_.rms_scaling; }
  bool has_beta() const { return options_.center && !options_.rms_scaling; }

  LayerNormalizationOptions options_;
};

// Keras 3's RMSNormalization: y = x / sqrt(mean(x²) + epsilon) * scale over `axes`
// (Keras's axis, the last by default; scale of those axes' shape).
struct RMSNormalizationOptions {
  double epsilon = 1e-6;
  std::vector<std::int64_t> axes{-1};
};

class RMSNormalization final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // as Keras, under every policy
  RMSNormalization(std::string name, RMSNormalizationOptions options);
  std::string class_name() const override { return "RMSNormalization"; }
  bool supports_unknown_dims() const override { return true; }
  bool supports_masking() const override { return true; }
  const RMSNormalizationOptions& options() const { return options_; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  std::vector<Weight*> saved_weights() override;  // Keras's one variable, scale

 private:
  RMSNormalizationOptions options_;
};

// GroupNormalization over the channels (Keras's axis=-1): the channels split into `groups`
// of consecutive ones; each sample's group is normalized over its positions and channels
// (population variance), then gamma and beta per channel.
struct GroupNormalizationOptions {
  std::int64_t groups = 32;
  double epsilon = 1e-3;
  bool center = true;
  bool scale = true;
};

class GroupNormalization final : public Layer {
 public:
  bool computes_in_float32() const override { return true; }  // as Keras, under every policy
  GroupNormalization(std::string name, GroupNormalizationOptions options);
  std::string class_name() const override { return "GroupNormalization"; }
  const GroupNormalizationOptions& options() const { return options_; }
  void build(const Shape& input_shape, WeightFactory& weights) override;
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;
  std::vector<Weight*> saved_weights() override;

 private:
  GroupNormalizationOptions options_;
};

}  // namespace nnfit
