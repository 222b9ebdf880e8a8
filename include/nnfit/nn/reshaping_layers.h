// Keras's reshaping layers: ZeroPadding1D/2D/3D, Cropping1D/2D/3D, UpSampling1D/2D/3D
// (nearest; UpSampling2D also any resize method), Permute and RepeatVector. They have no
// weights; shapes exclude the batch axis, and `rank` is the number of spatial axes
// (channels last, or first where Keras takes a data_format).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

using SpatialPairs = std::vector<std::array<std::int64_t, 2>>;  // (before, after) per spatial axis

struct ZeroPaddingOptions {
  int rank = 2;
  SpatialPairs padding;  // rank entries, each >= 0
  bool channels_first = false;
};

class ZeroPadding final : public Layer {
 public:
  ZeroPadding(std::string name, ZeroPaddingOptions options);
  const ZeroPaddingOptions& options() const { return options_; }
  std::string class_name() const override { return "ZeroPadding" + std::to_string(options_.rank) + "D"; }
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  ZeroPaddingOptions options_;
};

struct CroppingOptions {
  int rank = 2;
  SpatialPairs cropping;  // rank entries, each >= 0
  bool channels_first = false;
};

class Cropping final : public Layer {
 public:
  Cropping(std::string name, CroppingOptions options);
  const CroppingOptions& options() const { return options_; }
  std::string class_name() const override { return "Cropping" + std::to_string(options_.rank) + "D"; }
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  CroppingOptions options_;
};

// Nearest-neighbour upsampling: each row, column, ... repeated size[i] times. UpSampling2D
// also takes Keras's other interpolations (bilinear, bicubic, area, lanczos3, lanczos5):
// the resize op to (size[0] * height, size[1] * width), as Keras resizes.
struct UpSamplingOptions {
  int rank = 2;
  std::vector<std::int64_t> size;  // rank entries, each >= 1
  bool channels_first = false;
  std::string interpolation = "nearest";  // anything else needs rank 2
};

class UpSampling final : public Layer {
 public:
  UpSampling(std::string name, UpSamplingOptions options);
  const UpSamplingOptions& options() const { return options_; }
  std::string class_name() const override { return "UpSampling" + std::to_string(options_.rank) + "D"; }
  bool supports_unknown_dims() const override { return true; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  UpSamplingOptions options_;
};

// dims: a permutation of 1..rank of the sample axes, as Keras's Permute((2, 1)).
class Permute final : public Layer {
 public:
  Permute(std::string name, std::vector<std::int64_t> dims);
  const std::vector<std::int64_t>& dims() const { return dims_; }
  std::string class_name() const override { return "Permute"; }
  Shape output_shape(const Shape& input_shape) const override;
  // A dimension known per batch moves with its axis; the emission reads the batch's shape.
  bool supports_unknown_dims() const override { return true; }
  int call(GraphBuilder& builder, int x) override;

 private:
  std::vector<std::int64_t> dims_;
};

// (features) -> (n, features).
class RepeatVector final : public Layer {
 public:
  RepeatVector(std::string name, std::int64_t n);
  std::int64_t n() const { return n_; }
  std::string class_name() const override { return "RepeatVector"; }
  Shape output_shape(const Shape& input_shape) const override;
  // Features known per batch stay so; the emission reads the batch's shape.
  bool supports_unknown_dims() const override { return true; }
  int call(GraphBuilder& builder, int x) override;

 private:
  std::int64_t n_;
};

}  // namespace nnfit
