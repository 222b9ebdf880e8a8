// Targets as a loss wants them: the one conversion fit, evaluate and the CLI's IDX files
// share (class ids to int32 for the sparse losses, else float32), and the error that names
// the element it refused, so a caller reading a file can turn it into a byte offset.
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/core/error.h"
#include "nnfit/core/tensor.h"

namespace nnfit {

// A class id convert_targets refuses: not an integer, or outside [0, classes). An
// InvalidArgument (its message unchanged) that also carries the element's flat index in y
// and its value.
class BadClassId : public InvalidArgument {
 public:
  BadClassId(const std::string& what, std::int64_t row, double value)
      : InvalidArgument(what), row_(row), value_(value) {}
  std::int64_t row() const { return row_; }
  double value() const { return value_; }

 private:
  std::int64_t row_;
  double value_;
};

// Writes n samples of targets y (f32, i32, i64 or u8) into dst in the dtype and shape the
// loss wants (`want`, whose first axis is the batch): class ids -> int32, else float32.
// With classes > 0, class ids must lie in [0, classes). throws: InvalidArgument for a
// shape or dtype that does not fit, BadClassId naming the row.
void convert_targets(const Tensor& y, const TensorDesc& want, std::int64_t n, void* dst, std::int64_t classes = 0);

}  // namespace nnfit
