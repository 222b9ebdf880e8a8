// Shape: the dimensions of a dense row-major tensor. Dimensions are int64; kUnknownDim
// (-1, Keras's None) appears only in a model's per-sample shapes (a dimension known per
// batch: `keras.Input(shape=(None,))`), never in a tensor's or a graph value's shape.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace nnfit {

// A dimension known only per batch (Keras's None; Note [Shapes known per batch]).
inline constexpr std::int64_t kUnknownDim = -1;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<std::int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  std::int64_t operator[](int axis) const { return dims_[static_cast<std::size_t>(axis)]; }
  std::int64_t& operator[](int axis) { return dims_[static_cast<std::size_t>(axis)]; }
  // Product of the dimensions; 1 for a scalar.
  std::int64_t numel() const;
  const std::vector<std::int64_t>& dims() const { return dims_; }
  // Dimension counted from the back when negative.
  std::int64_t dim(int axis) const;
  std::string to_string() const;  // "(128, 28, 28, 1)"; "(None, 300)" with an unknown dimension
  // Whether every dimension is known (none is kUnknownDim).
  bool is_static() const;
  // Whether `concrete` (static) is this shape with its unknown dimensions filled in.
  bool admits(const Shape& concrete) const;

  bool operator==(const Shape& other) const = default;

 private:
  std::vector<std::int64_t> dims_;
};

}  // namespace nnfit
