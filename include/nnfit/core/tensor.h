// Tensor: a shared handle to a buffer plus shape, dtype and byte offset. Contiguous
// row-major; views share the buffer. Who allocated the buffer is hidden behind Buffer's
// deleter, so core does not depend on memory (the allocator module sits above it).
//
// Thread safety: a Tensor handle may be copied across threads; concurrent writes to the
// same elements are the caller's business.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "nnfit/core/device.h"
#include "nnfit/core/dtype.h"
#include "nnfit/core/shape.h"

namespace nnfit {

// Owns bytes through a deleter; never copied.
class Buffer {
 public:
  Buffer(void* data, std::size_t bytes, Device device, std::function<void(void*)> deleter);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  void* data_;
  std::size_t bytes_;
  Device device_;
  std::function<void(void*)> deleter_;
};

struct TensorDesc {
  Shape shape;
  DType dtype = DType::f32;
  std::size_t bytes() const;
  bool operator==(const TensorDesc& other) const = default;
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Buffer> buffer, Shape shape, DType dtype, std::size_t offset_bytes = 0);

  // A zero-filled host tensor from 64-byte aligned heap memory (tests, data, staging).
  static Tensor zeros(Shape shape, DType dtype = DType::f32);
  // The same without the fill, for buffers the caller overwrites whole (batching, decoding).
  static Tensor uninitialized(Shape shape, DType dtype = DType::f32);

  bool defined() const { return buffer_ != nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  TensorDesc desc() const { return {shape_, dtype_}; }
  Device device() const;
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t nbytes() const;
  std::size_t offset_bytes() const { return offset_; }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }

  void* raw() const;
  template <typename T>
  T* data() const { return static_cast<T*>(raw()); }

  // Same bytes, another shape with the same element count.
  Tensor reshape(Shape shape) const;
  // Rows [begin, end) of the first dimension, sharing the buffer.
  Tensor slice_rows(std::int64_t begin, std::int64_t end) const;
  // A deep copy into fresh host memory.
  Tensor clone() const;

 private:
  std::shared_ptr<Buffer> buffer_;
  Shape shape_;
  DType dtype_ = DType::f32;
  std::size_t offset_ = 0;
};

}  // namespace nnfit
