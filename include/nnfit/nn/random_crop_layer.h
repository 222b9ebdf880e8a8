// Keras 3's RandomCrop (channels_last): in training, one (height, width) window per batch at
// a random offset when the input is larger on both axes; otherwise Keras's fixed window
// (start at the centre of the largest window of the target's aspect ratio, the target's
// size from there, clipped to the image) resized bilinearly to the target. At inference
// Keras 3.15 returns its input uncropped, a shape other than the one its own
// compute_output_shape declares (and that no layer after it can take); nnfit gives that
// fixed window instead, which is Keras 2's documented inference behaviour.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "nnfit/nn/layer.h"

namespace nnfit {

struct RandomCropOptions {
  std::int64_t height = 0, width = 0;  // of the output, each >= 1
  std::optional<std::int64_t> seed;    // null: none (Keras writes a random one)
  std::string bounding_box_format;     // "" for null; kept to be written back
};

class RandomCrop final : public Layer {
 public:
  RandomCrop(std::string name, RandomCropOptions options);
  const RandomCropOptions& options() const { return options_; }
  std::string class_name() const override { return "RandomCrop"; }
  Shape output_shape(const Shape& input_shape) const override;
  int call(GraphBuilder& builder, int x) override;

 private:
  RandomCropOptions options_;
};

}  // namespace nnfit
