// Private: the window of a convolution layer (one entry per spatial axis, as Keras's
// tuples) and the ops it emits: 2-D ops for the 1-D and 2-D layers, 3-D ops for Conv3D. A
// 1-D layer runs on (batch, 1, steps, channels) with its kernel (k, a, b) viewed as
// (1, k, a, b): free reshapes, aliased by the planner.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/graph/graph.h"

namespace nnfit {

struct ConvWindow {
  std::vector<std::int64_t> kernel, strides, dilation;
  std::string padding = "valid";  // "valid" or "same"
  std::int64_t groups = 1;

  int rank() const { return static_cast<int>(kernel.size()); }
  // Throws InvalidArgument naming `layer` unless the window has 1 to `max_rank` axes (2:
  // the layers on the 2-D ops; 3: Conv3D), kernel, strides and dilation one positive entry
  // each per axis, and padding valid or same.
  void check(const std::string& layer, int max_rank = 2) const;
  // The output's spatial size for an input of spatial size `in` (rank() entries); throws
  // naming the layer when the (dilated) window does not fit.
  std::vector<std::int64_t> out(const std::string& layer, const std::vector<std::int64_t>& in) const;
  // The conv2d (or, with 3 axes, conv3d) family's attributes: strides, padding,
  // dilations, groups (1-D: [1, s]).
  Attrs attrs() const;
  // x (N, L, C) as (N, 1, L, C), and back; identities in 2-D.
  int to_2d(Graph& g, int x, const std::string& name) const;
  int from_2d(Graph& g, int y, const std::string& name) const;
  // A kernel (k, a, b) as (1, k, a, b); the identity in 2-D.
  int kernel_to_2d(Graph& g, int w, const std::string& name) const;
};

// Keras's checks of a grouped convolution: filters and the input's channels (when known,
// >= 0) are multiples of groups. Throws InvalidArgument naming the layer.
void check_groups(const std::string& layer, std::int64_t groups, std::int64_t filters, std::int64_t channels);

// The spatial axes of a sample (channels last): every axis but the last.
std::vector<std::int64_t> spatial_dims(const Shape& sample);

}  // namespace nnfit
