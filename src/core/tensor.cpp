// Tensor and Buffer. Host tensors made here use 64-byte aligned memory so oneDNN and
// vector loops see aligned rows; large ones are recycled (Note [Host buffer cache]).
#include "nnfit/core/tensor.h"

#include <cstdlib>
#include <cstring>

#include "nnfit/core/error.h"
#include "nnfit/core/host_buffer_cache.h"

namespace nnfit {

std::string Device::to_string() const {
  return std::string(type == DeviceType::cpu ? "cpu" : "cuda") + ":" + std::to_string(index);
}

Buffer::Buffer(void* data, std::size_t bytes, Device device, std::function<void(void*)> deleter)
    : data_(data), bytes_(bytes), device_(device), deleter_(std::move(deleter)) {}

Buffer::~Buffer() {
  if (deleter_) deleter_(data_);
}

std::size_t TensorDesc::bytes() const {
  return static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
}

Tensor::Tensor(std::shared_ptr<Buffer> buffer, Shape shape, DType dtype, std::size_t offset_bytes)
    : buffer_(std::move(buffer)), shape_(std::move(shape)), dtype_(dtype), offset_(offset_bytes) {
  NNFIT_CHECK(buffer_ == nullptr || offset_ + nbytes() <= buffer_->bytes(), InvalidArgument,
              "tensor of shape ", shape_.to_string(), " at offset ", offset_,
              " does not fit its buffer of ", buffer_->bytes(), " bytes");
}

Tensor Tensor::zeros(Shape shape, DType dtype) {
  Tensor t = uninitialized(std::move(shape), dtype);
  std::memset(t.buffer_->data(), 0, t.buffer_->bytes());
  return t;
}

Tensor Tensor::uninitialized(Shape shape, DType dtype) {
  std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
  std::size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = host_buffer_cache::allocate(rounded);
  if (p == nullptr) throw OutOfMemory("host allocation of " + std::to_string(rounded) + " bytes failed");
  auto buf = std::make_shared<Buffer>(p, rounded, Device{},
                                      [rounded](void* q) { host_buffer_cache::release(q, rounded); });
  return Tensor(std::move(buf), std::move(shape), dtype);
}

Device Tensor::device() const { return buffer_ ? buffer_->device() : Device{}; }

std::size_t Tensor::nbytes() const {
  return static_cast<std::size_t>(shape_.numel()) * dtype_size(dtype_);
}

void* Tensor::raw() const {
  return buffer_ ? static_cast<char*>(buffer_->data()) + offset_ : nullptr;
}

Tensor Tensor::reshape(Shape shape) const {
  NNFIT_CHECK(shape.numel() == shape_.numel(), InvalidArgument, "cannot reshape ",
              shape_.to_string(), " to ", shape.to_string());
  return Tensor(buffer_, std::move(shape), dtype_, offset_);
}

Tensor Tensor::slice_rows(std::int64_t begin, std::int64_t end) const {
  NNFIT_CHECK(shape_.rank() >= 1 && begin >= 0 && begin <= end && end <= shape_[0],
              InvalidArgument, "row slice [", begin, ", ", end, ") out of range for ",
              shape_.to_string());
  Shape s = shape_;
  s[0] = end - begin;
  std::size_t row_bytes = shape_[0] == 0 ? 0 : nbytes() / static_cast<std::size_t>(shape_[0]);
  return Tensor(buffer_, std::move(s), dtype_, offset_ + static_cast<std::size_t>(begin) * row_bytes);
}

Tensor Tensor::clone() const {
  Tensor out = zeros(shape_, dtype_);
  if (nbytes()) std::memcpy(out.raw(), raw(), nbytes());
  return out;
}

}  // namespace nnfit
