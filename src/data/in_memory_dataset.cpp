// InMemoryDataset: batches are gathered with memcpy, one call per run of consecutive rows
// (so an unshuffled batch is a single memcpy per tensor). The shuffle is our own
// Fisher-Yates over std::mt19937_64 with a rejection-sampled bounded draw: std::shuffle and
// std::uniform_int_distribution are implementation-defined, and runs must repeat across
// standard libraries.
#include "nnfit/data/in_memory_dataset.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "data/element_util.h"
#include "nnfit/core/error.h"

namespace nnfit::data {
namespace {

std::size_t row_bytes(const Tensor& t) {
  const std::int64_t rows = t.shape()[0];
  return rows == 0 ? 0 : t.nbytes() / static_cast<std::size_t>(rows);
}

void check_batch_size(std::int64_t batch_size) {
  NNFIT_CHECK(batch_size > 0, InvalidArgument, "batch_size must be positive, got ", batch_size);
}

void check_host_rows(const Tensor& t, const char* name) {
  NNFIT_CHECK(t.defined(), InvalidArgument, "InMemoryDataset: ", name, " is an undefined tensor");
  NNFIT_CHECK(t.shape().rank() >= 1, InvalidArgument, "InMemoryDataset: ", name,
              " needs a first (example) dimension, got shape ", t.shape().to_string());
  NNFIT_CHECK(t.device().type == DeviceType::cpu, InvalidArgument, "InMemoryDataset: ", name,
              " must be a host tensor, got one on ", t.device().to_string());
}

std::vector<std::int64_t> epoch_order(std::int64_t n, bool shuffle, std::uint64_t seed,
                                      std::int64_t epoch) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (!shuffle || n < 2) return order;
  const auto e = static_cast<std::uint64_t>(epoch);
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(e >> 32)};
  std::mt19937_64 rng(seq);
  for (std::size_t i = order.size() - 1; i > 0; --i) {
    std::swap(order[i], order[detail::bounded(rng, i + 1)]);
  }
  return order;
}

template <typename T>
void scale_into(const T* src, float* dst, std::size_t n, float scale) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]) * scale;
}

}  // namespace

InMemoryDataset::InMemoryDataset(Tensor x, Tensor y) : x_(std::move(x)), y_(std::move(y)) {
  check_host_rows(x_, "x");
  check_host_rows(y_, "y");
  NNFIT_CHECK(x_.shape()[0] == y_.shape()[0], InvalidArgument,
              "InMemoryDataset: x and y must have the same number of examples, got x ",
              x_.shape().to_string(), " and y ", y_.shape().to_string());
}

InMemoryDataset::BatchIterator::BatchIterator(Tensor x, Tensor y, std::vector<std::int64_t> order,
                                              std::int64_t batch_size, bool drop_remainder)
    : x_(std::move(x)),
      y_(std::move(y)),
      order_(std::move(order)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder),
      x_row_bytes_(row_bytes(x_)),
      y_row_bytes_(row_bytes(y_)) {}

std::int64_t InMemoryDataset::BatchIterator::next(void* x_dst, void* y_dst) {
  const std::size_t left = order_.size() - pos_;
  const std::size_t rows = std::min(left, static_cast<std::size_t>(batch_size_));
  if (rows == 0 || (drop_remainder_ && rows < static_cast<std::size_t>(batch_size_))) {
    pos_ = order_.size();
    return 0;
  }
  const auto* xs = static_cast<const unsigned char*>(x_.raw());
  const auto* ys = static_cast<const unsigned char*>(y_.raw());
  auto* xd = static_cast<unsigned char*>(x_dst);
  auto* yd = static_cast<unsigned char*>(y_dst);
  const std::int64_t* idx = order_.data() + pos_;
  for (std::size_t i = 0; i < rows;) {
    // A run of consecutive source rows is one copy.
    std::size_t run = 1;
    while (i + run < rows && idx[i + run] == idx[i] + static_cast<std::int64_t>(run)) ++run;
    const auto src_row = static_cast<std::size_t>(idx[i]);
    std::memcpy(xd + i * x_row_bytes_, xs + src_row * x_row_bytes_, run * x_row_bytes_);
    std::memcpy(yd + i * y_row_bytes_, ys + src_row * y_row_bytes_, run * y_row_bytes_);
    i += run;
  }
  pos_ += rows;
  return static_cast<std::int64_t>(rows);
}

InMemoryDataset::BatchIterator InMemoryDataset::batches(std::int64_t batch_size, bool shuffle,
                                                        std::uint64_t seed, std::int64_t epoch,
                                                        bool drop_remainder) const {
  check_batch_size(batch_size);
  return BatchIterator(x_, y_, epoch_order(size(), shuffle, seed, epoch), batch_size,
                       drop_remainder);
}

std::int64_t InMemoryDataset::num_batches(std::int64_t batch_size, bool drop_remainder) const {
  check_batch_size(batch_size);
  return drop_remainder ? size() / batch_size : (size() + batch_size - 1) / batch_size;
}

Tensor InMemoryDataset::to_float(const Tensor& x, float scale,
                                 const std::optional<Shape>& sample_shape) {
  check_host_rows(x, "x");
  Shape out_shape = x.shape();
  if (sample_shape) {
    std::vector<std::int64_t> dims{x.shape()[0]};
    dims.insert(dims.end(), sample_shape->dims().begin(), sample_shape->dims().end());
    out_shape = Shape(std::move(dims));
    NNFIT_CHECK(out_shape.numel() == x.numel(), InvalidArgument, "to_float: cannot view x of shape ",
                x.shape().to_string(), " as ", out_shape.to_string(), ": each example has ",
                x.shape()[0] == 0 ? 0 : x.numel() / x.shape()[0], " elements but the sample shape ",
                sample_shape->to_string(), " holds ", sample_shape->numel());
  }
  Tensor out = Tensor::zeros(out_shape, DType::f32);
  const auto n = static_cast<std::size_t>(x.numel());
  float* dst = out.data<float>();
  switch (x.dtype()) {
    case DType::f32: scale_into(x.data<float>(), dst, n, scale); break;
    case DType::i32: scale_into(x.data<std::int32_t>(), dst, n, scale); break;
    case DType::i64: scale_into(x.data<std::int64_t>(), dst, n, scale); break;
    case DType::u8: scale_into(x.data<std::uint8_t>(), dst, n, scale); break;
    case DType::boolean: scale_into(x.data<std::uint8_t>(), dst, n, scale); break;
    case DType::f16:
      for (std::size_t i = 0; i < n; ++i) dst[i] = f16_to_float(x.data<std::uint16_t>()[i]) * scale;
      break;
    case DType::bf16:
      for (std::size_t i = 0; i < n; ++i) dst[i] = bf16_to_float(x.data<std::uint16_t>()[i]) * scale;
      break;
  }
  return out;
}

InMemoryDataset InMemoryDataset::take(std::int64_t n) const {
  if (n < 0 || n > size()) n = size();
  return InMemoryDataset(x_.slice_rows(0, n), y_.slice_rows(0, n));
}

}  // namespace nnfit::data
