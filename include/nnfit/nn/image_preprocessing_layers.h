// Keras 3's image preprocessing layers that run inside a model: Resizing and CenterCrop.
// Like Keras's, they compute the same thing in training and inference, and have no
// weights. Both resample with the resize op (docs/design/ops.md), which reproduces
// tf.image.resize, what Keras 3's TensorFlow backend calls, so a saved Keras model
// predicts the same numbers. Shapes exclude the batch axis: (height, width, channels), or
// (channels, height, width) with channels_first.
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/nn/layer.h"

namespace nnfit {

struct ResizingOptions {
  std::int64_t height = 0, width = 0;      // of the output, each >= 1
  std::string interpolation = "bilinear";  // nearest, bilinear, bicubic, area, lanczos3, lanczos5
  // At most one: crop the input's centre to the target's aspect ratio first, or pad its
  // short side evenly with fill_value first (Keras's arithmetic, image_resize.h).
  bool crop_to_aspect_ratio = false;
  bool pad_to_aspect_ratio = false;
  std::string fill_mode = "constant";  // the only mode Keras implements
  double fill_value = 0.0;
  bool antialias = false;  // TF's: a downscale widens the kernel (not for nearest, area)
  bool channels_first = false;
  // Keras's bounding_box_format ("" for null): what boxes passed in a dict mean; models
  // carry images only, so it is kept to be written back.
  std::string bounding_box_format;
};

class Resizing final : public Layer {
 public:
  Resizing(std::string name, ResizingOptions options);
  const ResizingOptions& options() const { return options_; }
  std::string class_name() const override { return "Resizing"; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  ResizingOptions options_;
};

// An input at least (height, width) keeps its centred window (start (size - target) // 2);
// a smaller one, on either axis, is cropped to the target's aspect ratio and resized
// bilinearly to it (Keras's smart_resize).
struct CenterCropOptions {
  std::int64_t height = 0, width = 0;  // each >= 1
  bool channels_first = false;
  std::string bounding_box_format;     // as Resizing's
};

class CenterCrop final : public Layer {
 public:
  CenterCrop(std::string name, CenterCropOptions options);
  const CenterCropOptions& options() const { return options_; }
  std::string class_name() const override { return "CenterCrop"; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  CenterCropOptions options_;
};

}  // namespace nnfit
