// Private: what Resizing, CenterCrop and UpSampling2D (interpolation other than nearest)
// share: Keras's crop and pad boxes for an aspect ratio, and the emission of crop, pad,
// resize and the channels-first transposes around them. Every box is computed from static
// shapes when the graph is built, with the arithmetic Keras 3's TensorFlow backend uses.
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/graph/graph.h"

namespace nnfit {

// A window of an image's (height, width).
struct ImageBox {
  std::int64_t top = 0, left = 0, height = 0, width = 0;
};

// The largest centred window of an h x w image with the target's aspect ratio (Keras's
// crop_to_aspect_ratio and smart_resize): crop_h = int(w * th / tw) clamped to [1, h],
// crop_w = int(h * tw / th) clamped to [1, w], each start int((size - crop) / 2). With
// float32 the quotients are rounded as TensorFlow's float32 ops round them (Resizing);
// otherwise as Python's floats (smart_resize on static shapes, which CenterCrop calls).
ImageBox aspect_crop_box(std::int64_t h, std::int64_t w, std::int64_t th, std::int64_t tw, bool float32);

// Keras's pad_to_aspect_ratio: rows (top) and columns (left) to add on *both* sides of an
// h x w image: int((max(h, int(w * th / tw)) - h) / 2) and likewise for the width, in
// float32. At most one of them is non-zero.
ImageBox aspect_pad_box(std::int64_t h, std::int64_t w, std::int64_t th, std::int64_t tw);

// x [N,H,W,C] (h_axis 1) or [N,C,H,W] (h_axis 2) -> the box's window of it.
int emit_crop_box(Graph& g, int x, const ImageBox& box, int h_axis, const std::string& name);
// x [N,H,W,C] with `rows` rows added above and below and `cols` columns left and right,
// all `value`.
int emit_pad_hw(Graph& g, int x, std::int64_t rows, std::int64_t cols, double value, const std::string& name);
// x [N,H,W,C] -> [N,oh,ow,C] by tf.image.resize(method, antialias).
int emit_resize(Graph& g, int x, std::int64_t oh, std::int64_t ow, const std::string& method, bool antialias,
                const std::string& name);
// [N,C,H,W] -> [N,H,W,C] and back.
int emit_to_channels_last(Graph& g, int x, const std::string& name);
int emit_to_channels_first(Graph& g, int x, const std::string& name);

// Throws InvalidArgument naming the layer unless `method` is one the resize op takes.
void check_resize_method(const std::string& method, const std::string& layer);

}  // namespace nnfit
