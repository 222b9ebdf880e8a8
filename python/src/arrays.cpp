#include "arrays.h"

#include <cstring>

#include "nnfit/core/dtype.h"

namespace nnfit::python {
namespace {

// NumPy's kind/itemsize for each dtype nnfit reads from an array.
bool dtype_of(const py::dtype& d, DType& out) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'f' && size == 4) out = DType::f32;
  else if (kind == 'f' && size == 2) out = DType::f16;
  else if (kind == 'i' && size == 4) out = DType::i32;
  else if (kind == 'i' && size == 8) out = DType::i64;
  else if (kind == 'u' && size == 1) out = DType::u8;
  else if (kind == 'b' && size == 1) out = DType::boolean;
  else return false;
  return true;
}

}  // namespace

Tensor tensor_view(const py::handle& obj, const std::string& what) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(what + ": expected a NumPy array, got " + std::string(py::str(obj.get_type().attr("__name__"))));
  }
  auto array = py::reinterpret_borrow<py::array>(obj);
  DType dtype;
  if (!dtype_of(array.dtype(), dtype)) {
    throw py::type_error(what + ": arrays of dtype " + std::string(py::str(array.dtype())) +
                         " are not read in place; convert to float32 (or an integer type) first");
  }
  if (!(array.flags() & py::array::c_style)) throw py::type_error(what + ": the array is not C-contiguous");
  if (array.ndim() < 1) throw py::type_error(what + ": expected an array with a batch axis, got a scalar");
  std::vector<std::int64_t> dims(array.shape(), array.shape() + array.ndim());
  // The buffer holds a reference to the array; whoever drops the last tensor handle
  // (perhaps a thread without the GIL) takes the GIL to release it.
  auto* keep = new py::object(array);
  void* data = const_cast<void*>(array.data());
  auto buffer = std::make_shared<Buffer>(data, static_cast<std::size_t>(array.nbytes()), Device{}, [keep](void*) {
    py::gil_scoped_acquire gil;
    delete keep;
  });
  return Tensor(std::move(buffer), Shape(std::move(dims)), dtype);
}

std::vector<Tensor> tensor_views(const py::sequence& arrays, const std::string& what) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < arrays.size(); ++i) out.push_back(tensor_view(arrays[i], what + "[" + std::to_string(i) + "]"));
  return out;
}

py::array to_array(const Tensor& tensor) {
  std::vector<py::ssize_t> shape(tensor.shape().dims().begin(), tensor.shape().dims().end());
  if (tensor.dtype() == DType::bf16) {
    py::array_t<float> out(shape);
    const auto* src = tensor.data<std::uint16_t>();
    float* dst = out.mutable_data();
    for (std::int64_t i = 0; i < tensor.numel(); ++i) dst[i] = bf16_to_float(src[i]);
    return out;
  }
  py::dtype dtype;
  switch (tensor.dtype()) {
    case DType::f32: dtype = py::dtype::of<float>(); break;
    case DType::f16: dtype = py::dtype("float16"); break;
    case DType::i32: dtype = py::dtype::of<std::int32_t>(); break;
    case DType::i64: dtype = py::dtype::of<std::int64_t>(); break;
    case DType::u8: dtype = py::dtype::of<std::uint8_t>(); break;
    case DType::boolean: dtype = py::dtype::of<bool>(); break;
    case DType::bf16: break;  // above
  }
  // The array's base owns a handle to the tensor, so the buffer lives as long as the array.
  auto* owner = new Tensor(tensor);
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, {}, tensor.raw(), base);
}

}  // namespace nnfit::python
