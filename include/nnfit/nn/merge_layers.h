// Keras's merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum (element-wise,
// broadcasting size-1 axes), Concatenate (along any axis) and Dot (batched dot product
// along given axes). They have no weights; each takes a list of inputs.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nnfit/nn/layer.h"

namespace nnfit {

enum class MergeOp { add, subtract, multiply, average, maximum, minimum };

// Inputs of one shape, or of shapes that broadcast as Keras's Merge broadcasts them (each
// axis, aligned from the right, equal or 1); Subtract takes exactly two.
class Merge final : public Layer {
 public:
  Merge(std::string name, MergeOp op);
  std::string class_name() const override;
  bool supports_unknown_dims() const override { return true; }
  MergeOp op() const { return op_; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  // Keras 3's compute_mask: the OR of the inputs' masks, none when an input has none.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;

 private:
  int broadcast_merge(Graph& graph, const std::vector<int>& inputs) const;

  MergeOp op_;
};

// axis counts the batch axis as Keras does (-1: the last).
class Concatenate final : public Layer {
 public:
  Concatenate(std::string name, std::int64_t axis = -1);
  std::string class_name() const override { return "Concatenate"; }
  bool supports_unknown_dims() const override { return true; }
  std::int64_t axis() const { return axis_; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;
  // Along the last axis, the OR of the inputs' masks, none when an input has none (Keras 3's
  // compute_mask); a mask with another axis is refused.
  std::vector<int> call_masked(GraphBuilder& builder, const std::vector<int>& inputs, const std::vector<int>& masks,
                               std::vector<int>& output_masks) override;

 private:
  // The axis without the batch axis, for inputs of `rank` (without batch).
  std::int64_t feature_axis(std::int64_t rank) const;
  std::int64_t axis_;
};

// Keras's Dot: two inputs of rank 1 or 2 (without the batch axis), contracted along
// axes[0] of the first and axes[1] of the second (counting the batch axis; negative from
// the end). Rank-1 inputs give (1,), as Keras's batch_dot does. normalize: L2-normalize
// both along their axes first (cosine proximity).
class Dot final : public Layer {
 public:
  Dot(std::string name, std::array<std::int64_t, 2> axes, bool normalize = false);
  std::string class_name() const override { return "Dot"; }
  const std::array<std::int64_t, 2>& axes() const { return axes_; }
  bool normalize() const { return normalize_; }
  std::vector<Shape> compute_output_shapes(const std::vector<Shape>& inputs) const override;
  void build_for(const std::vector<Shape>& inputs, WeightFactory& weights) override;
  std::vector<int> call_on(GraphBuilder& builder, const std::vector<int>& inputs) override;

 private:
  // The contracted axis of input i (1-based, counting batch), checked against its rank.
  std::int64_t axis(std::size_t i, const Shape& s) const;
  std::array<std::int64_t, 2> axes_;
  bool normalize_;
};

}  // namespace nnfit
